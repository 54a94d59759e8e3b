'use strict';

// The private property keys of lib/'s objects, defined once (as undici's
// lib/core/symbols.js). Several classes carry the same kind of slot: the
// native transport (kConn: a NativeConnection, or an HTTP/2 stream's
// adapter, see docs/transport.md), the request's seq, the socket view.

module.exports = {
  // IncomingRequest, ServerResponse, SluiceSocket
  kConn: Symbol('sluice.conn'),
  kSeq: Symbol('sluice.seq'),
  kSocket: Symbol('sluice.socket'),
  kHeaders: Symbol('sluice.headers'),
  // ServerResponse: its request, for sluice's own use (res.req is the
  // user's to overwrite, as node's; node's compat tests set it to null).
  kReq: Symbol('sluice.req'),
  // IncomingRequest
  kSocketPaused: Symbol('sluice.socketPaused'),
  kRaw: Symbol('sluice.rawHeaders'),
  kEofPending: Symbol('sluice.eofPending'),
  // Set by the server when its reads land in allocator memory (chunks may
  // carry pool references): pipe() and async iteration then release them.
  kPoolBacked: Symbol('sluice.poolBacked'),
  // On a pipe destination: its original write, _write and _writev, wrapped
  // (lib/http/request.js, hookPipeDestination).
  kOrigWrite: Symbol('sluice.origWrite'),
  kOrigUnderlyingWrite: Symbol('sluice.origUnderlyingWrite'),
  kOrigWritev: Symbol('sluice.origWritev'),
  // Async iteration started: chunks are copied as they arrive (iterator()).
  kCopyOnPush: Symbol('sluice.copyOnPush'),
  // ServerResponse
  kNeedDrain: Symbol('sluice.needDrain'),
  kTrailers: Symbol('sluice.trailers'),
  // The head reached native code (headersSent turns true earlier, at
  // writeHead, as in node; the bytes wait to be coalesced with the body).
  kHeadOnWire: Symbol('sluice.headOnWire'),
  // A native file body (respondWithFile / FD) was started: the response
  // is finished only at its 'finish', and its head goes out with the
  // file, never alone (HTTP/2 compat's HEAD writeHead flush).
  kFileBody: Symbol('sluice.fileBody'),
  // 'close' was emitted (res.closed)
  kClosed: Symbol('sluice.closed'),
  // SluiceSocket
  kPeer: Symbol('sluice.peer'),
  kLocal: Symbol('sluice.local'),
  kTlsInfo: Symbol('sluice.tlsInfo'),
  // Server
  kNative: Symbol('sluice.native'),
  kConnState: Symbol('sluice.connState'),
  kLimits: Symbol('sluice.limits'),
  // HTTP/2 session state on a NativeHttp2Session
  kH2State: Symbol('sluice.h2state'),
  // On a Server: (native, id, raw, state) → the taker of HTTP/2 extended
  // CONNECT streams for WebSockets (RFC 8441: :method CONNECT, :protocol
  // websocket), set while a WebSocketServer is attached
  // (lib/websocket/http2_accept.js); read by lib/http2/session.js.
  kH2WebSocket: Symbol('sluice.h2WebSocket'),
};
