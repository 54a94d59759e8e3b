'use strict';

// node's TLS options (https.createServer / http2.createSecureServer /
// tls.createSecureContext) turned into the plain object the native
// context builder reads (src/binding/js_tls.cc).
//
// Validation is node's own: every option set first goes through
// tls.createSecureContext, so bad keys, certificates, ciphers or versions
// throw exactly node's errors (ERR_OSSL_*, ERR_INVALID_ARG_TYPE...). The
// native SSL_CTX is then built from the same bytes: node keeps its
// SSL_CTX out of addons' reach (docs/tls.md, "Why sluice builds its own
// SSL_CTX").

const tls = require('tls');
const crypto = require('crypto');
const { codedTypeError, codedError } = require('../common/errors');

// TLS protocol versions as OpenSSL numbers (TLS1_x_VERSION).
const VERSIONS = { 'TLSv1': 0x0301, 'TLSv1.1': 0x0302, 'TLSv1.2': 0x0303, 'TLSv1.3': 0x0304 };

// The ALPN sets the core knows (src/core/net/tls_context.h AlpnSet).
const ALPN_SETS = [['h2', 'http/1.1'], ['h2'], ['http/1.1'], ['http/1.1', 'h2']];

function asList(v) {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

function pemOf(v) {
  return typeof v === 'string' ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('latin1');
}

// Private keys as unencrypted PEM: an encrypted key ({ pem, passphrase }
// or options.passphrase) is decrypted by node's crypto, so the native side
// never handles passphrases for PEM keys.
function keysOf(options) {
  return asList(options.key).map((k) => {
    let key = k;
    let passphrase = options.passphrase;
    if (k !== null && typeof k === 'object' && !ArrayBuffer.isView(k)) {
      key = k.pem;
      if (k.passphrase !== undefined) passphrase = k.passphrase;
    }
    if (/ENCRYPTED/.test(pemOf(key))) {
      return crypto.createPrivateKey({ key, passphrase, format: 'pem' })
        .export({ type: 'pkcs8', format: 'pem' });
    }
    return pemOf(key);
  });
}

function pfxOf(options) {
  const list = asList(options.pfx);
  if (list.length === 0) return {};
  if (list.length > 1) {
    throw codedError('ERR_SLUICE_TLS_CONTEXT', 'sluice takes one pfx bundle per context');
  }
  const p = list[0];
  if (p !== null && typeof p === 'object' && !ArrayBuffer.isView(p)) {
    return { pfx: Buffer.from(p.buf), passphrase: p.passphrase !== undefined ? p.passphrase : options.passphrase };
  }
  return { pfx: Buffer.from(p), passphrase: options.passphrase };
}

// ALPNProtocols (array of strings, Buffer in wire format) or allowHTTP1.
function alpnSetOf(options) {
  let list;
  if (options.ALPNProtocols !== undefined) {
    const a = options.ALPNProtocols;
    if (Array.isArray(a)) {
      list = a.map(String);
    } else if (ArrayBuffer.isView(a)) {
      list = [];
      const b = Buffer.from(a.buffer, a.byteOffset, a.byteLength);
      for (let i = 0; i < b.length; i += 1 + b[i]) list.push(b.toString('latin1', i + 1, i + 1 + b[i]));
    } else {
      throw codedTypeError('ERR_INVALID_ARG_TYPE',
        'The "options.ALPNProtocols" property must be an Array or a Buffer');
    }
    // Only what sluice speaks can be offered.
    list = list.filter((p) => p === 'h2' || p === 'http/1.1');
    if (options.allowHTTP1 === false) list = list.filter((p) => p !== 'http/1.1');
    if (list.length === 0) {
      throw codedError('ERR_SLUICE_TLS_CONTEXT',
        'options.ALPNProtocols must name "h2" or "http/1.1" (the protocols sluice serves)');
    }
  } else {
    list = options.allowHTTP1 === false ? ['h2'] : ['h2', 'http/1.1'];
  }
  const key = list.join(',');
  const i = ALPN_SETS.findIndex((s) => s.join(',') === key);
  return i >= 0 ? i : 0;
}

function version(name, v, def) {
  if (v === undefined) return VERSIONS[def];
  if (!(v in VERSIONS)) {
    throw codedTypeError('ERR_TLS_INVALID_PROTOCOL_VERSION', `${v} is not a valid ${name} TLS protocol version`);
  }
  return VERSIONS[v];
}

// secureProtocol (an OpenSSL method name): the versions node's own
// context chose for it (node maps the names; sluice reads the result back
// from node's context, so the table is node's). A client method cannot
// serve: node would fail every handshake, sluice refuses it up front.
function protocolRange(options, nodeCtx) {
  const p = options.secureProtocol;
  if (/_client_method$/.test(p)) {
    throw codedTypeError('ERR_TLS_INVALID_PROTOCOL_METHOD', `${p} is a client method; a server needs a server one`);
  }
  const native = nodeCtx.context;
  if (typeof native.getMinProto !== 'function') {
    throw codedError('ERR_SLUICE_TLS_UNSUPPORTED', 'secureProtocol needs node\'s SecureContext#getMinProto');
  }
  return { min: native.getMinProto(), max: native.getMaxProto() };
}

function crlsOf(options) {
  return asList(options.crl).map(pemOf);
}

// The native context options for `options` (validated by node first).
function nativeContextOptions(options) {
  const nodeCtx = tls.createSecureContext(options);  // throws node's errors
  const range = options.secureProtocol !== undefined ? protocolRange(options, nodeCtx) : {
    min: version('minVersion', options.minVersion, tls.DEFAULT_MIN_VERSION),
    max: version('maxVersion', options.maxVersion, tls.DEFAULT_MAX_VERSION),
  };
  const { pfx, passphrase } = pfxOf(options);
  let cas = asList(options.ca).map(pemOf);
  if (cas.length === 0 && options.requestCert) {
    // As node: without `ca`, client certificates verify against node's
    // bundled roots.
    cas = tls.rootCertificates.slice();
  }
  return {
    keys: keysOf(options),
    certs: asList(options.cert).map(pemOf),
    cas,
    pfx,
    passphrase: typeof passphrase === 'string' ? passphrase : '',
    ciphers: options.ciphers || tls.DEFAULT_CIPHERS,
    ecdhCurve: options.ecdhCurve || tls.DEFAULT_ECDH_CURVE,
    sigalgs: options.sigalgs || '',
    minVersion: range.min,
    maxVersion: range.max,
    secureOptions: options.secureOptions === undefined ? 0 : options.secureOptions,
    dhparam: options.dhparam === undefined ? '' : (typeof options.dhparam === 'string' ? options.dhparam : pemOf(options.dhparam)),
    crls: crlsOf(options),
    sessionIdContext: options.sessionIdContext === undefined ? '' : String(options.sessionIdContext),
    honorCipherOrder: !!options.honorCipherOrder,
    requestCert: !!options.requestCert,
    rejectUnauthorized: options.rejectUnauthorized !== false,
    sessionTimeout: options.sessionTimeout === undefined ? 300 : options.sessionTimeout,
    ticketKeys: options.ticketKeys === undefined ? undefined
      : Buffer.from(options.ticketKeys.buffer, options.ticketKeys.byteOffset, options.ticketKeys.byteLength),
    alpn: alpnSetOf(options),
  };
}

// The TLS option names a context takes (setSecureContext merges these).
const CONTEXT_KEYS = ['key', 'cert', 'ca', 'pfx', 'passphrase', 'ciphers', 'ecdhCurve',
  'sigalgs', 'minVersion', 'maxVersion', 'honorCipherOrder', 'requestCert',
  'rejectUnauthorized', 'sessionTimeout', 'ticketKeys', 'ALPNProtocols', 'allowHTTP1',
  'crl', 'dhparam', 'secureOptions', 'secureProtocol', 'sessionIdContext',
  'privateKeyEngine', 'privateKeyIdentifier', 'clientCertEngine'];

function pickContextOptions(options) {
  const out = {};
  for (const k of CONTEXT_KEYS) if (options[k] !== undefined) out[k] = options[k];
  return out;
}

// Options sluice cannot honour with its own SSL_CTX: refused rather than
// ignored (docs/tls.md lists them).
const UNSUPPORTED = ['privateKeyEngine', 'privateKeyIdentifier', 'clientCertEngine',
  'pskCallback', 'enableTrace'];

function checkSupported(options) {
  for (const k of UNSUPPORTED) {
    if (options[k] !== undefined) {
      throw codedError('ERR_SLUICE_TLS_UNSUPPORTED', `sluice does not support the TLS option "${k}" (docs/tls.md)`);
    }
  }
}

module.exports = { nativeContextOptions, pickContextOptions, checkSupported };
