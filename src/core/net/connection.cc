#include "core/net/connection.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/net/address.h"
#include "core/net/session_factory.h"
#include "core/net/listener.h"
#include "core/net/tls_context.h"

namespace sluice {

Connection::Connection(Listener* listener)
    : listener_(listener),
      writer_(reinterpret_cast<uv_stream_t*>(&h_), this),
      read_buffers_(this) {}

// Waits for the socket to become writable, for a session that wrote to it
// past the Writer (sendfile) and met EAGAIN. libuv allows one watcher per
// descriptor number and the uv_tcp_t already has the socket's, so this
// polls a dup: epoll keys its interest list on (descriptor, open file), so
// the dup is watched on its own while the readiness is the socket's.
// One-shot: stopped after one wake-up (libuv's poll is level-triggered).
// Its own heap object, LoopTracked: the handle outlives the connection
// until libuv's close callback, which also closes the dup.
class WritableWatch {
 public:
  static WritableWatch* Create(uv_loop_t* loop, int fd, Connection* owner,
                               int* err) {
    int dup_fd = DupCloexec(fd);
    if (dup_fd < 0) {
      *err = dup_fd;
      return nullptr;
    }
    WritableWatch* w = new WritableWatch(owner, dup_fd);
    int r = uv_poll_init(loop, &w->poll_, dup_fd);
    if (r != 0) {
      close(dup_fd);
      delete w;
      *err = r;
      return nullptr;
    }
    w->poll_.data = w;
    return w;
  }
  int Start() {
    return uv_poll_start(&poll_, UV_WRITABLE | UV_DISCONNECT, OnPoll);
  }
  // Owner → watch: no more calls; frees itself after libuv's close.
  void Close() {
    owner_ = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(&poll_), OnClosed);
  }

 private:
  WritableWatch(Connection* owner, int fd) : owner_(owner), fd_(fd) {}
  // libuv → watch, loop thread: writable, hung up or an error (status < 0):
  // either way the session's next write says what happened.
  static void OnPoll(uv_poll_t* h, int /*status*/, int /*events*/) {
    WritableWatch* w = static_cast<WritableWatch*>(h->data);
    uv_poll_stop(h);
    if (w->owner_) w->owner_->OnSocketWritable();
  }
  static void OnClosed(uv_handle_t* h) {
    WritableWatch* w = static_cast<WritableWatch*>(h->data);
    close(w->fd_);
    delete w;
  }
  static int DupCloexec(int fd) {
    int r = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    return r < 0 ? -errno : r;
  }
  LoopTracked tracked_;
  uv_poll_t poll_;
  Connection* owner_;
  int fd_;
};

Connection::~Connection() = default;

int Connection::socket_fd() const {
  uv_os_fd_t fd;
  if (uv_fileno(reinterpret_cast<const uv_handle_t*>(&h_), &fd) != 0) return -1;
  return fd;
}

int Connection::WaitWritable() {
  if (closing_) return UV_ECANCELED;
  if (writable_watch_ == nullptr) {
    int fd = socket_fd();
    if (fd < 0) return UV_EBADF;
    int err = 0;
    writable_watch_ = WritableWatch::Create(loop(), fd, this, &err);
    if (writable_watch_ == nullptr) return err;
  }
  return writable_watch_->Start();
}

void Connection::OnSocketWritable() {
  if (closing_) return;
  // As after a completed write of the Writer's.
  session_->OnWritesDone();
  if (closing_) return;
  MaybeEmitDrain();
  MaybeResumeOutput();
}

uv_loop_t* Connection::loop() const { return listener_->loop(); }

Connection* Connection::Accept(Listener* listener, uv_stream_t* server) {
  return Open(listener, server, -1);
}

Connection* Connection::Adopt(Listener* listener, uv_os_sock_t fd) {
  return Open(listener, nullptr, fd);
}

