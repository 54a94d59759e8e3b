'use strict';

// Server: node:http's Server shape over the native listener. The native
// side calls the handlers below, one call per request on the common path
// (head and, for bodiless requests, completion together).

const { EventEmitter } = require('events');
const dns = require('dns');
const net = require('net');
const binding = require('./binding');
const { IncomingRequest, kPoolBacked } = require('./incoming');
const { ServerResponse } = require('./response');
const { SluiceSocket } = require('./socket');
require('./http1_transport');
const { TunnelSocket } = require('./tunnel_socket');
const http2Server = require('./http2_server');
const compression = require('./compression');
const prototypeBridge = require('./prototype_bridge');
const clusterSupport = require('./cluster');
const {
  retainChunk, releaseHold, isPoolAllocator, onBufferAvailable, offBufferAvailable,
} = require('./buffer_pool');
const { codedError, codedTypeError, codedRangeError } = require('./errors');

const { methods } = binding;

const {
  ALLOC_FALLBACK, ALLOC_DRY, ALLOC_ERROR,
  REQUEST_COMPLETE, REQUEST_KEEP_ALIVE, REQUEST_UPGRADE, REQUEST_HAS_EXPECT,
  REQUEST_HAS_HOST, REQUEST_VERSION_SHIFT, VERSION_1_1, TUNNEL_UPGRADE, TUNNEL_CONNECT,
} = binding.constants;

// As node's _http_server.js: "100-continue" anywhere in Expect.
const continueExpression = /(?:^|\W)100-continue(?:$|\W)/i;

const { kNative, kConnState: kState, kLimits } = require('./symbols');

// Limits enforced natively (src/core/common/options.h), as createServer options
// and as server properties (node has them as properties): name -> default.
// null / undefined / Infinity mean "no limit" except for maxHeadersCount
// (null: node's default, 2000; 0: no limit).
const limitDefaults = {
  maxHeadersCount: null,
  maxRequestsPerSocket: 0,
  maxConnections: undefined,
  maxRequestBodySize: Infinity,
  maxOutputBuffer: 16 * 1024 * 1024,
};

function validateLimit(name, v) {
  if (v === undefined || v === null) return v;
  if (typeof v !== 'number' || Number.isNaN(v) || v < 0) {
    throw codedTypeError('ERR_INVALID_ARG_TYPE', `The "${name}" property must be a non-negative number`);
  }
  return v;
}

function nativeLimit(name, v) {
  if (name === 'maxHeadersCount' && (v === null || v === undefined)) return 2000;
  return v === null || v === undefined ? Infinity : v;
}

const defaults = {
  maxHeaderSize: 16384,
  headersTimeout: 60000,
  requestTimeout: 300000,
  keepAliveTimeout: 5000,
  highWaterMark: 65536,
};

function validateTimeout(name, v) {
  if (v === undefined) return defaults[name];
  if (typeof v !== 'number' || Number.isNaN(v) || v < 0) {
    throw codedTypeError('ERR_INVALID_ARG_VALUE', `The "options.${name}" property must be a non-negative number`);
  }
  return v;
}

// Per-connection JS state, kept on the native connection object.
class ConnState {
  constructor(conn) {
    this.socket = new SluiceSocket(conn);
    this.current = null;  // request receiving body
    this.tunnel = null;   // TunnelSocket after an accepted Upgrade / CONNECT
    this.upgradeReq = null;  // its request, until the native switch
    this.live = [];       // [req, res] pairs not finished
    this.bodyBuf = null;  // allocator buffer native code reads body bytes into
  }
}

function connState(conn) {
  let st = conn[kState];
  if (st === undefined) {
    st = new ConnState(conn);
    conn[kState] = st;
  }
  return st;
}

