#include "core/quic/quic_endpoint.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "core/net/address.h"
#include "core/quic/quic_packet.h"

namespace sluice {

namespace {

std::string LastSslError(const char* what) {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  std::string s = what;
  if (e != 0) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    s += ": ";
    s += buf;
  }
  return s;
}

// Explicit event handling: SSL_read/SSL_write on a stream only move bytes
// between the application and the stream buffers, never packets (which
// they would otherwise do with a tick of their own, once per call). Only
// QuicEndpoint::Process ticks.
void SetExplicitEvents(SSL* s) {
  SSL_set_value_uint(s, SSL_VALUE_CLASS_GENERIC, SSL_VALUE_EVENT_HANDLING_MODE,
                     SSL_VALUE_EVENT_HANDLING_MODE_EXPLICIT);
}

bool FormatSockaddr(const sockaddr_storage& ss, std::string* ip, int* port,
                    int* family) {
  if (ss.ss_family != AF_INET && ss.ss_family != AF_INET6) return false;
  FormatAddress(ss, ip, port, family);
  return true;
}

bool BioAddrToStorage(const BIO_ADDR* a, sockaddr_storage* ss) {
  memset(ss, 0, sizeof(*ss));
  int fam = BIO_ADDR_family(a);
  size_t len = 0;
  if (fam == AF_INET) {
    auto* sin = reinterpret_cast<sockaddr_in*>(ss);
    sin->sin_family = AF_INET;
    sin->sin_port = BIO_ADDR_rawport(a);
    BIO_ADDR_rawaddress(a, &sin->sin_addr, &len);
    return true;
  }
  if (fam == AF_INET6) {
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(ss);
    sin6->sin6_family = AF_INET6;
    sin6->sin6_port = BIO_ADDR_rawport(a);
    BIO_ADDR_rawaddress(a, &sin6->sin6_addr, &len);
    return true;
  }
  return false;
}

}  // namespace

// ---- QuicStream ------------------------------------------------------------

QuicStream::QuicStream(QuicConnection* conn, SSL* ssl)
    : conn_(conn), ssl_(ssl), id_(SSL_get_stream_id(ssl)) {
  SSL_set_mode(ssl_, SSL_MODE_ENABLE_PARTIAL_WRITE);
  int type = SSL_get_stream_type(ssl_);
  // A stream we cannot read (our own uni stream) has nothing to report;
  // one we cannot write (the peer's uni stream) takes no output.
  if ((type & SSL_STREAM_TYPE_READ) == 0) read_done_ = true;
  if ((type & SSL_STREAM_TYPE_WRITE) == 0) write_done_ = true;
}

QuicStream::~QuicStream() {
  // Freeing a stream SSL whose send side is concluded lets OpenSSL finish
  // sending it; one still open is reset by OpenSSL (and STOP_SENDING is
  // sent for an unfinished receive side).
  SSL_free(ssl_);
}

ptrdiff_t QuicStream::Read(uint8_t* buf, size_t cap) {
  if (read_done_) return reset_code_ != 0 || released_ ? kReset : kFin;
  size_t n = 0;
  if (SSL_read_ex(ssl_, buf, cap, &n) == 1) {
    conn_->Touch();
    return static_cast<ptrdiff_t>(n);
  }
  int err = SSL_get_error(ssl_, 0);
  if (err == SSL_ERROR_WANT_READ) return kBlocked;
  ERR_clear_error();
  read_done_ = true;
  if (err == SSL_ERROR_ZERO_RETURN) return kFin;
  switch (SSL_get_stream_read_state(ssl_)) {
    case SSL_STREAM_STATE_FINISHED:
      return kFin;
    case SSL_STREAM_STATE_RESET_REMOTE: {
      uint64_t code = 0;
      SSL_get_stream_read_error_code(ssl_, &code);
      reset_code_ = code == 0 ? conn_->codes().cancelled : code;
      return kReset;
    }
    default:
      reset_code_ = conn_->codes().internal_error;  // the connection died under it
      return kReset;
  }
}

bool QuicStream::PollReset() {
  if (read_done_) return reset_code_ != 0;
  switch (SSL_get_stream_read_state(ssl_)) {
    case SSL_STREAM_STATE_RESET_REMOTE: {
      uint64_t code = 0;
      SSL_get_stream_read_error_code(ssl_, &code);
      reset_code_ = code == 0 ? conn_->codes().cancelled : code;  // as Read
      break;
    }
    case SSL_STREAM_STATE_CONN_CLOSED:
      reset_code_ = conn_->codes().internal_error;
      break;
    default:
      ERR_clear_error();
      return false;
  }
  ERR_clear_error();
  read_done_ = true;
  return true;
}

size_t QuicStream::Pending() const {
  if (read_done_) return 0;
  int n = SSL_pending(ssl_);
  if (n <= 0) {
    ERR_clear_error();
    return 0;
  }
  return static_cast<size_t>(n);
}

ptrdiff_t QuicStream::Write(const uint8_t* data, size_t len, bool fin) {
  if (write_done_) return -1;
  size_t written = 0;
  if (len == 0) {
    if (!fin) return 0;
    if (SSL_stream_conclude(ssl_, 0) != 1) {
      ERR_clear_error();
      write_done_ = true;
      return -1;
    }
    write_done_ = true;
    conn_->endpoint()->RequestFlush();
    return 0;
  }
  if (SSL_write_ex2(ssl_, data, len, fin ? SSL_WRITE_FLAG_CONCLUDE : 0, &written) != 1) {
    int err = SSL_get_error(ssl_, 0);
    ERR_clear_error();
    if (err != SSL_ERROR_WANT_WRITE) {
      write_done_ = true;
      return -1;
    }
    written = 0;
  }
  conn_->Touch();
  if (written < len) {
    write_blocked_ = true;
    // Cut short by a full send buffer or by the peer's flow-control
    // credit (OpenSSL takes no more than the credit allows). Resuming at
    // the first freed byte would write a packet's worth per ACK, each
    // write asking for another round of Process (another tick, small
    // packets): wait for a useful amount of room instead. The buffer
    // only grows on a write, so its size now is the bound.
    uint64_t size = 0;
    if (SSL_get_value_uint(ssl_, SSL_VALUE_CLASS_GENERIC, SSL_VALUE_STREAM_WRITE_BUF_SIZE,
                           &size) != 1) {
      ERR_clear_error();
    }
    resume_room_ = std::max<uint64_t>(1, std::min<uint64_t>(kResumeRoom, size / 2));
  } else if (fin) {
    write_done_ = true;
  }
  // Only what was queued needs a tick. A write that took nothing (the
  // peer's flow-control credit is used up while the buffer has room: the
  // room check cannot see credit) must not ask for another round, or
  // Process spins on empty writes until MAX_STREAM_DATA arrives.
  if (written > 0 || write_done_) conn_->endpoint()->RequestFlush();
  return static_cast<ptrdiff_t>(written);
}

