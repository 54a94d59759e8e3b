// CompressJob: one whole response body (res.end(body)) compressed in one
// pass, inline on the loop thread or on the libuv threadpool.
//
// Why a threshold: compressing on the threadpool costs a uv_queue_work
// round trip (a worker wake-up, then an async-handle wake-up of the loop)
// and keeps the response's place in the pipeline; compressing inline
// blocks the loop for the whole body. Measured here (2-core VM shared with
// other builds, load average ~9, so medians and noisy; level 6 / quality 4
// on JSON, one-shot, /tmp script timing compressBuffer):
//     body      gzip -6 inline   br q4 inline
//     16 KiB      ~170 µs          ~160 µs
//     32 KiB      ~300-490 µs      ~280 µs
//     64 KiB      ~0.65-1.25 ms    ~0.66 ms
//     1 MiB       ~25-41 ms        ~26 ms
//   threadpool round trip (node's async zlib.gzip of 17 bytes, which also
//   pays its JS wrapper): ~150 µs median, vs ~33 µs for gzipSync.
// At 32 KiB the inline cost is about twice the hand-off and a loop blocked
// for it is what a parallel tiny request's p99 shows; above it the work
// goes to the threadpool (kAsyncThreshold). Below it, the hand-off would
// cost more latency than it saves.
//
// Lifetime and threads: the input bytes are kept alive by an ExternalRef
// (the binding's napi reference on the JS Buffer) or owned by the job (a
// string's UTF-8 copy); the worker reads them and writes only the job's
// own output buffer. The job is freed with Destroy(), which, while the
// worker runs, only marks it: the after-work callback frees it then. So a
// client reset while a worker compresses frees nothing the worker uses;
// the input's ExternalRef is released on the loop thread.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/compress/compressor.h"
#include "core/common/loop_tracked.h"
#include "core/net/output_queue.h"

namespace sluice {

class CompressJob {
 public:
  // Bodies of at least this many bytes are compressed on the threadpool.
  static constexpr size_t kAsyncThreshold = 32 * 1024;

  class Client {
   public:
    virtual ~Client() = default;
    // On the loop thread once the work finished: status 0 (output() is the
    // compressed body), a kCompressE* error, or UV_ECANCELED. The client
    // calls job->Destroy() when done with the output.
    virtual void OnCompressDone(CompressJob* job, int status) = 0;
  };

  // Input [data, data+len) owned by `owner` (released on the loop thread
  // when the job is freed; may be null for static memory).
  static CompressJob* Create(const CompressParams& params, const char* data,
                             size_t len, ExternalRef* owner);
  // Input owned by the job.
  static CompressJob* Create(const CompressParams& params, std::string&& data);

  // Compresses now on the calling thread. Returns 0 or a kCompressE* error.
  int RunInline();
  // Compresses on the threadpool; the client hears OnCompressDone once.
  // Returns 0 or a UV_E* error (nothing queued).
  int Queue(uv_loop_t* loop, Client* client);

  const char* output() const { return out_; }
  size_t output_size() const { return out_len_; }
  size_t input_size() const { return in_len_; }
  // Appends the output to `q`: copied when small, otherwise handed over as
  // an external segment (the queue frees it once written).
  void MoveOutputTo(OutputQueue& q);

  // Frees the job now, or after the in-flight work completes.
  void Destroy();

  // Jobs alive (tests: leak checks after client resets).
  static uint64_t live_count();

 private:
  CompressJob(const CompressParams& params, const char* data, size_t len,
              ExternalRef* owner);
  ~CompressJob();
  int Compress();  // on whichever thread runs it
  static void OnWork(uv_work_t* req);
  static void OnAfterWork(uv_work_t* req, int status);

  CompressParams params_;
  const char* in_;
  size_t in_len_;
  ExternalRef* owner_;
  std::string owned_;
  char* out_ = nullptr;  // malloc'd, shrunk to out_len_
  size_t out_len_ = 0;
  int result_ = 0;
  uv_work_t req_;
  LoopTracked tracked_;  // environment teardown waits for in-flight work
  Client* client_ = nullptr;
  bool in_flight_ = false;
  bool destroyed_ = false;
};

}  // namespace sluice