class Server extends EventEmitter {
  constructor(options, requestListener) {
    super();
    if (typeof options === 'function') {
      requestListener = options;
      options = {};
    } else if (options == null) {
      options = {};
    } else if (typeof options !== 'object') {
      throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "options" argument must be of type object');
    }
    const maxHeaderSize = options.maxHeaderSize === undefined ?
      defaults.maxHeaderSize : options.maxHeaderSize;
    if (!Number.isInteger(maxHeaderSize) || maxHeaderSize <= 0) {
      throw codedTypeError('ERR_INVALID_ARG_VALUE', 'The "options.maxHeaderSize" property must be a positive integer');
    }
    this.maxHeaderSize = maxHeaderSize;
    this.headersTimeout = validateTimeout('headersTimeout', options.headersTimeout);
    this.requestTimeout = validateTimeout('requestTimeout', options.requestTimeout);
    this.keepAliveTimeout = validateTimeout('keepAliveTimeout', options.keepAliveTimeout);
    if (this.requestTimeout > 0 && this.headersTimeout > 0 && this.headersTimeout > this.requestTimeout) {
      // As node: the headers cannot be given longer than the whole request.
      throw codedRangeError('ERR_OUT_OF_RANGE',
        `The value of "headersTimeout" is out of range. It must be <= requestTimeout. Received ${this.headersTimeout}`);
    }
    this.timeout = 0;
    // Limits: the property setters below also reach the native server.
    this[kLimits] = {};
    const nativeLimits = {};
    for (const name of Object.keys(limitDefaults)) {
      const v = options[name] === undefined ? limitDefaults[name] : validateLimit(name, options[name]);
      this[kLimits][name] = v;
      nativeLimits[name] = nativeLimit(name, v);
    }
    // As node (RFC 9112 3.2): an HTTP/1.1 request without Host gets 400.
    this.requireHostHeader = options.requireHostHeader !== false;
    const allocator = options.requestBufferAllocator;
    if (allocator !== undefined && allocator !== null && typeof allocator !== 'function') {
      throw codedTypeError('ERR_INVALID_ARG_TYPE',
        'The "options.requestBufferAllocator" property must be of type function');
    }
    this.requestBufferAllocator = allocator || null;
    // Response compression (lib/compression.js): null when off.
    this._compression = compression.normalize(options.compression);
    // A pool's own alloc returning undefined means "dry": stop reading and
    // wait for the pool's signal. Any other allocator's non-Buffer means
    // "copy this read".
    this._poolAllocator = !!allocator && isPoolAllocator(allocator);
    this._waitingMemory = new Set();
    this._onPoolAvailable = this._retryWaiting.bind(this);
    if (this._poolAllocator) onBufferAvailable(allocator, this._onPoolAvailable);
    if (requestListener) this.on('request', requestListener);

    this[kNative] = new binding.NativeServer({
      maxHeaderSize,
      headersTimeout: this.headersTimeout,
      requestTimeout: this.requestTimeout,
      keepAliveTimeout: this.keepAliveTimeout,
      highWaterMark: options.highWaterMark || defaults.highWaterMark,
      bodyAllocator: !!allocator,
      ...nativeLimits,
      ...http2Server.nativeOptions(options),
    }, {
      onRequest: this._onRequest.bind(this),
      onBody: onBody,
      onEnd: onEnd,
      onDrain: onDrain,
      onClientError: this._onClientError.bind(this),
      onClose: onClose,
      onServerClose: this._onServerClose.bind(this),
      onDrop: (data) => this.emit('drop', data),
      onAlloc: this._onAlloc.bind(this),
      onReleaseBody: onReleaseBody,
      onUpgrade: this._onUpgrade.bind(this),
      onTunnelData: onTunnelData,
      onTunnelEnd: onTunnelEnd,
      ...http2Server.callbacks(this),
      ...this._tlsCallbacks(),
    });
    this._listening = false;
    this._closing = false;
    // Which of 'upgrade' / 'connect' have listeners (ServerOptions::
    // tunnel_events), kept in step by the listener methods below.
    this._tunnelEvents = 0;
    this._syncTunnelEvents();
  }

  _syncTunnelEvents() {
    const bits = (this.listenerCount('upgrade') > 0 ? TUNNEL_UPGRADE : 0) |
      (this.listenerCount('connect') > 0 ? TUNNEL_CONNECT : 0);
    if (bits !== this._tunnelEvents && this[kNative] !== undefined) {
      this._tunnelEvents = bits;
      this[kNative].setLimit('tunnelEvents', bits);
    }
  }

  get listening() { return this._listening; }

  // The native TLS events' callbacks (lib/secure_server.js); none here.
  _tlsCallbacks() { return {}; }

  // A request listener that re-parents req/res onto node's prototypes
  // (Express) is adopted when it is added (lib/prototype_bridge.js): the
  // per-request path stays free of checks.
  // 'upgrade' / 'connect' listeners decide natively whether such a request
  // becomes a tunnel: every listener change re-syncs (once() and its
  // removal go through on() / removeListener()).
  on(event, listener) {
    if (event === 'request') prototypeBridge.adopt(listener);
    super.on(event, listener);
    if (event === 'upgrade' || event === 'connect') this._syncTunnelEvents();
    return this;
  }

