// WorkerPriorityScope: while a libuv threadpool worker compresses, it runs
// at a lower scheduling priority (Linux per-thread nice), so that the loop
// thread, when it wakes up for a request, is not kept waiting behind
// compression workers on the same CPU.
//
// Why: measured with benchmark/zlib/compressed_response.js (server pinned
// to one CPU, as the runner does): with four workers compressing at the
// loop's own priority, a parallel tiny request's p99 was 13-36 ms, 7.6-18
// ms with this scope (on a machine busy with other work); the numbers are
// in docs/benchmarks.md and docs/compression.md ("How it runs").
//
// Hazard: an unprivileged process can raise its nice value but not lower
// it again (RLIMIT_NICE is usually 0 and CAP_SYS_NICE absent). A shared
// libuv worker left at a high nice would slow everything else it later
// runs (fs, dns, crypto). So the scope only lowers the priority when a
// one-time probe (on a throwaway thread) showed that it can be restored;
// otherwise it does nothing. Not Linux: nothing.
//
// Threads: used on threadpool workers only; the probe result is shared
// (std::call_once).
#pragma once

namespace sluice {

class WorkerPriorityScope {
 public:
  // The nice increment while compressing (added, capped at 19), unless
  // SLUICE_COMPRESS_NICE=N in the environment says otherwise (0: off).
  static constexpr int kDefaultNiceIncrement = 19;
  static int increment();

  WorkerPriorityScope();
  ~WorkerPriorityScope();
  WorkerPriorityScope(const WorkerPriorityScope&) = delete;
  WorkerPriorityScope& operator=(const WorkerPriorityScope&) = delete;

  // Whether this process can lower and restore a thread's priority (the
  // probe's result; runs the probe on first call).
  static bool Supported();
  static bool enabled() { return increment() > 0; }

 private:
  int tid_ = 0;
  int old_nice_ = 0;
  bool lowered_ = false;
};

}  // namespace sluice
