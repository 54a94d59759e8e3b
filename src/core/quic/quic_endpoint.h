// QuicEndpoint: a QUIC server on one UDP socket, made of OpenSSL 3.5's own
// QUIC stack (a listener SSL object over a datagram BIO on the socket) and
// driven from the libuv loop it is given: readiness of the socket from a
// uv_poll, OpenSSL's next deadline from a uv_timer, output written from
// outside a dispatch flushed from a uv_idle. Nothing blocks, no thread is
// started: every SSL object is in non-blocking mode with explicit event
// handling, so only QuicEndpoint::Process (SSL_handle_events on the
// listener, which ticks every connection of its port) moves packets.
//
// QuicConnection and QuicStream wrap the connection and stream SSL objects
// the listener hands out. The embedder sees them through one
// QuicConnectionHandler per connection (HTTP/3 is one; src/core/http3).
//
// Loop thread only. No N-API here.
#pragma once

#include <sys/socket.h>
#include <uv.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/common/loop_tracked.h"
#include "core/net/tls_context.h"
#include "core/observe/server_metrics.h"
#include "core/quic/quic_symbols.h"

namespace sluice {

class QuicConnection;
class QuicEndpoint;

// The application protocol's error codes for what the endpoint does on
// its own initiative: QUIC knows no application, the application layer
// gives them (HTTP/3's come from its H3Error, Http3Session::QuicCodes).
struct QuicAppCodes {
  uint64_t no_error = 0;        // graceful closes (idle, server closing); only it waits for queued data
  uint64_t internal_error = 0;  // the reset code of a stream whose connection died under it
  uint64_t cancelled = 0;       // stands for a peer's reset / STOP_SENDING code 0
  uint64_t stream_refused = 0;  // resets the streams past max_streams_per_connection
};

// One QUIC stream (RFC 9000 §2) of a connection: bidirectional (a request)
// or unidirectional, opened by either side. Owned by its QuicConnection;
// the handler holds the pointer from OnStreamOpen (or OpenUniStream) until
// it calls Release(), or until OnConnectionClose returns.
class QuicStream {
 public:
  // Read's results besides a byte count.
  static constexpr ptrdiff_t kBlocked = -1;  // nothing more now
  static constexpr ptrdiff_t kFin = -2;      // the peer's data ended
  static constexpr ptrdiff_t kReset = -3;    // the peer reset it / the connection died

  uint64_t id() const { return id_; }
  bool bidi() const { return (id_ & 2) == 0; }
  bool peer_initiated() const { return (id_ & 1) == 0; }  // server: client ids are even
  QuicConnection* connection() const { return conn_; }

  // Up to `cap` received bytes into `buf`: > 0 bytes, or kBlocked, kFin
  // (once; later calls return kFin again), kReset (reset_code() says the
  // peer's code).
  ptrdiff_t Read(uint8_t* buf, size_t cap);
  uint64_t reset_code() const { return reset_code_; }
  // Received bytes a Read would return now (0: none, or only the FIN or a
  // reset left to report, which Read tells). Does no network I/O.
  size_t Pending() const;
  // For a stream the handler is not reading (paused, or held back): true
  // once the peer reset it or the connection died under it (reset_code()
  // says the code; Read returns kReset from then on). Its unread data is
  // OpenSSL's to drop. No network I/O.
  bool PollReset();
  // Queues bytes for sending; `fin` ends the stream once all of them are
  // queued. Returns the bytes taken (may be fewer than len when the
  // stream's send buffer is full: then OnStreamWritable follows once room
  // frees up), or -1 if the stream can no longer be written.
  ptrdiff_t Write(const uint8_t* data, size_t len, bool fin);
  // Room left in the send buffer (0 when it is full).
  uint64_t WriteRoom() const;
  // A write-blocked stream is resumed (OnStreamWritable) once its send
  // buffer has this much room: half the buffer, at most kResumeRoom.
  static constexpr uint64_t kResumeRoom = 16384;
  bool write_blocked() const { return write_blocked_; }
  bool write_done() const { return write_done_; }
  // Abandons sending with application error `code` (RESET_STREAM).
  void Reset(uint64_t code);
  // The handler is done with the stream: the connection frees it on its
  // next pass (a stream whose data is still unsent keeps being sent).
  void Release();

