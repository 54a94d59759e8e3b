// Http2PipeBody: the HTTP/2 Sink of a native pipe (respondWithFile on an
// HTTP/2 stream). It is the stream's Http2BodySource: nghttp2's data
// provider asks it for up to `max` bytes (the flow-control window and frame
// size allow that much); it pulls one slice from the Pipe and, in
// send_data, appends it after the 9-byte frame header as an external
// segment holding a PipeBufferRef — the pooled file buffer itself goes to
// the kernel, nothing is copied. A pull that finds nothing answers
// NGHTTP2_ERR_DEFERRED; OnPipeReadable resumes the stream
// (nghttp2_session_resume_data). A closed window simply means nghttp2 does
// not ask: the pipe stops reading ahead after `read_ahead` buffers.
//
// Ownership: created by Http2Session::StartPipeBody, owned by itself from
// then on; freed in Detach (the stream closed, was reset, or the
// connection closed), which destroys the pipe (closing the source and its
// fd once in-flight reads finish).
#pragma once

#include <cstdint>

#include "core/http1/http1_pipe_body.h"  // PipeBodyListener
#include "core/http2/http2_session.h"
#include "core/body/pipe.h"

namespace sluice {

class Http2PipeBody final : public PipeSink, public Http2BodySource {
 public:
  // Takes `source`. `listener` (may be null) hears OnPipeBodyDone once:
  // 0 when the last byte was framed, a UV_E* error when the source failed
  // (the stream is reset with INTERNAL_ERROR), UV_ECANCELED when the
  // stream or connection went away first.
  Http2PipeBody(Http2Session* session, int32_t id, PipeSource* source,
                PipeBodyListener* listener);
  Http2PipeBody(const Http2PipeBody&) = delete;
  Http2PipeBody& operator=(const Http2PipeBody&) = delete;

  void Start() { pipe_->Start(); }

  // Http2BodySource (Http2Session's data provider).
  ssize_t Available(size_t max, bool* eof) override;
  void Emit(OutputQueue& q, size_t len) override;
  void Detach() override;

  // PipeSink (the Pipe, on the loop thread).
  void OnPipeReadable() override;
  void OnPipeError(int err) override;

 private:
  ~Http2PipeBody() override = default;
  static constexpr ssize_t kFailed = -2;  // Available: reset the stream

  Http2Session* session_;
  int32_t id_;
  Pipe* pipe_;
  PipeBodyListener* listener_;
  PipeSlice pending_;  // pulled in Available, appended in Emit
  bool finished_ = false;
};

}  // namespace sluice
