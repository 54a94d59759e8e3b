// Server options the core enforces; the binding fills them from JS.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sluice {

enum TunnelEvents { kTunnelUpgrade = 1, kTunnelConnect = 2 };

struct ServerOptions {
  // Bytes of request line + header fields and values (node's
  // --max-http-header-size accounting); over it: 431.
  size_t max_header_size = 16384;
  // From a request's first byte until its headers are complete; 408.
  uint64_t headers_timeout_ms = 60000;
  // From a request's first byte until it is fully received; 408.
  uint64_t request_timeout_ms = 300000;
  // Idle time allowed between requests on a keep-alive connection, as
  // advertised (Keep-Alive: timeout=N).
  uint64_t keep_alive_timeout_ms = 5000;
  // Added to keep_alive_timeout_ms for the deadline itself (node's
  // keepAliveTimeoutBuffer): a client that reuses the connection just
  // before the advertised timeout must not meet a close racing its request.
  uint64_t keep_alive_timeout_buffer_ms = 1000;
  // The idle deadline of a keep-alive connection (0 = none).
  uint64_t KeepAliveDeadlineMs() const {
    return keep_alive_timeout_ms ? keep_alive_timeout_ms + keep_alive_timeout_buffer_ms : 0;
  }
  // How long a closing connection keeps draining the peer's input after our
  // FIN, so that unread request bytes do not turn the close into a RST that
  // destroys the response in flight.
  uint64_t linger_ms = 2000;
  // res.write() returns false once this many bytes wait to be written.
  size_t high_water_mark = 65536;
  // Cleartext HTTP/1.1 file bodies go out with sendfile(2) while their
  // pages are resident (src/core/http1/http1_pipe_body.cc).
  bool sendfile = true;
  // Requests parsed ahead of their responses before the connection stops
  // reading (bounds memory against pipelining floods).
  size_t max_pipelined = 128;
  // --- Limits (node-compatible names in lib/; 0 or SIZE_MAX: see each) ---
  // Header lines delivered per request or trailer block (maxHeadersCount);
  // lines past it are parsed (and count towards max_header_size) but
  // dropped. 0 = no limit.
  size_t max_headers_count = 2000;
  // Request body bytes (maxRequestBodySize). A larger Content-Length is
  // refused before any body byte is read; a chunked body is cut when it
  // grows past it. Either way: 413, Connection: close. UINT64_MAX = none.
  uint64_t max_request_body_size = UINT64_MAX;
  // HTTP/1.1 requests per connection (maxRequestsPerSocket), as node:
  // the response to the last one and to every later one carries
  // Connection: close, later ones are answered 503 by the embedder, and
  // the connection itself stays open (the client is told to close; the
  // keep-alive timeout ends it otherwise); Keep-Alive says max=N. 0 = no
  // limit.
  uint64_t max_requests_per_socket = 0;
  // Open connections (maxConnections): one accepted beyond it is closed at
  // once, before any byte is read. SIZE_MAX = no limit (0 refuses all, as
  // node's server.maxConnections = 0).
  size_t max_connections = SIZE_MAX;
  // A response write made while more than this many bytes already wait to
  // be written destroys the connection (maxOutputBuffer): a client that
  // does not read cannot make a handler that ignores 'drain' buffer
  // without bound. One large write is accepted whole. 0 = no limit.
  size_t max_output_buffer = 16 * 1024 * 1024;
  // Bytes of chunk-extension names and values per chunk, as node 20
  // (HPE_CHUNK_EXTENSIONS_OVERFLOW, 413). 0 = no limit.
  size_t max_chunk_extensions_size = 16384;
  // Which HTTP/1.1 protocol switches the embedder takes over as tunnels
  // (TunnelSession): kTunnelUpgrade (an 'upgrade' listener), kTunnelConnect
  // (a 'connect' listener). Without the bit an Upgrade request is answered
  // as a normal request and a CONNECT closes the connection, as node.
  int tunnel_events = 0;
  // The embedder hears every accepted connection (ServerDelegate::
  // OnConnection; node's 'connection' event), only while it listens for
  // them: no call per connection otherwise.
  bool connection_events = false;
  // TCP_NODELAY on accepted connections (node's noDelay, default on:
  // responses are corked into one write, Nagle would only add latency).
  bool no_delay = true;
  // TCP keep-alive probes on accepted connections (node's keepAlive /
  // keepAliveInitialDelay; delay 0 keeps the system's idle time).
  bool tcp_keep_alive = false;
  unsigned int tcp_keep_alive_delay_s = 0;
  // An expired keep-alive timeout is reported (Http1Delegate::
  // OnKeepAliveTimeout) instead of closing the connection: node's
  // server.on('timeout') hears idle keep-alive sockets. Only while the
  // embedder listens.
  bool keep_alive_timeout_events = false;
  // node's server.httpAllowHalfOpen: a client's EOF (FIN) with requests in
  // flight lets their responses finish, the last one closing. Off (node's
  // default): the EOF ends the connection at once, as node's socket.end(),
  // and the requests in flight are aborted when it closes.
  bool http_allow_half_open = false;
  // node's insecureHTTPParser (server option or --insecure-http-parser):
  // llhttp's lenient flags (header value characters, conflicting
  // Transfer-Encoding / Content-Length, keep-alive after Connection: close,
  // Transfer-Encoding other than chunked last) and none of the checks
  // sluice adds to llhttp 8 to match node's strict llhttp 9 (line folds,
  // bare LF line ends, "Expected CRLF after version"). Read when a
  // connection's parser is made.
  bool insecure_http_parser = false;
  // The embedder supplies body read buffers (requestBufferAllocator).
  bool body_allocator = false;
  // Size asked of the allocator; a buffer with less free space than
  // min_free is retired and the next read goes to a fresh one.
  size_t body_buffer_size = 65536;
  size_t body_buffer_min_free = 8192;
  // HTTP/2 (http2.* options): SETTINGS_MAX_CONCURRENT_STREAMS, the initial
  // stream window (SETTINGS_INITIAL_WINDOW_SIZE) and the connection window.
  size_t http2_max_concurrent_streams = 100;
  size_t http2_stream_window = 1024 * 1024;
  size_t http2_connection_window = 16 * 1024 * 1024;
  // node:http2's limits, enforced as node does. max_header_list_size:
  // node's settings.maxHeaderListSize; 0 = not given, then max_header_size
  // is advertised and a longer list gets 431 (as HTTP/1.1); given, it is
  // advertised and a longer list is reset ENHANCE_YOUR_CALM. max_header_pairs
  // (maxHeaderListPairs, pseudo-headers included; 0 = no count limit):
  // one field more resets the stream ENHANCE_YOUR_CALM. max_invalid_frames
  // (maxSessionInvalidFrames): invalid frames a session takes before it is
  // closed. max_settings (maxSettings): entries one SETTINGS frame may hold
  // (nghttp2 closes the connection with ENHANCE_YOUR_CALM over it).
  size_t http2_max_header_list_size = 0;
  size_t http2_max_header_pairs = 0;
  size_t http2_max_invalid_frames = 1000;
  size_t http2_max_settings = 32;
  // SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 8441) in the SETTINGS of
  // sessions started from now on: set by node's
  // settings.enableConnectProtocol and when a WebSocketServer attaches.
  bool http2_connect_protocol = false;
};

}  // namespace sluice