  void* user_data = nullptr;

 private:
  friend class QuicConnection;
  QuicStream(QuicConnection* conn, SSL* ssl);
  ~QuicStream();
  QuicStream(const QuicStream&) = delete;
  QuicStream& operator=(const QuicStream&) = delete;
  // True once, when the peer's STOP_SENDING has reset the send side
  // (*code: its application error code, 0 given as QuicAppCodes::cancelled);
  // writing is over from then on.
  bool TakePeerStop(uint64_t* code);

  QuicConnection* conn_;
  SSL* ssl_;
  uint64_t id_;
  uint64_t reset_code_ = 0;
  uint64_t resume_room_ = 1;  // set when a write is cut short
  bool read_done_ = false;
  bool write_blocked_ = false;
  bool write_done_ = false;
  bool released_ = false;
};

// What the embedder does with one connection. Every call comes from
// QuicEndpoint::Process on the loop thread; the handler may write, reset,
// release or open streams and close its connection from inside any of
// them (output is flushed before Process returns).
class QuicConnectionHandler {
 public:
  virtual ~QuicConnectionHandler() = default;
  // The connection finished its handshake and can open streams; called
  // once, before any stream event.
  virtual void OnConnectionReady() = 0;
  // The peer opened `s`; its data follows as OnStreamReadable.
  virtual void OnStreamOpen(QuicStream* s) = 0;
  // Data, the FIN or a reset may be waiting on `s`: the handler Reads
  // until kBlocked, kFin or kReset. Called on every pass while the read
  // side is open (cheap: a Read with nothing waiting returns at once).
  virtual void OnStreamReadable(QuicStream* s) = 0;
  // A write that was cut short may go on.
  virtual void OnStreamWritable(QuicStream* s) = 0;
  // The peer sent STOP_SENDING on `s` with application error `code`: it
  // will read no more of it (a browser cancelling a download), and OpenSSL
  // has reset the send side; Write fails from now on. Called once, on a
  // pass, whether or not the handler is writing (a response blocked on
  // flow control, or one not started, would otherwise never hear of it).
  // The stream stays the handler's until it calls Release.
  virtual void OnStreamStopped(QuicStream* s, uint64_t code) = 0;
  // Once per pass of a ready connection, before its streams are read and
  // resumed: work that arrived from outside Process (a file read that
  // completed on the loop) is done here, so that what it writes is ticked
  // out by the same Process (a write inside a pass asks for another round).
  // Whatever wants this call asks for it with QuicEndpoint::RequestFlush.
  virtual void OnPass() {}
  // The endpoint is closing gracefully (server.close()): the handler
  // tells its peer (HTTP/3 GOAWAY), finishes what is in flight, and then
  // calls QuicConnection::Close.
  virtual void OnGoingAway() = 0;
  // Whether the connection has work the idle timeout must not cut: a
  // request a handler is serving or a response still going out. Streams
  // the peer opened and left short of a whole request do not count, so a
  // client that opens them and falls silent is closed as idle.
  virtual bool Busy() const = 0;
  // The connection is gone (closed by either side, idle timeout, or the
  // endpoint destroyed). Every QuicStream of it is freed after this
  // returns; the handler is deleted right after. error_code is the
  // CONNECTION_CLOSE code, `transport` whether it is a transport error.
  virtual void OnConnectionClose(uint64_t error_code, bool transport) = 0;
};

// One accepted connection. Owned by its QuicEndpoint.
class QuicConnection {
 public:
  // Opens a unidirectional stream of our own (HTTP/3 control and QPACK
  // streams). nullptr if the peer's stream limit allows none now.
  QuicStream* OpenUniStream();
  // Closes the connection with application error `code`:
  // QuicAppCodes::no_error after queued stream data is sent, any other
  // code at once.
  // OnConnectionClose follows. `reason`: a string literal.
  void Close(uint64_t code, const char* reason);
  // The same without waiting for queued stream data (close() after its
  // grace period: a peer that stopped reading must not hold it).
  void CloseNow(uint64_t code, const char* reason);
  // CloseNow after the endpoint's next tick, so what was just queued on
  // the streams (an HTTP/3 GOAWAY) is sent once, but never waited on for
  // acknowledgment.
  void CloseAfterSend(uint64_t code, const char* reason);
  // The peer's address ("1.2.3.4", port, family 4/6): the source of the
  // latest datagram addressed to the connection ID the server chose for
  // it (QuicEndpoint::OnDatagram); false if unknown (no datagram seen yet,
  // or this OpenSSL build lacks the internals it needs: quic_symbols.h).
  bool PeerAddress(std::string* ip, int* port, int* family) const;
  bool LocalAddress(std::string* ip, int* port, int* family) const;
  QuicEndpoint* endpoint() const { return endpoint_; }
  QuicConnectionHandler* handler() const { return handler_.get(); }
  // Streams the peer opened and the handler has not released.
  size_t open_peer_streams() const { return open_peer_streams_; }
  // Marks activity now (for the idle timeout).
  void Touch();
  SSL* ssl() const { return ssl_; }

