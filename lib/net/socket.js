'use strict';

// SluiceSocket: what req.socket / res.socket / clientError's socket give
// in sluice: the parts of net.Socket that http users touch (addresses,
// destroy, end, write for hand-written error answers, timeouts). The bytes
// themselves are owned by the native connection.

const { EventEmitter } = require('events');
const net = require('net');
const { X509Certificate } = require('crypto');

const { kConn, kPeer, kLocal, kTlsInfo } = require('../common/symbols');
const { codedError, codedTypeError, codedRangeError } = require('../common/errors');
const defaults = require('../common/defaults');

// The socket's IdleTimer (setTimeout), undefined when none.
const kIdle = Symbol('sluice.idleTimer');

class SluiceSocket extends EventEmitter {
  // server: the Server that accepted the connection (node's socket.server).
  constructor(conn, server) {
    super();
    this[kConn] = conn;
    this.server = server === undefined ? null : server;
    this[kPeer] = undefined;
    this[kLocal] = undefined;
    this[kTlsInfo] = undefined;
    this.destroyed = false;
    this.timeout = 0;
    this[kIdle] = undefined;
    // Set by lib/http1/session.js: node's socketOnTimeout for HTTP/1.1.
    this._onHttpTimeout = undefined;
  }

  // net.Socket's allowHalfOpen: the server's (node's sockets get the
  // net.Server option).
  get allowHalfOpen() { return this.server !== null && this.server.allowHalfOpen !== false; }

  // TLS facts (createSecureServer): read once from the native connection
  // after its handshake; null on cleartext.
  _tls() {
    let t = this[kTlsInfo];
    if (t === undefined) {
      t = typeof this[kConn].tls === 'function' ? this[kConn].tls() : null;
      // Before the handshake completed (a tlsClientError socket) the
      // facts are not final: not cached.
      if (t === null || t === undefined || t.handshakeDone) this[kTlsInfo] = t || null;
    }
    return t || null;
  }

  // As a tls.TLSSocket on a secure server, as a net.Socket otherwise
  // (encrypted: false here; node leaves it undefined on net.Socket and
  // http code tests it for truthiness).
  get encrypted() { return this._tls() !== null; }
  get alpnProtocol() { const t = this._tls(); return t && t.handshakeDone ? t.alpnProtocol : undefined; }
  get servername() { const t = this._tls(); return t && t.handshakeDone ? t.servername : undefined; }
  get authorized() { const t = this._tls(); return !!(t && t.peerCertificate && !t.verifyError); }
  get authorizationError() { const t = this._tls(); return t && t.verifyError ? t.verifyError : null; }

  getProtocol() { const t = this._tls(); return t && t.handshakeDone ? t.protocol : null; }

  getCipher() {
    const t = this._tls();
    if (!t || !t.cipher) return undefined;
    return { name: t.cipher, standardName: t.cipherStandardName, version: t.cipherVersion };
  }

  // node's shape ({ subject, issuer, valid_from, fingerprint256, raw...
  // }) from the DER bytes; {} without a certificate, null on cleartext.
  // `detailed` chains (issuerCertificate) are not built.
  getPeerCertificate() {
    const t = this._tls();
    if (!t) return null;
    if (!t.peerCertificate) return {};
    return new X509Certificate(t.peerCertificate).toLegacyObject();
  }

  // node's TLSSocket methods. The native connection answers on demand
  // (src/binding/js_tls.cc TlsQuery); null on cleartext or once closed.
  _tlsQuery(what, ...args) {
    const conn = this[kConn];
    if (typeof conn.tlsQuery !== 'function' || this._tls() === null) return null;
    return conn.tlsQuery(what, ...args);
  }

  // The session (DER, as node's) for a client's `session` option.
  getSession() { return this._tlsQuery('session') || undefined; }

  getTLSTicket() { return this._tlsQuery('ticket') || undefined; }

  isSessionReused() { return this._tlsQuery('reused') === true; }

  // The certificate this server presented, in getPeerCertificate's shape.
  getCertificate() {
    if (this._tls() === null) return null;
    const der = this._tlsQuery('cert');
    return der ? new X509Certificate(der).toLegacyObject() : {};
  }