uint64_t QuicStream::WriteRoom() const {
  if (write_done_) return 0;
  uint64_t v = 0;
  if (SSL_get_value_uint(ssl_, SSL_VALUE_CLASS_GENERIC, SSL_VALUE_STREAM_WRITE_BUF_AVAIL,
                         &v) != 1) {
    ERR_clear_error();
    return 0;
  }
  return v;
}

bool QuicStream::TakePeerStop(uint64_t* code) {
  // Our own resets (Reset) and FINs set write_done_ first, so a reset send
  // part seen here is the peer's doing.
  if (write_done_ || released_) return false;
  // OpenSSL answers a STOP_SENDING with a RESET_STREAM of the same code
  // on its own, and OpenSSL 3.5 then classifies the send part as
  // RESET_LOCAL (a local reset takes precedence in its check), not the
  // RESET_REMOTE its manual describes: both mean the peer stopped it.
  int state = SSL_get_stream_write_state(ssl_);
  if (state != SSL_STREAM_STATE_RESET_LOCAL && state != SSL_STREAM_STATE_RESET_REMOTE) {
    return false;
  }
  uint64_t c = 0;
  if (SSL_get_stream_write_error_code(ssl_, &c) != 1) ERR_clear_error();
  *code = c == 0 ? conn_->codes().cancelled : c;  // as Read
  write_done_ = true;
  write_blocked_ = false;
  return true;
}

void QuicStream::Reset(uint64_t code) {
  if (write_done_) return;
  write_done_ = true;
  write_blocked_ = false;
  SSL_STREAM_RESET_ARGS args;
  memset(&args, 0, sizeof(args));
  args.quic_error_code = code;
  if (SSL_stream_reset(ssl_, &args, sizeof(args)) != 1) ERR_clear_error();
  conn_->endpoint()->RequestFlush();
}

void QuicStream::Release() {
  if (released_) return;
  released_ = true;
  if (!read_done_) {
    read_done_ = true;
  }
  if (conn_->open_peer_streams_ > 0 && peer_initiated()) conn_->open_peer_streams_--;
  conn_->endpoint()->RequestFlush();
}

// ---- QuicConnection --------------------------------------------------------

QuicConnection::QuicConnection(QuicEndpoint* endpoint, SSL* ssl)
    : endpoint_(endpoint), ssl_(ssl), last_activity_ms_(endpoint->now_ms()) {
  SetExplicitEvents(ssl_);
  // Streams are accepted one by one (SSL_accept_stream), never the
  // implicit default stream of a client-style connection.
  if (SSL_set_default_stream_mode(ssl_, SSL_DEFAULT_STREAM_MODE_NONE) != 1) ERR_clear_error();
  if (SSL_set_incoming_stream_policy(ssl_, SSL_INCOMING_STREAM_POLICY_ACCEPT, 0) != 1) {
    ERR_clear_error();
  }
}

QuicConnection::~QuicConnection() {
  EndHandshake();
  if (!counted_addr_.empty()) {
    auto it = endpoint_->per_address_.find(counted_addr_);
    if (it != endpoint_->per_address_.end() && --it->second == 0) endpoint_->per_address_.erase(it);
  }
  if (!cid_.empty()) {
    auto it = endpoint_->by_cid_.find(cid_);
    if (it != endpoint_->by_cid_.end() && it->second == this) endpoint_->by_cid_.erase(it);
  }
  FreeStreams();
  SSL_free(ssl_);
}

void QuicConnection::FreeStreams() {
  for (QuicStream* s : streams_) delete s;
  streams_.clear();
  open_peer_streams_ = 0;
}

void QuicConnection::Touch() { last_activity_ms_ = endpoint_->now_ms(); }

void QuicConnection::EndHandshake() {
  if (!in_handshake_) return;
  in_handshake_ = false;
  endpoint_->handshakes_--;
}

bool QuicConnection::CountAddress() {
  size_t max = endpoint_->options_.max_connections_per_address;
  if (max == 0 || !counted_addr_.empty() || peer_.ss_family == 0) return true;
  std::string key;
  if (peer_.ss_family == AF_INET) {
    const auto* sin = reinterpret_cast<const sockaddr_in*>(&peer_);
    key.assign(reinterpret_cast<const char*>(&sin->sin_addr), sizeof(sin->sin_addr));
  } else {
    const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&peer_);
    key.assign(reinterpret_cast<const char*>(&sin6->sin6_addr), sizeof(sin6->sin6_addr));
  }
  size_t& n = endpoint_->per_address_[key];
  if (n >= max) return false;
  n++;
  counted_addr_ = std::move(key);
  return true;
}

QuicStream* QuicConnection::OpenUniStream() {
  if (terminated_) return nullptr;
  SSL* s = SSL_new_stream(ssl_, SSL_STREAM_FLAG_UNI | SSL_STREAM_FLAG_NO_BLOCK);
  if (s == nullptr) {
    ERR_clear_error();
    return nullptr;
  }
  auto* st = new QuicStream(this, s);
  streams_.push_back(st);
  return st;
}

void QuicConnection::CloseNow(uint64_t code, const char* reason) {
  close_flush_ = false;
  if (closing_) {
    ShutdownStep();  // already closing: go on without the flush
    return;
  }
  Close(code, reason);
}

void QuicConnection::CloseAfterSend(uint64_t code, const char* reason) {
  if (closing_ || terminated_ || close_after_send_) return;
  close_after_send_ = true;
  close_tick_ = endpoint_->ticks_;
  close_code_ = code;
  close_reason_ = reason;
  endpoint_->RequestFlush();
}

void QuicConnection::Close(uint64_t code, const char* reason) {
  if (closing_ || terminated_) return;
  closing_ = true;
  close_code_ = code;
  close_reason_ = reason;
  ShutdownStep();
  endpoint_->RequestFlush();
}

int QuicConnection::ShutdownStep() {
  SSL_SHUTDOWN_EX_ARGS args;
  memset(&args, 0, sizeof(args));
  args.quic_error_code = close_code_;
  args.quic_reason = close_reason_;
  // Non-blocking: a clean close first flushes the streams' queued data
  // (the "shutdown flush" state, which only repeated calls move on: Pump
  // makes one per pass); an error close skips that.
  uint64_t flags = SSL_SHUTDOWN_FLAG_NO_BLOCK;
  if (close_code_ != codes().no_error || !close_flush_) flags |= SSL_SHUTDOWN_FLAG_NO_STREAM_FLUSH;
  int r = SSL_shutdown_ex(ssl_, flags, &args, sizeof(args));
  ERR_clear_error();
  return r;
}

bool QuicConnection::PeerAddress(std::string* ip, int* port, int* family) const {
  // OpenSSL 3.5 has no public getter for a server connection's peer
  // address: peer_ is what the endpoint's BIO saw (OnDatagram).
  return FormatSockaddr(peer_, ip, port, family);
}

