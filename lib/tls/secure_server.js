'use strict';

// createSecureServer: the same Server over TLS (src/core/net/tls_*): one
// port serves "h2" and "http/1.1" chosen by ALPN, with node's TLS options,
// events and certificate rotation (docs/tls.md).

const tls = require('tls');
const binding = require('../common/binding');
const { Server } = require('../server/server');
const { connState } = require('../net/connection_state');
const { kNative } = require('../common/symbols');
const { codedError, codedTypeError, codedRangeError } = require('../common/errors');
const { nativeContextOptions, pickContextOptions, checkSupported } = require('./tls_options');

// Contexts made by sluice.createSecureContext: their options, so that
// addContext / SNICallback build the native context from the same bytes.
const contextOptions = new WeakMap();

// node's native SecureContext (tls.SecureContext#context, which node's
// SNICallback also accepts): refused like its wrapper, not taken for
// options.
let NativeSecureContext = null;
function isNativeSecureContext(o) {
  if (NativeSecureContext === null) NativeSecureContext = tls.createSecureContext().context.constructor;
  return o instanceof NativeSecureContext;
}

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
      throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "options" argument must be of type object');
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
    super(options, requestListener);
    this._tlsOptions = pickContextOptions({ ...options, allowHTTP1 });
    this.allowHTTP1 = allowHTTP1;
    this._SNICallback = sni === undefined ? null : sni;
    // Native contexts of the SecureContexts an SNICallback answered with,
    // built once each (they carry this server's ALPN and client policy).
    this._sniContexts = new WeakMap();
    this[kNative].setTls(native, { handshakeTimeout, allowHTTP1, sniCallback: sni !== undefined });
  }

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
      let native = null;
      if (!err && context) {
        try {
          native = this._sniNative(context);
        } catch (e) {
          err = e;
        }
      }
      if (err) {
        this.emit('tlsClientError', err, socket);
        conn.destroy();
        return;
      }
      conn.sniDone(native);
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

  // A native context for `context`: TLS options, or a context from
  // sluice.createSecureContext (built from its options). The server's ALPN
  // choice and client-certificate policy always carry over (OpenSSL keeps
  // the first context's verify mode when SNI switches contexts anyway).
  // node's own tls.createSecureContext() results are refused: their
  // SSL_CTX is out of an addon's reach (docs/tls.md).
  _nativeContext(context) {
    if (context === null || typeof context !== 'object') {
      throw codedTypeError('ERR_TLS_INVALID_CONTEXT', 'context must be a SecureContext');
    }
    let opts = contextOptions.get(context);
    if (opts === undefined) {
      if (context instanceof tls.SecureContext || isNativeSecureContext(context)) {
        throw codedError('ERR_SLUICE_TLS_CONTEXT',
          'sluice takes TLS options or a context made by sluice.createSecureContext() ' +
          '(node keeps the certificates of tls.createSecureContext() out of reach)');
      }
      checkSupported(context);
      opts = pickContextOptions(context);
    }
    const wide = {};
    for (const k of SERVER_WIDE) if (this._tlsOptions[k] !== undefined) wide[k] = this._tlsOptions[k];
    return binding.tlsContext(nativeContextOptions({ ...opts, ...wide }));
  }

  // Certificate renewal: connections accepted from now on use the new
  // context; open ones keep theirs. Options not given keep their value.
  setSecureContext(options) {
    if (options === null || typeof options !== 'object') {
      throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "options" argument must be of type object');
    }
    checkSupported(options);
    const merged = { ...this._tlsOptions, ...pickContextOptions(options) };
    const native = nativeContextOptions(merged);
    // Ticket keys are the server's (setTicketKeys may have changed them):
    // replaced only when these options name new ones.
    if (options.ticketKeys === undefined) delete native.ticketKeys;
    else validateTicketKeys(options.ticketKeys);
    this[kNative].setSecureContext(native);
    this._tlsOptions = merged;
    this._sniContexts = new WeakMap();
  }

  // Session ticket keys (48 bytes, node's layout and ticket format: a
  // node server given the same keys and sessionIdContext resumes sluice's
  // tickets and the other way round).
  getTicketKeys() { return this[kNative].ticketKeys(); }

  setTicketKeys(keys) {
    validateTicketKeys(keys);
    this[kNative].setTicketKeys(Buffer.from(keys.buffer, keys.byteOffset, keys.byteLength));
  }

  // SNI: a ClientHello naming `hostname` ('*' matches one label) gets
X
  addContext(hostname, context) {
    if (typeof hostname !== 'string') {
      throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "servername" argument must be of type string');
    }
    if (context === null || typeof context !== 'object') {
      throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "context" argument must be of type object');
    }
    this[kNative].addContext(hostname, this._nativeContext(context));
  }
}

function createSecureServer(options, requestListener) {
  return new SecureServer(options, requestListener);
}

module.exports = { SecureServer, createSecureServer, createSecureContext };
