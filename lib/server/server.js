'use strict';

// Server: node:http's Server shape over the native listener: construction,
// listen / close / address, listener bookkeeping and the properties that
// reach the native server. What happens on a connection lives with its
// protocol: lib/http1/session.js and lib/http2/session.js; option parsing in
// lib/server/options.js.

const { EventEmitter } = require('events');
const dns = require('dns');
const net = require('net');
const { STATUS_CODES } = require('http');
const binding = require('../common/binding');
const http1Session = require('../http1/session');
const { BodyMemory } = require('../http1/body_memory');
const http2Session = require('../http2/session');
const wsEvents = require('../websocket/native_events');
const compression = require('../compress/compression');
const staticFiles = require('../files/static_mount');
const fileCache = require('../files/open_file_cache');
const prototypeBridge = require('../http/prototype_bridge');
const observeMetrics = require('../observe/metrics');
const { openAccessLog } = require('../observe/access_log');
const clusterSupport = require('./cluster');
const { serveForeign } = require('./foreign_connection');
const { SluiceSocket } = require('../net/socket');
const {
  limitDefaults, validateLimit, nativeLimit, nativeTimeout, serverArgs, serverOptions, listenArgs,
} = require('./options');
const { codedError } = require('../common/errors');

const { TUNNEL_UPGRADE, TUNNEL_CONNECT } = binding.constants;

const { kNative, kLimits } = require('../common/symbols');

// server.timeout (node's socket idle timeout for new connections).
const kTimeout = Symbol('sluice.serverTimeout');

// Events whose listeners native code is told about (Server#_syncEvents).
const syncedEvents = new Set(['upgrade', 'connect', 'connection', 'timeout']);