bool QuicConnection::LocalAddress(std::string* ip, int* port, int* family) const {
  return endpoint_->GetAddress(ip, port, family) == 0;
}

void QuicConnection::Terminate(uint64_t code, bool transport) {
  if (terminated_) return;
  terminated_ = true;
  if (handler_) handler_->OnConnectionClose(code, transport);
}

bool QuicConnection::Pump(uint64_t now_ms) {
  SSL_CONN_CLOSE_INFO info;
  memset(&info, 0, sizeof(info));
  if (SSL_get_conn_close_info(ssl_, &info, sizeof(info)) == 1) {
    // Terminating (the peer closed, the idle timeout fired, or our own
    // Close went out): streams are dead from here.
    Terminate(info.error_code, (info.flags & SSL_CONN_CLOSE_FLAG_TRANSPORT) != 0);
    if (closing_ && ShutdownStep() == 0) return true;  // still closing
    return false;
  }
  ERR_clear_error();
  if (close_after_send_ && !closing_ && endpoint_->ticks_ > close_tick_) {
    CloseNow(close_code_, close_reason_);
  }
  if (closing_) ShutdownStep();  // flushing streams before the close
  // A refused connection has no handler: it only closes.
  if (!handler_) return true;
  if (!closing_ && !CountAddress()) {
    EndHandshake();
    CloseNow(endpoint_->options_.refused_code, "too many connections from this address");
    return true;
  }
  if (!ready_) {
    if (!SSL_is_init_finished(ssl_)) {
      uint64_t limit = endpoint_->options_.handshake_timeout_ms;
      if (limit != 0 && !closing_ && now_ms - accepted_ms_ >= limit) {
        EndHandshake();
        CloseNow(endpoint_->options_.refused_code, "handshake timeout");
        endpoint_->delegate_->OnHandshakeTimeout(this);
      }
      return true;
    }
    EndHandshake();
    ready_ = true;
    handler_->OnConnectionReady();
    if (endpoint_->closing_ && !going_away_) {
      going_away_ = true;
      handler_->OnGoingAway();
    }
  }
  if (!closing_) {
    // New streams of the peer.
    for (;;) {
      SSL* s = SSL_accept_stream(ssl_, SSL_ACCEPT_STREAM_NO_BLOCK);
      if (s == nullptr) {
        ERR_clear_error();
        break;
      }
      auto* st = new QuicStream(this, s);
      streams_.push_back(st);
      Touch();
      if (st->bidi() &&
          open_peer_streams_ >= endpoint_->options_.max_streams_per_connection) {
        // Over the cap: refused before the handler sees it (RFC 9114 §4.1.1
        // lets a server reject a request it did not process).
        st->Reset(codes().stream_refused);
        st->released_ = true;
        st->read_done_ = true;
        continue;
      }
      if (st->bidi()) open_peer_streams_++;
      handler_->OnStreamOpen(st);
    }
  }
  if (!terminated_) handler_->OnPass();
  // Reads and writes. The handler may open streams meanwhile (appended:
  // index loop), and may release any.
  for (size_t i = 0; i < streams_.size() && !terminated_; i++) {
    QuicStream* st = streams_[i];
    if (st->released_) continue;
    if (!st->read_done_) handler_->OnStreamReadable(st);
    if (st->released_ || terminated_) continue;
    uint64_t stop_code;
    if (st->TakePeerStop(&stop_code)) {
      handler_->OnStreamStopped(st, stop_code);
      continue;
    }
    if (st->write_blocked_ && st->WriteRoom() >= st->resume_room_) {
      st->write_blocked_ = false;
      handler_->OnStreamWritable(st);
    }
  }
  // Released streams are freed (OpenSSL keeps sending a concluded one's
  // data on its own).
  size_t keep = 0;
  for (size_t i = 0; i < streams_.size(); i++) {
    QuicStream* st = streams_[i];
    if (st->released_) {
      delete st;
    } else {
      streams_[keep++] = st;
    }
  }
  streams_.resize(keep);
  uint64_t idle = endpoint_->options_.idle_timeout_ms;
  if (idle != 0 && !closing_ && !terminated_ && now_ms - last_activity_ms_ >= idle &&
      !handler_->Busy()) {
    Close(codes().no_error, "idle");
  }
  return true;
}

const QuicAppCodes& QuicConnection::codes() const { return endpoint_->options_.app; }

// ---- QuicEndpoint ----------------------------------------------------------

struct QuicEndpoint::SniWait {
  enum State { kAsked, kAnswered, kFailed };
  QuicEndpoint* endpoint;  // null once the endpoint no longer tracks it
  uint64_t id;
  std::string servername;
  State state = kAsked;
  TlsContext answer;
};

QuicEndpoint::QuicEndpoint(uv_loop_t* loop, SSL_CTX* ctx, TlsContext certs,
                           QuicEndpointDelegate* delegate, const QuicEndpointOptions& options)
    : loop_(loop),
      ctx_(ctx),
      delegate_(delegate),
      options_(options),
      gso_(options.gso),
      tls_(std::move(certs)) {
  SSL_CTX_up_ref(ctx_);
  // OpenSSL calls these inside SSL_handle_events on the listener (only
  // Process calls it), with the connection's SSL: the certificate callback
  // after the ClientHello is parsed, the ticket callback when a ticket is
  // issued or presented. The ticket callback has no argument: it finds
  // the endpoint in the context's ex_data.
  SSL_CTX_set_cert_cb(ctx_, OnCertCb, this);
  SSL_CTX_set_ex_data(ctx_, CtxIndex(), this);
  SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx_, OnTicketKey);
}

QuicEndpoint::~QuicEndpoint() {
  for (QuicConnection* c : conns_) delete c;
  conns_.clear();
  // Handshakes still waiting belong to connections the listener has not
  // handed out yet: freed with it below, after this object's members are
  // no longer theirs to update.
  for (auto& w : sni_waiting_) w.second->endpoint = nullptr;
  sni_waiting_.clear();
  SSL_free(listener_);  // frees the filter BIO, never dgram_
  BIO_free(dgram_);
  SSL_CTX_set_cert_cb(ctx_, nullptr, nullptr);
  SSL_CTX_set_ex_data(ctx_, CtxIndex(), nullptr);
  SSL_CTX_free(ctx_);
  if (fd_ >= 0) close(fd_);
}

int QuicEndpoint::Listen(const char* host, int port, bool reuse_port, std::string* error) {
  sockaddr_storage ss;
  memset(&ss, 0, sizeof(ss));
  socklen_t len;
  int family;
  if (uv_ip4_addr(host, port, reinterpret_cast<sockaddr_in*>(&ss)) == 0) {
    family = AF_INET;
    len = sizeof(sockaddr_in);
  } else if (uv_ip6_addr(host, port, reinterpret_cast<sockaddr_in6*>(&ss)) == 0) {
    family = AF_INET6;
    len = sizeof(sockaddr_in6);
  } else {
    return UV_EINVAL;
  }
  int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  fd_ = fd;
  if (family == AF_INET6) {
    // "::" takes IPv4 clients too, as node's TCP listen does.
    int off = 0;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
  }
  if (options_.receive_buffer_bytes > 0) {
    // Best effort: the kernel caps it (net.core.rmem_max) without failing.
    int rcvbuf = options_.receive_buffer_bytes;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
  }
  if (reuse_port) {
    // Every worker binds its own socket; the kernel picks one per datagram
    // by a hash of its 4-tuple (docs/deployment.md: what that does to a
    // client whose address changes).
    int on = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) != 0) return -errno;
  }
  if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) return -errno;

