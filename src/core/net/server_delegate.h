// ServerDelegate: how the core reports the server's and its connections'
// lifecycle to the embedder (the N-API binding, or a fuzz harness):
// dispatch brackets, read memory, write drain, tunnel bytes, closes. The
// protocols' own events go to the delegates it hands out: http1()
// (http1_delegate.h) and http2() (http2_delegate.h). All calls happen on
// the loop thread.
//
// Re-entrancy: the embedder may call back into the core (write a response,
// pause, destroy a connection) from inside any of these; the core defers
// anything that would free memory it is still using until the outermost
// dispatch ends.
//
// Dispatch and order: every call below except OnDispatchBegin/End itself
// and AcquireBodyBuffer runs inside a dispatch. Per connection,
// OnConnectionClose comes last (from the close callback, in its own
// dispatch), after every protocol event of that connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sluice {

class Connection;
class Http1Delegate;
class Http2Delegate;
class WsDelegate;

class ServerDelegate {
 public:
  virtual ~ServerDelegate() = default;

  // Brackets every entry from libuv that may call the methods below; nested.
  // The embedder opens its JS scopes here. Core flushes output after the
  // outermost End.
  virtual void OnDispatchBegin() = 0;
  virtual void OnDispatchEnd() = 0;

  // Read buffers supplied by the embedder (requestBufferAllocator), asked
  // by ReadBuffers from the socket's alloc callback: outside a dispatch
  // (the embedder opens its own handle scope; it must not run microtasks).
  enum class BufferResult {
    kOk,        // *base/*len describe memory sluice may read into
    kFallback,  // no memory this time: read into the shared buffer, copy
    kDry,       // a bounded pool is empty: stop reading until it refills
    kError,     // the allocator failed: the connection is to be destroyed
  };
  virtual BufferResult AcquireBodyBuffer(Connection* c, size_t size,
                                         char** base, size_t* len) {
    (void)c; (void)size; (void)base; (void)len;
    return BufferResult::kFallback;
  }
  // Sluice no longer reads into the current read buffer (views cut from it
  // stay valid: the embedder owns that memory). Inside a dispatch only; on
  // close the embedder drops its hold itself in OnConnectionClose.
  virtual void ReleaseBodyBuffer(Connection* c) { (void)c; }
  // The write backlog fell below the low-water mark after passing the high.
  virtual void OnDrain(Connection* c) = 0;
  // The connection is closed; `c` is freed right after this returns.
  virtual void OnConnectionClose(Connection* c) = 0;
  // The listener stopped accepting and its last connection closed.
  virtual void OnServerClosed() = 0;
  // A connection was closed at accept because of max_connections (node's
  // 'drop' event). Addresses as Connection::GetPeer / GetLocal: family 4
  // or 6, empty ip when unknown.
  struct DroppedConnection {
    std::string_view local_ip, remote_ip;
    int local_port, remote_port, local_family, remote_family;
  };
  virtual void OnConnectionDropped(const DroppedConnection& d) { (void)d; }
  // Bytes read on a tunnel, valid only during the call.
  virtual void OnTunnelData(Connection* c, const char* data, size_t len) {
    (void)c; (void)data; (void)len;
  }
  // The peer ended its side of a tunnel (FIN).
  virtual void OnTunnelEnd(Connection* c) { (void)c; }
  // A connection was accepted (only with ServerOptions::connection_events),
  // before any of its bytes is read; it may be destroyed from here.
  virtual void OnConnection(Connection* c) { (void)c; }
  // TLS (a listener with a TlsServer): the handshake completed and the
  // session was chosen by ALPN (node's 'secureConnection'). The embedder
  // may close the connection here.
  virtual void OnSecureConnection(Connection* c) { (void)c; }
  // TLS with an SNICallback (TlsServer::sni_callback): the ClientHello
  // named `servername` and the handshake waits for
  // Connection::SniAnswered (now or later; meanwhile handshakeTimeout
  // runs). Not called from inside OpenSSL. The embedder may close the
  // connection here instead of answering. Only an embedder that sets
  // sni_callback is asked.
  virtual void OnSniRequest(Connection* c, const char* servername) {
    (void)c; (void)servername;
  }
  // A handshake failed, timed out, or the client left before it completed
  // (node's 'tlsClientError'): code as node names it ("ERR_SSL_...",
  // "ERR_TLS_HANDSHAKE_TIMEOUT", "ECONNRESET"), OpenSSL's message. The
  // connection closes right after.
  virtual void OnTlsClientError(Connection* c, const char* code,
                                const char* message) {
    (void)c; (void)code; (void)message;
  }
  // HTTP/1.1 request events go here (http1_delegate.h).
  virtual Http1Delegate* http1() = 0;
  // HTTP/2 stream events go here (http2_delegate.h); nullptr: the server
  // speaks HTTP/1.1 only.
  virtual Http2Delegate* http2() { return nullptr; }
  // WebSocket events go here (websocket/ws_delegate.h); nullptr: no
  // connection of this server becomes a WebSocket.
  virtual WsDelegate* websocket() { return nullptr; }
};

}  // namespace sluice