class Server extends EventEmitter {
  constructor(options, requestListener) {
    super();
    ({ options, requestListener } = serverArgs(options, requestListener));
    const opts = serverOptions(options);
    this.maxHeaderSize = opts.server.maxHeaderSize;
    this.headersTimeout = opts.server.headersTimeout;
    this.requestTimeout = opts.server.requestTimeout;
    this.keepAliveTimeout = opts.server.keepAliveTimeout;
    this.keepAliveTimeoutBuffer = opts.server.keepAliveTimeoutBuffer;
    // As node: false, a plain property users set (see the setter below).
    this.httpAllowHalfOpen = false;
    // net.Server's allowHalfOpen, as node's servers report it (node:http
    // always passes true to net.Server; node:http2 passes the option):
    // also each accepted socket's. What a client's half-close does is
    // sluice's either way (httpAllowHalfOpen on HTTP/1.1; on HTTP/2 the
    // client's EOF ends its streams, docs/http2.md).
    this.allowHalfOpen = options.allowHalfOpen === undefined ? true : !!options.allowHalfOpen;
    this[kTimeout] = 0;
    // Limits: the property setters below also reach the native server.
    this[kLimits] = opts.server.limits;
    this.requireHostHeader = opts.server.requireHostHeader;
    // As node: fixed at construction (accepted sockets get TCP_NODELAY /
    // keep-alive probes natively); writes to a no-body response throw when
    // rejectNonStandardBodyWrites is set.
    this.noDelay = opts.server.noDelay;
    this.keepAlive = opts.server.keepAlive;
    this.keepAliveInitialDelay = opts.server.keepAliveInitialDelay;
    this.rejectNonStandardBodyWrites = opts.server.rejectNonStandardBodyWrites;
    // As node: read at each request (a later assignment applies to the
    // next one); true makes req.headers join duplicates of every field.
    this.joinDuplicateHeaders = opts.server.joinDuplicateHeaders;
    // As node: the option as given (undefined unless given); the parser
    // also honours --insecure-http-parser (lib/server/options.js).
    this.insecureHTTPParser = opts.server.insecureHTTPParser;
    this._highWaterMark = opts.server.highWaterMark;
    const allocator = opts.server.requestBufferAllocator;
    this.requestBufferAllocator = allocator;
    // Response compression (lib/compress/compression.js): null when off.
    this._compression = compression.normalize(options.compression);
    this._bodyMemory = allocator === null ? null : new BodyMemory(this, allocator);
    // WebSocket messages in the allocator's memory too (null: copies).
    this._wsPool = allocator === null ? null : wsEvents.poolCallbacks(allocator, () => this[kNative]);
    // The HTTP/2 stream window we advertise (lib/http2/session.js: how many
    // unreleased body bytes can stall a client).
    const h2Window = opts.native.http2StreamWindow;
    this._h2StreamWindow = h2Window === undefined ? binding.constants.H2_DEFAULT_STREAM_WINDOW : h2Window;
    // Its connection window (undefined: the core's default). HTTP/3 bounds
    // unreleased body bytes by both (lib/http3/endpoint.js).
    this._h2ConnectionWindow = opts.native.http2ConnectionWindow;
    // The open-file cache (lib/files/open_file_cache.js): null when off; on while
    // listening. this._fileCache says who uses it: fileCache.OFF, STATIC
    // (the default: static mounts and the serveStatic middleware) or ALL
    // (`openFileCache: true`: every respondWithFile too).
    this._fileCacheCfg = fileCache.normalize(options.openFileCache);
    this._fileCache = fileCache.OFF;
    // node's IncomingMessage / ServerResponse options (HTTP/1.1 requests):
    // null when not given (lib/http/prototype_bridge.js adoptClass).
    // node:http2's names for them (Http1IncomingMessage, Http1ServerResponse)
    // too; and its Http2ServerRequest / Http2ServerResponse (HTTP/2 and
    // HTTP/3 compat requests, lib/http2/session.js adoptCompatClass).
    this._IncomingMessage = prototypeBridge.adoptClass(
      options.IncomingMessage ?? options.Http1IncomingMessage, 'IncomingMessage');
    this._ServerResponse = prototypeBridge.adoptClass(
      options.ServerResponse ?? options.Http1ServerResponse, 'ServerResponse');
    this._Http2ServerRequest = http2Session.adoptCompatClass(options.Http2ServerRequest, 'Http2ServerRequest');
    this._Http2ServerResponse = http2Session.adoptCompatClass(options.Http2ServerResponse, 'Http2ServerResponse');
    if (requestListener) this.on('request', requestListener);
    // As node's connectionListener, registered first: a stream handed to
    // server.emit('connection', stream) that sluice did not accept is
    // served (lib/server/foreign_connection.js); sluice's own sockets pass.
    // Not counted as a listener that asks native code for connection
    // events (_syncEvents).
    this._serverOptions = options;
    this._connectionListener = (socket) => {
      if (!(socket instanceof SluiceSocket)) this._serveForeign(socket);
    };
    super.on('connection', this._connectionListener);

    // Kept here: native code holds the callbacks weakly, strongly only
    // while listening or serving (so an unused server can be collected).
    this._nativeCallbacks = {
      ...http1Session.callbacks(this, this._bodyMemory),
      ...http2Session.callbacks(this),
      ...wsEvents.callbacks,
      ...(this._wsPool === null ? {} : this._wsPool.callbacks),
      onServerClose: this._onServerClose.bind(this),
      onDrop: (data) => this.emit('drop', data),
      ...this._tlsCallbacks(),
    };
    this[kNative] = new binding.NativeServer(opts.native, this._nativeCallbacks);
    openAccessLog(this, options.accessLog);
    // Alt-Svc of every HTTP/1.1 and HTTP/2 response (HTTP/3 advertised by
    // lib/secure_server.js while it listens); null: none.
    this._altSvc = null;
    // node:http2's `origins`: an ORIGIN frame on every session at its start
    // (lib/http2/session.js), checked now as node checks them.
    this._h2Origins = http2Session.checkOrigins(options.origins);
    // node:http2's maxOutstandingSettings (default 10; Http2SessionHandle).
    const mos = options.maxOutstandingSettings;
    this._h2MaxPendingAck = Number.isInteger(mos) && mos >= 1 ? mos : 10;
    this._listening = false;
    this._closing = false;
    // Which of 'upgrade' / 'connect' have listeners (ServerOptions::
    // tunnel_events) and whether 'connection' has (connection_events: no
    // native call per connection otherwise), kept in step by the listener
    // methods below.
    this._tunnelEvents = 0;
    this._connectionEvents = false;
    // Whether 'timeout' has listeners (keep_alive_timeout_events: an
    // expired keep-alive is reported instead of closed).
    this._keepAliveTimeoutEvents = false;
    this._syncEvents();
  }

  _syncEvents() {
    if (this[kNative] === undefined) return;
    const bits = (this.listenerCount('upgrade') > 0 ? TUNNEL_UPGRADE : 0) |
      (this.listenerCount('connect') > 0 ? TUNNEL_CONNECT : 0);
    if (bits !== this._tunnelEvents) {
      this._tunnelEvents = bits;
      this[kNative].setLimit('tunnelEvents', bits);
    }
    const connection = this._userConnectionListeners() > 0 || this[kTimeout] > 0;
    if (connection !== this._connectionEvents) {
      this._connectionEvents = connection;
      this[kNative].setLimit('connectionEvents', connection ? 1 : 0);
    }
    const timeout = this.listenerCount('timeout') > 0;
    if (timeout !== this._keepAliveTimeoutEvents) {
      this._keepAliveTimeoutEvents = timeout;
      this[kNative].setLimit('keepAliveTimeoutEvents', timeout ? 1 : 0);
    }
  }