  addListener(event, listener) { return this.on(event, listener); }

  prependListener(event, listener) {
    if (event === 'request') prototypeBridge.adopt(listener);
    super.prependListener(event, listener);
    if (event === 'upgrade' || event === 'connect') this._syncTunnelEvents();
    return this;
  }

  once(event, listener) {
    if (event === 'request') prototypeBridge.adopt(listener);
    return super.once(event, listener);
  }

  prependOnceListener(event, listener) {
    if (event === 'request') prototypeBridge.adopt(listener);
    super.prependOnceListener(event, listener);
    if (event === 'upgrade' || event === 'connect') this._syncTunnelEvents();
    return this;
  }

  removeListener(event, listener) {
    super.removeListener(event, listener);
    if (event === 'upgrade' || event === 'connect') this._syncTunnelEvents();
    return this;
  }

  off(event, listener) { return this.removeListener(event, listener); }

  removeAllListeners(...args) {
    super.removeAllListeners(...args);
    this._syncTunnelEvents();
    return this;
  }

  listen(...args) {
    let port = 0;
    let host;
    let backlog = 511;
    let reusePort;
    let exclusive = false;
    let cb;
    if (typeof args[args.length - 1] === 'function') cb = args.pop();
    if (args[0] !== null && typeof args[0] === 'object') {
      const o = args[0];
      port = o.port === undefined ? 0 : o.port;
      host = o.host;
      if (o.backlog !== undefined) backlog = o.backlog;
      if (o.reusePort !== undefined) {
        if (typeof o.reusePort !== 'boolean') {
          throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "options.reusePort" property must be of type boolean');
        }
        reusePort = o.reusePort;
      }
      exclusive = o.exclusive === true;
    } else {
      if (args[0] !== undefined && args[0] !== null) port = args[0];
      if (typeof args[1] === 'string') {
        host = args[1];
        if (typeof args[2] === 'number') backlog = args[2];
      } else if (typeof args[1] === 'number') {
        backlog = args[1];
      }
    }
    port = Number(port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw codedError('ERR_SOCKET_BAD_PORT', `Port should be >= 0 and < 65536. Received ${args[0]}.`);
    }
    // In a cluster worker: SO_REUSEPORT by default (lib/cluster.js).
    if (reusePort === undefined) reusePort = clusterSupport.defaultReusePort(port, exclusive);
    if (cb) this.once('listening', cb);
    const start = (address) => this._listen(address, port, backlog, reusePort);
    if (host === undefined || host === null || host === '') {
      start(null);
    } else if (net.isIP(host)) {
      start(host);
    } else {
      dns.lookup(host, (err, address) => {
        if (err) this.emit('error', err);
        else start(address);
      });
    }
    return this;
  }

  _listen(address, port, backlog, reusePort) {
    const native = this[kNative];
    let r;
    if (address === null) {
      // As node: the unspecified IPv6 address (dual-stack), IPv4 without it.
      address = '::';
      r = native.listen(address, port, backlog, reusePort);
      if (r < 0 && (binding.errname(r) === 'EAFNOSUPPORT' || binding.errname(r) === 'EADDRNOTAVAIL')) {
        address = '0.0.0.0';
        r = native.listen(address, port, backlog, reusePort);
      }
    } else {
      r = native.listen(address, port, backlog, reusePort);
    }
    if (r < 0) {
      const code = binding.errname(r);
      const err = new Error(`listen ${code}: ${binding.strerror(r)} ${address}:${port}`);
      err.code = code;
      err.errno = r;
      err.syscall = 'listen';
      err.address = address;
      err.port = port;
      process.nextTick(() => this.emit('error', err));
      return;
    }
    this._listening = true;
    this._closing = false;
    clusterSupport.announceListening(this[kNative].address());
    this._forgetCluster = clusterSupport.closeOnDisconnect(this);
    process.nextTick(() => this.emit('listening'));
  }

  address() {
    if (!this._listening) return null;
    return this[kNative].address();
  }

  close(cb) {
    if (typeof cb === 'function') {
      if (!this._listening) {
        this.once('close', () => cb(codedError('ERR_SERVER_NOT_RUNNING', 'Server is not running.')));
      } else {
        this.once('close', () => cb());
      }
    }
    if (this._listening) {
      this._listening = false;
      this._closing = true;
      if (this._forgetCluster) this._forgetCluster();
      this[kNative].close();
    } else {
      process.nextTick(() => this.emit('close'));
    }
    return this;
  }