 private:
  friend class QuicEndpoint;
  friend class QuicStream;
  // The endpoint's application codes (QuicEndpointOptions::app).
  const QuicAppCodes& codes() const;
  QuicConnection(QuicEndpoint* endpoint, SSL* ssl);
  ~QuicConnection();
  QuicConnection(const QuicConnection&) = delete;
  QuicConnection& operator=(const QuicConnection&) = delete;

  // One pass: new streams, readable and writable streams, released
  // streams freed, close progress. Returns false once the connection is
  // gone (the endpoint then deletes it).
  bool Pump(uint64_t now_ms);
  void Terminate(uint64_t code, bool transport);
  // One non-blocking step of the close Close started: 1 once done.
  int ShutdownStep();
  void FreeStreams();

  QuicEndpoint* endpoint_;
  SSL* ssl_;
  std::unique_ptr<QuicConnectionHandler> handler_;
  sockaddr_storage peer_{};   // ss_family 0 until a datagram was matched
  std::string cid_;           // the server's connection ID (key of by_cid_), or empty
  // Limits (QuicEndpointOptions): when it was accepted, whether it counts
  // as a handshake in progress, and the address bytes it counts against
  // (empty: not counted).
  uint64_t accepted_ms_ = 0;
  bool in_handshake_ = false;
  std::string counted_addr_;
  void EndHandshake();
  // Enforces the per-address bound once the peer is known; false if the
  // connection was refused.
  bool CountAddress();
  std::vector<QuicStream*> streams_;
  size_t open_peer_streams_ = 0;
  uint64_t last_activity_ms_ = 0;
  bool ready_ = false;
  bool closing_ = false;      // Close called: SSL_shutdown_ex in progress
  uint64_t close_code_ = 0;
  bool close_flush_ = true;
  const char* close_reason_ = "";  // a literal
  bool terminated_ = false;   // OnConnectionClose delivered
  bool going_away_ = false;   // OnGoingAway delivered
  bool close_after_send_ = false;  // CloseAfterSend: CloseNow once ticks_ passes close_tick_
  uint64_t close_tick_ = 0;
  LoopTracked tracked_;
};

// Makes the handler of each new connection.
class QuicEndpointDelegate {
 public:
  virtual ~QuicEndpointDelegate() = default;
  // A connection was accepted. Returns its handler (owned by the
  // connection from then on), or nullptr to refuse it (closed with
  // CONNECTION_REFUSED).
  virtual QuicConnectionHandler* OnConnection(QuicConnection* c) = 0;
  // Bracket every batch of connection/stream events (one Process): the
  // embedder opens its scopes here (the binding: a callback scope, so
  // JS microtasks run after the batch).
  virtual void OnDispatchBegin() {}
  virtual void OnDispatchEnd() {}
  // A handshake was cut by handshake_timeout_ms (the connection is closing;
  // its handler, if any, hears OnConnectionClose). `c`'s PeerAddress may
  // be known. From Process; the delegate may not delete `c`.
  virtual void OnHandshakeTimeout(QuicConnection* c) { (void)c; }
  // Called once, when a Close finished: no connection and no libuv handle
  // is left; the endpoint may be deleted from inside this call.
  virtual void OnEndpointClosed() = 0;
  // With an SNI callback (SetSniCallback): a ClientHello named
  // `servername`, and its handshake waits until AnswerSni(id, ...). Called
  // from Process, outside OpenSSL (never from inside its callbacks); the
  // answer may come inside this call or any time later.
  virtual void OnSniRequest(uint64_t id, const std::string& servername) {
    (void)id;
    (void)servername;
  }
};

struct QuicEndpointOptions {
  QuicAppCodes app;
  size_t max_connections = 10000;
  size_t max_streams_per_connection = 100;  // open peer streams; more are reset (app.stream_refused)
  uint64_t idle_timeout_ms = 30000;         // no stream activity, not Busy(): closed (0: OpenSSL's own only)
  uint64_t refused_code = 0x2;              // CONNECTION_REFUSED: past max_connections / closing
  bool validate_address = true;             // Retry before creating state for a new client
  // A connection whose handshake has not completed this long after it was
  // accepted is closed (the TLS listener's handshakeTimeout; 0: OpenSSL's
  // idle timeout only).
  uint64_t handshake_timeout_ms = 120000;
  // Handshakes in progress (accepted, not yet complete); a new connection
  // past it is refused at once (0: no bound).
  size_t max_handshakes = 1000;
  // Connections from one IP address (any port); one past it is refused as
  // soon as its address is known, within its handshake (0: no bound).
  size_t max_connections_per_address = 0;
  // Runs of datagrams to one peer go to the kernel as one GSO send
  // (SendBatch); false: every datagram through OpenSSL's datagram BIO.
  bool gso = true;
  // Ask the kernel to coalesce runs of datagrams from one sender into one
  // read (UDP_GRO, where it has it); false: one datagram per read.
  bool gro = true;
  // SO_RCVBUF asked for the UDP socket (0: the system default). A client
  // may have a whole flow-control window in flight (OpenSSL grants 768 KiB
  // per connection), which a browser sends in one burst; the default
  // 208 KiB drops most of it while the loop is busy, and every drop costs
  // the client a loss recovery. Linux caps the request at
  // net.core.rmem_max (then doubles it).
  int receive_buffer_bytes = 4 * 1024 * 1024;
};

class QuicEndpoint {
 public:
  // The listener's network BIO hands every received datagram here, before
  // OpenSSL processes it (inside SSL_handle_events / SSL_accept_connection):
  // its destination connection ID names a connection, whose peer address
  // becomes the datagram's source (RFC 9000 §9.3: the latest one wins, as
  // after a NAT rebinding). Records only; calls nobody.
  void OnDatagram(const uint8_t* data, size_t len, const BIO_ADDR* peer);
  // And every datagram it sends, with its destination: a long-header
  // packet's source connection ID is the server's own, so its destination
  // is the connection's peer until the client's own datagrams say (the
  // only source for a client whose handshake never gets past its first
  // flight). Records only; calls nobody.
  void OnSentDatagram(const uint8_t* data, size_t len, const BIO_ADDR* peer);
  // `ctx` is a context of OSSL_QUIC_server_method (QuicServerContext); the
  // endpoint takes one reference of its own and installs its certificate
  // and ticket callbacks on it, so one ctx serves one endpoint. `certs`:
  // the default certificate context (SetDefaultContext).
  QuicEndpoint(uv_loop_t* loop, SSL_CTX* ctx, TlsContext certs, QuicEndpointDelegate* delegate,
               const QuicEndpointOptions& options);
  QuicEndpoint(const QuicEndpoint&) = delete;
  QuicEndpoint& operator=(const QuicEndpoint&) = delete;