#if defined(__linux__)
  if (options_.gro) {
    // Best effort: a kernel without it (< 5.0) refuses, and every read is
    // one datagram.
    int on = 1;
    if (setsockopt(fd, SOL_UDP, UDP_GRO, &on, sizeof(on)) == 0) {
      rx_.reset(new uint8_t[kRxReads * kRxBytes]);
      gro_ = true;
    }
  }
#endif

  ERR_clear_error();
  dgram_ = BIO_new_dgram(fd, BIO_NOCLOSE);
  BIO_METHOD* method = NetBioMethod();
  BIO* bio = method != nullptr && dgram_ != nullptr ? BIO_new(method) : nullptr;
  if (bio == nullptr) {
    *error = LastSslError("BIO_new_dgram");
    return UV_ENOMEM;
  }
  BIO_set_data(bio, this);
  uint64_t flags = options_.validate_address ? 0 : SSL_LISTENER_FLAG_NO_VALIDATE;
  listener_ = SSL_new_listener(ctx_, flags);
  if (listener_ == nullptr) {
    BIO_free(bio);
    *error = LastSslError("SSL_new_listener");
    return UV_EINVAL;
  }
  SSL_set_bio(listener_, bio, bio);
  SetExplicitEvents(listener_);
  if (SSL_set_blocking_mode(listener_, 0) != 1 || SSL_listen(listener_) != 1) {
    *error = LastSslError("SSL_listen");
    return UV_EINVAL;
  }

  uv_poll_init(loop_, &poll_, fd);
  uv_timer_init(loop_, &timer_);
  uv_timer_init(loop_, &grace_timer_);
  uv_idle_init(loop_, &idle_);
  poll_.data = timer_.data = grace_timer_.data = idle_.data = this;
  open_handles_ = 4;
  handles_started_ = true;
  uv_unref(reinterpret_cast<uv_handle_t*>(&timer_));
  uv_unref(reinterpret_cast<uv_handle_t*>(&grace_timer_));
  uv_unref(reinterpret_cast<uv_handle_t*>(&idle_));
  if (!ref_) uv_unref(reinterpret_cast<uv_handle_t*>(&poll_));
  Rearm();
  return 0;
}

int QuicEndpoint::GetAddress(std::string* ip, int* port, int* family) const {
  if (fd_ < 0) return UV_EBADF;
  sockaddr_storage ss;
  socklen_t len = sizeof(ss);
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return -errno;
  return FormatSockaddr(ss, ip, port, family) ? 0 : UV_EAFNOSUPPORT;
}

void QuicEndpoint::Abandon() {
  if (handles_started_) {
    Destroy();  // not expected: the embedder holds a listening endpoint
    return;
  }
  delete this;
}

void QuicEndpoint::SetRef(bool ref) {
  ref_ = ref;
  if (!handles_started_ || destroying_) return;
  if (ref) {
    uv_ref(reinterpret_cast<uv_handle_t*>(&poll_));
  } else {
    uv_unref(reinterpret_cast<uv_handle_t*>(&poll_));
  }
}

void QuicEndpoint::RequestFlush() {
  if (in_process_) {
    again_ = true;
    return;
  }
  if (!handles_started_ || destroying_) return;
  // An active idle handle makes the loop poll without blocking, so the
  // flush runs on this loop turn.
  uv_idle_start(&idle_, OnIdle);
}

void QuicEndpoint::OnIdle(uv_idle_t* h) {
  auto* self = static_cast<QuicEndpoint*>(h->data);
  uv_idle_stop(h);
  self->Process();
}

void QuicEndpoint::OnPoll(uv_poll_t* h, int status, int events) {
  (void)status;
  (void)events;
  static_cast<QuicEndpoint*>(h->data)->Process();
}

void QuicEndpoint::OnTimer(uv_timer_t* h) {
  static_cast<QuicEndpoint*>(h->data)->Process();
}

void QuicEndpoint::OnGraceTimer(uv_timer_t* h) {
  auto* self = static_cast<QuicEndpoint*>(h->data);
  for (QuicConnection* c : self->conns_) c->CloseNow(self->options_.app.no_error, "server closing");
  self->Process();
}

void QuicEndpoint::AcceptConnections() {
  // SSL_accept_connection with nothing queued runs a reactor tick of its
  // own (even in explicit event-handling mode): a recvmmsg on the socket
  // and a pass over every connection of the port, on every round of
  // Process. The tick just made queued whatever arrived, so an empty
  // queue means nothing to accept.
  while (SSL_get_accept_connection_queue_len(listener_) > 0) {
    SSL* c = SSL_accept_connection(listener_, SSL_ACCEPT_CONNECTION_NO_BLOCK);
    if (c == nullptr) {
      ERR_clear_error();
      return;
    }
    auto* conn = new QuicConnection(this, c);
    conns_.push_back(conn);
    TrackPeer(conn);
    QuicConnectionHandler* h = nullptr;
    // Refused before any state of ours: past the connection or handshake
    // bound (a flood of new clients cannot hold more than max_handshakes
    // of them at once; each is cut at handshake_timeout_ms).
    bool room = conns_.size() <= options_.max_connections &&
                (options_.max_handshakes == 0 || handshakes_ < options_.max_handshakes);
    if (!closing_ && room) h = delegate_->OnConnection(conn);
    if (h == nullptr) {
      conn->terminated_ = true;  // no handler to tell
      conn->Close(options_.refused_code, "refused");
      continue;
    }
    conn->handler_.reset(h);
    metrics_.connections_accepted++;
    conn->accepted_ms_ = now_ms();
    conn->in_handshake_ = true;
    handshakes_++;
  }
}

// ---- peer addresses ---------------------------------------------------------
//
// The listener's network BIO: a filter in front of OpenSSL's datagram BIO
// (dgram_, reached through the endpoint, not a BIO chain, so that freeing
// the listener's BIO never frees or double-frees it). Every call goes to
// dgram_; received datagrams are shown to OnDatagram first.

namespace {

QuicEndpoint* EndpointOf(BIO* b) { return static_cast<QuicEndpoint*>(BIO_get_data(b)); }

}  // namespace

