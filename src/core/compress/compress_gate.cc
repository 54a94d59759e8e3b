#include "core/compress/compress_gate.h"

#include <atomic>
#include <cstdlib>
#include <deque>
#include <mutex>

#include "core/compress/worker_priority.h"

namespace sluice {

namespace compress_gate {

namespace {

struct Waiter {
  uv_loop_t* loop;
  uv_work_t* req;
  uv_work_cb work;
  uv_after_work_cb after;
};

struct Gate {
  size_t running = 0;
  std::deque<Waiter> waiting;
};

thread_local Gate t_gate;
std::once_flag g_once;
std::atomic<size_t> g_limit{0};

void InitLimit() {
  uv_cpu_info_t* cpus = nullptr;
  int n = 0;
  size_t ncpu = 1;
  if (uv_cpu_info(&cpus, &n) == 0) {
    ncpu = n > 0 ? static_cast<size_t>(n) : 1;
    uv_free_cpu_info(cpus, n);
  }
  // With workers running at a lower priority while they compress, the
  // loop already goes first: the threadpool's size is the only bound.
  // Without (an unprivileged process cannot restore a thread's priority),
  // fewer jobs at once leave the loop a CPU.
  size_t lim = WorkerPriorityScope::enabled() && WorkerPriorityScope::Supported()
                   ? 0 : (ncpu > 1 ? ncpu - 1 : 1);
  const char* env = getenv("SLUICE_COMPRESS_JOBS");
  if (env != nullptr && *env != '\0') {
    char* end = nullptr;
    long v = strtol(env, &end, 10);
    if (end != env && v >= 0) lim = static_cast<size_t>(v);
  }
  g_limit = lim;
}

}  // namespace

size_t limit() {
  std::call_once(g_once, InitLimit);
  return g_limit.load();
}

void SetLimit(size_t n) {
  std::call_once(g_once, InitLimit);
  g_limit = n;
}

size_t running() { return t_gate.running; }
size_t waiting() { return t_gate.waiting.size(); }

int Queue(uv_loop_t* loop, uv_work_t* req, uv_work_cb work,
          uv_after_work_cb after) {
  Gate& g = t_gate;
  size_t lim = limit();
  if (lim != 0 && g.running >= lim) {
    g.waiting.push_back(Waiter{loop, req, work, after});
    return 0;
  }
  int r = uv_queue_work(loop, req, work, after);
  if (r == 0) g.running++;
  return r;
}

void Done() {
  Gate& g = t_gate;
  if (g.running > 0) g.running--;
  size_t lim = limit();
  while (!g.waiting.empty() && (lim == 0 || g.running < lim)) {
    Waiter w = g.waiting.front();
    g.waiting.pop_front();
    int r = uv_queue_work(w.loop, w.req, w.work, w.after);
    if (r == 0) {
      g.running++;
    } else {
      // The owner hears the failure; its after-work calls Done() again,
      // which gives this slot back.
      g.running++;
      w.after(w.req, r);
    }
  }
}

}  // namespace compress_gate

}  // namespace sluice
