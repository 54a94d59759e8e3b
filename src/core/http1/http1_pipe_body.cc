// The HTTP/1.1 pipe sink and the Http1Session members that drive it
// (docs/files.md "The HTTP/1.1 pump" and "sendfile": backpressure,
// re-entrancy, the sendfile steps and their hazards).
//
// Contracts: the pump writes while Writer::Backlog() is under the pipe
// backlog and resumes from OnWritesDone; it may re-enter itself through
// End → Advance (the nested call only asks for another pass); after every
// Flush and End it re-checks conn_->closing() and re-finds the front
// request, since a write error destroys the requests and their pipes.
#include "core/http1/http1_pipe_body.h"

#include <errno.h>
#include <sys/types.h>
#include <sys/uio.h>
#ifdef __linux__
#include <sys/sendfile.h>
#endif

#include <algorithm>

#include "core/body/file_source.h"
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

// From this size on a body the small-file cache holds whole goes out with
// sendfile rather than from the cached bytes: measured with serveStatic,
// wrk c100 (docs/files.md "sendfile"), 16 KiB costs 12 µs from memory
// and 15.5 µs with sendfile, 32 KiB about the same both ways, 64 KiB 20.5
// µs from memory and 18 µs with sendfile.
constexpr uint64_t kSendfileOverCached = 48 * 1024;

// At most this many bytes per sendfile(2) call (the socket buffer bounds
// what one call takes anyway), and one residency probe per stride of it.
constexpr uint64_t kSendfileChunk = 1024 * 1024;
constexpr uint64_t kSendfileProbeStride = 512 * 1024;

thread_local SendfileStats t_sendfile;

#ifdef __linux__
// Whether the pages holding [pos, pos + len) of `fd` look resident: one
// byte read with RWF_NOWAIT at each stride and at the last byte. EAGAIN:
// a page is not in the page cache. A kernel or file system without
// RWF_NOWAIT (EOPNOTSUPP, ENOSYS, EINVAL) answers "no": the threadpool path.
bool PagesResident(int fd, uint64_t pos, uint64_t len) {
  char byte;
  struct iovec iov = {&byte, 1};
  for (uint64_t at = 0;; at += kSendfileProbeStride) {
    const bool last = at + kSendfileProbeStride >= len;
    uint64_t where = pos + (last ? len - 1 : at);
    ssize_t r;
    do {
      r = preadv2(fd, &iov, 1, static_cast<off_t>(where), RWF_NOWAIT);
    } while (r < 0 && errno == EINTR);
    // r == 0: the file ended early; sendfile will see it and fail the body.
    if (r < 0) return false;
    if (last) return true;
  }
}
#endif
}  // namespace

const SendfileStats& ThreadSendfileStats() { return t_sendfile; }

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
                                PipeBodyListener* listener, FileSource* file) {
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
#ifdef __linux__
  // Cleartext, the file as is, and bytes left beyond what is in memory:
  // sendfile (the pipe is not started). See the top of this file.
  if (file != nullptr && file == source && conn_->tls() == nullptr &&
      !r->chunked && conn_->listener()->options().sendfile &&
      conn_->socket_fd() >= 0) {
    // A body wholly in the small-file cache is written from memory below
    // kSendfileOverCached, and sent from the page cache from there on,
    // where a copy into the socket costs more than sendfile does.
    if (file->remaining() == 0 && file->length() >= kSendfileOverCached) {
      file->ForgoCachedContent();
    }
    if (file->remaining() > 0 && file->BeginSendfile()) {
      r->pipe_body->set_sendfile(file);
      t_sendfile.bodies++;
    }
  }
#endif
  // Start may report a synchronous failure (OnPipeError), which destroys
  // the connection and with it `r`: look it up again afterwards.
  if (!r->pipe_body->sendfile()) r->pipe_body->Start();
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
    if (body->sendfile() != nullptr) {
      int err = 0;
      SendfileStep step = SendfileFront(r, &err);
      if (step == kSendfileWait) break;  // OnWritesDone resumes
      if (step == kSendfileFailed || step == kSendfileChanged) {
        FailPipeBody(r.seq, err, step == kSendfileChanged);
        return;
      }
      if (step == kSendfileRead) {
        t_sendfile.fallbacks++;
        // Pages not resident: the rest through the pipe (threadpool reads).
        body->sendfile()->EndSendfile();
        body->set_sendfile(nullptr);
        uint32_t seq = r.seq;
        body->Start();  // may fail synchronously (OnPipeError)
        if (conn_->closing()) return;
        Request* now = Find(seq);
        if (now == nullptr || now != &requests_.front()) break;
        continue;
      }
      // kSendfileDone: the whole range is in the kernel.
      EndPipeBody(r);
      queued = true;
      continue;
    }
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
      if (r.log) r.log->body_bytes += s.len;
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
      EndPipeBody(r);
      queued = true;
      continue;
    }
    FailPipeBody(r.seq, static_cast<int>(n));
    return;
  }
  if (queued) conn_->MarkDirty();
}