  // Binds a UDP socket to host:port (port 0: any) and starts listening;
  // `reuse_port`: SO_REUSEPORT before bind, so other endpoints (cluster
  // workers, other threads) bind the same port and the kernel spreads
  // datagrams across them by 4-tuple hash. 0 or a negative errno / libuv
  // error; *error gets OpenSSL's reason when the QUIC listener could not
  // be made.
  int Listen(const char* host, int port, bool reuse_port, std::string* error);
  int GetAddress(std::string* ip, int* port, int* family) const;
  // Graceful close: new connections are refused, open ones are told
  // (OnGoingAway) and close themselves; after `grace_ms` the rest are
  // closed. OnEndpointClosed follows.
  void Close(uint64_t grace_ms);
  // Closes everything now (OnConnectionClose for each), then the handles;
  // OnEndpointClosed follows.
  void Destroy();
  void SetRef(bool ref);
  // Frees an endpoint that never listened (no handle, no connection), with
  // no delegate call.
  void Abandon();
  size_t connection_count() const { return conns_.size(); }
  // Accepted connections whose handshake is in progress (max_handshakes).
  size_t handshake_count() const { return handshakes_; }
  // Sends that carried several datagrams as one GSO send (SendBatch).
  uint64_t gso_sends() const { return gso_sends_; }
  // Reads that carried several datagrams coalesced by the kernel (UDP_GRO).
  uint64_t gro_reads() const { return gro_reads_; }
  // UDP payload bytes received and sent (every datagram, handshakes too).
  uint64_t bytes_received() const { return bytes_received_; }
  uint64_t bytes_sent() const { return bytes_sent_; }
  // The application's counters (HTTP/3: Http3Session records its
  // requests here; connections accepted are counted by the endpoint).
  // Kept by the endpoint because it outlives every connection's handler.
  ServerMetrics& metrics() { return metrics_; }