  closeAllConnections() { this[kNative].closeAllConnections(); }

  closeIdleConnections() { this[kNative].closeIdleConnections(); }

  setTimeout(ms, cb) {
    this.timeout = ms;
    if (cb) this.on('timeout', cb);
    return this;
  }

  ref() { return this; }

  unref() { return this; }

  [Symbol.asyncDispose]() {
    return new Promise((resolve) => this.close(() => resolve()));
  }

  // ---- native callbacks ----------------------------------------------------

  _onRequest(conn, seq, method, url, rawHeaders, flags) {
    if (flags & REQUEST_UPGRADE) {
      const isConnect = methods[method] === 'CONNECT';
      if (this._tunnelEvents & (isConnect ? TUNNEL_CONNECT : TUNNEL_UPGRADE)) {
        // The native session switches this connection to a tunnel right
        // after this call (onUpgrade), with the bytes that followed.
        const st = connState(conn);
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
    const st = connState(conn);
    const version = flags >> REQUEST_VERSION_SHIFT;
    const req = new IncomingRequest(conn, seq, methods[method], url, rawHeaders,
      version, st.socket);
    if (this.requestBufferAllocator !== null) req[kPoolBacked] = true;
    const res = new ServerResponse(req, conn, seq, st.socket);
    res.shouldKeepAlive = (flags & REQUEST_KEEP_ALIVE) !== 0;
    res._onFinish = onResponseFinish;
    res._st = st;
    res._compressCfg = this._compression;
    st.current = req;
    st.live.push(req, res);
    if (flags & REQUEST_COMPLETE) req._pushEnd(undefined);
    if (version === VERSION_1_1) {
      // As node's parserOnIncoming, for HTTP/1.1 only.
      if (this.requireHostHeader && !(flags & REQUEST_HAS_HOST)) {
        res.writeHead(400, ['Connection', 'close']);
        res.end();
        return;
      }
      const maxRequests = this[kLimits].maxRequestsPerSocket;
      if (maxRequests > 0 && seq >= maxRequests) {
        // Beyond maxRequestsPerSocket (pipelined past the response that
        // said Connection: close): 503, as node.
        this.emit('dropRequest', req, st.socket);
        res.writeHead(503);
        res.end();
        return;
      }
      if (flags & REQUEST_HAS_EXPECT) {
        // As node: Expect is honoured on HTTP/1.1 only, and means
        // 100-continue when the token appears anywhere in the (joined)
        // field; any other expectation is answered 417.
        if (continueExpression.test(req.headers.expect)) {
          if (this.listenerCount('checkContinue') > 0) {
            this.emit('checkContinue', req, res);
            return;
          }
          res.writeContinue();
        } else {
          if (this.listenerCount('checkExpectation') > 0) {
            this.emit('checkExpectation', req, res);
          } else {
            res.writeHead(417);
            res.end();
          }
          return;
        }
      }
    }
    this.emit('request', req, res);
  }

  // The connection became a tunnel: node's 'upgrade' / 'connect'
  // (req, socket, head).
  _onUpgrade(conn, seq, head) {
    const st = connState(conn);
    const req = st.upgradeReq;
    st.upgradeReq = null;
    if (req === null) {
      conn.destroy();
      return;
    }
    this.emit(req.method === 'CONNECT' ? 'connect' : 'upgrade', req, st.tunnel, head);
  }

  _onClientError(conn, status, code, reason) {
    if (code === 'ERR_SLUICE_BODY_TOO_LARGE') {
      this._bodyTooLarge(conn, status);
      return;
    }
    const st = connState(conn);
    const err = codedError(code, code === 'ERR_HTTP_REQUEST_TIMEOUT' ?
      'Request timeout' : `Parse Error: ${reason}`);
    // Status 0: the input is not HTTP/1.x (neither protocol of this port):
    // the default answer is a close without bytes.
    if (status !== 0) err.statusCode = status;
    if (code !== 'ERR_HTTP_REQUEST_TIMEOUT') err.reason = reason;  // as node's parse errors
    if (this.listenerCount('clientError') > 0) {
      this.emit('clientError', err, st.socket);
    } else {
      conn.sendError(status);
    }
  }

  // The body of the request being received passed maxRequestBodySize. The
  // native session stopped reading it and, when status is 413, answered
  // 413 + Connection: close for it (the handler's response can no longer
  // be sent); status 0: the handler had answered already.
  _bodyTooLarge(conn, status) {
    const st = connState(conn);
    const req = st.current;
    if (req === null) return;
    st.current = null;
    const i = st.live.indexOf(req);
    if (status !== 0 && i !== -1) st.live[i + 1].destroyed = true;
    const err = codedError('ERR_SLUICE_BODY_TOO_LARGE',
      `Request body larger than maxRequestBodySize (${this[kLimits].maxRequestBodySize} bytes)`);
    err.statusCode = 413;
    req._fail(err);
  }

  // Open connections (HTTP/1.1 and HTTP/2), as node's server._connections.
  get _connections() { return this[kNative].connectionCount(); }

  getConnections(cb) {
    const n = this[kNative].connectionCount();
    if (typeof cb === 'function') process.nextTick(cb, null, n);
    return this;
  }

  _onServerClose() {
    if (this._poolAllocator) offBufferAvailable(this.requestBufferAllocator, this._onPoolAvailable);
    this._waitingMemory.clear();
    this.emit('close');
  }

  // Native code needs memory for the next body read of `conn`.
  _onAlloc(conn, size) {
    const st = connState(conn);
    let buf;
    try {
      buf = this.requestBufferAllocator(size);
    } catch (err) {
      // The connection is destroyed (native side); the request learns why.
      const req = st.current;
      if (req !== null && !req.complete) {
        req.aborted = true;
        if (req.listenerCount('error') > 0) req.destroy(err);
      }
      if (this.listenerCount('clientError') > 0) this.emit('clientError', err, st.socket);
      return ALLOC_ERROR;
    }
    if (buf instanceof Uint8Array && buf.length > 0 && Buffer.isBuffer(buf)) {
      st.bodyBuf = buf;
      return buf;
    }
    if (this._poolAllocator) {
      this._waitingMemory.add(conn);
      return ALLOC_DRY;
    }
    return ALLOC_FALLBACK;
  }

  // A pool refilled: retry the connections waiting for memory. A retry
  // that finds the pool dry again re-registers through _onAlloc.
  _retryWaiting() {
    const waiting = [...this._waitingMemory];
    this._waitingMemory.clear();
    for (const conn of waiting) conn.retryBodyBuffer();
  }
}

// Timeouts as node's server properties (server.keepAliveTimeout = 65000
// behind a load balancer): a change reaches the native server and applies
// from the next deadline a connection sets. Node checks headersTimeout <=
// requestTimeout only at construction; so does sluice.
const kTimeouts = Symbol('sluice.timeouts');
for (const name of ['headersTimeout', 'requestTimeout', 'keepAliveTimeout']) {
  Object.defineProperty(Server.prototype, name, {
    configurable: true,
    enumerable: true,
    get() { return this[kTimeouts] === undefined ? undefined : this[kTimeouts][name]; },
    set(v) {
      if (this[kTimeouts] === undefined) this[kTimeouts] = {};
      this[kTimeouts][name] = v;
      const native = this[kNative];
      if (native !== undefined) {
        const ms = typeof v === 'number' && v >= 0 ? v : 0;
        native.setLimit(name, ms === Infinity ? 0 : ms);
      }
    },
  });
}

// Limit properties (node: server.maxHeadersCount, maxRequestsPerSocket,
// maxConnections; sluice: maxRequestBodySize, maxOutputBuffer): a change
// applies from the next request or connection.
for (const name of Object.keys(limitDefaults)) {
  Object.defineProperty(Server.prototype, name, {
    configurable: true,
    enumerable: true,
    get() { return this[kLimits][name]; },
    set(v) {
      this[kLimits][name] = validateLimit(name, v);
      this[kNative].setLimit(name, nativeLimit(name, v));
    },
  });
}

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

function onTunnelEnd(conn) {
  const st = conn[kState];
  if (st !== undefined && st.tunnel !== null) st.tunnel._onEnd();
}

function onDrain(conn) {
  const st = conn[kState];
  if (st.tunnel !== null) st.tunnel._onDrain();
  const live = st.live;
  for (let i = 1; i < live.length; i += 2) live[i]._drain();
}

function onResponseFinish(res) {
  const req = res.req;
  const live = res._st.live;
  const i = live.indexOf(req);
  if (i !== -1) live.splice(i, 2);
  // Body left unread: discard it so the connection keeps reading.
  if (!req.complete && !req._consuming) req._dump();
}

function onClose(conn) {
  const st = conn[kState];
  if (st === undefined) return;
  const live = st.live;
  st.live = [];
  st.current = null;
  for (let i = 0; i < live.length; i += 2) {
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

module.exports = { Server, connState };