BIO_METHOD* QuicEndpoint::NetBioMethod() {
  static BIO_METHOD* method = []() -> BIO_METHOD* {
    if (BIO_meth_set_recvmmsg == nullptr || BIO_meth_set_sendmmsg == nullptr) return nullptr;
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_FILTER, "sluice QUIC net");
    if (m == nullptr) return m;
    BIO_meth_set_create(m, [](BIO* b) {
      BIO_set_init(b, 1);
      return 1;
    });
    // OpenSSL's QUIC port: a batch of datagrams in, with their sources,
    // and out, with their destinations (NetMmsg).
    BIO_meth_set_recvmmsg(m, [](BIO* b, BIO_MSG* msg, size_t stride, size_t num,
                                uint64_t flags, size_t* done) {
      return NetMmsg(b, msg, stride, num, flags, done, true);
    });
    BIO_meth_set_sendmmsg(m, [](BIO* b, BIO_MSG* msg, size_t stride, size_t num,
                                uint64_t flags, size_t* done) {
      return NetMmsg(b, msg, stride, num, flags, done, false);
    });
    // Capabilities, MTU, poll descriptors, peer/local address settings:
    // the datagram BIO's own answers.
    BIO_meth_set_ctrl(m, [](BIO* b, int cmd, long num, void* ptr) -> long {
      return BIO_ctrl(EndpointOf(b)->dgram_, cmd, num, ptr);
    });
    return m;
  }();
  return method;
}

// A batch through dgram_, each datagram shown to the endpoint after: the
// received ones to OnDatagram; the sent ones to OnSentDatagram (a
// handshake packet names the server's connection ID as its source, and
// goes where OpenSSL believes the client is: what a client whose replies
// never arrive is known by).
int QuicEndpoint::NetMmsg(BIO* b, BIO_MSG* msg, size_t stride, size_t num, uint64_t flags,
                          size_t* done, bool in) {
  QuicEndpoint* self = EndpointOf(b);
  int r = in ? self->RecvBatch(msg, stride, num, done)
             : self->SendBatch(msg, stride, num, flags, done);
  if (r != 1) return r;
  for (size_t i = 0; i < *done; i++) {
    auto* m = reinterpret_cast<BIO_MSG*>(reinterpret_cast<char*>(msg) + i * stride);
    const auto* data = static_cast<const uint8_t*>(m->data);
    if (in) {
      self->bytes_received_ += m->data_len;
      self->OnDatagram(data, m->data_len, m->peer);
    } else {
      self->bytes_sent_ += m->data_len;
      self->OnSentDatagram(data, m->data_len, m->peer);
    }
  }
  return r;
}

namespace {

// A datagram's source, as OpenSSL's BIO_MSG carries it.
void StorageToBioAddr(const sockaddr_storage& ss, BIO_ADDR* a) {
  if (ss.ss_family == AF_INET) {
    const auto* sin = reinterpret_cast<const sockaddr_in*>(&ss);
    BIO_ADDR_rawmake(a, AF_INET, &sin->sin_addr, sizeof(sin->sin_addr), sin->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&ss);
    BIO_ADDR_rawmake(a, AF_INET6, &sin6->sin6_addr, sizeof(sin6->sin6_addr), sin6->sin6_port);
  } else {
    BIO_ADDR_clear(a);
  }
}

// One received datagram into OpenSSL's message: a source address, no
// local one (the datagram BIO's answer when it is not asked to track
// them), no flags.
void FillMsg(BIO_MSG* m, size_t len, const sockaddr_storage& from) {
  m->data_len = len;
  m->flags = 0;
  if (m->peer != nullptr) StorageToBioAddr(from, m->peer);
  if (m->local != nullptr) BIO_ADDR_clear(m->local);
}

}  // namespace

int QuicEndpoint::RecvBatch(BIO_MSG* msg, size_t stride, size_t num, size_t* done) {
  auto at = [&](size_t i) {
    return reinterpret_cast<BIO_MSG*>(reinterpret_cast<char*>(msg) + i * stride);
  };
  // Hands over the datagrams of rx_ in order, as far as msg has room.
  auto drain = [&]() {
    while (*done < num && rx_pending()) {
      size_t seg = rx_segment_[rx_at_];
      size_t len = QuicSegmentLength(rx_len_[rx_at_], seg, seg == 0 ? 0 : rx_off_ / seg);
      BIO_MSG* m = at((*done)++);
      // A datagram longer than OpenSSL's buffer is cut, as the kernel cuts
      // a read into a short buffer (OpenSSL then drops it).
      size_t n = std::min(len, m->data_len);
      memcpy(m->data, rx_.get() + rx_at_ * kRxBytes + rx_off_, n);
      FillMsg(m, n, rx_from_[rx_at_]);
      rx_off_ += len;
      if (rx_off_ >= rx_len_[rx_at_]) {
        rx_at_++;
        rx_off_ = 0;
      }
    }
  };
  *done = 0;
  drain();  // what an earlier coalesced read left comes first
  if (*done == num) return 1;

  constexpr size_t kMaxDirect = 64;
  const bool gro = gro_;
  size_t want = std::min(num - *done, gro ? kRxReads : kMaxDirect);
  mmsghdr hdr[kMaxDirect];
  iovec iov[kMaxDirect];
  sockaddr_storage from[kMaxDirect];
  alignas(cmsghdr) char ctl[kRxReads][CMSG_SPACE(sizeof(int))];
  memset(hdr, 0, want * sizeof(hdr[0]));
  for (size_t i = 0; i < want; i++) {
    msghdr& h = hdr[i].msg_hdr;
    if (gro) {
      iov[i] = {rx_.get() + i * kRxBytes, kRxBytes};
      h.msg_name = &rx_from_[i];
      h.msg_control = ctl[i];
      h.msg_controllen = sizeof(ctl[i]);
    } else {
      BIO_MSG* m = at(*done + i);
      iov[i] = {m->data, m->data_len};
      h.msg_name = &from[i];
    }
    h.msg_namelen = sizeof(sockaddr_storage);
    h.msg_iov = &iov[i];
    h.msg_iovlen = 1;
  }
  int got;
  do {
    got = recvmmsg(fd_, hdr, static_cast<unsigned>(want), 0, nullptr);
  } while (got < 0 && errno == EINTR);
  if (got <= 0) {
    if (*done > 0) return 1;
    // OpenSSL's port stops reading on a non-fatal error and fails for good
    // on any other: only a socket that cannot be read at all is fatal.
    int e = got < 0 ? errno : EAGAIN;
    if (e == EBADF || e == ENOTSOCK || e == EFAULT || e == EINVAL) {
      ERR_raise(ERR_LIB_SYS, e);
    } else {
      ERR_raise(ERR_LIB_BIO, BIO_R_NON_FATAL);
    }
    return 0;
  }
  if (!gro) {
    for (int i = 0; i < got; i++) FillMsg(at((*done)++), hdr[i].msg_len, from[i]);
    return 1;
  }
  rx_count_ = static_cast<size_t>(got);
  rx_at_ = rx_off_ = 0;
  for (size_t i = 0; i < rx_count_; i++) {
    rx_len_[i] = hdr[i].msg_len;
    rx_segment_[i] = QuicGroSegmentSize(hdr[i].msg_hdr);
    if (QuicSegmentCount(rx_len_[i], rx_segment_[i]) > 1) gro_reads_++;
  }
  drain();
  return 1;
}