  // Output was queued from outside Process: flush it soon (from an idle
  // callback, on this loop turn).
  void RequestFlush();
  // Runs OpenSSL's event processing and every connection's pass, repeated
  // while a pass queued output. Re-entrant calls are folded into the
  // running one.
  void Process();
  uint64_t now_ms() const { return uv_now(loop_); }
  // The loop it runs on (threadpool work for its connections queues here).
  uv_loop_t* loop() const { return loop_; }

  // The certificates (docs/http3.md "Certificates"). A connection gets
  // its certificate, key and chain copied from one of these contexts
  // while its ClientHello is processed (certificate callback); what it got
  // stays with it, so replacing or adding contexts only changes what new
  // handshakes get. Only the certificate material of a context is used:
  // the QUIC handshake keeps the listener context's other settings (ALPN
  // "h3", the ticket keys below). The contexts are counted references
  // (TlsContext), shareable with the TCP listener's TlsServer.
  //
  // setSecureContext: new handshakes use `ctx`.
  void SetDefaultContext(TlsContext ctx) { tls_.SetDefault(std::move(ctx)); }
  // addContext: a ClientHello naming a matching host gets `ctx` (the TCP
  // side's rules: '*' is one label, later additions win).
  void AddSniContext(const std::string& host, TlsContext ctx) {
    tls_.AddSni(host, std::move(ctx));
  }
  // SNICallback: a ClientHello with a server name waits for AnswerSni
  // (the addContext names are not consulted, as on TCP).
  void SetSniCallback(bool on) { tls_.sni_callback = on; }
  // The answer to OnSniRequest `id`: serve `ctx` (empty: the default), or
  // fail the handshake (`fail`). Unknown ids (the connection is gone) are
  // ignored.
  void AnswerSni(uint64_t id, TlsContext ctx, bool fail);
  // Session ticket keys (node's 48-byte layout, as the TCP listener's):
  // tickets this endpoint issues are sealed with them, and tickets sealed
  // with them resume. Random until set.
  bool SetTicketKeys(const std::string& keys) { return tls_.SetTicketKeys(keys); }

