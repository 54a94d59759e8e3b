// Http1Delegate: how an Http1Session reports requests to the embedder (the
// binding's JsHttp1, or a fuzz harness). Obtained from
// ServerDelegate::http1(), as Http2Delegate from http2().
//
// Every call happens on the loop thread inside a Listener dispatch bracket
// (ServerDelegate::OnDispatchBegin/End). The embedder may call back into
// the session (respond, pause, destroy the connection) from inside any of
// them; the core defers anything that would free memory it is still using
// until the outermost dispatch ends.
//
// Order per connection: OnRequest for a request, then its OnBody calls in
// byte order, then OnRequestEnd (unless the head came with complete=true);
// requests in order of arrival. OnClientError at most once per connection,
// after which nothing more is parsed; OnUpgrade at most once, after the
// OnRequest of the same request (the connection is a tunnel from then on).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice {

class Connection;

using Http1Fields = std::vector<std::pair<std::string_view, std::string_view>>;

// A request's head, valid only during the OnRequest call: the views point
// into the parser's header arena.
struct RequestHead {
  uint32_t seq;            // per-connection request number, from 0
  int method;              // llhttp_method_t
  int http_major;
  int http_minor;
  std::string_view url;
  // Raw header names and values as received, in order.
  Http1Fields headers;
  bool keep_alive;         // per llhttp_should_keep_alive
  bool expect_continue;    // "Expect: 100-continue"
  bool has_expect;         // any Expect header
  bool has_host = false;   // a Host header (node answers 400 without one)
  // An HTTP/1.1 request beyond maxRequestsPerSocket on this connection:
  // the embedder answers it 503 without dispatching it (node's
  // 'dropRequest').
  bool over_request_limit = false;
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

class Http1Delegate {
 public:
  virtual ~Http1Delegate() = default;

  // A request's headers are complete (complete=true: and its body too).
  virtual void OnRequest(Connection* c, const RequestHead& head) = 0;
  // Body bytes of request `seq`. [data, len) is only valid during the call.
  // user_offset >= 0: the bytes lie in the read buffer the embedder gave
  // (ServerDelegate::AcquireBodyBuffer) at that offset, so the embedder can
  // hand out a view instead of a copy; -1: they are in transient memory
  // and must be copied.
  virtual void OnBody(Connection* c, uint32_t seq, const char* data,
                      size_t len, int64_t user_offset) = 0;
  // Request `seq`'s body is complete (trailers, if any, in `trailers`).
  virtual void OnRequestEnd(Connection* c, uint32_t seq,
                            const Http1Fields& trailers) = 0;
  // Bad input or a timeout. The embedder decides the answer: it calls
  // Http1Session::SendErrorAndClose (the default) or writes its own.
  virtual void OnClientError(Connection* c, const ClientError& err) = 0;
  // An accepted Upgrade / CONNECT (ServerOptions::tunnel_events): request
  // `seq`'s head was delivered by OnRequest; the connection now speaks
  // nothing (TunnelSession, whose bytes go to ServerDelegate::
  // OnTunnelData). [head, head + len) are the bytes that followed the
  // request head in the same read (node's `head`), valid only during the
  // call.
  virtual void OnUpgrade(Connection* c, uint32_t seq, const char* head,
                         size_t len) {
    (void)c; (void)seq; (void)head; (void)len;
  }
  // The keep-alive timeout expired on an idle connection while
  // ServerOptions::keep_alive_timeout_events is set (node hands such a
  // socket to the server's 'timeout' listeners): the connection stays open
  // and is the embedder's to close. Returns false to have it closed as
  // usual (the default).
  virtual bool OnKeepAliveTimeout(Connection* c) {
    (void)c;
    return false;
  }
  // A copy of one read's bytes, for an embedder that asked for them
  // (Http1Session::CopyReads: node's HTTP server sockets emit the raw
  // input as 'data' once a listener asks, while the parser goes on with
  // it). Called after the read was parsed, so the requests in it were
  // delivered first (node runs its parser's 'data' listener before one
  // added later); the connection may be closing or destroyed by then.
  // [data, data + len) is valid only during the call.
  virtual void OnReadCopy(Connection* c, const char* data, size_t len) {
    (void)c; (void)data; (void)len;
  }
};

}  // namespace sluice
