// Connection: one accepted socket (TCP, or a Unix domain socket when the
// listener is bound to a path). Owns its libuv handle, its Writer and its
// Session (the protocol). It frees itself in the close callback, after
// libuv has cancelled its writes and the delegate has been told.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/common/loop_tracked.h"
#include "core/net/protocol_detect.h"
#include "core/net/read_buffers.h"
#include "core/net/session.h"
#include "core/net/tls_channel.h"
#include "core/net/writer.h"

namespace sluice {

class Listener;
class WritableWatch;

enum DeadlineKind {
  kDeadlineHeaders = 0,   // headersTimeout
  kDeadlineRequest = 1,   // requestTimeout
  kDeadlineKeepAlive = 2, // keepAliveTimeout
  kDeadlineLinger = 3,    // closing: stop waiting for the peer's EOF
  kDeadlineHandshake = 4, // TLS: handshakeTimeout (the connection's own)
  kDeadlineWsIdle = 5,    // WebSocket: silent peer (ping, then close)
  kDeadlineWsClose = 6,   // WebSocket: close frame sent, peer's not come
  kDeadlineCount = 7,
};

class Connection final : private WriterClient {
 public:
  // Accepts a pending connection on `server`. Returns nullptr on failure.
  static Connection* Accept(Listener* listener, uv_stream_t* server);
  // Takes over an already connected stream socket (uv_tcp_open), which then
  // behaves as an accepted connection; on failure returns nullptr and the
  // caller keeps `fd`. For embedders that own their sockets: the fuzz
  // harness (test/fuzz/) adopts one end of a socketpair, so the session is
  // driven through the real read/write/close paths without a listening
  // socket and without a transport interface in the hot path.
  static Connection* Adopt(Listener* listener, uv_os_sock_t fd);

  Listener* listener() const { return listener_; }
  Session* session() const { return session_.get(); }
  Writer& writer() { return writer_; }
  ReadBuffers& read_buffers() { return read_buffers_; }
  // The TLS layer under the session; nullptr on a cleartext connection.
  TlsChannel* tls() const { return tls_.get(); }
  // The embedder's answer to ServerDelegate::OnSniRequest: the context to
  // serve (empty: the default). Ignored once closed; the handshake goes on
  // in a later dispatch (or at once when answered inside OnSniRequest).
  void SniAnswered(TlsContext ctx);
  // The embedder's buffer pool refilled: read again if a dry pool stopped
  // reading (the next alloc callback asks again).
  void RetryReadBuffer() { Resume(kPauseMemory); }
  uv_loop_t* loop() const;

  // Output was queued: flush at the end of this dispatch / loop turn.
  void MarkDirty();
  // Flushes now (end of dispatch or an over-full cork). Destroys the
  // connection on a write error. `more`: the session writes to the socket
  // itself right after (sendfile): see Writer::Flush; ignored on a Unix
  // domain socket (no segments to fill) and with TLS.
  void Flush(bool more = false);
  // Lifts kPauseOutput once the write backlog is below the high-water
  // mark (after a flush or a completed write).
  void MaybeResumeOutput();

  // Reading control. Pause stops socket reads (uv_read_stop) until Resume;
  // reasons are counted separately so that, e.g., a paused request and a
  // dry buffer pool do not resume each other.
  // kPauseOutput: the write backlog reached the high-water mark (a client
  // that pipelines requests without reading the responses); lifted by the
  // connection itself once the backlog is below it (MaybeResumeOutput).
  enum PauseReason {
    kPauseUser = 1, kPausePipeline = 2, kPauseMemory = 4, kPauseOutput = 8,
  };
  void Pause(PauseReason why);
  void Resume(PauseReason why);
  bool paused() const { return pause_mask_ != 0; }

  // Protocol switch mid-connection (h2c upgrade, Upgrade to a tunnel, a
  // WebSocket accept): `s` becomes the session. The old one may still be
  // on the stack, so it is retired, not freed: the listener's next check
  // phase frees it (FreeRetiredSessions) if it has nothing in flight, else
  // it lives until the connection is freed. An idle WebSocket would
  // otherwise keep its HTTP/1.1 session and parser (~2 KiB) for life.
  void ReplaceSession(Session* s);
  // Frees the retired sessions that CanFreeRetired. Only from the
  // listener's check callback (Listener::OnCheck), where no session
  // method is on the stack.
  void FreeRetiredSessions();
  size_t retired_sessions() const { return retired_sessions_.size(); }

  // Closes once queued output is written: FIN, then a short linger reading
  // and discarding input, then close.
  void EndGracefully();
  // Closes now: queued output is handed to the kernel as far as it takes it
  // at once (as node's socket.destroy() after writes), the rest is dropped.
  // Safe during a dispatch: the object stays valid until the close callback.
  void Destroy();
  // Closes now with a reset (SO_LINGER 0, then as Destroy): the kernel
  // drops what the socket still holds unsent and the peer sees RST, never
  // a clean end. For a body that went wrong after bytes that must not look
  // like a complete response were handed to the kernel (sendfile of a file
  // changed under it). Without a TCP socket (a pipe): Destroy.
  void Reset();
  bool closing() const { return closing_ || ending_; }
  bool destroyed() const { return closing_; }

  // Deadlines checked by the listener's sweep (0 = none); ms on uv_now.
  void SetDeadline(DeadlineKind kind, uint64_t timeout_ms);
  void ClearDeadline(DeadlineKind kind) { deadlines_[kind] = 0; }
  void CheckDeadlines(uint64_t now);

