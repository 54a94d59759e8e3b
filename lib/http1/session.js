'use strict';

// The HTTP/1.1 half of Server: the native callbacks of HTTP/1.1
// connections (one call per request on the common path: head and, for
// bodiless requests, completion together), turned into node:http's
// 'request' / 'checkContinue' / 'upgrade' / 'clientError' … events over
// IncomingRequest / ServerResponse, and the hand-off of body reads that landed in requestBufferAllocator memory
// (body_memory.js). lib/http2/session.js is the HTTP/2 counterpart; the
// connection's own state is lib/net/connection_state.js.

const binding = require('../common/binding');
const { IncomingRequest, kPoolBacked } = require('../http/request');
const { ServerResponse } = require('../http/response');
const { connState } = require('../net/connection_state');
require('./transport');
const { TunnelSocket } = require('../net/tunnel_socket');
const {
  retainChunk, releaseHold,
} = require('../uploads/buffer_pool');
const { codedError } = require('../common/errors');
const channels = require('../observe/channels');

const { requestStart, responseCreated } = channels;

const { methods } = binding;

const {
  REQUEST_COMPLETE, REQUEST_KEEP_ALIVE, REQUEST_UPGRADE, REQUEST_HAS_EXPECT,
  REQUEST_HAS_HOST, REQUEST_OVER_LIMIT, REQUEST_VERSION_SHIFT, VERSION_1_1, TUNNEL_UPGRADE, TUNNEL_CONNECT,
} = binding.constants;

const { kConnState: kState, kLimits, kReq } = require('../common/symbols');

// As node's _http_server.js: "100-continue" anywhere in Expect.
const continueExpression = /(?:^|\W)100-continue(?:$|\W)/i;

// ---- requests ----------------------------------------------------------------

function onRequest(server, conn, seq, method, url, rawHeaders, flags) {
  if (flags & REQUEST_UPGRADE) {
    const isConnect = methods[method] === 'CONNECT';
    if (server._tunnelEvents & (isConnect ? TUNNEL_CONNECT : TUNNEL_UPGRADE)) {
      // The native session switches this connection to a tunnel right
      // after this call (onUpgrade), with the bytes that followed.
      const st = connState(server, conn);
      const tunnel = new TunnelSocket(conn, st.socket);
      const req = new IncomingRequest(conn, seq, methods[method], url, rawHeaders,
        flags >> REQUEST_VERSION_SHIFT, tunnel);
      req.upgrade = true;
      req._pushEnd(undefined);
      st.upgradeReq = req;
      st.tunnel = tunnel;
      return;
    }
    if (isConnect) {
      // As node without a 'connect' listener: close (the native session
      // parses nothing after a CONNECT).
      conn.destroy();
      return;
    }
  }
  const st = connState(server, conn);
  const version = flags >> REQUEST_VERSION_SHIFT;
  const req = server._IncomingMessage === null ?
    new IncomingRequest(conn, seq, methods[method], url, rawHeaders, version, st.socket) :
    Reflect.construct(IncomingRequest, [conn, seq, methods[method], url, rawHeaders,
      version, st.socket], server._IncomingMessage);
  if (server.requestBufferAllocator !== null) req[kPoolBacked] = true;
  if (server.joinDuplicateHeaders) req.joinDuplicateHeaders = true;
  const res = server._ServerResponse === null ?
    new ServerResponse(req, conn, seq, st.socket) :
    Reflect.construct(ServerResponse, [req, conn, seq, st.socket], server._ServerResponse);
  if (server._altSvc !== null) res.setHeader('alt-svc', server._altSvc);
  res.shouldKeepAlive = (flags & REQUEST_KEEP_ALIVE) !== 0;
  res._onFinish = onResponseFinish;
  res._st = st;
  res._compressCfg = server._compression;
  res._fileCache = server._fileCache;
  if (server.rejectNonStandardBodyWrites) res._rejectBodyWrites = true;
  st.current = req;
  st.live[st.tail] = req;
  st.live[st.tail + 1] = res;
  st.tail += 2;
  // node's diagnostics channels, in node's order (lib/observe/channels.js).
  if (responseCreated !== null && responseCreated.hasSubscribers) channels.publishResponseCreated(req, res);
  if (requestStart.hasSubscribers) channels.publishRequestStart(server, req, res);
  if (flags & REQUEST_COMPLETE) req._pushEnd(undefined);
  if (version === VERSION_1_1) {
    // As node's parserOnIncoming, for HTTP/1.1 only.
    if (server.requireHostHeader && !(flags & REQUEST_HAS_HOST)) {
      res.writeHead(400, ['Connection', 'close']);
      res.end();
      return;
    }
    if (flags & REQUEST_OVER_LIMIT) {
      // Beyond maxRequestsPerSocket (pipelined past the response that
      // said Connection: close, counted natively): 503, as node.
      server.emit('dropRequest', req, st.socket);
      res.writeHead(503);
      res.end();
      return;
    }
    if (flags & REQUEST_HAS_EXPECT) {
      // As node: Expect is honoured on HTTP/1.1 only, and means
      // 100-continue when the token appears anywhere in the (joined)
      // field; any other expectation is answered 417.
      if (continueExpression.test(req.headers.expect)) {
        if (server.listenerCount('checkContinue') > 0) {
          server.emit('checkContinue', req, res);
          return;
        }
        res.writeContinue();
      } else {
        if (server.listenerCount('checkExpectation') > 0) {
          server.emit('checkExpectation', req, res);
        } else {
          res.writeHead(417);
          res.end();
        }
        return;
      }
    }
  }
  server.emit('request', req, res);
}

