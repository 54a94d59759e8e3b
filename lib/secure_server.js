'use strict';

// createSecureServer: the same Server over TLS (src/core/net/tls_*): one
// port serves "h2" and "http/1.1" chosen by ALPN, with node's TLS options,
// events and certificate rotation (docs/tls.md).

const tls = require('tls');
const { Server } = require('./server');
const { connState } = require('./http1_server');
const { kNative } = require('./symbols');
const { codedError, codedTypeError } = require('./errors');
const { nativeContextOptions, pickContextOptions, checkSupported } = require('./tls_options');

// Contexts made by sluice.createSecureContext: their options, so that
// addContext can build the native context node's SecureContext hides.
const contextOptions = new WeakMap();

function createSecureContext(options = {}) {
  checkSupported(options);
  const ctx = tls.createSecureContext(options);
  contextOptions.set(ctx, pickContextOptions(options));
  return ctx;
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
    const allowHTTP1 = options.allowHTTP1 !== false;
    const handshakeTimeout = validateTimeout(options.handshakeTimeout);
    const native = nativeContextOptions({ ...options, allowHTTP1 });
    super(options, requestListener);
    this._tlsOptions = pickContextOptions({ ...options, allowHTTP1 });
    this.allowHTTP1 = allowHTTP1;
    this[kNative].setTls(native, { handshakeTimeout, allowHTTP1 });
  }

  _tlsCallbacks() {
    return {
      onSecure: (conn) => {
        if (this.listenerCount('secureConnection') > 0) {
          this.emit('secureConnection', connState(this, conn).socket);
        }
      },
      onTlsClientError: (conn, code, message) => {
        const err = new Error(message);
        err.code = code;
        // node emits it and destroys the socket; the native side closes.
        this.emit('tlsClientError', err, connState(this, conn).socket);
      },
    };
  }

  // Certificate renewal: connections accepted from now on use the new
  // context; open ones keep theirs. Options not given keep their value.
  setSecureContext(options) {
    if (options === null || typeof options !== 'object') {
      throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "options" argument must be of type object');
    }
    checkSupported(options);
    const merged = { ...this._tlsOptions, ...pickContextOptions(options) };
    this[kNative].setSecureContext(nativeContextOptions(merged));
    this._tlsOptions = merged;
  }

  // SNI: a ClientHello naming `hostname` ('*' matches one label) gets
  // `context`: TLS options, or a context from sluice.createSecureContext.
  addContext(hostname, context) {
    if (typeof hostname !== 'string') {
      throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "servername" argument must be of type string');
    }
    let opts;
    if (context instanceof tls.SecureContext) {
      opts = contextOptions.get(context);
      if (opts === undefined) {
        throw codedError('ERR_SLUICE_TLS_CONTEXT',
          'addContext takes TLS options or a context made by sluice.createSecureContext() ' +
          '(node keeps the certificates of tls.createSecureContext() out of reach)');
      }
    } else if (context !== null && typeof context === 'object') {
      checkSupported(context);
      opts = pickContextOptions(context);
    } else {
      throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "context" argument must be of type object');
    }
    const wide = {};
    for (const k of SERVER_WIDE) if (this._tlsOptions[k] !== undefined) wide[k] = this._tlsOptions[k];
    this[kNative].addContext(hostname, nativeContextOptions({ ...opts, ...wide }));
  }
}

function createSecureServer(options, requestListener) {
  return new SecureServer(options, requestListener);
}

module.exports = { SecureServer, createSecureServer, createSecureContext };
