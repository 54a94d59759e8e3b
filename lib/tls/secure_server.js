'use strict';

// createSecureServer: the same Server over TLS (src/core/net/tls_*): one
// port serves "h2" and "http/1.1" chosen by ALPN, with node's TLS options,
// events and certificate rotation (docs/tls.md).

const tls = require('tls');
const binding = require('../common/binding');
const { Server } = require('../server/server');
const { connState } = require('../net/connection_state');
const { kNative } = require('../common/symbols');
const { codedError, codedTypeError, codedRangeError, invalidArgType } = require('../common/errors');
const { nativeContextOptions, pickContextOptions, checkSupported } = require('./tls_options');
const http3 = require('../http3/endpoint');

// Contexts made by sluice.createSecureContext: their options, so that
// addContext / SNICallback build the native context from the same bytes.
const contextOptions = new WeakMap();

// node's native SecureContext (tls.SecureContext#context, which node's
// SNICallback also accepts in place of its wrapper).
let NativeSecureContext = null;
function isNativeSecureContext(o) {
  if (NativeSecureContext === null) NativeSecureContext = tls.createSecureContext().context.constructor;
  return o instanceof NativeSecureContext;
}

// The native half of a context of node's tls.createSecureContext (or that
// native half itself), or null.
function nodeNativeOf(context) {
  if (context instanceof tls.SecureContext) return context.context;
  return isNativeSecureContext(context) ? context : null;
}

// A native context with the credentials of node's context `native` (its
// certificates, keys, chains, trust store: read from its SSL_CTX, which
// node hands out as SecureContext#_external, whenever and by whomever the
// context was made) and the rest from the native options `base`.
function fromNodeContext(native, base) {
  let external;
  try {
    external = native._external;
  } catch {
    external = undefined;
  }
  if (external === undefined) {
    throw codedError('ERR_SLUICE_TLS_CONTEXT',
      'this node does not expose a SecureContext\'s SSL_CTX (SecureContext#_external); ' +
      'pass TLS options or a context made by sluice.createSecureContext()');
  }
  return binding.tlsContextFrom(external, base);
}

// Credentials: what a context of node's brings (setSecureContext keeps the
// server's other options).
const CREDENTIAL_KEYS = ['key', 'cert', 'ca', 'pfx', 'passphrase', 'crl'];

function createSecureContext(options = {}) {
  checkSupported(options);
  const ctx = tls.createSecureContext(options);
  const opts = pickContextOptions(options);
  // Also its native half, which node's SNICallback accepts in its place.
  contextOptions.set(ctx, opts);
  contextOptions.set(ctx.context, opts);
  return ctx;
}

function validateTicketKeys(keys) {
  if (!ArrayBuffer.isView(keys)) {
    throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "keys" argument must be an instance of Buffer, TypedArray, or DataView');
  }
  if (keys.byteLength !== 48) {
    throw codedRangeError('ERR_INVALID_ARG_VALUE', 'Session ticket keys must be a 48-byte buffer');
  }
}

function validateTimeout(v) {
  if (v === undefined) return 120000;
  if (typeof v !== 'number' || Number.isNaN(v) || v < 0) {
    throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "options.handshakeTimeout" property must be a non-negative number');
  }
  return v;
}

// The options of an SNI / rotation context: the server's ALPN choice and
// client-certificate policy always carry over (OpenSSL keeps the first
// context's verify mode when SNI switches contexts anyway).
const SERVER_WIDE = ['ALPNProtocols', 'allowHTTP1', 'requestCert', 'rejectUnauthorized'];