  getX509Certificate() {
    const der = this._tlsQuery('cert');
    return der ? new X509Certificate(der) : undefined;
  }

  getPeerX509Certificate() {
    const t = this._tls();
    return t && t.peerCertificate ? new X509Certificate(t.peerCertificate) : undefined;
  }

  // As node on a server socket: ephemeral key facts are a client's.
  getEphemeralKeyInfo() { return null; }

  getSharedSigalgs() { return this._tlsQuery('sigalgs') || []; }

  // RFC 5705 keying material, node's argument checks.
  exportKeyingMaterial(length, label, context) {
    if (!Number.isInteger(length) || length < 0 || length > 0xffffffff) {
      throw codedRangeError('ERR_OUT_OF_RANGE', `The value of "length" is out of range. Received ${length}`);
    }
    if (typeof label !== 'string') {
      throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "label" argument must be of type string');
    }
    if (context !== undefined && !ArrayBuffer.isView(context)) {
      throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "context" argument must be an instance of Buffer, TypedArray, or DataView');
    }
    const ctx = context === undefined ? undefined : Buffer.from(context.buffer, context.byteOffset, context.byteLength);
    const out = ctx === undefined ? this._tlsQuery('ekm', length, label) : this._tlsQuery('ekm', length, label, ctx);
    if (out === null) throw codedError('ERR_SOCKET_CLOSED', 'Socket is closed');
    return out;
  }

  _peer() {
    if (this[kPeer] === undefined) this[kPeer] = this[kConn].peer() || null;
    return this[kPeer];
  }

  _local() {
    if (this[kLocal] === undefined) this[kLocal] = this[kConn].local() || null;
    return this[kLocal];
  }

  get remoteAddress() { const p = this._peer(); return p ? p[0] : undefined; }
  get remotePort() { const p = this._peer(); return p ? p[1] : undefined; }
  get remoteFamily() {
    const p = this._peer();
    return p ? (p[2] === 6 ? 'IPv6' : 'IPv4') : undefined;
  }
  get localAddress() { const p = this._local(); return p ? p[0] : undefined; }
  get localPort() { const p = this._local(); return p ? p[1] : undefined; }
  get localFamily() {
    const p = this._local();
    return p ? (p[2] === 6 ? 'IPv6' : 'IPv4') : undefined;
  }
  // node's counts of the bytes read from and written to the socket.
  get bytesRead() { return this[kConn].stats().bytesRead; }
  get bytesWritten() { return this[kConn].stats().bytesWritten; }
  get writable() { return !this.destroyed; }
  // As net.Socket's: true once the connection is ending (after a response
  // that closes it, end(), destroy()).
  get writableEnded() { return this.destroyed || this[kConn].stats().ending === true; }
  get readable() { return !this.destroyed; }
  // As net.Socket's: how many queued bytes make a write return false,
  // here the native writer's threshold (the server's highWaterMark).
  get writableHighWaterMark() {
    return this.server !== null && this.server._highWaterMark !== undefined ?
      this.server._highWaterMark : defaults.highWaterMark;
  }

  address() {
    const p = this._local();
    return p ? { address: p[0], family: p[2] === 6 ? 'IPv6' : 'IPv4', port: p[1] } : {};
  }

  write(data, encoding, cb) {
    if (typeof encoding === 'function') { cb = encoding; encoding = undefined; }
    if (typeof data === 'string' && encoding && encoding !== 'latin1' && encoding !== 'binary') {
      data = Buffer.from(data, encoding);
    }
    const ok = this[kConn].writeRaw(data);
    if (cb) process.nextTick(cb);
    return ok;
  }

  end(data, encoding, cb) {
    if (typeof data === 'function') { cb = data; data = undefined; }
    if (typeof encoding === 'function') { cb = encoding; encoding = undefined; }
    if (typeof data === 'string' && encoding && encoding !== 'latin1' && encoding !== 'binary') {
      data = Buffer.from(data, encoding);
    }
    this[kConn].endRaw(data);
    if (cb) process.nextTick(cb);
    return this;
  }

