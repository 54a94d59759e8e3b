'use strict';

// HTTP/3 beside a secure server's TCP port: a native QUIC endpoint
// (src/core/quic, src/core/http3) on a UDP socket of the same port number,
// with the same certificate. Its request streams reach the server's
// 'stream' and 'request' handlers through the callbacks HTTP/2 uses
// (server/ hands them in: protocol folders do not require each other), so
// ServerHttp2Stream and the compat req/res serve HTTP/3 unchanged; the
// native session object has the same stream methods as HTTP/2's (one
// table, src/binding/js_stream_session.h) and says its `protocol` ('h3').

const binding = require('../common/binding');
const { codedError, codedTypeError } = require('../common/errors');

// sluice.features.http3 and why not.
const available = binding.http3 !== undefined && binding.http3.available === true;
const reason = available ? null :
  (binding.http3 !== undefined ? binding.http3.reason : 'this build of sluice has no HTTP/3');

// The `http3` option of createSecureServer: false/undefined (off), true,
// or { port, host, altSvc, maxAge, maxConnections, maxStreams,
// idleTimeout, closeGrace, addressValidation, maxHandshakes,
// maxConnectionsPerAddress }. Returns null when off.
function normalize(opt) {
  if (opt === undefined || opt === null || opt === false) return null;
  if (opt === true) opt = {};
  if (typeof opt !== 'object') {
    throw codedTypeError('ERR_INVALID_ARG_TYPE',
      'The "options.http3" property must be a boolean or an object');
  }
  if (!available) {
    throw codedError('ERR_SLUICE_HTTP3_UNAVAILABLE', `HTTP/3 is not available: ${reason}`);
  }
  const num = (name, dflt, min) => {
    const v = opt[name];
    if (v === undefined) return dflt;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min) {
      throw codedTypeError('ERR_INVALID_ARG_VALUE',
        `The "options.http3.${name}" property must be a number >= ${min}`);
    }
    return Math.floor(v);
  };
  const port = opt.port === undefined ? null : num('port', 0, 0);
  if (port !== null && port > 65535) {
    throw codedTypeError('ERR_SOCKET_BAD_PORT', 'options.http3.port must be >= 0 and < 65536');
  }
  return {
    port,                                  // null: the TCP port's number
    host: opt.host === undefined ? null : String(opt.host),
    altSvc: opt.altSvc !== false,          // Alt-Svc on HTTP/1.1 and HTTP/2 responses
    maxAge: num('maxAge', 86400, 0),
    maxConnections: num('maxConnections', 10000, 1),
    maxStreams: num('maxStreams', 100, 1),
    idleTimeout: num('idleTimeout', 30000, 0),
    closeGrace: num('closeGrace', 5000, 0),
    noAddressValidation: opt.addressValidation === false,
    // Handshakes in progress at once (0: no bound), and connections from
    // one IP address (0: no bound).
    maxHandshakes: num('maxHandshakes', 1000, 0),
    maxConnectionsPerAddress: num('maxConnectionsPerAddress', 0, 0),
    // false: no GSO sends (a device that mishandles UDP segmentation
    // offload; measuring what GSO saves).
    noGso: opt.gso === false,
  };
}

