#include "core/compress/worker_priority.h"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <mutex>

#ifdef __linux__
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace sluice {

namespace {

std::once_flag g_probe_once;
bool g_supported = false;
std::atomic<int> g_increment{WorkerPriorityScope::kDefaultNiceIncrement};

#ifdef __linux__
int Tid() { return static_cast<int>(syscall(SYS_gettid)); }

// This thread's nice value, or false when it cannot be read.
bool GetNice(int tid, int* nice) {
  errno = 0;
  int v = getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
  if (v == -1 && errno != 0) return false;
  *nice = v;
  return true;
}

// On a throwaway thread: raise the nice value, then try to restore it.
void* Probe(void* arg) {
  bool* ok = static_cast<bool*>(arg);
  int tid = Tid();
  int old;
  if (!GetNice(tid, &old) || old >= 19) return nullptr;
  if (setpriority(PRIO_PROCESS, static_cast<id_t>(tid), old + 1) != 0) {
    return nullptr;
  }
  *ok = setpriority(PRIO_PROCESS, static_cast<id_t>(tid), old) == 0;
  return nullptr;
}

void RunProbe() {
  const char* env = getenv("SLUICE_COMPRESS_NICE");
  if (env != nullptr && *env != '\0') {
    int v = atoi(env);
    g_increment = v < 0 ? 0 : v > 19 ? 19 : v;
  }
  bool ok = false;
  pthread_t t;
  if (pthread_create(&t, nullptr, Probe, &ok) == 0) {
    pthread_join(t, nullptr);
  }
  g_supported = ok;
}
#else
void RunProbe() {}
#endif

}  // namespace

bool WorkerPriorityScope::Supported() {
  std::call_once(g_probe_once, RunProbe);
  return g_supported;
}

int WorkerPriorityScope::increment() {
  Supported();  // reads the environment
  return g_increment.load();
}

WorkerPriorityScope::WorkerPriorityScope() {
#ifdef __linux__
  if (!Supported()) return;
  int inc = g_increment.load(std::memory_order_relaxed);
  if (inc <= 0) return;
  tid_ = Tid();
  if (!GetNice(tid_, &old_nice_)) return;
  int target = old_nice_ + inc;
  if (target > 19) target = 19;
  if (target <= old_nice_) return;
  lowered_ = setpriority(PRIO_PROCESS, static_cast<id_t>(tid_), target) == 0;
#endif
}

WorkerPriorityScope::~WorkerPriorityScope() {
#ifdef __linux__
  if (lowered_) setpriority(PRIO_PROCESS, static_cast<id_t>(tid_), old_nice_);
#endif
}

}  // namespace sluice