Connection* Connection::Open(Listener* listener, uv_stream_t* server,
                             uv_os_sock_t fd) {
  Connection* c = new Connection(listener);
  c->pipe_ = listener->is_pipe();
  if (c->pipe_) uv_pipe_init(listener->loop(), &c->h_.pipe, 0);
  else uv_tcp_init(listener->loop(), &c->h_.tcp);
  c->handle()->data = c;
  int r = server ? uv_accept(server, c->stream())
                 : c->pipe_ ? uv_pipe_open(&c->h_.pipe, fd) : uv_tcp_open(&c->h_.tcp, fd);
  if (r != 0) {
    // Not yet registered anywhere: free after the handle closes.
    c->closing_ = true;
    uv_close(c->handle(),
             [](uv_handle_t* h) { delete static_cast<Connection*>(h->data); });
    return nullptr;
  }
  if (!c->pipe_) {
    const ServerOptions& o = listener->options();
    if (o.no_delay) uv_tcp_nodelay(&c->h_.tcp, 1);
    if (o.tcp_keep_alive) c->SetKeepAlive(true, o.tcp_keep_alive_delay_s);
  }
  listener->AddConnection(c);
  TlsServer* tls = listener->tls();
  if (tls != nullptr) {
    // Before the session: it asks tls() (no h2c detection over TLS).
    c->tls_ = TlsChannel::Create(tls, &c->writer_.wire());
  }
  c->session_.reset(listener->sessions()->Initial(c, &c->detecting_));
  if (tls != nullptr) {
    if (!c->tls_) {
      c->Destroy();
      return nullptr;
    }
    // The session starts once the handshake chose it (OnHandshakeDone):
    // until then no byte reaches it and none of its deadlines runs — the
    // handshake has its own.
    c->ClearDeadline(kDeadlineHeaders);
    c->ClearDeadline(kDeadlineRequest);
    c->detecting_ = false;
    c->writer_.set_sealer(c->tls_.get());
    c->SetDeadline(kDeadlineHandshake, tls->handshake_timeout_ms);
  }
  c->StartReading();
  return c;
}

int Connection::SetKeepAlive(bool enable, unsigned int delay_s) {
  if (closing_) return UV_EBADF;
  if (pipe_) return 0;  // a Unix socket has no keep-alive probes (node: a no-op)
  if (!enable || delay_s > 0) return uv_tcp_keepalive(&h_.tcp, enable ? 1 : 0, delay_s);
  // Enabled with no delay: as node, the idle time stays as it was (libuv
  // would set it, and newer ones refuse 0).
  uv_os_fd_t fd;
  int r = uv_fileno(handle(), &fd);
  if (r != 0) return r;
  int on = 1;
  return setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on)) == 0 ? 0 : -errno;
}

void Connection::StartReading() {
  if (reading_ || closing_ || pause_mask_) return;
  if (uv_read_start(stream(), OnAlloc,
                    OnReadCb) == 0) {
    reading_ = true;
  }
}

void Connection::StopReading() {
  if (!reading_) return;
  uv_read_stop(stream());
  reading_ = false;
}

void Connection::Pause(PauseReason why) {
  pause_mask_ |= why;
  StopReading();
}

void Connection::Resume(PauseReason why) {
  if (!(pause_mask_ & why)) return;
  pause_mask_ &= ~why;
  if (pause_mask_ || closing_) return;
  if ((session_ && session_->HasHeldInput()) ||
      (tls_ && tls_->handshake_done() && tls_->HasBufferedInput())) {
    // (TLS: records read before the pause wait inside OpenSSL; the peer
    // may send nothing more, so they are decrypted without a new read.)
    // Held-back input must be parsed before new reads (whichever pause
    // reason was lifted last), and parsing calls into the embedder: never
    // from inside the embedder's own call.
    listener_->ScheduleReparse(this);
    return;
  }
  if (!shut_down_ || !eof_) StartReading();
}

void Connection::ReparseHeldInput() {
  if (closing_) return;
  if (tls_ && !tls_->handshake_done()) {
    // An SNICallback answered (SniAnswered).
    if (!tls_->sni_waiting() && DriveHandshake()) PumpTls();
    if (!pause_mask_ && !closing_) StartReading();
    return;
  }
  session_->ResumeParsing();
  if (tls_ && tls_->handshake_done() && !closing_) PumpTls();
  if (!pause_mask_ && !closing_) StartReading();
}