// One listening HTTP/3 endpoint. `callbacks`: the server's stream
// callbacks for HTTP/3 (lib/http2/session.js callbacks(server, 'h3')).
class Http3Endpoint {
  // tls: { keys, certs, passphrase, maxHeaderSize, context (the default
  // native context, shared with TCP), ticketKeys, onSni(endpoint, id,
  // servername) (the SNICallback: answered with sniDone / sniFail),
  // staticFiles (the TCP server's serveStatic mounts: NativeServer's
  // staticFiles()), handshakeTimeout (ms, the server's),
  // onHandshakeTimeout(peer) (a handshake cut by it; peer: [ip, port,
  // family] or undefined) }.
  constructor(cfg, tls, callbacks, onClose) {
    this._closed = false;
    this._onClose = onClose;
    const onSni = tls.onSni || null;
    const onHandshakeTimeout = tls.onHandshakeTimeout || (() => {});
    this._callbacks = {
      ...callbacks,
      onSni: (id, servername) => onSni(this, id, servername),
      onHandshakeTimeout,
      onEndpointClose: () => {
        this._closed = true;
        const cb = this._onClose;
        this._onClose = null;
        if (cb) cb();
      },
    };
    this._native = new binding.NativeHttp3Endpoint(this._callbacks, {
      key: tls.keys,
      cert: tls.certs,
      passphrase: tls.passphrase,
      context: tls.context,
      sniCallback: onSni !== null,
      ticketKeys: tls.ticketKeys,
      maxConnections: cfg.maxConnections,
      maxStreams: cfg.maxStreams,
      idleTimeout: cfg.idleTimeout,
      maxHeaderSize: tls.maxHeaderSize,
      noAddressValidation: cfg.noAddressValidation,
      handshakeTimeout: tls.handshakeTimeout,
      maxHandshakes: cfg.maxHandshakes,
      maxConnectionsPerAddress: cfg.maxConnectionsPerAddress,
      noGso: cfg.noGso,
      // Request bodies read into requestBufferAllocator memory; a stream
      // (a connection) with this many unreleased bytes is not read on.
      bodyAllocator: tls.bodyAllocator,
      bodyStreamLimit: tls.bodyStreamLimit,
      bodyConnectionLimit: tls.bodyConnectionLimit,
      // serveStatic: bodiless GET / HEAD requests under a mount are
      // answered by the native session, never reaching the callbacks.
      staticFiles: tls.staticFiles,
    });
  }

  // 0 or a negative errno. reusePort: SO_REUSEPORT on the UDP socket, as
  // the TCP listener's (cluster workers: one socket each on the port).
  listen(host, port, reusePort) { return this._native.listen(host, port, reusePort === true); }

  // { address, port, family } as net's.
  address() {
    const a = this._native.address();
    if (a === undefined) return null;
    return { address: a[0], port: a[1], family: a[2] === 6 ? 'IPv6' : 'IPv4' };
  }

  connections() { return this._native.connections(); }

  // Connections whose handshake is in progress (options.http3.maxHandshakes).
  handshakes() { return this._native.connections('handshakes'); }

  // Sends that carried several datagrams as one GSO send (Linux).
  gsoSends() { return this._native.connections('gso'); }

  // Reads that carried several datagrams coalesced by the kernel (UDP_GRO, Linux).
  groReads() { return this._native.connections('gro'); }
  // The endpoint's native counters, shaped as the TCP server's
  // (lib/observe/metrics.js adds them up), or null once it is gone.
  metrics() { return this._native.metrics(); }

  close(graceMs) { if (!this._closed) this._native.close(graceMs); }

  destroy() { if (!this._closed) this._native.destroy(); }

  // server.closeAllConnections() / closeIdleConnections(): every
  // connection, or those with no request in flight, closed now
  // (CONNECTION_CLOSE, H3_NO_ERROR).
  closeAllConnections() { if (!this._closed) this._native.closeAllConnections(); }

  closeIdleConnections() { if (!this._closed) this._native.closeIdleConnections(); }

  // Certificates for new handshakes (open connections keep theirs), as
  // the TCP listener's: native contexts (binding.tlsContext).
  setSecureContext(context) { if (!this._closed) this._native.setSecureContext(context); }

  addContext(hostname, context) { if (!this._closed) this._native.addContext(hostname, context); }

  setTicketKeys(keys) { if (!this._closed) this._native.setTicketKeys(keys); }

  // The SNICallback's answer for handshake `id`: a native context or null
  // (the default certificate); sniFail fails the handshake.
  sniDone(id, context) { if (!this._closed) this._native.sniDone(id, context); }

  sniFail(id) { if (!this._closed) this._native.sniFail(id); }

  ref() { this._native.ref(); }

  unref() { this._native.unref(); }
}

module.exports = { Http3Endpoint, normalize, available, reason };