  destroy(err) {
    if (!this.destroyed) {
      // As net.Socket: destroyed (not writable) at once; 'close' follows
      // once the native connection closed (_closed).
      this.destroyed = true;
      this[kConn].destroy();
    }
    if (err) process.nextTick(emitError, this, err);
    return this;
  }

  destroySoon() { return this.end(); }

  // As a node:http server's socket: the bytes are HTTP's, not text.
  setEncoding() {
    throw codedError('ERR_HTTP_SOCKET_ENCODING',
      'Changing the socket encoding is not allowed per RFC7230 Section 3.');
  }

  // As net.Socket: 'timeout' after `ms` without a byte read or written
  // (0 turns it off). The native session owns the HTTP timeouts
  // (headersTimeout, requestTimeout, keepAliveTimeout); this idle timer is
  // JS's and costs nothing until set (see IdleTimer).
  setTimeout(ms, cb) {
    if (typeof ms !== 'number') {
      throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "msecs" argument must be of type number');
    }
    if (!(ms >= 0)) {
      throw codedRangeError('ERR_OUT_OF_RANGE', `The value of "msecs" is out of range. It must be a non-negative finite number. Received ${ms}`);
    }
    this.timeout = ms;
    if (this[kIdle] !== undefined) this[kIdle].stop();
    this[kIdle] = ms > 0 && ms !== Infinity && !this.destroyed ? new IdleTimer(this, ms) : undefined;
    if (cb) {
      if (ms === 0) this.removeListener('timeout', cb);
      else this.once('timeout', cb);
    }
    return this;
  }

  // The idle timer fired: the server's handling (an HTTP connection's
  // request / response / server 'timeout', see lib/http1/session.js) and
  // then the socket's own listeners, in node's order.
  _timedOut() {
    if (this._onHttpTimeout !== undefined) this._onHttpTimeout();
    this.emit('timeout');
  }

  // Responses are corked into one write each: Nagle is always off.
  setNoDelay() { return this; }

  // TCP keep-alive probes, as net.Socket: initialDelay in ms (0 keeps the
  // system's idle time).
  setKeepAlive(enable = false, initialDelay = 0) {
    this[kConn].setKeepAlive(!!enable, Math.floor(Number(initialDelay) / 1000) || 0);
    return this;
  }

  ref() { return this; }
  unref() { return this; }
  pause() { this[kConn].pause(); return this; }
  resume() { this[kConn].resume(); return this; }

  // Called by the server when the native connection closed.
  _closed() {
    if (this[kIdle] !== undefined) {
      this[kIdle].stop();
      this[kIdle] = undefined;
    }
    if (this[kCloseEmitted] === true) return;
    this[kCloseEmitted] = true;
    this.destroyed = true;
    this.emit('close', false);
  }
}

// A socket's idle timeout without a native call per read or write: the
// timer samples the connection's byte counts every quarter of the timeout
// and fires once the counts have stood still for the whole timeout, so it
// fires between ms and 1.25 ms after the last byte moved. After firing it
// waits for the next activity (as net.Socket, one 'timeout' per idle
// spell). Unref'd: it never keeps the process alive.
class IdleTimer {
  constructor(socket, ms) {
    this.socket = socket;
    this.ms = ms;
    this.step = Math.max(1, Math.floor(ms / 4));
    this.count = activity(socket);
    this.since = Date.now();
    this.fired = false;
    this.timer = null;
    this.check = this.check.bind(this);
    this.arm(ms);
  }

  arm(delay) {
    this.timer = setTimeout(this.check, delay);
    this.timer.unref();
  }

  check() {
    this.timer = null;
    const socket = this.socket;
    if (socket.destroyed || socket[kIdle] !== this) return;
    const now = Date.now();
    const count = activity(socket);
    if (count !== this.count) {
      this.count = count;
      this.since = now;
      this.fired = false;
    }
    const idle = now - this.since;
    if (!this.fired && idle >= this.ms) {
      this.fired = true;
      socket._timedOut();
      if (socket.destroyed || socket[kIdle] !== this) return;
    }
    this.arm(this.fired ? this.step : Math.min(this.step, this.ms - idle));
  }

