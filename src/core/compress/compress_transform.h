// CompressTransform: the compression stage of a native pipe
// (FileSource → CompressTransform → Pipe → sink). Each upstream buffer is
// compressed on the libuv threadpool (uv_queue_work) into a pooled output
// buffer, one buffer at a time; the pipe asks for the next only when the
// sink pulls (read_ahead), so backpressure from the socket reaches the
// compressor and the file reads.
//
// Threading: pooled buffers are acquired and released on the loop thread
// only (PipeBuffer refcounts are not atomic); the worker touches the input
// bytes, the output buffer's bytes and the Compressor, all owned here and
// not touched by the loop while the work is in flight.
//
// Teardown: Close() closes the upstream at once (it waits for its own I/O)
// and frees this transform once no work is in flight: a client reset while
// a worker compresses frees nothing the worker uses.
#pragma once

#include <uv.h>

#include "core/compress/compressor.h"
#include "core/common/loop_tracked.h"
#include "core/body/pipe.h"

namespace sluice {

class CompressTransform final : public PipeTransform {
 public:
  // nullptr when the compressor cannot be set up (bad params, no memory).
  static CompressTransform* Create(uv_loop_t* loop, PipeBufferPool* pool,
                                   const CompressParams& params);

  // PipeTransform
  void SetUpstream(PipeSource* upstream) override;
  void SetClient(PipeSourceClient* client) override { client_ = client; }
  void Read(size_t max_bytes) override;
  void Close() override;
  void OnSourceData(PipeBuffer* buf) override;
  void OnSourceEnd() override;
  void OnSourceError(int err) override;

  // Transforms alive (tests: leak checks).
  static uint64_t live_count();

 private:
  CompressTransform(uv_loop_t* loop, PipeBufferPool* pool);
  ~CompressTransform() override;
  void Advance();
  void StartWork();
  void Fail(int err);
  // Client calls are bracketed so that a Close from inside only marks.
  void Enter() { depth_++; }
  bool Leave();  // false: this was freed
  static void OnWork(uv_work_t* req);
  static void OnAfterWork(uv_work_t* req, int status);

  uv_loop_t* loop_;
  PipeBufferPool* pool_;
  Compressor comp_;
  PipeSource* upstream_ = nullptr;
  PipeSourceClient* client_ = nullptr;
  size_t read_size_ = PipeBufferPool::kDefaultBufferSize;

  PipeBuffer* in_ = nullptr;     // one reference; bytes [in_off_, size)
  size_t in_off_ = 0;
  bool upstream_reading_ = false;
  bool upstream_ended_ = false;
  bool wanted_ = false;          // the client's Read awaits an answer
  bool finished_ = false;        // the stream's end was produced
  bool failed_ = false;

  // The work in flight: its output buffer and results.
  uv_work_t req_;
  LoopTracked tracked_;  // environment teardown waits for in-flight work
  bool in_flight_ = false;
  PipeBuffer* out_ = nullptr;
  Compressor::Flush flush_ = Compressor::kNoFlush;
  size_t consumed_ = 0;
  bool done_ = false;
  int result_ = 0;

  bool closed_ = false;
  int depth_ = 0;
};

}  // namespace sluice