#if defined(__linux__) && !defined(UDP_SEGMENT)
#define UDP_SEGMENT 103  // linux/udp.h; older libc headers lack it
#endif

int QuicEndpoint::SendBatch(BIO_MSG* msg, size_t stride, size_t num, uint64_t flags,
                            size_t* done) {
#if defined(__linux__)
  // Runs per sendmmsg call, datagrams per run (the kernel's UDP_MAX_SEGMENTS
  // is 64), and a run's bytes (one IP datagram's payload at most).
  constexpr size_t kMaxRuns = 16, kMaxPerRun = 64, kMaxRunBytes = 65000;
  auto at = [&](size_t i) {
    return reinterpret_cast<BIO_MSG*>(reinterpret_cast<char*>(msg) + i * stride);
  };
  bool plain = !gso_ || num < 2;
  for (size_t i = 0; !plain && i < num; i++) {
    // A chosen source address (IP_PKTINFO) is the datagram BIO's to set.
    BIO_MSG* m = at(i);
    plain = m->peer == nullptr || (m->local != nullptr && BIO_ADDR_family(m->local) != AF_UNSPEC);
  }
  if (!plain) {
    sockaddr_storage to[kMaxRuns];
    iovec iov[kMaxRuns * kMaxPerRun];
    alignas(cmsghdr) char ctl[kMaxRuns][CMSG_SPACE(sizeof(uint16_t))];
    mmsghdr hdr[kMaxRuns];
    size_t count[kMaxRuns];
    size_t runs = 0, i = 0, nv = 0;
    memset(hdr, 0, sizeof(hdr));
    while (i < num && runs < kMaxRuns) {
      if (!BioAddrToStorage(at(i)->peer, &to[runs])) break;
      size_t seg = at(i)->data_len, bytes = 0, n = 0;
      msghdr& h = hdr[runs].msg_hdr;
      h.msg_name = &to[runs];
      h.msg_namelen = to[runs].ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
      h.msg_iov = &iov[nv];
      while (i < num && n < kMaxPerRun) {
        BIO_MSG* m = at(i);
        sockaddr_storage peer;
        if (n > 0 && (m->data_len > seg || bytes + m->data_len > kMaxRunBytes ||
                      !BioAddrToStorage(m->peer, &peer) ||
                      memcmp(&peer, &to[runs], h.msg_namelen) != 0)) {
          break;
        }
        iov[nv++] = {m->data, m->data_len};
        bytes += m->data_len;
        n++;
        i++;
        if (m->data_len < seg) break;  // a shorter datagram ends a run
      }
      h.msg_iovlen = n;
      if (n > 1) {
        h.msg_control = ctl[runs];
        h.msg_controllen = sizeof(ctl[runs]);
        cmsghdr* c = CMSG_FIRSTHDR(&h);
        c->cmsg_level = SOL_UDP;
        c->cmsg_type = UDP_SEGMENT;
        c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
        uint16_t gso_size = static_cast<uint16_t>(seg);
        memcpy(CMSG_DATA(c), &gso_size, sizeof(gso_size));
      }
      count[runs++] = n;
    }
    if (runs > 0) {
      int sent;
      do {
        sent = sendmmsg(fd_, hdr, static_cast<unsigned>(runs), 0);
      } while (sent < 0 && errno == EINTR);
      if (sent > 0) {
        *done = 0;
        for (int k = 0; k < sent; k++) {
          *done += count[k];
          if (count[k] > 1) gso_sends_++;
        }
        return 1;
      }
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        // OpenSSL keeps the batch and tries again when writable.
        *done = 0;
        ERR_raise(ERR_LIB_BIO, BIO_R_NON_FATAL);
        return 0;
      }
      // EIO / EINVAL / ENOPROTOOPT: no GSO here (a device without
      // checksum offload, an old kernel). Anything else: the datagram
      // BIO's own handling, for this batch.
      if (errno == EIO || errno == EINVAL || errno == ENOPROTOOPT) gso_ = false;
    }
  }
#endif
  return BIO_sendmmsg(dgram_, msg, stride, num, flags, done);
}

void QuicEndpoint::OnDatagram(const uint8_t* data, size_t len, const BIO_ADDR* peer) {
  // A short header does not say its ID's length: it is that of the IDs
  // the server issues (8 in OpenSSL 3.5, learned in TrackPeer).
  const uint8_t* cid;
  size_t cid_len;
  if (peer == nullptr || !QuicDestinationId(data, len, short_cid_len_, &cid, &cid_len)) return;
  sockaddr_storage from;
  if (!BioAddrToStorage(peer, &from)) return;
  std::string key(reinterpret_cast<const char*>(cid), cid_len);
  auto it = by_cid_.find(key);
  if (it != by_cid_.end()) {
    it->second->peer_ = from;
    return;
  }
  // Not (yet) a connection's: kept for a connection accepted after this
  // tick (its first Initial, after a Retry, already carries its ID).
  RecentDatagram& r = recent_[recent_next_++ % kRecent];
  r.cid = std::move(key);
  r.from = from;
}

void QuicEndpoint::OnSentDatagram(const uint8_t* data, size_t len, const BIO_ADDR* peer) {
  // Long headers only: the source ID is the server's own.
  const uint8_t* scid;
  size_t scid_len;
  if (peer == nullptr || !QuicLongHeaderSourceId(data, len, &scid, &scid_len)) return;
  sockaddr_storage to;
  if (!BioAddrToStorage(peer, &to)) return;
  std::string key(reinterpret_cast<const char*>(scid), scid_len);
  auto it = by_cid_.find(key);
  if (it != by_cid_.end()) {
    // What the client sent last is the better answer once there is one.
    if (it->second->peer_.ss_family == 0) it->second->peer_ = to;
    return;
  }
  RecentDatagram& r = recent_[recent_next_++ % kRecent];
  r.cid = std::move(key);
  r.from = to;
}

void QuicEndpoint::TrackPeer(QuicConnection* c) {
  if (ossl_quic_conn_get_channel == nullptr || ossl_quic_channel_get_diag_local_cid == nullptr) {
    return;
  }
  void* ch = ossl_quic_conn_get_channel(c->ssl_);
  if (ch == nullptr) return;
  SluiceQuicConnId id;
  memset(&id, 0, sizeof(id));
  ossl_quic_channel_get_diag_local_cid(ch, &id);
  if (id.id_len == 0 || id.id_len > sizeof(id.id)) return;
  c->cid_.assign(reinterpret_cast<const char*>(id.id), id.id_len);
  by_cid_[c->cid_] = c;
  short_cid_len_ = id.id_len;
  for (size_t k = 1; k <= kRecent && k <= recent_next_; k++) {
    const RecentDatagram& r = recent_[(recent_next_ - k) % kRecent];
    if (r.cid == c->cid_) {
      c->peer_ = r.from;
      break;
    }
  }
}

