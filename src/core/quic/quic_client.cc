#include "core/quic/quic_client.h"

#include <errno.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace sluice {

QuicClient::QuicClient(uv_loop_t* loop, QuicClientDelegate* delegate)
    : loop_(loop), delegate_(delegate) {}

QuicClient::~QuicClient() {
  for (auto& it : streams_) SSL_free(it.second.ssl);
  streams_.clear();
  SSL_free(ssl_);
  SSL_CTX_free(ctx_);
  if (fd_ >= 0) close(fd_);
}

int QuicClient::Connect(const char* ip, int port, const std::string& alpn,
                        const std::string& sni, std::string* error) {
  if (!QuicAvailable(error)) return -ENOSYS;
  sockaddr_storage ss;
  memset(&ss, 0, sizeof(ss));
  socklen_t len;
  BIO_ADDR* peer = BIO_ADDR_new();
  if (uv_ip4_addr(ip, port, reinterpret_cast<sockaddr_in*>(&ss)) == 0) {
    len = sizeof(sockaddr_in);
    auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
    BIO_ADDR_rawmake(peer, AF_INET, &sin->sin_addr, sizeof(sin->sin_addr), sin->sin_port);
  } else if (uv_ip6_addr(ip, port, reinterpret_cast<sockaddr_in6*>(&ss)) == 0) {
    len = sizeof(sockaddr_in6);
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(&ss);
    BIO_ADDR_rawmake(peer, AF_INET6, &sin6->sin6_addr, sizeof(sin6->sin6_addr), sin6->sin6_port);
  } else {
    BIO_ADDR_free(peer);
    *error = "not an IP address";
    return -EINVAL;
  }
  fd_ = socket(ss.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0 || connect(fd_, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    int e = errno;
    BIO_ADDR_free(peer);
    *error = strerror(e);
    return -e;
  }
  ERR_clear_error();
  ctx_ = SSL_CTX_new(OSSL_QUIC_client_method());
  if (ctx_ != nullptr) {
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_NONE, nullptr);
    ssl_ = SSL_new(ctx_);
  }
  BIO* bio = BIO_new_dgram(fd_, BIO_NOCLOSE);
  std::string wire(1, static_cast<char>(alpn.size()));
  wire += alpn;
  bool ok = ssl_ != nullptr && bio != nullptr &&
            SSL_set_alpn_protos(ssl_, reinterpret_cast<const unsigned char*>(wire.data()),
                                static_cast<unsigned>(wire.size())) == 0 &&
            SSL_set_tlsext_host_name(ssl_, sni.c_str()) == 1 &&
            SSL_set1_initial_peer_addr(ssl_, peer) == 1;
  BIO_ADDR_free(peer);
  if (ok) {
    SSL_set_bio(ssl_, bio, bio);
    bio = nullptr;
    SSL_set_value_uint(ssl_, SSL_VALUE_CLASS_GENERIC, SSL_VALUE_EVENT_HANDLING_MODE,
                       SSL_VALUE_EVENT_HANDLING_MODE_EXPLICIT);
    ok = SSL_set_blocking_mode(ssl_, 0) == 1 &&
         SSL_set_default_stream_mode(ssl_, SSL_DEFAULT_STREAM_MODE_NONE) == 1 &&
         SSL_set_incoming_stream_policy(ssl_, SSL_INCOMING_STREAM_POLICY_ACCEPT, 0) == 1;
  }
  if (bio != nullptr) BIO_free(bio);
  if (!ok) {
    unsigned long e = ERR_get_error();
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    *error = buf;
    ERR_clear_error();
    return -EINVAL;
  }
  uv_poll_init(loop_, &poll_, fd_);
  uv_timer_init(loop_, &timer_);
  uv_idle_init(loop_, &idle_);
  poll_.data = timer_.data = idle_.data = this;
  open_handles_ = 3;
  started_ = true;
  Process();
  return 0;
}

int64_t QuicClient::OpenStream(bool uni) {
  if (!connected_ || closed_) return -1;
  SSL* s = SSL_new_stream(ssl_, (uni ? SSL_STREAM_FLAG_UNI : 0) | SSL_STREAM_FLAG_NO_BLOCK);
  if (s == nullptr) {
    ERR_clear_error();
    return -1;
  }
  SSL_set_mode(s, SSL_MODE_ENABLE_PARTIAL_WRITE);
  uint64_t id = SSL_get_stream_id(s);
  Stream& st = streams_[id];
  st.ssl = s;
  if (uni) st.read_done = true;
  return static_cast<int64_t>(id);
}