// The connection became a tunnel: node's 'upgrade' / 'connect'
// (req, socket, head).
function onUpgrade(server, conn, seq, head) {
  const st = connState(server, conn);
  const req = st.upgradeReq;
  st.upgradeReq = null;
  if (req === null) {
    conn.destroy();
    return;
  }
  server.emit(req.method === 'CONNECT' ? 'connect' : 'upgrade', req, st.tunnel, head);
}

// A connection was accepted (only while 'connection' has listeners, see
// Server#_syncEvents): node's 'connection' event with its socket, the
// same object req.socket will be on HTTP/1.1.
// Also reported while server.timeout is set, so an idle connection's
// timer starts at the accept (connState arms it).
function onConnection(server, conn) {
  const st = connState(server, conn);
  if (server._userConnectionListeners() > 0) server.emit('connection', st.socket);
}

// An idle keep-alive connection's keepAliveTimeout expired while the
// server listens for 'timeout' (native code reports it only then, see
// Server#_syncEvents): as node, whose keep-alive timeout is the socket's
// timeout then, the server's 'timeout' hears the socket and it stays open
// for the listener to close.
function onKeepAliveTimeout(server, conn) {
  const st = connState(server, conn);
  if (!server.emit('timeout', st.socket)) st.socket.destroy();
}

// rawPacket / bytesParsed: the input being parsed when a parse error was
// found and how far into it the parser got (undefined for timeouts), as
// node's parse errors carry them.
function onClientError(server, conn, status, code, reason, rawPacket, bytesParsed) {
  if (code === 'ERR_SLUICE_BODY_TOO_LARGE') {
    bodyTooLarge(server, conn, status);
    return;
  }
  const st = connState(server, conn);
  const err = codedError(code, code === 'ERR_HTTP_REQUEST_TIMEOUT' ?
    'Request timeout' : `Parse Error: ${reason}`);
  // Status 0: a first line naming another protocol on a port that also
  // serves h2c: the default answer is a close without bytes.
  if (status !== 0) err.statusCode = status;
  if (code !== 'ERR_HTTP_REQUEST_TIMEOUT') err.reason = reason;  // as node's parse errors
  if (rawPacket !== undefined) {
    err.bytesParsed = bytesParsed;
    err.rawPacket = rawPacket;
  }
  if (server.listenerCount('clientError') > 0) {
    server.emit('clientError', err, st.socket);
  } else {
    conn.sendError(status);
    // As node (socketOnError: the default answer, then socket.destroy(err)):
    // the socket is destroyed at once — so a handler that hears the error
    // (Koa's ctx.onerror, through on-finished) sees it unwritable and
    // answers nothing, and the request is still aborted at the close —
    // and its own 'error' listeners hear the error.
    const socket = st.socket;
    socket.destroyed = true;
    process.nextTick(() => {
      if (socket.listenerCount('error') > 0) socket.emit('error', err);
    });
  }
}

// The body of the request being received passed maxRequestBodySize. The
// native session stopped reading it and, when status is 413, answered
// 413 + Connection: close for it (the handler's response can no longer
// be sent); status 0: the handler had answered already.
function bodyTooLarge(server, conn, status) {
  const st = connState(server, conn);
  const req = st.current;
  if (req === null) return;
  st.current = null;
  const i = st.live.indexOf(req, st.head);
  if (status !== 0 && i !== -1 && i < st.tail) st.live[i + 1].destroyed = true;
  const err = codedError('ERR_SLUICE_BODY_TOO_LARGE',
    `Request body larger than maxRequestBodySize (${server[kLimits].maxRequestBodySize} bytes)`);
  err.statusCode = 413;
  req._fail(err);
}

// ---- bodies, tunnels, drain, close ---------------------------------------------

