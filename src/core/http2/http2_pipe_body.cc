#include "core/http2/http2_pipe_body.h"

#include "core/net/connection.h"
#include "core/net/listener.h"

namespace sluice {

Http2PipeBody::Http2PipeBody(Http2Session* session, int32_t id,
                             PipeSource* source, PipeBodyListener* listener)
    : session_(session),
      id_(id),
      pipe_(new Pipe(source, this)),
      listener_(listener) {}

ssize_t Http2PipeBody::Available(size_t max, bool* eof) {
  if (pending_.buf) {
    // Pulled before but not yet sent (nghttp2 asks again after a reset of
    // its send state): offer the same bytes.
    *eof = pipe_->source_ended() && pipe_->readable() == 0;
    return static_cast<ssize_t>(pending_.len);
  }
  ssize_t n = pipe_->Pull(max, &pending_);
  if (n > 0) {
    *eof = pipe_->source_ended() && pipe_->readable() == 0;
  } else if (n == kPipeEof) {
    *eof = true;
    n = 0;
  } else if (n == kPipeWouldBlock) {
    return kBodyWouldBlock;
  } else {
    // The source failed inside Pull (OnPipeError is not called then).
    PipeBodyListener* l = listener_;
    listener_ = nullptr;
    if (l) session_->DeferBodyDone(l, static_cast<int>(n));
    return kFailed;
  }
  if (*eof && !finished_) {
    finished_ = true;
    PipeBodyListener* l = listener_;
    listener_ = nullptr;
    if (l) session_->DeferBodyDone(l, 0);
  }
  return n;
}

void Http2PipeBody::Emit(OutputQueue& q, size_t len) {
  if (!pending_.buf) return;
  // nghttp2 sends exactly what Available returned.
  (void)len;
  q.AppendExternal(pending_.data, pending_.len, new PipeBufferRef(pending_.buf));
  pending_ = PipeSlice();
}

void Http2PipeBody::Detach() {
  if (pending_.buf) pending_.buf->Unref();
  pending_ = PipeSlice();
  pipe_->Destroy();
  PipeBodyListener* l = listener_;
  listener_ = nullptr;
  delete this;
  if (l) l->OnPipeBodyDone(UV_ECANCELED);
}

void Http2PipeBody::OnPipeReadable() { session_->ResumeData(id_); }

void Http2PipeBody::OnPipeError(int err) {
  // From an fs callback: the embedder's scopes are opened for the listener
  // and the RST_STREAM is flushed at the end.
  Listener* l = session_->connection()->listener();
  l->BeginDispatch();
  PipeBodyListener* listener = listener_;
  listener_ = nullptr;
  // Resetting closes the stream, which Detaches (frees) this body later.
  session_->ResetStream(id_, NGHTTP2_INTERNAL_ERROR, false);
  if (listener) listener->OnPipeBodyDone(err);
  l->EndDispatch();
}

}  // namespace sluice
