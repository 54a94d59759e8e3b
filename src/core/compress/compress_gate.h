// CompressGate: caps how many compression jobs of one loop run on the
// libuv threadpool at once; the others wait in a FIFO and are submitted
// (uv_queue_work) as running ones finish.
//
// Why: compression is CPU work; on a machine with few CPUs (or a server
// pinned to one) every extra worker compressing at once competes with the
// loop thread, while throughput does not grow beyond the CPUs there are.
// The cap is max(1, ncpu - 1) when workers cannot run at a lower priority
// (WorkerPriorityScope unsupported or off), none otherwise (the
// threadpool's size bounds it); SLUICE_COMPRESS_JOBS=N overrides it. See
// docs/compression.md for the measurements.
//
// Backpressure, not growth: each waiter is a response's single job (a
// response has at most one job queued or running), so the FIFO is bounded
// by the number of open compressing responses; new input for a waiting
// response stays in that response's own bounded queue.
//
// Threads: loop thread only (one gate per loop thread: thread_local).
// The work callback runs on a worker as usual; the owner's after-work
// callback must call Done() first thing (it frees the slot and may submit
// the next waiter). A waiter whose submission fails hears its after-work
// callback with that error, from inside Done().
#pragma once

#include <uv.h>

#include <cstddef>

namespace sluice {

namespace compress_gate {

// As uv_queue_work, but waits for a free slot. Returns 0, or a UV_E* error
// when submitted at once and uv_queue_work failed.
int Queue(uv_loop_t* loop, uv_work_t* req, uv_work_cb work,
          uv_after_work_cb after);
// From the owner's after-work callback: the job's slot is free.
void Done();

// The cap (0: no cap), decided at first use (see above).
size_t limit();
void SetLimit(size_t n);
// Jobs of this thread's loop running / waiting now (tests, stats).
size_t running();
size_t waiting();

}  // namespace compress_gate

}  // namespace sluice
