// The HTTP/1.1 pipe sink and the Http1Session members that drive it.
//
// Backpressure: the pump moves bytes from the pipe to the writer while
// Writer::Backlog() is under kPipeBacklog (or the server's high-water mark
// if larger); past it, it stops and the writer's completion
// (OnWritesDone) resumes it. The pipe, not pulled, stops reading ahead
// after `read_ahead` buffers: memory per file response is bounded by
// kPipeBacklog + read_ahead × 128 KiB.
//
// Re-entrancy: PumpPipeBody may end the response (End → Advance), which
// may start the next response's pipe (Advance → PumpPipeBody): the nested
// call only asks the running pump for another pass. A write error inside
// Flush destroys the connection (Session::OnClose clears requests_, and
// with them the pipe bodies): after every Flush and End the pump re-checks
// conn_->closing() and re-finds the front request instead of keeping
// references. The session itself is freed only in the connection's close
// callback, never inside these frames.
//
// Why read + writev and not uv_fs_sendfile (measured 2026-12-02, this VM,
// 2 vCPUs, server pinned to CPU 0, wrk -t1 -c20 pinned to CPU 1, a 1 MiB
// file over HTTP/1.1 keep-alive, a standalone libuv server written for the
// comparison; two interleaved runs each, noisy machine):
//   uv_fs_read 128 KiB + uv_write, one read ahead:  552 / 514 req/s,
//                                                  0.91 / 0.78 ms CPU/req
//   uv_fs_sendfile(socket, file) on the threadpool: 506 / 291 req/s,
//                                                  1.05 / 1.03 ms CPU/req
// and strace shows why: libuv (1.44 here, the same code in node 20's 1.46)
// first tries copy_file_range, which fails with EINVAL for a socket; that
// is not ENOSYS, so sendfile(2) is never tried and uv__fs_sendfile_emul
// copies through an 8 KiB buffer with pread + write + poll on a threadpool
// thread (128 syscall pairs per MiB, and a socket written from a second
// thread behind the writer's back). So sendfile is not used. A direct
// sendfile(2) from uv_queue_work would also block a threadpool thread on a
// full socket (or spin on EAGAIN: the loop owns the socket's poll watcher).
#include "core/http1/http1_pipe_body.h"

#include <algorithm>

#include "core/net/connection.h"
#include "core/http1/http1_session.h"
#include "core/net/listener.h"
#include "core/http1/response_serializer.h"