// Every read is placed here: embedder memory when the session wants it and
// ReadBuffers gets some, else the listener's shared buffer. Asking the
// embedder runs JS without a dispatch (no microtasks, no flush): a JS
// allocator is synchronous. Should that JS destroy this connection anyway,
// the object lives until the close callback and the read is refused
// (ENOBUFS) below.
void Connection::OnAlloc(uv_handle_t* h, size_t suggested, uv_buf_t* buf) {
  (void)suggested;
  Connection* c = static_cast<Connection*>(h->data);
  c->alloc_result_ = ReadBuffers::kGot;
  // TLS: ciphertext always goes to the shared buffer (OpenSSL reads it
  // there during the read callback; OnTlsRead copies out what it leaves);
  // PumpTls asks ReadBuffers for the plaintext's memory.
  if (c->session_ && !c->tls_ && !c->shut_down_ && !c->closing_) {
    ReadBuffers::Result r =
        c->read_buffers_.Acquire(c->session_->ReadMemory(), buf);
    if (c->closing_ && r != ReadBuffers::kFallback) {
      *buf = uv_buf_init(nullptr, 0);
      return;
    }
    if (r == ReadBuffers::kGot) return;
    if (r == ReadBuffers::kDry || r == ReadBuffers::kError) {
      c->alloc_result_ = r;
      *buf = uv_buf_init(nullptr, 0);  // libuv answers UV_ENOBUFS
      return;
    }
  }
  *buf = uv_buf_init(c->listener_->shared_read_buffer(),
                     Listener::kSharedReadBufferSize);
}

void Connection::OnReadCb(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf) {
  Connection* c = static_cast<Connection*>(s->data);
  if (nread == 0 || c->closing_) return;  // EAGAIN, or closing
  Listener* l = c->listener_;
  if (c->shut_down_) {
    // Lingering after our FIN: discard input until the peer closes.
    if (nread < 0) c->Destroy();
    return;
  }
  l->BeginDispatch();
  if (nread == UV_ENOBUFS) {
    // The alloc callback had no memory for this read.
    if (c->alloc_result_ == ReadBuffers::kDry) {
      // TCP backpressure instead of unbounded copying: the peer's window
      // fills while the pool is dry (RetryReadBuffer resumes).
      c->Pause(kPauseMemory);
    } else {
      c->Destroy();  // the allocator failed
    }
  } else if (nread > 0 && c->tls_) {
    c->OnTlsRead(buf->base, static_cast<size_t>(nread));
  } else if (nread > 0) {
    size_t n = static_cast<size_t>(nread);
    c->bytes_read_ += n;
    c->read_buffers_.OnRead(buf->base, n);
    if (c->detecting_) {
      c->DetectProtocol(buf->base, n);
    } else {
      c->session_->OnRead(buf->base, n);
    }
    // Whatever of the buffer nothing refers to goes back now.
    if (!c->closing_) {
      c->read_buffers_.AfterRead(c->session_->KeepsReadBuffer());
    }
  } else if (c->tls_ && !c->tls_->handshake_done()) {
    // EOF or a reset before the handshake completed: as node, the client
    // is reported gone (tlsClientError ECONNRESET).
    c->tls_->SetError("ECONNRESET",
                      "Client network socket disconnected before secure TLS "
                      "connection was established");
    c->FailTls();
  } else if (nread == UV_EOF) {
    c->eof_ = true;
    c->StopReading();
    c->session_->OnEof();
  } else {
    // ECONNRESET and friends: the peer is gone.
    c->Destroy();
  }
  l->EndDispatch();
}

void Connection::DetectProtocol(const char* data, size_t len) {
  size_t replay = preface_.matched();  // preface bytes of earlier reads
  PrefaceMatcher::Result r = preface_.Feed(data, len);
  if (r == PrefaceMatcher::kNeedMore) return;
  detecting_ = false;
  if (r == PrefaceMatcher::kHttp2) {
    // No byte reached the initial session: it is simply replaced.
    session_.reset(listener_->sessions()->ForPreface(this));
    if (session_->Start() != 0) {
      Destroy();
      return;
    }
  }
  if (replay > 0) session_->OnRead(PrefaceMatcher::kPreface, replay);
  if (!closing_) session_->OnRead(data, len);
}

void Connection::OnTlsRead(const char* data, size_t len) {
  // `data` is the listener's shared read buffer, lent to OpenSSL until
  // this returns (plaintext goes elsewhere: PumpTls); whatever way this
  // returns, what OpenSSL has not consumed is copied out of it first.
  struct EndFeedOnReturn {
    TlsChannel* tls;
    ~EndFeedOnReturn() { tls->EndFeed(); }
  } end_feed{tls_.get()};
  tls_->Feed(data, len);
  if (!tls_->handshake_done()) {
    const TlsServer* server = listener_->tls();
    if (tls_->handshake_bytes() > server->max_handshake_bytes) {
      tls_->SetError("ERR_SLUICE_TLS_HANDSHAKE_TOO_LARGE",
                     "TLS handshake input exceeds its bound");
      FailTls();
      return;
    }
    // Waiting for the SNICallback: input is only buffered (bounded above).
    if (tls_->sni_waiting()) return;
    if (!DriveHandshake()) return;
  }
  PumpTls();
}

