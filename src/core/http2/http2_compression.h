// HTTP/2 response compression glue: what Http2Session needs to run a
// stream's body through a compressor (CompressStream for streamed writes,
// CompressJob for a whole body) — the pending whole-body response. The
// session's compression methods (StartCompression, FlushCompression,
// RespondCompressed and their completions) are defined in
// http2_compression.cc. Loop thread only.
#pragma once

#include <cstdint>
#include <memory>

#include "core/compress/compress_job.h"
#include "core/stream/header_list.h"

namespace sluice {

class Http2Session;

// A whole body compressing on the threadpool for RespondCompressed: the
// response waits here (head, flags, trailers) until the job is done.
// Owned by its Stream: a stream that closes (reset, connection closed)
// destroys it, and CompressJob::Destroy then frees the job after the
// worker finishes without calling back, so nothing the worker uses is
// freed under it.
class Http2PendingCompress final : public CompressJob::Client {
 public:
  Http2PendingCompress(Http2Session* s, int32_t id, int status,
                       HeaderList&& headers, uint32_t flags,
                       HeaderList* trailers, CompressJob* job)
      : session_(s),
        id_(id),
        job_(job),
        status(status),
        flags(flags),
        headers(std::move(headers)) {
    if (trailers && !trailers->empty()) {
      this->trailers = std::make_unique<HeaderList>(std::move(*trailers));
    }
  }
  ~Http2PendingCompress() override {
    if (job_) job_->Destroy();
  }
  // The job is done (loop thread, from uv's after-work callback): the
  // session takes the job back and finishes the response.
  void OnCompressDone(CompressJob* job, int st) override;

 private:
  Http2Session* session_;
  int32_t id_;
  CompressJob* job_;

 public:
  int status;
  uint32_t flags;
  HeaderList headers;
  std::unique_ptr<HeaderList> trailers;
};

}  // namespace sluice