function onBody(conn, seq, chunk, len) {
  const st = conn[kState];
  if (typeof chunk === 'number') {
    // Zero-copy: the bytes are in the allocator's buffer; hand out a view
    // holding its own reference on the pool buffer.
    chunk = st.bodyBuf.subarray(chunk, chunk + len);
    retainChunk(chunk);
  }
  const req = st.current;
  if (req !== null) req._pushBody(chunk);
  else releaseHold(chunk);
}

// Native code no longer reads into the current body buffer.
function onReleaseBody(conn) {
  const st = conn[kState];
  if (st.bodyBuf !== null) {
    releaseHold(st.bodyBuf);
    st.bodyBuf = null;
  }
}

function onEnd(conn, seq, rawTrailers) {
  const st = conn[kState];
  const req = st.current;
  if (req !== null) {
    st.current = null;
    req._pushEnd(rawTrailers);
  }
}

function onTunnelData(conn, chunk) {
  const st = conn[kState];
  if (st !== undefined && st.tunnel !== null) st.tunnel._onData(chunk);
}

// A read of an HTTP/1.1 connection whose socket has a 'data' listener
// (lib/net/socket.js), after the parser saw it.
function onReadCopy(conn, chunk) {
  const st = conn[kState];
  if (st !== undefined) st.socket.emit('data', chunk);
}

function onTunnelEnd(conn) {
  const st = conn[kState];
  if (st !== undefined && st.tunnel !== null) st.tunnel._onEnd();
}

function onDrain(conn) {
  const st = conn[kState];
  if (st.tunnel !== null) st.tunnel._onDrain();
  const live = st.live;
  for (let i = st.head + 1; i < st.tail; i += 2) live[i]._drain();
}

function onResponseFinish(res) {
  const req = res[kReq];
  const st = res._st;
  const live = st.live;
  // Responses finish in order: the front pair is the common case, which
  // only clears its slots and moves `head` (see ConnState).
  if (live[st.head] === req) {
    live[st.head] = undefined;
    live[st.head + 1] = undefined;
    st.head += 2;
    if (st.head === st.tail) {
      st.head = 0;
      st.tail = 0;
    } else {
      // The next response reached the front: if it was destroyed while
      // it waited (ServerResponse#destroy), its socket goes now, as
      // node's destroy() on the 'socket' it is assigned.
      const next = live[st.head + 1];
      if (next.destroyed) next.socket.destroy(next.errored);
    }
  } else {
    const i = live.indexOf(req, st.head);
    if (i !== -1 && i < st.tail) {
      live.splice(i, 2);
      st.tail -= 2;
    }
  }
  // As node: a request nobody read is dumped (its body discarded so the
  // connection keeps reading; it ends and closes). A complete one that
  // nobody listens to has nothing to discard and nobody to tell: skipped,
  // so a plain GET costs no stream machinery.
  if (!req._consuming) {
    // (_eventsCount first: a request nobody listens to at all skips the two
    // lookups in its listener dictionary.)
    if (!req.complete || (req._eventsCount !== 0 &&
        (req.listenerCount('end') > 0 || req.listenerCount('close') > 0))) {
      req._dump();
    } else {
      req._dumped = true;  // as dumped: a later req.destroy() leaves the connection
    }
  }
}

function onClose(conn) {
  const st = conn[kState];
  if (st === undefined) return;
  const live = st.live;
  const head = st.head;
  const tail = st.tail;
  st.live = [];
  st.head = 0;
  st.tail = 0;
  st.current = null;
  for (let i = head; i < tail; i += 2) {
    live[i]._abort();
    live[i + 1]._closed();
  }
  if (st.bodyBuf !== null) {
    releaseHold(st.bodyBuf);
    st.bodyBuf = null;
  }
  st.socket._closed();
  if (st.tunnel !== null) st.tunnel._closed();
}

// The NativeServer callbacks of HTTP/1.1 connections, for `server`.
// memory: its BodyMemory, or null without a requestBufferAllocator.
function callbacks(server, memory) {
  return {
    onRequest: (conn, seq, method, url, rawHeaders, flags) =>
      onRequest(server, conn, seq, method, url, rawHeaders, flags),
    onBody,
    onEnd,
    onDrain,
    onClientError: (conn, status, code, reason, rawPacket, bytesParsed) =>
      onClientError(server, conn, status, code, reason, rawPacket, bytesParsed),
    onConnection: (conn) => onConnection(server, conn),
    onKeepAliveTimeout: (conn) => onKeepAliveTimeout(server, conn),
    onClose,
    onAlloc: (conn, size) => memory.alloc(conn, size),
    onReleaseBody,
    onUpgrade: (conn, seq, head) => onUpgrade(server, conn, seq, head),
    onTunnelData,
    onTunnelEnd,
    onReadCopy,
  };
}

module.exports = { callbacks };