bool Connection::DriveHandshake() {
  for (;;) {
    TlsChannel::Status s = tls_->Handshake();
    if (s == TlsChannel::kError) {
      FailTls();
      return false;
    }
    if (!writer_.wire().empty()) MarkDirty();  // the server's flight
    if (s == TlsChannel::kWant) return false;
    if (s == TlsChannel::kSuspended) {
      // Asked outside OpenSSL's callback, so the embedder may answer at
      // once (SniAnswered then only records) or later (it schedules us).
      asking_sni_ = true;
      listener_->delegate()->OnSniRequest(this, tls_->sni_servername().c_str());
      asking_sni_ = false;
      if (closing_ || tls_->sni_waiting()) return false;
      continue;  // answered synchronously
    }
    return OnHandshakeDone();
  }
}

void Connection::SniAnswered(TlsContext ctx) {
  if (closing_ || !tls_ || !tls_->sni_waiting()) return;
  tls_->SetSniAnswer(std::move(ctx));
  // Inside OnSniRequest DriveHandshake goes on by itself; otherwise the
  // handshake resumes in the listener's next dispatch, never inside the
  // embedder's call.
  if (!asking_sni_) listener_->ScheduleReparse(this);
}

bool Connection::OnHandshakeDone() {
  ClearDeadline(kDeadlineHandshake);
  if (listener_->tls()->refuse_unverified && !tls_->PeerVerified()) {
    // As node, which destroys the socket as soon as it learns the
    // handshake is done, before its last flight is written: no session, no
    // 'secureConnection', no alert. The flight still queued (TLS 1.2: the
    // server's Finished; TLS 1.3: session tickets) is dropped, so a TLS 1.2
    // client sees the close before its handshake completes, a TLS 1.3
    // client (done already) the close after it.
    writer_.wire().Clear();
    Destroy();
    return false;
  }
  std::string alpn = tls_->alpn();
  if (alpn == "h2" && listener_->delegate()->http2() != nullptr) {
    // As a connection opening with the preface: the initial session saw
    // no byte and is simply replaced; nghttp2 checks the client preface.
    session_.reset(listener_->sessions()->ForPreface(this));
    if (session_->Start() != 0) {
      Destroy();
      return false;
    }
  } else if (!listener_->tls()->allow_http1) {
    // allowHTTP1: false and no "h2" (no ALPN at all): node emits
    // 'unknownProtocol' and closes; sluice closes.
    Destroy();
    return false;
  } else {
    SetDeadline(kDeadlineHeaders, listener_->options().headers_timeout_ms);
    SetDeadline(kDeadlineRequest, listener_->options().request_timeout_ms);
  }
  MarkDirty();
  listener_->delegate()->OnSecureConnection(this);
  return !closing_;
}

void Connection::PumpTls() {
  while (!closing_ && !pause_mask_ && !shut_down_ && tls_->HasReadable()) {
    ReadBuffers::Want want = session_->ReadMemory();
    uv_buf_t buf;
    ReadBuffers::Result r = want == ReadBuffers::kNone
                                ? ReadBuffers::kFallback
                                : read_buffers_.Acquire(want, &buf);
    if (closing_) return;  // the embedder's allocator closed us
    if (r == ReadBuffers::kDry) {
      Pause(kPauseMemory);  // RetryReadBuffer resumes (Resume: reparse)
      return;
    }
    if (r == ReadBuffers::kError) {
      Destroy();
      return;
    }
    if (r == ReadBuffers::kFallback) {
      // The listener's plaintext buffer, for plaintext the session
      // consumes or copies before this returns. (Not the shared read
      // buffer: the ciphertext OpenSSL reads may still lie there.)
      buf = uv_buf_init(listener_->tls_plain_buffer(),
                        Listener::kSharedReadBufferSize);
    }
    // As many records as fit go into this buffer before the session sees
    // them: one session read (one body chunk) per buffer, not per record.
    size_t n = 0;
    TlsChannel::Status s = TlsChannel::kOk;
    while (n < buf.len) {
      size_t got = 0;
      s = tls_->Read(buf.base + n, buf.len - n, &got);
      if (s != TlsChannel::kOk) break;
      n += got;
      if (!tls_->HasReadable()) break;
    }
    if (n > 0) {
      read_buffers_.OnRead(buf.base, n);
      session_->OnRead(buf.base, n);
      if (closing_) return;
      read_buffers_.AfterRead(session_->KeepsReadBuffer());
      if (s == TlsChannel::kOk || s == TlsChannel::kWant) continue;
    } else if (s == TlsChannel::kWant || s == TlsChannel::kOk) {
      // No whole record after all: a fresh hold with nothing in it goes
      // back unless a body is due (the next record lands there).
      if (r == ReadBuffers::kGot) {
        read_buffers_.AfterRead(session_->KeepsReadBuffer());
      }
      break;
    } else if (r == ReadBuffers::kGot) {
      read_buffers_.AfterRead(false);
    }
    if (s == TlsChannel::kClosed) {
      // close_notify: the peer sends no more (as EOF on cleartext).
      eof_ = true;
      StopReading();
      session_->OnEof();
      return;
    }
    Destroy();  // a bad record after the handshake: nothing to answer
    return;
  }
  if (!closing_ && !writer_.wire().empty()) MarkDirty();
}