  // 'connection' listeners other than the server's own (constructor).
  _userConnectionListeners() {
    const n = this.listenerCount('connection');
    if (n === 0 || this._connectionListener === undefined) return n;
    return this.rawListeners('connection').includes(this._connectionListener) ? n - 1 : n;
  }

  // A stream sluice did not accept, emitted as 'connection': served as
  // node:http serves it (lib/server/foreign_connection.js).
  _serveForeign(stream) {
    serveForeign(this, stream, this._serverOptions);
  }

  get listening() { return this._listening; }

  // The stream callbacks of another transport of this server's requests,
  // by protocol ('h3': lib/http3/endpoint.js; lib/http2/session.js
  // PROTOCOLS says what differs).
  _streamCallbacks(protocol) {
    return http2Session.callbacks(this, protocol);
  }

  // The native TLS events' callbacks (lib/tls/secure_server.js); none here.
  _tlsCallbacks() { return {}; }

  // A request listener that re-parents req/res onto node's prototypes
  // (Express) is adopted when it is added (lib/http/prototype_bridge.js): the
  // per-request path stays free of checks.
  // 'upgrade' / 'connect' listeners decide natively whether such a request
  // becomes a tunnel, 'connection' listeners whether native code reports
  // accepted connections: every listener change re-syncs (once() and its
  // removal go through on() / removeListener()).
  _addListener(add, event, listener) {
    if (event === 'request') prototypeBridge.adopt(listener);
    add.call(this, event, listener);
    if (syncedEvents.has(event)) this._syncEvents();
    return this;
  }

  on(event, listener) { return this._addListener(super.on, event, listener); }

  addListener(event, listener) { return this.on(event, listener); }

  prependListener(event, listener) { return this._addListener(super.prependListener, event, listener); }

  once(event, listener) {
    if (event === 'request') prototypeBridge.adopt(listener);
    return super.once(event, listener);
  }

  prependOnceListener(event, listener) {
    return this._addListener(super.prependOnceListener, event, listener);
  }

  removeListener(event, listener) {
    super.removeListener(event, listener);
    if (syncedEvents.has(event)) this._syncEvents();
    return this;
  }

  off(event, listener) { return this.removeListener(event, listener); }

  removeAllListeners(...args) {
    super.removeAllListeners(...args);
    this._syncEvents();
    return this;
  }

  listen(...args) {
    const {
      port, host, path, backlog, exclusive, cb, reusePort: given, readableAll, writableAll,
    } = listenArgs(args);
    if (cb) this.once('listening', cb);
    if (path !== undefined) {
      const native = this[kNative];
      const r = native.listenPipe(path, backlog);
      if (r === 0 && (readableAll || writableAll)) {
        // As net: the socket file's mode is changed after the listen; a
        // failure closes it and throws.
        const c = native.chmodPipe(readableAll, writableAll);
        if (c < 0) {
          native.close();
          const err = new Error(`uv_pipe_chmod ${binding.errname(c)}`);
          err.code = binding.errname(c);
          err.errno = c;
          err.syscall = 'uv_pipe_chmod';
          throw err;
        }
      }
      this._listenResult(r, path, -1);
      return this;
    }
    // In a cluster worker: SO_REUSEPORT by default (lib/server/cluster.js).
    const reusePort = given !== undefined ? given : clusterSupport.defaultReusePort(port, exclusive);
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
    // The HTTP/3 endpoint of a secure server shares the port the same way.
    this._reusePort = reusePort;
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
    this._listenResult(r, address, port);
  }

  // After a native listen (r: 0 or a libuv error) on address:port, or on a
  // Unix socket's path (port -1, as net reports it): 'listening' or
  // 'error', as net.
  _listenResult(r, address, port) {
    if (r < 0) {
      const code = binding.errname(r);
      const where = port < 0 ? address : `${address}:${port}`;
      const err = new Error(`listen ${code}: ${binding.strerror(r)} ${where}`);
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
    if (this._bodyMemory !== null) this._bodyMemory.attach();
    this._fileCache = fileCache.acquire(this._fileCacheCfg);
    clusterSupport.announceListening(this[kNative].address());
    this._forgetCluster = clusterSupport.closeOnDisconnect(this);
    process.nextTick(() => this.emit('listening'));
  }

  // Files under `root` answered natively for GET / HEAD requests under
  // `urlPrefix` (lib/files/static_mount.js, docs/files.md "serveStatic"): those
  // requests never reach 'request' / 'stream'; misses do. Returns this.
  serveStatic(urlPrefix, root, options) {
    staticFiles.serveStatic(this[kNative], urlPrefix, root, options, this._fileCacheCfg !== null,
      this._compression);
    return this;
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
      fileCache.release(this._fileCache);
      this._fileCache = fileCache.OFF;
      if (this._forgetCluster) this._forgetCluster();
      this[kNative].close();
    } else {
      process.nextTick(() => this.emit('close'));
    }
    return this;
  }

