// The interface through which the core reports to its embedder (the N-API
// binding, or a fuzz harness). All calls happen on the loop thread.
//
// Re-entrancy: the embedder may call back into the core (write a response,
// pause, destroy a connection) from inside any of these; the core defers
// anything that would free memory it is still using until the outermost
// dispatch ends.
//
// Dispatch and order: every call below except OnDispatchBegin/End itself
// runs inside a dispatch, AcquireBodyBuffer also from the embedder's own
// call (a retry). Per connection: OnRequest for a request, then its OnBody
// calls in byte order, then OnRequestEnd; requests in order of arrival;
// OnConnectionClose last (from the close callback, in its own dispatch).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice {

class Connection;
class Http2Delegate;

// A request's head, valid only during the OnRequest call: the views point
// into the session's header arena.
struct RequestHead {
  uint32_t seq;            // per-connection request number, from 0
  int method;              // llhttp_method_t
  int http_major;
  int http_minor;
  std::string_view url;
  // Raw header names and values as received, in order.
  std::vector<std::pair<std::string_view, std::string_view>> headers;
  bool keep_alive;         // per llhttp_should_keep_alive
  bool expect_continue;    // "Expect: 100-continue"
  bool has_expect;         // any Expect header
  bool has_host = false;   // a Host header (node answers 400 without one)
  bool upgrade;
  bool complete;           // the whole message (no body left) was parsed
};

struct ClientError {
  int status;              // HTTP status to answer with (400, 408, 413, 431)
  const char* code;        // stable code: "HPE_INVALID_METHOD", "ERR_HTTP_REQUEST_TIMEOUT"...
  const char* reason;      // human readable
  // A parse error: [raw, raw + raw_len) is the input being parsed when it
  // was found (the read, as node's err.rawPacket), valid only during the
  // call, and bytes_parsed how far into it the parser got. raw is null
  // for errors that are not found in input (timeouts).
  size_t bytes_parsed = 0;
  const char* raw = nullptr;
  size_t raw_len = 0;
};

class ServerDelegate {
 public:
  virtual ~ServerDelegate() = default;

  // Brackets every entry from libuv that may call the methods below; nested.
  // The embedder opens its JS scopes here. Core flushes output after the
  // outermost End.
  virtual void OnDispatchBegin() = 0;
  virtual void OnDispatchEnd() = 0;

  // A request's headers are complete (complete=true: and its body too).
  virtual void OnRequest(Connection* c, const RequestHead& head) = 0;
  // Body bytes of request `seq`. [data, len) is only valid during the call.
  // user_offset >= 0: the bytes lie in the body buffer the embedder gave
  // (AcquireBodyBuffer) at that offset, so the embedder can hand out a view
  // instead of a copy; -1: they are in transient memory and must be copied.
  virtual void OnBody(Connection* c, uint32_t seq, const char* data,
                      size_t len, int64_t user_offset) = 0;

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
  // Request `seq`'s body is complete (trailers, if any, in `trailers`).
  virtual void OnRequestEnd(
      Connection* c, uint32_t seq,
      const std::vector<std::pair<std::string_view, std::string_view>>&
          trailers) = 0;
  // The write backlog fell below the low-water mark after passing the high.
  virtual void OnDrain(Connection* c) = 0;
  // Bad input or a timeout. The embedder decides the answer: it calls
  // Connection::SendErrorAndClose (the default) or writes its own.
  virtual void OnClientError(Connection* c, const ClientError& err) = 0;
  // The connection is closed; `c` is freed right after this returns.
  // `aborted` is true if a request was in progress (body or response).
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
  // An accepted Upgrade / CONNECT (ServerOptions::tunnel_events): request
  // `seq`'s head was delivered by OnRequest; the connection now speaks
  // nothing (TunnelSession). [head, head + len) are the bytes that followed
  // the request head in the same read (node's `head`), valid only during
  // the call.
  virtual void OnUpgrade(Connection* c, uint32_t seq, const char* head,
                         size_t len) {
    (void)c; (void)seq; (void)head; (void)len;
  }
  // Bytes read on a tunnel, valid only during the call.
  virtual void OnTunnelData(Connection* c, const char* data, size_t len) {
    (void)c; (void)data; (void)len;
  }
  // The peer ended its side of a tunnel (FIN).
  virtual void OnTunnelEnd(Connection* c) { (void)c; }
  // A connection was accepted (only with ServerOptions::connection_events),
  // before any of its bytes is read; it may be destroyed from here.
  virtual void OnConnection(Connection* c) { (void)c; }
  // HTTP/2 stream events go here (http2_delegate.h); nullptr: the server
  // speaks HTTP/1.1 only.
  virtual Http2Delegate* http2() { return nullptr; }
};

}  // namespace sluice