class SecureServer extends Server {
  constructor(options, requestListener) {
    if (typeof options === 'function') {
      requestListener = options;
      options = {};
    } else if (options === null || options === undefined) {
      options = {};
    } else if (typeof options !== 'object') {
      throw invalidArgType('"options" argument', 'of type object', options);
    }
    checkSupported(options);
    if (options.ticketKeys !== undefined) validateTicketKeys(options.ticketKeys);
    const allowHTTP1 = options.allowHTTP1 !== false;
    const handshakeTimeout = validateTimeout(options.handshakeTimeout);
    const sni = options.SNICallback;
    if (sni !== undefined && typeof sni !== 'function') {
      throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "options.SNICallback" property must be of type function');
    }
    const native = nativeContextOptions({ ...options, allowHTTP1 });
    const h3 = http3.normalize(options.http3);
    if (h3 !== null && (native.keys.length === 0 || native.certs.length === 0)) {
      throw codedError('ERR_SLUICE_HTTP3',
        'HTTP/3 needs the certificate as key and cert (PEM); pfx is not supported for it');
    }
    super(options, requestListener);
    // HTTP/3 (lib/http3/endpoint.js): the configuration, the endpoint
    // while listening, and one closing meanwhile.
    this._h3cfg = h3;
    // One certificate configuration for TCP and UDP: HTTP/3 handshakes take
    // their certificate from native contexts built from the same options
    // (the default, setSecureContext's) or the very ones addContext and
    // the SNICallback give TCP.
    this._h3tls = h3 === null ? null : {
      keys: native.keys, certs: native.certs, passphrase: native.passphrase,
      maxHeaderSize: this.maxHeaderSize, context: binding.tlsContext(native),
      ticketKeys: null,
      // Request bodies in allocator memory: HTTP/2's windows bound the
      // unreleased bytes.
      bodyAllocator: this.requestBufferAllocator !== null,
      bodyStreamLimit: this._h2StreamWindow,
      bodyConnectionLimit: this._h2ConnectionWindow,
      onSni: sni === undefined ? null : (ep, id, servername) => this._onH3Sni(ep, id, servername),
      // handshakeTimeout applies to HTTP/3 handshakes too, with TCP's
      // 'tlsClientError' (no socket exists yet: a stand-in with the
      // client's address).
      handshakeTimeout,
      onHandshakeTimeout: (peer) => {
        const err = codedError('ERR_TLS_HANDSHAKE_TIMEOUT', 'TLS handshake timeout');
        this.emit('tlsClientError', err, {
          alpnProtocol: 'h3', encrypted: true, destroy() {},
          remoteAddress: peer ? peer[0] : undefined, remotePort: peer ? peer[1] : undefined,
          remoteFamily: peer ? (peer[2] === 6 ? 'IPv6' : 'IPv4') : undefined,
        });
      },
    };
    // addContext's [hostname, native context], replayed on the endpoint
    // when it starts listening.
    this._h3contexts = [];
    this._http3 = null;
    this._h3Closing = null;
    this._tlsOptions = pickContextOptions({ ...options, allowHTTP1 });
    this.allowHTTP1 = allowHTTP1;
    this._SNICallback = sni === undefined ? null : sni;
    // Native contexts of the SecureContexts an SNICallback answered with,
    // built once each (they carry this server's ALPN and client policy).
    this._sniContexts = new WeakMap();
    // The server-wide options as native options, for contexts of node's
    // (built once per setSecureContext).
    this._wideNative = null;
    // requestCert + rejectUnauthorized: as node, the handshake completes and
    // a peer whose certificate is missing or unverified is destroyed then.
    const refuseUnverified = !!options.requestCert && options.rejectUnauthorized !== false;
    this[kNative].setTls(native, { handshakeTimeout, allowHTTP1, sniCallback: sni !== undefined, refuseUnverified });
  }

  // TCP is listening: the UDP endpoint starts on the same port number
  // (or options.http3.port) and host, and Alt-Svc advertises it.
  _listenResult(r, address, port) {
    super._listenResult(r, address, port);
    if (r < 0 || this._h3cfg === null || this._http3 !== null) return;
    const cfg = this._h3cfg;
    const tcp = this.address();
    if (typeof tcp !== 'object' || tcp === null) {
      // listen(path): no port number to share.
      if (cfg.port === null || cfg.host === null) {
        const err = codedError('ERR_SLUICE_HTTP3',
          'HTTP/3 beside a Unix socket needs options.http3.port and options.http3.host');
        process.nextTick(() => this.emit('error', err));
        return;
      }
    }
    const h3port = cfg.port !== null ? cfg.port : tcp.port;
    const host = cfg.host !== null ? cfg.host : tcp.address;
    // The ticket keys are the server's (TCP's, setTicketKeys): tickets from
    // either side are sealed alike. serveStatic mounts are the TCP
    // server's very object (shared natively), so mounts added before or
    // after listen() answer HTTP/3 requests natively too.
    const ep = new http3.Http3Endpoint(cfg, {
      ...this._h3tls, ticketKeys: this.getTicketKeys(), staticFiles: this[kNative].staticFiles(),
    }, this._streamCallbacks('h3'), null);
    for (const [hostname, ctx] of this._h3contexts) ep.addContext(hostname, ctx);
    // reusePort (given, or by default in a cluster worker) covers the UDP
    // socket too: each worker has its own on the shared port.
    const rr = ep.listen(host, h3port, this._reusePort === true);
    if (rr < 0) {
      const code = binding.errname(rr);
      const err = new Error(`listen ${code}: ${binding.strerror(rr)} ${host}:${h3port} (HTTP/3, UDP)`);
      err.code = code;
      err.errno = rr;
      err.syscall = 'listen';
      process.nextTick(() => this.emit('error', err));
      return;
    }
    this._http3 = ep;
    const bound = ep.address();
    if (cfg.altSvc) {
      this._altSvc = `h3=":${bound.port}"; ma=${cfg.maxAge}`;
      this[kNative].setAltSvc(this._altSvc);  // serveStatic's native answers
    }
  }