 private:
  friend class QuicConnection;  // reads options_ and closing_
  // One handshake's SNI callback state, kept as ex_data of its SSL so it
  // dies with it (SniStateFree).
  struct SniWait;
  static int OnCertCb(SSL* ssl, void* arg);
  static int OnTicketKey(SSL* ssl, unsigned char* name, unsigned char* iv,
                         EVP_CIPHER_CTX* ectx, EVP_MAC_CTX* hctx, int enc);
  static void SniStateFree(void* parent, void* ptr, CRYPTO_EX_DATA* ad, int idx, long argl,
                           void* argp);
  static int SniIndex();
  static int CtxIndex();
  void AskSni();
  ~QuicEndpoint();
  static void OnPoll(uv_poll_t* h, int status, int events);
  static void OnTimer(uv_timer_t* h);
  static void OnIdle(uv_idle_t* h);
  static void OnGraceTimer(uv_timer_t* h);
  static void OnHandleClosed(uv_handle_t* h);
  void AcceptConnections();
  // A new connection's server connection ID joins by_cid_, and its peer is
  // the source of the latest datagram in recent_ addressed to it.
  void TrackPeer(QuicConnection* c);
  static BIO_METHOD* NetBioMethod();
  // The filter's recvmmsg (in) and sendmmsg: dgram_'s, then each datagram
  // shown to OnDatagram / OnSentDatagram. Called by OpenSSL inside a tick.
  static int NetMmsg(BIO* b, BIO_MSG* msg, size_t stride, size_t num, uint64_t flags,
                     size_t* done, bool in);
  // Sends a batch as OpenSSL's BIO_sendmmsg would, but with runs of
  // datagrams to one peer (equal sizes, the last maybe shorter) given to
  // the kernel as one GSO send each (UDP_SEGMENT): one trip through the
  // UDP stack per run instead of per datagram. Falls back to dgram_ for
  // batches it does not handle, and for good once the kernel refuses GSO.
  int SendBatch(BIO_MSG* msg, size_t stride, size_t num, uint64_t flags, size_t* done);
  // The receive side of the filter, in place of the datagram BIO's: up
  // to `num` datagrams with their sources, read with recvmmsg. With
  // UDP_GRO on (gro_), reads land in rx_ and each coalesced read is cut
  // into its datagrams (copied into OpenSSL's buffers); what does not fit
  // in this call waits in rx_ for the next (Process comes back for it).
  // Without it, reads land in OpenSSL's buffers directly. 1, or 0 with a
  // non-fatal BIO error when nothing is waiting.
  int RecvBatch(BIO_MSG* msg, size_t stride, size_t num, size_t* done);
  // Datagrams of rx_ not yet handed to OpenSSL.
  bool rx_pending() const { return rx_at_ < rx_count_; }
  void Rearm();
  void CloseHandles();
  void MaybeFinishClose();