int QuicClient::Write(uint64_t id, const uint8_t* data, size_t len, bool fin) {
  auto it = streams_.find(id);
  if (it == streams_.end() || it->second.fin_queued) return -1;
  it->second.out.append(reinterpret_cast<const char*>(data), len);
  if (fin) it->second.fin_queued = true;
  Flush(&it->second);
  if (!in_process_ && started_ && !destroyed_) uv_idle_start(&idle_, OnIdle);
  return 0;
}

int QuicClient::ResetStream(uint64_t id, uint64_t code) {
  auto it = streams_.find(id);
  if (it == streams_.end()) return -1;
  SSL_STREAM_RESET_ARGS a;
  memset(&a, 0, sizeof(a));
  a.quic_error_code = code;
  if (SSL_stream_reset(it->second.ssl, &a, sizeof(a)) != 1) ERR_clear_error();
  it->second.fin_sent = it->second.fin_queued = true;
  it->second.out.clear();
  if (!in_process_ && started_ && !destroyed_) uv_idle_start(&idle_, OnIdle);
  return 0;
}

void QuicClient::Close(uint64_t code) {
  if (ssl_ == nullptr || closed_) return;
  SSL_SHUTDOWN_EX_ARGS a;
  memset(&a, 0, sizeof(a));
  a.quic_error_code = code;
  if (SSL_shutdown_ex(ssl_, SSL_SHUTDOWN_FLAG_NO_BLOCK, &a, sizeof(a)) < 0) ERR_clear_error();
  if (!in_process_ && started_ && !destroyed_) uv_idle_start(&idle_, OnIdle);
}

void QuicClient::Flush(Stream* s) {
  if (s->fin_sent) return;
  while (!s->out.empty()) {
    size_t w = 0;
    if (SSL_write_ex2(s->ssl, s->out.data(), s->out.size(),
                      s->fin_queued ? SSL_WRITE_FLAG_CONCLUDE : 0, &w) != 1) {
      ERR_clear_error();
      return;
    }
    s->out.erase(0, w);
    if (s->out.empty() && s->fin_queued) {
      s->fin_sent = true;
      return;
    }
    if (w == 0) return;
  }
  if (s->fin_queued && !s->fin_sent) {
    if (SSL_stream_conclude(s->ssl, 0) == 1) {
      s->fin_sent = true;
    } else {
      ERR_clear_error();
    }
  }
}

void QuicClient::OnPoll(uv_poll_t* h, int, int) { static_cast<QuicClient*>(h->data)->Process(); }
void QuicClient::OnTimer(uv_timer_t* h) { static_cast<QuicClient*>(h->data)->Process(); }
void QuicClient::OnIdle(uv_idle_t* h) {
  uv_idle_stop(h);
  static_cast<QuicClient*>(h->data)->Process();
}