Http1Session::SendfileStep Http1Session::SendfileFront(Request& r, int* err) {
#ifdef __linux__
  FileSource* f = r.pipe_body->sendfile();
  Writer& w = conn_->writer();
  // 1. The held head, and what is already in memory, by reference.
  if (r.hold_output) ReleaseOutput(r);
  if (PipeBuffer* b = f->TakeReady()) {
    if (r.log) r.log->body_bytes += b->size;
    w.queue().AppendExternal(b->data(), b->size, new PipeBufferRef(b));
  }
  // 2. Everything queued leaves before the first sendfile byte. With no
  // write in flight it leaves now, in one write, and the first chunk's
  // check and probe (step 3) are made before it: when the first sendfile
  // is sure to follow at once, that write says MSG_MORE, so the head's
  // last partial segment waits a few microseconds for the file's first
  // bytes and both leave in the same segments (what nginx gets from
  // TCP_CORK around writev + sendfile). Otherwise (pages not resident: the
  // pipe takes over) the queue is left for the pipe path, which sends it
  // with the first data it reads.
  bool first_checked = false;
  if (!w.queue().empty()) {
    bool more = false;
    if (!w.HasWritesInFlight() && f->remaining() > 0) {
      uint64_t chunk = std::min<uint64_t>(f->remaining(), kSendfileChunk);
      if (int e = f->CheckUnchanged()) {
        *err = e;
        return kSendfileChanged;
      }
      if (!PagesResident(f->fd(), f->file_pos(), chunk)) {
        conn_->MarkDirty();
        return kSendfileRead;
      }
      more = first_checked = true;
    }
    conn_->Flush(more);
    if (conn_->closing()) {
      *err = UV_ECANCELED;
      return kSendfileWait;  // destroyed: the pipe body is gone with it
    }
  }
  // Not all taken: the rest went to uv_write (without MSG_MORE), whose
  // completion (OnWritesDone) resumes us.
  if (w.HasWritesInFlight() || !w.queue().empty()) return kSendfileWait;
  // 3. sendfile while the pages are resident and the socket takes bytes.
  const int sock = conn_->socket_fd();
  while (f->remaining() > 0) {
    uint64_t chunk = std::min<uint64_t>(f->remaining(), kSendfileChunk);
    // The file still holds the promised range, unchanged (see the top of
    // this file: what a truncation or a rewrite does to bytes sendfile
    // hands over). For the first chunk after a MSG_MORE write, done
    // before that write (step 2), with nothing between but the write.
    if (!first_checked) {
      if (int e = f->CheckUnchanged()) {
        *err = e;
        return kSendfileChanged;
      }
      if (!PagesResident(f->fd(), f->file_pos(), chunk)) return kSendfileRead;
    }
    first_checked = false;
    off_t off = static_cast<off_t>(f->file_pos());
    ssize_t n = sendfile(sock, f->fd(), &off, static_cast<size_t>(chunk));
    if (n > 0) {
      f->Advance(static_cast<uint64_t>(n));
      conn_->CountDirectWrite(static_cast<size_t>(n));
      if (r.log) r.log->body_bytes += static_cast<uint64_t>(n);
      t_sendfile.calls++;
      t_sendfile.bytes += static_cast<uint64_t>(n);
      continue;
    }
    if (n == 0) {
      *err = UV_EOF;  // the file shrank under us since the fstat
      return kSendfileChanged;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      t_sendfile.waits++;
      int e = conn_->WaitWritable();
      if (e != 0) {
        *err = e;
        return kSendfileFailed;
      }
      return kSendfileWait;
    }
    *err = -errno;  // EPIPE, ECONNRESET: the client left
    return kSendfileFailed;
  }
  // All of the range is in the kernel: one more look, for a change that
  // came during the last chunk (a reset then drops what is still unsent).
  if (int e = f->CheckUnchanged()) {
    *err = e;
    return kSendfileChanged;
  }
  return kSendfileDone;
#else
  (void)r;
  (void)err;
  return kSendfileRead;
#endif
}

void Http1Session::EndPipeBody(Request& r) {
  const uint32_t seq = r.seq;
  PipeBodyListener* listener = r.pipe_body->TakeListener();
  r.pipe_body.reset();  // closes the source (and its fd)
  End(seq, std::string_view());  // may pump the next response (nested)
  if (listener) listener->OnPipeBodyDone(0);
}

void Http1Session::FailPipeBody(uint32_t seq, int err, bool reset) {
  if (conn_->closing()) return;
  Request* r = Find(seq);
  if (!r || !r->pipe_body) return;
  r->hold_output = false;
  PipeBodyListener* listener = r->pipe_body->TakeListener();
  r->pipe_body.reset();
  // The head promised a length (or a chunked body that would now end
  // early and look complete): the only honest end is to drop the
  // connection, as node does when a piped file stream fails. With a
  // reset when bytes already in the kernel may be wrong: the peer must
  // not take what arrives for a complete body.
  if (reset) {
    conn_->Reset();
  } else {
    conn_->Destroy();
  }
  if (listener) listener->OnPipeBodyDone(err);
}

}  // namespace sluice
