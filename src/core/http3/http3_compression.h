// Http3Compression: the response compression of one HTTP/3 request
// stream — a streamed body through a CompressStream (stream.write(),
// compat res.write(), flush) or a whole body through a CompressJob
// (res.end(body), stream.end(body): head, compressed body and end once the
// job is done). The same machinery as HTTP/1.1 and HTTP/2
// (core/compress/): small ops inline on the loop thread, larger ones on
// the libuv threadpool, one job at a time, in order.
//
// Why a holding area (Ready) between the threadpool and the session: a
// job finishes in uv's after-work callback, outside QuicEndpoint::Process,
// where nothing may be written to a QUIC stream (it would wait in
// OpenSSL's buffers for a timer) and no JS may run without the endpoint's
// dispatch scopes. So the result is only stored here and the owner told
// (OnCompressionReady); the session takes it in its next pass
// (Http3Session::OnPass), as it does with file reads (http3_pipe_body.h).
//
// Ownership and teardown: owned by its request (Http3Session's Request);
// the request's close (client reset, connection loss, server close) or
// the session's end deletes it, which Destroy()s the stream and any job:
// work a worker still runs is freed by its after-work callback, which
// then calls nobody. So nothing the worker uses is freed under it, and
// compressionStats() returns to its baseline once the worker is done.
//
// Loop thread only; no N-API.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/compress/compress_job.h"
#include "core/compress/compress_stream.h"
#include "core/http3/qpack.h"

namespace sluice {

class Http3Compression final : public CompressStream::Sink, public CompressJob::Client {
 public:
  // Who hears that threadpool work finished (the session).
  class Owner {
   public:
    virtual ~Owner() = default;
    // Loop thread, from uv's after-work callback (outside any pass, no JS
    // scope): work of request `id` is done and waits in TakeReady. May not
    // write or call the embedder; it schedules a pass. Not called once the
    // Http3Compression is deleted.
    virtual void OnCompressionReady(uint64_t id) = 0;
  };

  // What finished on the threadpool since the last TakeReady.
  struct Ready {
    std::string out;          // compressed bytes of the stream, in order
    bool finished = false;    // the stream's Finish op is done: body complete
    bool drain = false;       // pending input fell under CompressStream::kHighWater
    int error = 0;            // kCompressE* / UV_E*: the response cannot go on
    CompressJob* job = nullptr;  // the whole body is compressed (the caller
                                 // owns it now and Destroy()s it)
  };

  Http3Compression(Owner* owner, uint64_t id) : owner_(owner), id_(id) {}
  Http3Compression(const Http3Compression&) = delete;
  Http3Compression& operator=(const Http3Compression&) = delete;
  ~Http3Compression() override;

  // ---- streamed body ----
  // Sets up the streaming compressor; false when it cannot be made.
  bool StartStream(uv_loop_t* loop, const CompressParams& params);
  bool streaming() const { return stream_ != nullptr; }
  // CompressStream::Write / Finish (see compress_stream.h): kInline (the
  // output appended to *out), kQueued / kQueuedFull (it comes through
  // TakeReady), or < 0 (failed). `ref` keeps queued bytes alive (released
  // once compressed; may be null: then they are copied when queued).
  int Write(const uint8_t* data, size_t len, ExternalRef* ref, std::string* out);
  int Flush(std::string* out);
  int Finish(std::string* out);
  // Input bytes not yet compressed (backpressure: above
  // CompressStream::kHighWater a write waits for a drain).
  size_t pending_bytes() const { return stream_ != nullptr ? stream_->pending_bytes() : 0; }
  // Frees the compressor now (its state, up to ~1 MiB for brotli, is not
  // kept until the request is freed), or once its job in flight returns.
  void DropStream();

  // ---- whole body ----
  // Queues `job` (taken in every case) on the threadpool; the response's
  // head and trailers wait in head / trailers until it is done. Returns 0
  // or a UV_E* error (nothing queued; the job is freed).
  int QueueBody(uv_loop_t* loop, CompressJob* job);
  std::vector<http3::HeaderField> head;
  std::vector<http3::HeaderField> trailers;

  // Moves what finished into *r (the session, inside its pass).
  void TakeReady(Ready* r);

  // CompressStream::Sink (loop thread, from the after-work callback).
  void OnCompressed(CompressStream* s, CompressStream::Result& r) override;
  // CompressJob::Client (loop thread, from the after-work callback).
  void OnCompressDone(CompressJob* job, int status) override;

 private:
  Owner* owner_;
  uint64_t id_;
  CompressStream* stream_ = nullptr;  // owned; Destroy()ed
  CompressJob* job_ = nullptr;        // owned (queued or done); Destroy()ed
  Ready ready_;
};

}  // namespace sluice