void Connection::FailTls() {
  if (closing_) return;
  listener_->delegate()->OnTlsClientError(this, tls_->error_code().c_str(),
                                          tls_->error_message().c_str());
  if (closing_) return;
  writer_.Flush();  // the alert OpenSSL queued, if any; best effort
  Destroy();
}

void Connection::ReplaceSession(Session* s) {
  retired_sessions_.push_back(std::move(session_));
  session_.reset(s);
  listener_->ScheduleFreeRetired(this);
}

void Connection::FreeRetiredSessions() {
  retired_sessions_.erase(
      std::remove_if(retired_sessions_.begin(), retired_sessions_.end(),
                     [](const std::unique_ptr<Session>& r) {
                       return r->CanFreeRetired();
                     }),
      retired_sessions_.end());
  if (retired_sessions_.empty()) {
    // Give the vector's storage back as well.
    std::vector<std::unique_ptr<Session>>().swap(retired_sessions_);
  }
}

void Connection::MarkDirty() {
  if (!dirty && !closing_) listener_->MarkDirty(this);
}

void Connection::Flush(bool more) {
  if (closing_) return;
  // Protocols that cork inside their engine (HTTP/2) produce output now.
  session_->OnFlush();
  if (closing_) return;
  int r = writer_.Flush(more && !pipe_ && !tls_);
  if (r != 0) {
    Destroy();
    return;
  }
  if (ending_ && !shut_down_ && !writer_.HasWritesInFlight() &&
      writer_.queue().empty()) {
    StartShutdown();
    return;
  }
  // A write() that reported backpressure gets its 'drain' even when the
  // kernel took everything at once.
  MaybeEmitDrain();
  MaybeResumeOutput();
}

void Connection::MaybeResumeOutput() {
  if (!(pause_mask_ & kPauseOutput) || closing_ ||
      writer_.Backlog() >= listener_->options().high_water_mark) {
    return;
  }
  Resume(kPauseOutput);
}

void Connection::MaybeEmitDrain() {
  if (!drain_wanted_ || closing_ ||
      writer_.Backlog() >= listener_->options().high_water_mark) {
    return;
  }
  drain_wanted_ = false;
  listener_->BeginDispatch();
  listener_->delegate()->OnDrain(this);
  listener_->EndDispatch();
}

void Connection::OnWriteComplete(int status) {
  if (closing_) return;
  if (status < 0) {
    listener_->BeginDispatch();
    Destroy();
    listener_->EndDispatch();
    return;
  }
  if (ending_ && !shut_down_ && writer_.queue().empty()) {
    StartShutdown();
    return;
  }
  // The session may produce more now (a native pipe body waits for this).
  session_->OnWritesDone();
  if (closing_) return;
  MaybeEmitDrain();
  MaybeResumeOutput();
}

void Connection::EndGracefully() {
  if (closing_ || ending_) return;
  ending_ = true;
  ClearDeadline(kDeadlineHeaders);
  ClearDeadline(kDeadlineRequest);
  ClearDeadline(kDeadlineKeepAlive);
  // Bound the whole goodbye: a peer that never reads our response nor
  // closes its side must not hold the connection forever.
  SetDeadline(kDeadlineLinger, listener_->options().linger_ms +
                                   listener_->options().keep_alive_timeout_ms);
  if (writer_.queue().empty() && !writer_.HasWritesInFlight()) {
    StartShutdown();
  } else {
    MarkDirty();
  }
}