  // The HTTP/3 endpoint's address ({ address, port, family }, UDP), or
  // null when HTTP/3 is off or not listening.
  http3Address() { return this._http3 === null ? null : this._http3.address(); }

  close(cb) {
    const ep = this._http3;
    if (ep !== null && this._listening) {
      // GOAWAY to every HTTP/3 connection; 'close' waits for them too.
      this._http3 = null;
      this._altSvc = null;
      this[kNative].setAltSvc('');
      this._h3Closing = ep;
      ep.close(this._h3cfg.closeGrace);
    }
    return super.close(cb);
  }

  // As on TCP, on the HTTP/3 endpoint too, listening or still closing
  // after server.close() (whose grace period this cuts short).
  closeAllConnections() {
    super.closeAllConnections();
    for (const ep of [this._http3, this._h3Closing]) if (ep !== null) ep.closeAllConnections();
  }

  closeIdleConnections() {
    super.closeIdleConnections();
    for (const ep of [this._http3, this._h3Closing]) if (ep !== null) ep.closeIdleConnections();
  }

  _onServerClose() {
    const ep = this._h3Closing;
    if (ep !== null && !ep._closed) {
      ep._onClose = () => {
        this._h3Closing = null;
        super._onServerClose();
      };
      return;
    }
    this._h3Closing = null;
    super._onServerClose();
  }

  // A stream handed to server.emit('connection') would need its TLS
  // handshake run in JS (node's tls.Server does that): not served here; it
  // stays with the 'connection' listeners the app added.
  _serveForeign() {}

  _tlsCallbacks() {
    return {
      onSecure: (conn) => {
        if (this.listenerCount('secureConnection') > 0) {
          this.emit('secureConnection', connState(this, conn).socket);
        }
      },
      onSni: (conn, servername) => this._onSni(conn, servername),
      onTlsClientError: (conn, code, message) => {
        const err = new Error(message);
        err.code = code;
        // node emits it and destroys the socket; the native side closes.
        this.emit('tlsClientError', err, connState(this, conn).socket);
      },
    };
  }

  // The SNICallback (as node's loadSNI): called with the ClientHello's
  // server name while the handshake waits; cb(err) fails the handshake
  // with err ('tlsClientError'), cb(null, context) serves context's
  // certificates, cb(null) the default ones.
  _onSni(conn, servername) {
    const socket = connState(this, conn).socket;
    let once = false;
    this._SNICallback(servername, (err, context) => {
      if (once) {
        socket.destroy(codedError('ERR_MULTIPLE_CALLBACK', 'Callback called multiple times'));
        return;
      }
      once = true;
      // Closed meanwhile (handshakeTimeout, the client left): reported
      // already; the answer is dropped.
      if (socket.destroyed) return;
      const answer = this._sniAnswer(err, context);
      if (answer.err) {
        this.emit('tlsClientError', answer.err, socket);
        conn.destroy();
        return;
      }
      conn.sniDone(answer.native);
    });
  }

  // An SNICallback's answer as { err, native }: the native context to use
  // (null: the default one), or the error when it failed or gave a context
  // that cannot be used.
  _sniAnswer(err, context) {
    if (err || !context) return { err, native: null };
    try {
      return { err: null, native: this._sniNative(context) };
    } catch (e) {
      return { err: e, native: null };
    }
  }

  // The SNICallback for an HTTP/3 handshake (the QUIC endpoint suspends it
  // until the answer, src/core/quic/quic_endpoint.cc). No connection
  // object exists before the handshake: 'tlsClientError' gets a stand-in
  // socket ({ servername, alpnProtocol: 'h3', encrypted }).
  _onH3Sni(ep, id, servername) {
    let once = false;
    this._SNICallback(servername, (err, context) => {
      if (once) return;
      once = true;
      const answer = this._sniAnswer(err, context);
      if (answer.err) {
        ep.sniFail(id);
        this.emit('tlsClientError', answer.err, { servername, alpnProtocol: 'h3', encrypted: true, destroy() {} });
        return;
      }
      ep.sniDone(id, answer.native);
    });
  }

  _sniNative(context) {
    let native = this._sniContexts.get(context);
    if (native === undefined) {
      native = this._nativeContext(context);
      this._sniContexts.set(context, native);
    }
    return native;
  }