  uv_loop_t* loop_;
  SSL_CTX* ctx_;
  QuicEndpointDelegate* delegate_;
  QuicEndpointOptions options_;
  int fd_ = -1;
  SSL* listener_ = nullptr;
  // OpenSSL's datagram BIO on fd_, owned here: the listener's network BIO
  // is a filter of ours in front of it (NetBioMethod), which shows each
  // datagram to OnDatagram.
  BIO* dgram_ = nullptr;
  bool gso_ = true;         // options_.gso, until the kernel refuses UDP_SEGMENT
  uint64_t gso_sends_ = 0;  // GSO sends of more than one datagram
  // The receive side (RecvBatch). gro_: the socket took UDP_GRO. rx_:
  // kRxReads buffers of a whole UDP payload each (a coalesced read is up
  // to 64 KiB; a smaller buffer would cut it), allocated at Listen when
  // gro_: 2 MiB of address space, of which only the pages reads write
  // become resident (a read of one 1,200-byte datagram touches one). As
  // many reads per recvmmsg as OpenSSL takes datagrams per call (32), so
  // uncoalesced traffic costs no more syscalls than its own BIO. The
  // reads of the last recvmmsg (rx_len_, rx_segment_, rx_from_) and the
  // next datagram to hand over (read rx_at_, offset rx_off_).
  static constexpr size_t kRxReads = 32, kRxBytes = 65536;
  bool gro_ = false;
  uint64_t gro_reads_ = 0;  // reads that carried more than one datagram
  std::unique_ptr<uint8_t[]> rx_;
  size_t rx_count_ = 0, rx_at_ = 0, rx_off_ = 0;
  std::array<size_t, kRxReads> rx_len_{};
  std::array<size_t, kRxReads> rx_segment_{};
  std::array<sockaddr_storage, kRxReads> rx_from_{};
  uint64_t bytes_received_ = 0;
  uint64_t bytes_sent_ = 0;
  ServerMetrics metrics_;
  // Connections by the connection ID the server chose (the destination
  // ID of the client's packets), for OnDatagram. Keys are raw ID bytes.
  std::unordered_map<std::string, QuicConnection*> by_cid_;
  size_t short_cid_len_ = 8;  // OpenSSL's server IDs: learned from by_cid_
  // The latest datagrams' destination IDs and sources, for connections
  // accepted after the tick that read their first datagrams.
  struct RecentDatagram {
    std::string cid;
    sockaddr_storage from;
  };
  static constexpr size_t kRecent = 64;
  std::array<RecentDatagram, kRecent> recent_{};
  size_t recent_next_ = 0;
  uv_poll_t poll_;
  uv_timer_t timer_;
  uv_timer_t grace_timer_;
  uv_idle_t idle_;
  int open_handles_ = 0;
  int poll_events_ = 0;
  bool handles_started_ = false;
  bool in_process_ = false;
  bool again_ = false;
  bool closing_ = false;      // Close: refusing new connections
  bool destroying_ = false;   // handles closing
  bool destroy_pending_ = false;  // Destroy called inside Process
  bool ref_ = true;
  uint64_t ticks_ = 0;        // SSL_handle_events calls on the listener
  std::vector<QuicConnection*> conns_;
  size_t handshakes_ = 0;  // conns_ with in_handshake_
  // Open connections per peer IP (raw address bytes), for
  // max_connections_per_address.
  std::unordered_map<std::string, size_t> per_address_;
  // Certificates, SNI names and ticket keys (the TLS listener's own type;
  // its TCP-only fields are unused here).
  TlsServer tls_;
  // Handshakes waiting for an SNI answer, by id; and those not yet told
  // to the delegate (OnSniRequest, after the tick that asked).
  std::map<uint64_t, SniWait*> sni_waiting_;
  std::vector<uint64_t> sni_asked_;
  uint64_t sni_serial_ = 0;
  LoopTracked tracked_;
};

// An SSL_CTX of OSSL_QUIC_server_method with the server's certificate and
// key (PEM) and ALPN "h3"; nullptr with *error set when they do not make
// one (or QUIC is unavailable). The caller owns the reference.
SSL_CTX* QuicServerContext(const std::vector<std::string>& keys,
                           const std::vector<std::string>& certs,
                           const std::string& passphrase, std::string* error);

}  // namespace sluice
