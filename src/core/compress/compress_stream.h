// CompressStream: an ordered, asynchronous streaming compressor for one
// response body (HTTP/1.1 res.write(); meant for HTTP/2 DATA too). No
// N-API: the binding owns one per response and hands it the body chunks.
//
// Each write, flush and finish is an op in one FIFO. Small ops with
// nothing queued before them run inline (the output comes back from the
// call); anything else is queued and compressed on the libuv threadpool,
// one job at a time (a batch of consecutive ops, in order), so output
// order equals write order and the Compressor is only ever used by one
// thread at a time. The job's output reaches the Sink on the loop thread.
//
// Why inline below a threshold: see kInlineBelow (measured numbers in
// docs/compression.md, "How it runs").
//
// Backpressure: the bytes not yet compressed (queued + in the job) are
// bounded by kHighWater; a write that leaves more pending returns
// kQueuedFull, and the sink later hears `drain` once the pending bytes are
// back under the bound. The queue itself never refuses: as with a socket
// write, ignoring the signal buffers (the caller's memory, referenced).
//
// Threads: the loop thread owns the FIFO (ops_); the worker touches only
// the job's ops (batch_), its output and the Compressor, none of which the
// loop touches while the job is in flight.
//
// Lifetime: Destroy() frees the stream now, or, while a job is in flight,
// marks it so that the after-work callback frees it (the sink is not
// called again after Destroy). Input owners (ExternalRef) are released on
// the loop thread. So a client reset mid-job frees everything once the
// job returns.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "core/compress/compressor.h"
#include "core/common/loop_tracked.h"
#include "core/net/output_queue.h"

namespace sluice {

class CompressStream {
 public:
  // Ops below this many input bytes, with nothing queued before them, are
  // compressed inline on the calling (loop) thread: the same break-even as
  // whole bodies (CompressJob::kAsyncThreshold).
  static constexpr size_t kInlineBelow = 32 * 1024;
  // Input bytes pending (queued + in the job) above which a write reports
  // backpressure. It also sets how large jobs get: each job pays a round
  // trip and reloads its encoder state into the cache, so small jobs cost
  // CPU (64 KiB jobs: 1.3-1.8x the CPU of inline; 1 MiB: 1.07-1.19x).
  static constexpr size_t kHighWater = 1024 * 1024;
  // A job takes consecutive ops up to about this many input bytes (at
  // least one op), so output flows while later writes wait.
  static constexpr size_t kBatchMax = 1024 * 1024;

  // brotli window of streamed bodies (unless the params set one): the
  // encoder's ring buffer grows to ~2^(lgwin+1) bytes as data accumulates,
  // 8 MiB at brotli's default 22, 512 KiB here, for every open stream (an
  // SSE response lives long). Measured in docs/compression.md.
  static constexpr int kBrotliLgwin = 18;

  // What an async job produced, delivered in order on the loop thread.
  struct Result {
    std::string out;        // compressed bytes (may be empty)
    bool finished = false;  // the Finish op is done: the stream has ended
    bool drain = false;     // pending input fell under the bound after a
                            // write reported kQueuedFull
    int error = 0;          // a kCompressE* or UV_E* code: nothing follows
  };

  class Sink {
   public:
    virtual ~Sink() = default;
    // Loop thread, from the after-work callback (never from inside Write or
    // Finish), once per job, in op order. The sink owns `r.out`. It may
    // call Write/Finish/Destroy on the stream from inside.
    virtual void OnCompressed(CompressStream* s, Result& r) = 0;
  };

  enum Status {
    kInline = 0,      // done on this thread; output in *inline_out
    kQueued = 1,      // queued behind earlier work; output goes to the sink
    kQueuedFull = 2,  // queued, and the pending input is above the bound:
                      // wait for Result::drain before writing more
  };

  // nullptr when the compressor cannot be set up (bad params, no memory).
  static CompressStream* Create(uv_loop_t* loop, const CompressParams& params,
                                Sink* sink, uint64_t size_hint = 0);

  // Whether an op of `len` input bytes would run inline now.
  bool WouldRunInline(size_t len) const {
    return !in_flight_ && ops_.empty() && len < kInlineBelow;
  }

  // Compresses [data, data+len) with `flush` (kNoFlush / kSyncFlush;
  // kFinish: use Finish). `owner` keeps the bytes alive while queued and is
  // released on the loop thread once they are compressed; with a null
  // owner the bytes are only valid during the call (copied when queued).
  // Returns a Status (output appended to *inline_out for kInline) or a
  // negative error (the stream has failed).
  int Write(const char* data, size_t len, Compressor::Flush flush,
            ExternalRef* owner, std::string* inline_out);
  // The same for bytes the stream takes over.
  int Write(std::string&& data, Compressor::Flush flush,
            std::string* inline_out);
  // The last op: [data, data+len) (may be empty) then the end of the
  // stream. kInline: the stream has ended and *inline_out holds the rest.
  // Queued: the sink hears Result::finished.
  int Finish(const char* data, size_t len, ExternalRef* owner,
             std::string* inline_out);
  int Finish(std::string&& data, std::string* inline_out);

  // Input bytes not yet compressed.
  size_t pending_bytes() const { return pending_; }
  bool busy() const { return in_flight_ || !ops_.empty(); }

  // Frees the stream now, or once the job in flight returns.
  void Destroy();

  // Streams alive (tests: leak checks after client resets).
  static uint64_t live_count();
  // brotli streams alive (each holds ~0.5-1.3 MiB): the JS layer caps them
  // (compression.maxBrotliStreams) and picks another coding above the cap.
  static uint64_t live_brotli_count();

 private:
  struct Op {
    const char* data = nullptr;  // the caller's bytes, when not owned
    size_t len = 0;
    ExternalRef* owner = nullptr;
    // Bytes the op owns. Read through bytes(): a short string's bytes
    // live inside the object and move with it.
    std::string owned;
    bool is_owned = false;
    Compressor::Flush flush = Compressor::kNoFlush;
    const uint8_t* bytes() const {
      return reinterpret_cast<const uint8_t*>(is_owned ? owned.data() : data);
    }
  };

  CompressStream(uv_loop_t* loop, Sink* sink, bool brotli);
  ~CompressStream();
  int Submit(Op&& op, std::string* inline_out);
  void StartJob();
  static void ReleaseOps(std::vector<Op>* ops);
  static void OnWork(uv_work_t* req);
  static void OnAfterWork(uv_work_t* req, int status);

  uv_loop_t* loop_;
  Sink* sink_;
  Compressor comp_;
  std::deque<Op> ops_;       // loop thread only
  size_t pending_ = 0;       // input bytes in ops_ and batch_
  bool drain_wanted_ = false;
  bool finish_queued_ = false;
  int error_ = 0;            // sticky failure

  // The job in flight (worker-owned while in_flight_).
  uv_work_t req_;
  std::vector<Op> batch_;
  std::string out_;
  int result_ = 0;
  bool batch_finishes_ = false;
  bool in_flight_ = false;

  bool brotli_;
  bool destroyed_ = false;
  int depth_ = 0;            // inside the sink callback
  // Environment teardown waits for this stream: Destroy() with a job in
  // flight frees it only from the after-work callback, which must run
  // before the loop is closed and the addon unloaded.
  LoopTracked tracked_;
};

}  // namespace sluice