void QuicEndpoint::Process() {
  if (listener_ == nullptr || destroying_) return;
  if (in_process_) {
    again_ = true;
    return;
  }
  in_process_ = true;
  delegate_->OnDispatchBegin();
  // Each round: packets in and out (SSL_handle_events ticks the whole
  // port), then the connections' passes. Output a pass queued goes out on
  // the next round's tick; bounded so a handler that writes on every pass
  // cannot hold the loop (the idle flush picks up the rest).
  for (int round = 0; round < 8; round++) {
    again_ = false;
    if (SSL_handle_events(listener_) != 1) ERR_clear_error();
    ticks_++;
    AskSni();
    AcceptConnections();
    uint64_t now = now_ms();
    size_t keep = 0;
    for (size_t i = 0; i < conns_.size(); i++) {
      QuicConnection* c = conns_[i];
      if (c->Pump(now)) {
        conns_[keep++] = c;
      } else {
        delete c;
      }
    }
    conns_.resize(keep);
    if (!again_) break;
  }
  in_process_ = false;
  delegate_->OnDispatchEnd();
  if (destroy_pending_) {
    Destroy();
    return;
  }
  // Datagrams a coalesced read left in rx_ are not the socket's to
  // signal: the idle round hands them to OpenSSL.
  if (again_ || rx_pending()) uv_idle_start(&idle_, OnIdle);
  Rearm();
  MaybeFinishClose();
}

void QuicEndpoint::Rearm() {
  if (!handles_started_ || destroying_) return;
  int events = UV_READABLE;
  if (SSL_net_write_desired(listener_)) events |= UV_WRITABLE;
  if (events != poll_events_) {
    poll_events_ = events;
    uv_poll_start(&poll_, events, OnPoll);
  }
  struct timeval tv;
  int infinite = 1;
  uint64_t ms = 0;
  if (SSL_get_event_timeout(listener_, &tv, &infinite) == 1 && !infinite) {
    ms = static_cast<uint64_t>(tv.tv_sec) * 1000 + (tv.tv_usec + 999) / 1000;
  } else {
    ERR_clear_error();
    infinite = 1;
  }
  // Our own idle and handshake checks run at least once a second (more
  // often for shorter limits) while connections exist.
  uint64_t cap = 1000;
  if (options_.idle_timeout_ms != 0) cap = std::min(cap, options_.idle_timeout_ms);
  if (handshakes_ > 0 && options_.handshake_timeout_ms != 0) {
    cap = std::min(cap, std::max<uint64_t>(10, options_.handshake_timeout_ms / 4));
  }
  if (!conns_.empty() && (options_.idle_timeout_ms != 0 || handshakes_ > 0)) {
    if (infinite || ms > cap) ms = cap;
    infinite = 0;
  }
  if (infinite) {
    uv_timer_stop(&timer_);
  } else {
    uv_timer_start(&timer_, OnTimer, ms, 0);
  }
}

void QuicEndpoint::Close(uint64_t grace_ms) {
  if (closing_ || destroying_) return;
  closing_ = true;
  if (!handles_started_) {
    MaybeFinishClose();
    return;
  }
  for (QuicConnection* c : conns_) {
    if (c->ready_ && !c->going_away_ && c->handler_ && !c->terminated_) {
      c->going_away_ = true;
      c->handler_->OnGoingAway();
    } else if (!c->ready_) {
      c->Close(options_.refused_code, "server closing");
    }
  }
  uv_timer_start(&grace_timer_, OnGraceTimer, grace_ms, 0);
  Process();
}

void QuicEndpoint::MaybeFinishClose() {
  if (!closing_ || destroying_ || !conns_.empty() || in_process_) return;
  CloseHandles();
}

void QuicEndpoint::Destroy() {
  if (destroying_) return;
  if (in_process_) {
    // From a handler inside Process: the connections are being iterated.
    destroy_pending_ = true;
    return;
  }
  destroy_pending_ = false;
  closing_ = true;
  // Every connection dies now: a CONNECTION_CLOSE is attempted (one
  // tick), and the handlers are told.
  for (QuicConnection* c : conns_) {
    c->Close(options_.app.no_error, "server destroyed");
    c->Terminate(options_.app.no_error, false);
  }
  if (listener_ != nullptr) {
    if (SSL_handle_events(listener_) != 1) ERR_clear_error();
  }
  for (QuicConnection* c : conns_) delete c;
  conns_.clear();
  CloseHandles();
}

void QuicEndpoint::CloseHandles() {
  destroying_ = true;
  if (!handles_started_) {
    delegate_->OnEndpointClosed();
    return;
  }
  handles_started_ = false;
  uv_close(reinterpret_cast<uv_handle_t*>(&poll_), OnHandleClosed);
  uv_close(reinterpret_cast<uv_handle_t*>(&timer_), OnHandleClosed);
  uv_close(reinterpret_cast<uv_handle_t*>(&grace_timer_), OnHandleClosed);
  uv_close(reinterpret_cast<uv_handle_t*>(&idle_), OnHandleClosed);
}

void QuicEndpoint::OnHandleClosed(uv_handle_t* h) {
  auto* self = static_cast<QuicEndpoint*>(h->data);
  if (--self->open_handles_ > 0) return;
  // The poll handle is closed: the socket and the listener may go.
  QuicEndpointDelegate* d = self->delegate_;
  delete self;
  d->OnEndpointClosed();
}

// ---- certificates ------------------------------------------------------------

int QuicEndpoint::SniIndex() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, SniStateFree);
  return index;
}

int QuicEndpoint::CtxIndex() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

// The SSL is freed (connection closed, or never accepted and dropped by
// the listener): its SNI state goes with it, and an answer arriving later
// finds no id.
void QuicEndpoint::SniStateFree(void* parent, void* ptr, CRYPTO_EX_DATA* ad, int idx, long argl,
                                void* argp) {
  (void)parent;
  (void)ad;
  (void)idx;
  (void)argl;
  (void)argp;
  auto* w = static_cast<SniWait*>(ptr);
  if (w == nullptr) return;
  if (w->endpoint != nullptr && w->state == SniWait::kAsked) w->endpoint->sni_waiting_.erase(w->id);
  delete w;
}

namespace {

// Replaces the handshake's certificates with `ctx`'s: the first context's
// (the listener's) are cleared first, so a key type only the default has
// cannot be chosen for a name another context serves. SSL_set_SSL_CTX is
// not an option: OpenSSL 3.5 refuses it on a QUIC connection (it takes
// only plain TLS objects), while the certificate setters reach the
// connection's handshake layer.
bool UseCertificateOf(SSL* ssl, SSL_CTX* ctx) {
  X509* cert = SSL_CTX_get0_certificate(ctx);
  EVP_PKEY* key = SSL_CTX_get0_privatekey(ctx);
  if (cert == nullptr || key == nullptr) return false;
  STACK_OF(X509)* chain = nullptr;
  if (SSL_CTX_get0_chain_certs(ctx, &chain) != 1) chain = nullptr;
  SSL_certs_clear(ssl);
  // The setter takes its own references (chain copied).
  return SSL_use_cert_and_key(ssl, cert, key, chain, 1) == 1;
}

}  // namespace