  // A native context for `context`: TLS options, a context from
  // sluice.createSecureContext (built from its options) or one of node's
  // tls.createSecureContext (its credentials read from its SSL_CTX). The
  // server's ALPN choice and client-certificate policy always carry over
  // (OpenSSL keeps the first context's verify mode when SNI switches
  // contexts anyway; node's SNI contexts bring their certificates only).
  _nativeContext(context) {
    if (context === null || typeof context !== 'object') {
      throw codedTypeError('ERR_TLS_INVALID_CONTEXT', 'context must be a SecureContext');
    }
    const wide = {};
    for (const k of SERVER_WIDE) if (this._tlsOptions[k] !== undefined) wide[k] = this._tlsOptions[k];
    let opts = contextOptions.get(context);
    if (opts === undefined) {
      const native = nodeNativeOf(context);
      if (native !== null) {
        if (this._wideNative === null) this._wideNative = nativeContextOptions(wide);
        return fromNodeContext(native, this._wideNative);
      }
      checkSupported(context);
      opts = pickContextOptions(context);
    }
    return binding.tlsContext(nativeContextOptions({ ...opts, ...wide }));
  }

  // setSecureContext(context) with a context of node's: its credentials,
  // the server's other options (the options of one made by
  // sluice.createSecureContext are taken as given).
  _setNodeContext(native) {
    const base = { ...this._tlsOptions };
    for (const k of CREDENTIAL_KEYS) delete base[k];
    const ctx = fromNodeContext(native, nativeContextOptions(base));
    this[kNative].setSecureContext(ctx);
    if (this._h3tls !== null) {
      this._h3tls.context = ctx;
      if (this._http3 !== null) this._http3.setSecureContext(ctx);
    }
    this._sniContexts = new WeakMap();
  }

  // Certificate renewal: connections accepted from now on use the new
  // context; open ones keep theirs. Options not given keep their value.
  setSecureContext(options) {
    if (options === null || typeof options !== 'object') {
      throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "options" argument must be of type object');
    }
    const known = contextOptions.get(options);
    if (known !== undefined) {
      options = known;
    } else {
      const native = nodeNativeOf(options);
      if (native !== null) {
        this._setNodeContext(native);
        return;
      }
    }
    checkSupported(options);
    const merged = { ...this._tlsOptions, ...pickContextOptions(options) };
    const native = nativeContextOptions(merged);
    // Ticket keys are the server's (setTicketKeys may have changed them):
    // replaced only when these options name new ones.
    if (options.ticketKeys === undefined) delete native.ticketKeys;
    else validateTicketKeys(options.ticketKeys);
    // HTTP/3 first: a context that does not build throws before TCP
    // changes.
    const h3ctx = this._h3tls === null ? null : binding.tlsContext(native);
    this[kNative].setSecureContext(native);
    if (h3ctx !== null) {
      this._h3tls.context = h3ctx;
      if (this._http3 !== null) this._http3.setSecureContext(h3ctx);
      if (options.ticketKeys !== undefined && this._http3 !== null) this._http3.setTicketKeys(this.getTicketKeys());
    }
    this._tlsOptions = merged;
    this._sniContexts = new WeakMap();
    this._wideNative = null;
  }

  // Session ticket keys (48 bytes, node's layout and ticket format: a
  // node server given the same keys and sessionIdContext resumes sluice's
  // tickets and the other way round).
  getTicketKeys() { return this[kNative].ticketKeys(); }

  setTicketKeys(keys) {
    validateTicketKeys(keys);
    const buf = Buffer.from(keys.buffer, keys.byteOffset, keys.byteLength);
    this[kNative].setTicketKeys(buf);
    if (this._http3 !== null) this._http3.setTicketKeys(buf);
  }

  // SNI: a ClientHello naming `hostname` ('*' matches one label) gets
  // `context`'s certificate, on TCP and HTTP/3 alike (contexts added while
  // listening apply to new handshakes).
  addContext(hostname, context) {
    if (typeof hostname !== 'string') {
      throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "servername" argument must be of type string');
    }
    if (context === null || typeof context !== 'object') {
      throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "context" argument must be of type object');
    }
    const native = this._nativeContext(context);
    this[kNative].addContext(hostname, native);
    if (this._h3tls !== null) {
      this._h3contexts.push([hostname, native]);
      if (this._http3 !== null) this._http3.addContext(hostname, native);
    }
  }
}

function createSecureServer(options, requestListener) {
  return new SecureServer(options, requestListener);
}

// node's https.Server does not inherit http.Server: tracers patch
// https.Server.prototype.emit for it (OpenTelemetry's 'https' component).
// A TLS server's emit is that one, read at each call, so such a patch
// reaches sluice's TLS servers as node's; assigning server.emit (Sentry
// wraps the instance's) gives the instance its own, as on node.
const https = require('https');

Object.defineProperty(SecureServer.prototype, 'emit', {
  configurable: true,
  enumerable: false,
  get() { return https.Server.prototype.emit; },
  set(fn) {
    Object.defineProperty(this, 'emit', { value: fn, writable: true, configurable: true, enumerable: true });
  },
});

module.exports = { SecureServer, createSecureServer, createSecureContext };