  stop() {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}

function activity(socket) {
  const st = socket[kConn].stats();
  return st.bytesRead + st.bytesWritten;
}

// An 'error' on the socket (destroy(err), or emitted by user code) is
// handled first as node's server handles its sockets' errors
// (socketOnError, once per socket): the server's 'clientError' when someone
// listens there, else an error answer when no response has started on the
// connection (400; 431 / 413 / 408 for those errors) and the connection
// closes. Then the socket's own listeners hear it; nobody listening is no
// uncaught exception (node leaves a no-op listener behind).
SluiceSocket.prototype.emit = function emit(event, ...args) {
  if (event === 'error') {
    if (this[kErrorHandled] === undefined) {
      this[kErrorHandled] = true;
      onSocketError(this, args[0]);
    }
    if (this.listenerCount('error') === 0) return false;
  }
  return EventEmitter.prototype.emit.call(this, event, ...args);
};

const kErrorHandled = Symbol('sluice.socketErrorHandled');
const kCloseEmitted = Symbol('sluice.socketCloseEmitted');

const errorStatus = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

function onSocketError(socket, err) {
  const server = socket.server;
  if (server !== null && server.listenerCount('clientError') > 0) {
    server.emit('clientError', err, socket);
    return;
  }
  // sendError answers only when no response of this connection has
  // started (else it just closes); HTTP/2 views have none (the session
  // just closes).
  const conn = socket[kConn];
  if (!socket.destroyed && typeof conn.sendError === 'function') {
    conn.sendError((err && errorStatus[err.code]) || 400);
  }
  socket.destroy();
}

function emitError(socket, err) {
  socket.emit('error', err);
}

// As node's HTTP server sockets, whose parser consumes the reads natively:
// the first 'data' listener "unconsumes" the socket, and from then on each
// read is also emitted as 'data' (a copy; the parser still gets it). Once
// on, it stays on, as node's. Until then reading costs nothing extra. An
// HTTP/2 connection's socket (session.socket) is not affected: the native
// call is a no-op there.
// ('readable' is not covered: a SluiceSocket has no read() to pull with.)
const kCopying = Symbol('sluice.copyingReads');
for (const name of ['on', 'addListener', 'prependListener']) {
  const add = EventEmitter.prototype[name];
  SluiceSocket.prototype[name] = function addSocketListener(event, listener) {
    const r = add.call(this, event, listener);
    if (event === 'data' && this[kCopying] !== true && !this.destroyed) {
      this[kCopying] = true;
      this[kConn].copyReads();
    }
    return r;
  };
}

// `socket instanceof net.Socket`, as node's server sockets (libraries and
// node's tests check it): SluiceSocket.prototype is re-chained onto
// net.Socket.prototype while the class keeps EventEmitter's constructor
// (net.Socket's never runs: there is no handle or stream state). So that
// nothing of net.Socket's / Duplex's implementation runs against state a
// SluiceSocket does not have, every member of that chain that sluice does
// not define itself is shadowed here: by EventEmitter's own member where
// there is one (Readable's on/addListener/removeListener... would look at
// _readableState for 'data'), else by undefined (as before the chain
// existed: pipe, cork, read, _handle, async iteration...). sluice's own
// members (write, end, destroy, setTimeout, setNoDelay, setKeepAlive,
// address, ref/unref, pause/resume, the address and byte-count getters,
// emit) are own properties of SluiceSocket.prototype and win.
function chainToNetSocket(proto) {
  const names = new Set();
  for (let p = net.Socket.prototype; p !== null && p !== EventEmitter.prototype; p = Object.getPrototypeOf(p)) {
    for (const key of Reflect.ownKeys(p)) names.add(key);
  }
  names.delete('constructor');
  for (const key of names) {
    if (Object.prototype.hasOwnProperty.call(proto, key)) continue;
    const ee = Object.getOwnPropertyDescriptor(EventEmitter.prototype, key);
    Object.defineProperty(proto, key, ee !== undefined ? { ...ee, enumerable: false } : {
      value: undefined, writable: true, configurable: true, enumerable: false,
    });
  }
  Object.setPrototypeOf(proto, net.Socket.prototype);
}
chainToNetSocket(SluiceSocket.prototype);

module.exports = { SluiceSocket };