// The certificate callback: with addContext names, the context for the
// server name (or the default); with an SNI callback, the first call
// records the name and suspends the handshake (-1: OpenSSL's QUIC layer
// treats SSL_ERROR_WANT_X509_LOOKUP like a want-read and runs the
// handshake again on every later tick of the connection), and a later call
// applies the answer. 0 fails the handshake (an internal_error alert: the
// client sees CONNECTION_CLOSE with a crypto error).
int QuicEndpoint::OnCertCb(SSL* ssl, void* arg) {
  auto* self = static_cast<QuicEndpoint*>(arg);
  const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  SSL_CTX* use = nullptr;
  if (self->tls_.sni_callback && name != nullptr) {
    auto* w = static_cast<SniWait*>(SSL_get_ex_data(ssl, SniIndex()));
    if (w == nullptr) {
      w = new SniWait{self, ++self->sni_serial_, name, SniWait::kAsked, TlsContext()};
      if (SSL_set_ex_data(ssl, SniIndex(), w) != 1) {
        delete w;
        return 0;
      }
      self->sni_waiting_[w->id] = w;
      self->sni_asked_.push_back(w->id);
      return -1;
    }
    if (w->state == SniWait::kAsked) return -1;
    if (w->state == SniWait::kFailed) return 0;
    use = w->answer.get();
  } else if (name != nullptr) {
    use = self->tls_.ForServerName(name);
  }
  if (use == nullptr) use = self->tls_.default_ctx();
  if (use == nullptr) return 1;  // the listener context's own
  return UseCertificateOf(ssl, use) ? 1 : 0;
}

int QuicEndpoint::OnTicketKey(SSL* ssl, unsigned char* name, unsigned char* iv,
                              EVP_CIPHER_CTX* ectx, EVP_MAC_CTX* hctx, int enc) {
  auto* self = static_cast<QuicEndpoint*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), CtxIndex()));
  if (self == nullptr) return enc ? -1 : 0;
  return SealTicket(self->tls_.ticket_keys(), name, iv, ectx, hctx, enc);
}

// After a tick: the handshakes that asked during it are told to the
// delegate (outside OpenSSL's callbacks, whose engine lock is held then).
void QuicEndpoint::AskSni() {
  if (sni_asked_.empty()) return;
  std::vector<uint64_t> asked;
  asked.swap(sni_asked_);
  for (uint64_t id : asked) {
    auto it = sni_waiting_.find(id);
    if (it == sni_waiting_.end()) continue;  // gone meanwhile
    std::string name = it->second->servername;
    delegate_->OnSniRequest(id, name);
  }
}

void QuicEndpoint::AnswerSni(uint64_t id, TlsContext ctx, bool fail) {
  auto it = sni_waiting_.find(id);
  if (it == sni_waiting_.end()) return;
  SniWait* w = it->second;
  sni_waiting_.erase(it);
  w->state = fail ? SniWait::kFailed : SniWait::kAnswered;
  w->answer = std::move(ctx);
  // The next tick runs the handshake again (and the callback applies it).
  RequestFlush();
}

// ---- the server context ----------------------------------------------------

namespace {

int SelectH3(SSL* ssl, const unsigned char** out, unsigned char* outlen,
             const unsigned char* in, unsigned int inlen, void* arg) {
  (void)ssl;
  (void)arg;
  static const unsigned char kH3[] = {2, 'h', '3'};
  unsigned char* sel = nullptr;
  if (SSL_select_next_proto(&sel, outlen, kH3, sizeof(kH3), in, inlen) !=
      OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_ALERT_FATAL;  // no_application_protocol
  }
  *out = sel;
  return SSL_TLSEXT_ERR_OK;
}

int PassCb(char* buf, int size, int rwflag, void* u) {
  (void)rwflag;
  const std::string* p = static_cast<const std::string*>(u);
  if (p == nullptr || p->empty()) return 0;
  int n = static_cast<int>(std::min<size_t>(p->size(), static_cast<size_t>(size)));
  memcpy(buf, p->data(), n);
  return n;
}

}  // namespace

SSL_CTX* QuicServerContext(const std::vector<std::string>& keys,
                           const std::vector<std::string>& certs,
                           const std::string& passphrase, std::string* error) {
  if (!QuicAvailable(error)) return nullptr;
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(OSSL_QUIC_server_method());
  if (ctx == nullptr) {
    *error = LastSslError("SSL_CTX_new(OSSL_QUIC_server_method)");
    return nullptr;
  }
  // Short writes are how backpressure shows (QuicStream::Write).
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE);
  bool ok = !certs.empty() && !keys.empty();
  for (size_t i = 0; ok && i < certs.size(); i++) {
    BIO* b = BIO_new_mem_buf(certs[i].data(), static_cast<int>(certs[i].size()));
    X509* leaf = b ? PEM_read_bio_X509_AUX(b, nullptr, PassCb,
                                           const_cast<std::string*>(&passphrase))
                   : nullptr;
    ok = leaf != nullptr && SSL_CTX_use_certificate(ctx, leaf) == 1;
    X509_free(leaf);
    if (ok && i == 0) {
      // The rest of the first chain: intermediates.
      SSL_CTX_clear_chain_certs(ctx);
      for (;;) {
        X509* ca = PEM_read_bio_X509(b, nullptr, PassCb, const_cast<std::string*>(&passphrase));
        if (ca == nullptr) break;
        if (SSL_CTX_add0_chain_cert(ctx, ca) != 1) {
          X509_free(ca);
          break;
        }
      }
      ERR_clear_error();
    }
    BIO_free(b);
  }
  for (size_t i = 0; ok && i < keys.size(); i++) {
    BIO* b = BIO_new_mem_buf(keys[i].data(), static_cast<int>(keys[i].size()));
    EVP_PKEY* pk = b ? PEM_read_bio_PrivateKey(b, nullptr, PassCb,
                                               const_cast<std::string*>(&passphrase))
                     : nullptr;
    ok = pk != nullptr && SSL_CTX_use_PrivateKey(ctx, pk) == 1;
    EVP_PKEY_free(pk);
    BIO_free(b);
  }
  if (!ok || SSL_CTX_check_private_key(ctx) != 1) {
    *error = LastSslError("HTTP/3 key/cert");
    SSL_CTX_free(ctx);
    return nullptr;
  }
  SSL_CTX_set_alpn_select_cb(ctx, SelectH3, nullptr);
  return ctx;
}

}  // namespace sluice