void QuicClient::Process() {
  if (destroyed_ || closed_ || in_process_) return;
  in_process_ = true;
  // A round: tick (which sends what the last round queued and takes in
  // what arrived), accept, read, flush. Every tick may take in stream data
  // from the socket, which the socket's poll then no longer reports, so
  // rounds go on until one finds nothing to read or write: a tick left
  // last (after the reads) would leave that data unread until the next
  // timer, which may be the idle keep-alive seconds away.
  bool active = false;
  for (int round = 0; round < 8 && !destroyed_ && !closed_; round++) {
    active = false;
    if (SSL_handle_events(ssl_) != 1) ERR_clear_error();
    if (!connected_) {
      int r = SSL_connect(ssl_);
      if (r == 1) {
        connected_ = true;
        delegate_->OnConnected();
        if (destroyed_) break;
      } else {
        ERR_clear_error();
      }
    }
    SSL_CONN_CLOSE_INFO info;
    memset(&info, 0, sizeof(info));
    bool closing = SSL_get_conn_close_info(ssl_, &info, sizeof(info)) == 1;
    ERR_clear_error();
    if (closing && !connected_) {
      ReportClosed(info);
      break;
    }
    if (!connected_) break;
    for (;;) {
      SSL* s = SSL_accept_stream(ssl_, SSL_ACCEPT_STREAM_NO_BLOCK);
      if (s == nullptr) {
        ERR_clear_error();
        break;
      }
      active = true;
      Stream& st = streams_[SSL_get_stream_id(s)];
      st.ssl = s;
      if ((SSL_get_stream_type(s) & SSL_STREAM_TYPE_WRITE) == 0) st.fin_sent = st.fin_queued = true;
    }
    // Reads (ids collected first: the delegate may open streams).
    std::vector<uint64_t> ids;
    for (auto& it : streams_) {
      if (!it.second.read_done) ids.push_back(it.first);
    }
    uint8_t buf[16384];
    for (uint64_t id : ids) {
      for (;;) {
        auto it = streams_.find(id);
        if (it == streams_.end() || it->second.read_done || destroyed_ || closed_) break;
        size_t n = 0;
        if (SSL_read_ex(it->second.ssl, buf, sizeof(buf), &n) == 1) {
          active = true;
          delegate_->OnStreamData(id, buf, n, false);
          continue;
        }
        int err = SSL_get_error(it->second.ssl, 0);
        ERR_clear_error();
        if (err == SSL_ERROR_WANT_READ) break;
        active = true;
        it->second.read_done = true;
        if (err == SSL_ERROR_ZERO_RETURN ||
            SSL_get_stream_read_state(it->second.ssl) == SSL_STREAM_STATE_FINISHED) {
          delegate_->OnStreamData(id, nullptr, 0, true);
        } else if (SSL_get_stream_read_state(it->second.ssl) == SSL_STREAM_STATE_RESET_REMOTE) {
          uint64_t code = 0;
          SSL_get_stream_read_error_code(it->second.ssl, &code);
          delegate_->OnStreamReset(id, code);
        }
        break;
      }
    }
    if (destroyed_ || closed_) break;
    if (closing) {
      // Stream data that arrived with (or before) the CONNECTION_CLOSE was
      // read above, so a test sees e.g. a GOAWAY sent just before it.
      ReportClosed(info);
      break;
    }
    bool pending = false;
    for (auto& it : streams_) {
      size_t before = it.second.out.size();
      bool fin_before = it.second.fin_sent;
      Flush(&it.second);
      if (it.second.out.size() != before || it.second.fin_sent != fin_before) active = true;
      pending = pending || !it.second.out.empty();
    }
    again_ = pending;
    // Nothing read or written this round: its tick came after the last
    // writes, so nothing waits to be sent or read.
    if (!pending && !active) break;
  }
  // Out of rounds while still busy: another Process on the next timer tick.
  if (active) again_ = true;
  in_process_ = false;
  if (!destroyed_) Rearm();
}

void QuicClient::ReportClosed(const SSL_CONN_CLOSE_INFO& info) {
  closed_ = true;
  std::string reason = info.reason ? std::string(info.reason, info.reason_len) : "";
  delegate_->OnClosed(info.error_code, (info.flags & SSL_CONN_CLOSE_FLAG_TRANSPORT) != 0, reason);
}

void QuicClient::Rearm() {
  if (!started_ || destroyed_) return;
  if (closed_) {
    uv_poll_stop(&poll_);
    uv_timer_stop(&timer_);
    return;
  }
  int events = UV_READABLE;
  if (SSL_net_write_desired(ssl_)) events |= UV_WRITABLE;
  if (events != poll_events_) {
    poll_events_ = events;
    uv_poll_start(&poll_, events, OnPoll);
  }
  struct timeval tv;
  int inf = 1;
  if (SSL_get_event_timeout(ssl_, &tv, &inf) == 1 && !inf) {
    uint64_t ms = static_cast<uint64_t>(tv.tv_sec) * 1000 + (tv.tv_usec + 999) / 1000;
    if (again_ && ms > 1) ms = 1;
    uv_timer_start(&timer_, OnTimer, ms, 0);
  } else {
    ERR_clear_error();
    if (again_) {
      uv_timer_start(&timer_, OnTimer, 1, 0);
    } else {
      uv_timer_stop(&timer_);
    }
  }
}

void QuicClient::Destroy() {
  if (destroyed_) return;
  destroyed_ = true;
  if (!started_) {
    delete this;
    return;
  }
  uv_close(reinterpret_cast<uv_handle_t*>(&poll_), OnClose);
  uv_close(reinterpret_cast<uv_handle_t*>(&timer_), OnClose);
  uv_close(reinterpret_cast<uv_handle_t*>(&idle_), OnClose);
}

void QuicClient::OnClose(uv_handle_t* h) {
  auto* self = static_cast<QuicClient*>(h->data);
  if (--self->open_handles_ == 0) delete self;
}

}  // namespace sluice