  // Parses input a pipeline pause held back, then reads again (called by
  // the listener inside a dispatch).
  void ReparseHeldInput();
  // Asks for OnDrain once the backlog falls below the high-water mark.
  void WantDrain() { drain_wanted_ = true; }

  // For a session that writes to the socket itself, past the Writer
  // (sendfile(2) of a file body, src/core/http1/http1_pipe_body.cc): the
  // socket's descriptor (-1 when there is none), and a one-shot wait for
  // it to become writable after such a write met EAGAIN. When it is, the
  // session is told Session::OnWritesDone, as after the Writer's own
  // writes. Returns 0 or a UV_E* error (the caller then destroys the
  // connection). Cleartext only: with TLS every byte must pass the Writer.
  int socket_fd() const;
  int WaitWritable();
  // Bytes a session wrote itself (socket.bytesWritten counts them).
  void CountDirectWrite(size_t n) { writer_.CountDirect(n); }

  // TCP keep-alive probes (node's socket.setKeepAlive): 0 or a libuv error.
  int SetKeepAlive(bool enable, unsigned int delay_s);
  // Bytes read from the socket so far (node's socket.bytesRead).
  uint64_t bytes_read() const { return bytes_read_; }

  // Peer address, computed on demand.
  int GetPeer(std::string* ip, int* port, int* family) const;
  int GetLocal(std::string* ip, int* port, int* family) const;

  // Bookkeeping used by Listener.
  size_t list_index = 0;
  bool dirty = false;
  // The embedder's per-connection object (the binding's JsConnection).
  void* user_data = nullptr;

 private:
  explicit Connection(Listener* listener);
  ~Connection();
  // Accept (server != nullptr) or Adopt (fd).
  static Connection* Open(Listener* listener, uv_stream_t* server,
                          uv_os_sock_t fd);
  static void OnAlloc(uv_handle_t* h, size_t suggested, uv_buf_t* buf);
  static void OnReadCb(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf);
  static void OnShutdown(uv_shutdown_t* req, int status);
  static void OnClosed(uv_handle_t* h);
  void OnWriteComplete(int status) override;
  // The watch of WaitWritable fired (loop thread, from libuv).
  void OnSocketWritable();
  friend class WritableWatch;
  void StartReading();
  void StopReading();
  void StartShutdown();
  void MaybeEmitDrain();
  // First bytes of the connection: HTTP/2 preface or HTTP/1.1 (called by
  // OnReadCb while detecting_).
  void DetectProtocol(const char* data, size_t len);
  // TLS (tls_ set): ciphertext read from the socket (inside the read
  // callback's dispatch): drives the handshake, then PumpTls.
  void OnTlsRead(const char* data, size_t len);
  // Runs the handshake as far as the input goes, asking the embedder when
  // an SNICallback suspends it. True once it completed (OnHandshakeDone),
  // false while it needs more or the connection closed.
  bool DriveHandshake();
  // The handshake completed: the session by ALPN, 'secureConnection'.
  // False when the connection was closed instead.
  bool OnHandshakeDone();
  // Decrypts what was fed into the session, record by record, each into
  // the memory the session asks for (ReadBuffers), until OpenSSL wants
  // more input or the connection pauses or closes. Inside a dispatch.
  void PumpTls();
  // Reports tls_'s error (tlsClientError), writes the alert OpenSSL
  // queued, and closes. Inside a dispatch.
  void FailTls();

  LoopTracked tracked_;  // freed only in the tcp handle's close callback
  Listener* listener_;
  // A TCP socket, or a Unix domain socket on a listener bound to a path
  // (Listener::is_pipe); both start with the uv_stream_t fields, so the
  // stream and handle views below serve either.
  union Handle {
    uv_tcp_t tcp;
    uv_pipe_t pipe;
  } h_;
  bool pipe_ = false;
  uv_stream_t* stream() { return reinterpret_cast<uv_stream_t*>(&h_); }
  uv_handle_t* handle() { return reinterpret_cast<uv_handle_t*>(&h_); }
  uint64_t bytes_read_ = 0;
  Writer writer_;
  ReadBuffers read_buffers_;
  // The last alloc callback found no memory (kDry) or a failing allocator
  // (kError): the read callback that follows (UV_ENOBUFS) acts on it.
  ReadBuffers::Result alloc_result_ = ReadBuffers::kGot;
  std::unique_ptr<Session> session_;
  // Declared after writer_ (its wire queue), destroyed before it.
  std::unique_ptr<TlsChannel> tls_;
  // Sessions replaced by ReplaceSession, possibly still on the stack (an
  // HTTP/1.1 session that became a tunnel that became a WebSocket in the
  // same read): freed by FreeRetiredSessions or with the connection.
  std::vector<std::unique_ptr<Session>> retired_sessions_;
  uv_shutdown_t shutdown_req_;
  uint64_t deadlines_[kDeadlineCount] = {};
  int pause_mask_ = 0;
  bool reading_ = false;
  bool closing_ = false;     // uv_close called
  bool ending_ = false;      // EndGracefully called
  bool shut_down_ = false;   // FIN sent: discarding input until EOF
  bool eof_ = false;
  bool drain_wanted_ = false;
  bool asking_sni_ = false;  // inside ServerDelegate::OnSniRequest
  // Until the first bytes decide, input goes to DetectProtocol (only when
  // the embedder speaks HTTP/2).
  bool detecting_ = false;
  PrefaceMatcher preface_;
  // WaitWritable's watcher (created on first use, closed with the
  // connection).
  WritableWatch* writable_watch_ = nullptr;
};

}  // namespace sluice