  closeAllConnections() { this[kNative].closeAllConnections(); }

  closeIdleConnections() { this[kNative].closeIdleConnections(); }

  // As node: the idle timeout of every connection accepted from now on
  // (lib/net/socket.js); 'timeout' (socket) is heard here when neither the
  // request nor the response listens (lib/http1/session.js).
  setTimeout(ms, cb) {
    this.timeout = ms;
    if (cb) this.on('timeout', cb);
    return this;
  }

  get timeout() { return this[kTimeout]; }

  set timeout(ms) {
    this[kTimeout] = ms;
    this._syncEvents();
  }

  // As node: an unref'd server's listening socket does not keep the
  // process alive (its open connections still do); remembered across
  // listen().
  ref() {
    this[kNative].ref(true);
    return this;
  }

  unref() {
    this[kNative].ref(false);
    return this;
  }

  // events.captureRejections: a rejected async 'request' listener is
  // answered 500 (headers dropped) when nothing was sent yet, else the
  // response is destroyed — as node's http.Server; other events as
  // net.Server (a 'connection' socket is destroyed, anything else becomes
  // 'error').
  [EventEmitter.captureRejectionSymbol](err, event, ...args) {
    if (event === 'request') {
      const res = args[1];
      if (!res.headersSent && !res.writableEnded) {
        for (const name of res.getHeaderNames()) res.removeHeader(name);
        res.statusCode = 500;
        res.end(STATUS_CODES[500]);
      } else {
        res.destroy();
      }
    } else if (event === 'connection') {
      args[0].destroy(err);
    } else {
      this.emit('error', err);
    }
  }

  [Symbol.asyncDispose]() {
    return new Promise((resolve) => this.close(() => resolve()));
  }

  // The counters the native server keeps (lib/observe/metrics.js): a
  // plain object; metricsText() is its Prometheus exposition.
  metrics() { return observeMetrics.metrics(this); }

  metricsText() { return observeMetrics.prometheusText(this); }

  // Open connections (HTTP/1.1 and HTTP/2), as node's server._connections.
  get _connections() { return this[kNative].connectionCount(); }

  getConnections(cb) {
    const n = this[kNative].connectionCount();
    if (typeof cb === 'function') process.nextTick(cb, null, n);
    return this;
  }

  _onServerClose() {
    if (this._bodyMemory !== null) this._bodyMemory.detach();
    this.emit('close');
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
      if (native !== undefined) native.setLimit(name, nativeTimeout(v));
    },
  });
}

// A server property node reads live, kept as given and mirrored into the
// native option of the same name (toNative maps node's value to the number
// the core takes). The constructor assigns before it makes the native
// server, which takes the options it is made with; those assignments only
// store.
function defineNativeMirror(name, toNative) {
  const key = Symbol(`sluice.${name}`);
  Object.defineProperty(Server.prototype, name, {
    configurable: true,
    enumerable: true,
    get() { return this[key]; },
    set(v) {
      this[key] = v;
      const native = this[kNative];
      if (native !== undefined) native.setLimit(name, toNative(v));
    },
  });
}

// As node's server.keepAliveTimeoutBuffer: an idle keep-alive connection is
// closed keepAliveTimeout + this many ms after its last response (the
// Keep-Alive header advertises keepAliveTimeout alone), so a client reusing
// it at the advertised limit does not race the close. A value that is not
// a finite number >= 0 means node's default, 1000.
defineNativeMirror('keepAliveTimeoutBuffer', (v) => (Number.isFinite(v) && v >= 0 ? v : 1000));

// node's server.httpAllowHalfOpen: whether a client's EOF with requests in
// flight lets their responses finish (true) or ends the connection, which
// aborts them (false, node's default). Read natively at each EOF, so a
// change applies to connections already open, as node reads the property
// in its socket 'end' handler.
defineNativeMirror('httpAllowHalfOpen', (v) => (v ? 1 : 0));

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

// instanceof http.Server, and tracers' patches of its emit reach sluice's
// servers (lib/http/prototype_bridge.js installServer).
prototypeBridge.installServer(Server);

module.exports = { Server };