void Connection::StartShutdown() {
  if (shut_down_ || closing_) return;
  if (tls_) {
    // close_notify after the last record (libuv shuts down once the
    // writes queued before it are done).
    tls_->SendCloseNotify();
    if (writer_.Flush() != 0) {
      Destroy();
      return;
    }
  }
  shut_down_ = true;
  shutdown_req_.data = this;
  if (uv_shutdown(&shutdown_req_, stream(),
                  OnShutdown) != 0) {
    shut_down_ = false;
    Destroy();
  }
}

void Connection::OnShutdown(uv_shutdown_t* req, int status) {
  Connection* c = static_cast<Connection*>(req->data);
  if (c->closing_) return;
  if (status < 0 || c->eof_) {
    c->listener_->BeginDispatch();
    c->Destroy();
    c->listener_->EndDispatch();
    return;
  }
  // Our FIN is out. Keep reading (discarding) until the peer's EOF so that
  // its unread bytes do not make the kernel answer with RST, which could
  // destroy the response before the peer reads it.
  c->SetDeadline(kDeadlineLinger, c->listener_->options().linger_ms);
  c->pause_mask_ = 0;
  c->StartReading();
}

void Connection::Reset() {
  if (closing_) return;
  if (!pipe_) {
    int fd = socket_fd();
    // Zero linger: close(2) discards the send queue and sends RST. The
    // option is the socket's, so it holds however the descriptor (or the
    // writability watch's dup of it) is closed last. A failure leaves a
    // plain close: nothing better is left to do.
    struct linger lg = {1, 0};
    if (fd >= 0) (void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  }
  Destroy();
}

void Connection::Destroy() {
  if (closing_) return;
  closing_ = true;
  // As a node socket destroyed after its writes: what was queued before the
  // destroy (a response the handler wrote, then destroyed the socket) goes
  // to the kernel as far as it takes it now; uv_close cancels the rest.
  // An error here changes nothing: the connection goes either way.
  (void)writer_.Flush();
  StopReading();
  // The embedder drops its hold on a read buffer in OnConnectionClose.
  read_buffers_.Forget();
  if (session_) session_->OnClose();
  if (writable_watch_ != nullptr) {
    writable_watch_->Close();
    writable_watch_ = nullptr;
  }
  uv_close(handle(), OnClosed);
}

void Connection::OnClosed(uv_handle_t* h) {
  Connection* c = static_cast<Connection*>(h->data);
  Listener* l = c->listener_;
  // Write callbacks (cancelled) have all run by now.
  l->BeginDispatch();
  // After Release the delegate may be gone (the binding's server object is
  // finalized at environment teardown, e.g. a worker terminated with open
  // connections): no delegate call then, as Listener::Release promises.
  if (!l->released()) l->delegate()->OnConnectionClose(c);
  l->RemoveConnection(c);
  l->EndDispatch();
  delete c;
  l->OnConnectionFreed();
}

void Connection::SetDeadline(DeadlineKind kind, uint64_t timeout_ms) {
  deadlines_[kind] = timeout_ms ? uv_now(listener_->loop()) + timeout_ms : 0;
}

void Connection::CheckDeadlines(uint64_t now) {
  for (int k = 0; k < kDeadlineCount; k++) {
    if (closing_) return;
    if (deadlines_[k] && deadlines_[k] <= now) {
      deadlines_[k] = 0;
      if (k == kDeadlineLinger) {
        Destroy();
      } else if (k == kDeadlineHandshake) {
        tls_->SetError("ERR_TLS_HANDSHAKE_TIMEOUT", "TLS handshake timeout");
        FailTls();
      } else {
        session_->OnTimeout(k);
      }
    }
  }
}

int Connection::GetPeer(std::string* ip, int* port, int* family) const {
  // A Unix socket's peer has no address (node: remoteAddress undefined).
  if (pipe_) return UV_ENOTSUP;
  return GetTcpAddress(&h_.tcp, AddressKind::kPeer, ip, port, family);
}

int Connection::GetLocal(std::string* ip, int* port, int* family) const {
  if (pipe_) return UV_ENOTSUP;
  return GetTcpAddress(&h_.tcp, AddressKind::kLocal, ip, port, family);
}

}  // namespace sluice
