// QuicClient: one QUIC client connection on node's OpenSSL (the client
// half of the same native stack QuicEndpoint serves with), driven from the
// libuv loop like the endpoint: uv_poll on its own UDP socket, a uv_timer
// from SSL_get_event_timeout, explicit event handling. It speaks raw QUIC
// streams (no HTTP/3 of its own): tests send exact bytes with it (valid
// and hostile HTTP/3), benchmarks can load a server with it.
//
// Certificates are not verified (a test and load tool against servers it
// knows). Output is queued per stream without bound: the caller decides
// how much it sends. Loop thread only; no N-API.
#pragma once

#include <uv.h>

#include <cstdint>
#include <map>
#include <string>

#include "core/common/loop_tracked.h"
#include "core/quic/quic_symbols.h"

namespace sluice {

class QuicClientDelegate {
 public:
  virtual ~QuicClientDelegate() = default;
  // The handshake completed.
  virtual void OnConnected() = 0;
  // Bytes (maybe none) of stream `id`; fin: its data ended. Valid only
  // during the call.
  virtual void OnStreamData(uint64_t id, const uint8_t* data, size_t len, bool fin) = 0;
  // The peer reset stream `id` with `code`.
  virtual void OnStreamReset(uint64_t id, uint64_t code) = 0;
  // The connection is gone (close code, whether a transport error, the
  // reason). No call follows; the client may be deleted from inside it.
  virtual void OnClosed(uint64_t code, bool transport, const std::string& reason) = 0;
};

class QuicClient {
 public:
  QuicClient(uv_loop_t* loop, QuicClientDelegate* delegate);
  ~QuicClient();
  QuicClient(const QuicClient&) = delete;
  QuicClient& operator=(const QuicClient&) = delete;

  // Starts connecting to ip:port (an IPv4 or IPv6 literal) offering `alpn`
  // with SNI `sni`. 0, or a negative errno with *error set.
  int Connect(const char* ip, int port, const std::string& alpn, const std::string& sni,
              std::string* error);
  // A new stream of ours: its id, or -1 (not connected, or the peer's
  // stream limit is reached now).
  int64_t OpenStream(bool uni);
  // Queues bytes (and the FIN) on stream `id`. -1 if unknown.
  int Write(uint64_t id, const uint8_t* data, size_t len, bool fin);
  int ResetStream(uint64_t id, uint64_t code);
  // Gives stream `id` up, as a browser cancelling a download does: its
  // SSL object is freed, so OpenSSL sends STOP_SENDING for an unfinished
  // receive part (and resets an unfinished send part). Nothing more is
  // reported for it. -1 if unknown.
  int AbandonStream(uint64_t id);
  // CONNECTION_CLOSE with application `code`; OnClosed follows.
  void Close(uint64_t code);
  // Frees the SSL objects and closes the handles (no more calls).
  void Destroy();
  // Before Connect: offer this session for resumption (DER of an
  // SSL_SESSION, as SessionDer gives). False if it does not parse.
  bool SetSession(const std::string& der);
  // Once connected: the server's certificate (DER; empty if none), the
  // current session (DER: after the server's NewSessionTicket, one that
  // resumes), whether this handshake resumed.
  std::string PeerCertificateDer() const;
  std::string SessionDer() const;
  bool SessionReused() const;

 private:
  struct Stream {
    SSL* ssl = nullptr;
    std::string out;
    bool fin_queued = false;
    bool fin_sent = false;
    bool read_done = false;
  };
  // Rounds (tick, then reads and writes) of one Process before the rest
  // is left to the next loop turn.
  static constexpr int kMaxRounds = 8;
  static void OnPoll(uv_poll_t* h, int status, int events);
  static void OnTimer(uv_timer_t* h);
  static void OnIdle(uv_idle_t* h);
  static void OnClose(uv_handle_t* h);
  // Ticks, then takes what the tick brought (see quic_client.cc); repeated
  // while a round makes progress.
  void Process();
  void Flush(Stream* s);
  void Rearm();
  // The connection is terminating: OnClosed once (reads stop).
  void ReportClosed(const SSL_CONN_CLOSE_INFO& info);

  uv_loop_t* loop_;
  QuicClientDelegate* delegate_;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  SSL_SESSION* resume_ = nullptr;  // SetSession's, until Connect uses it
  int fd_ = -1;
  uv_poll_t poll_;
  uv_timer_t timer_;
  uv_idle_t idle_;
  int open_handles_ = 0;
  int poll_events_ = 0;
  bool started_ = false;
  bool connected_ = false;
  bool closed_ = false;
  bool in_process_ = false;
  bool again_ = false;   // Process stopped at kMaxRounds: go on from idle_
  bool wrote_ = false;   // output was queued since the last tick
  bool destroyed_ = false;
  std::map<uint64_t, Stream> streams_;
  LoopTracked tracked_;
};

}  // namespace sluice