namespace sluice {

namespace {
// Bytes of file data allowed in the writer (queued + in flight) before the
// pump waits for a write to complete: two pool buffers keep the socket
// busy while the next read lands.
constexpr size_t kPipeBacklog = 2 * PipeBufferPool::kDefaultBufferSize;
}  // namespace

Http1PipeBody::Http1PipeBody(Http1Session* session, uint32_t seq,
                             PipeSource* source, PipeBodyListener* listener)
    : session_(session),
      seq_(seq),
      pipe_(new Pipe(source, this)),
      listener_(listener) {}

Http1PipeBody::~Http1PipeBody() {
  pipe_->Destroy();
  if (listener_) listener_->OnPipeBodyDone(UV_ECANCELED);
}

void Http1PipeBody::OnPipeReadable() { session_->OnPipeEvent(seq_, 0); }

void Http1PipeBody::OnPipeError(int err) {
  session_->OnPipeEvent(seq_, err);
}

// ---- Http1Session members ------------------------------------------------------

int Http1Session::StartPipeBody(uint32_t seq, PipeSource* source,
                                PipeBodyListener* listener) {
  if (conn_->closing()) {
    source->Close();
    return kResultClosed;
  }
  Request* r = Find(seq);
  int err = kResultOk;
  if (!r || r->ended || r->pipe_body) {
    err = kResultNoRequest;
  } else if (!r->head_sent) {
    err = kResultHeadersNotSent;
  }
  if (err != kResultOk) {
    if (r) ReleaseOutput(*r);
    source->Close();
    return err;
  }
  if (r->no_body) {
    // HEAD, 204, 304: the head (with the file's length) is the response.
    ReleaseOutput(*r);
    source->Close();
    err = End(seq, std::string_view());
    return err == kResultOk ? kResultNoBody : err;
  }
  in_pipe_api_++;
  r->pipe_body.reset(new Http1PipeBody(this, seq, source, listener));
  // Start may report a synchronous failure (OnPipeError), which destroys
  // the connection and with it `r`: look it up again afterwards.
  r->pipe_body->Start();
  if (!conn_->closing()) {
    Request* now = Find(seq);
    if (now && now->pipe_body && IsFront(*now)) PumpPipeBody();
  }
  in_pipe_api_--;
  return kResultOk;
}

void Http1Session::HoldOutput(uint32_t seq) {
  Request* r = Find(seq);
  if (r && !r->head_sent) r->hold_output = true;
}

void Http1Session::ReleaseOutput(Request& r) {
  if (!r.hold_output) return;
  r.hold_output = false;
  if (IsFront(r)) {
    conn_->writer().queue().Splice(r.staged);
    conn_->MarkDirty();
  }
}

void Http1Session::OnPipeEvent(uint32_t seq, int err) {
  // From libuv (an fs callback) a dispatch is opened so the embedder has
  // its scopes and the output is flushed at the end; from inside
  // StartPipeBody we are in a JS call and must not open one.
  Listener* l = conn_->listener();
  bool bracket = in_pipe_api_ == 0;
  if (bracket) l->BeginDispatch();
  if (err != 0) {
    FailPipeBody(seq, err);
  } else {
    Request* r = Find(seq);
    if (r && r->pipe_body && IsFront(*r)) PumpPipeBody();
  }
  if (bracket) l->EndDispatch();
}

void Http1Session::OnWritesDone() {
  if (conn_->closing() || requests_.empty() ||
      !requests_.front().pipe_body) {
    return;
  }
  Listener* l = conn_->listener();
  l->BeginDispatch();
  PumpPipeBody();
  l->EndDispatch();
}

void Http1Session::PumpPipeBody() {
  if (pumping_) {
    pump_again_ = true;
    return;
  }
  pumping_ = true;
  do {
    pump_again_ = false;
    PumpFrontPipe();
  } while (pump_again_ && !conn_->closing());
  pumping_ = false;
}

void Http1Session::PumpFrontPipe() {
  const size_t limit = std::max(
      kPipeBacklog, conn_->listener()->options().high_water_mark);
  bool queued = false;
  while (!conn_->closing() && !requests_.empty()) {
    Request& r = requests_.front();
    Http1PipeBody* body = r.pipe_body.get();
    if (body == nullptr) break;
    Writer& w = conn_->writer();
    if (w.Backlog() >= limit) {
      if (w.HasWritesInFlight()) break;  // OnWritesDone resumes
      // All of it is still corked here: send it now, then look again.
      conn_->Flush();
      queued = false;
      continue;
    }
    PipeSlice s;
    ssize_t n = body->pipe()->Pull(limit - w.Backlog(), &s);
    // The held head goes first, with the first data (or alone, at the end).
    if (n != kPipeWouldBlock && r.hold_output) ReleaseOutput(r);
    if (n > 0) {
      OutputQueue& q = w.queue();
      if (r.chunked) AppendChunkHeader(q, s.len);
      // The writer sends the pooled buffer itself; the reference goes back
      // when the kernel has the bytes (or the connection drops them).
      q.AppendExternal(s.data, s.len, new PipeBufferRef(s.buf));
      if (r.chunked) q.Append("\r\n", 2);
      queued = true;
      continue;
    }
    if (n == kPipeWouldBlock) break;  // OnPipeReadable resumes
    if (n == kPipeEof) {
      uint32_t seq = r.seq;
      PipeBodyListener* listener = body->TakeListener();
      r.pipe_body.reset();  // closes the source (and its fd)
      End(seq, std::string_view());  // may pump the next response (nested)
      queued = true;
      if (listener) listener->OnPipeBodyDone(0);
      continue;
    }
    FailPipeBody(r.seq, static_cast<int>(n));
    return;
  }
  if (queued) conn_->MarkDirty();
}

void Http1Session::FailPipeBody(uint32_t seq, int err) {
  if (conn_->closing()) return;
  Request* r = Find(seq);
  if (!r || !r->pipe_body) return;
  r->hold_output = false;
  PipeBodyListener* listener = r->pipe_body->TakeListener();
  r->pipe_body.reset();
  // The head promised a length (or a chunked body that would now end
  // early and look complete): the only honest end is to drop the
  // connection, as node does when a piped file stream fails.
  conn_->Destroy();
  if (listener) listener->OnPipeBodyDone(err);
}

}  // namespace sluice
