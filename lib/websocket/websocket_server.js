'use strict';

// WebSocketServer: ws's server API (ws 8) over sluice's native
// WebSockets. The handshake is decided here, once per connection (it is
// rare): the checks and events of ws's handleUpgrade, then the connection
// switches natively to a WebSocketSession (conn.wsAccept) and every frame
// after that is parsed and written in C++. Pub/sub (publish, subscribers)
// goes to a native hub: a published message is framed once and queued on
// every subscriber's connection without JS per subscriber; the pub/sub bus
// (./pubsub/) carries it to the other processes serving the port, or
// through Redis, whose hubs do the same.
// HTTP/2 (RFC 8441 extended CONNECT) comes through http2_accept.js to
// _handleHttp2: the same checks, HTTP/2's answers.

const { EventEmitter } = require('events');
const { createHash } = require('crypto');
const { STATUS_CODES } = require('http');

const binding = require('../common/binding');
const { codedError, codedTypeError } = require('../common/errors');
const { kConn, kConnState } = require('../common/symbols');
const { WebSocket, kConn: kWsConn } = require('./websocket');
const { kWebSocket } = require('./native_events');
const permessageDeflate = require('./permessage_deflate');
const http2Accept = require('./http2_accept');
const { Bus } = require('./pubsub/bus');
const { MachineAdapter } = require('./pubsub/machine_adapter');

const { WS_OPCODE_TEXT, WS_OPCODE_BINARY } = binding.constants;

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const keyRegex = /^[+/0-9A-Za-z]{22}==$/;
const tokenRegex = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

const RUNNING = 0;
const CLOSING = 1;
const CLOSED = 2;

// Set by lib/index.js: the server a { port } WebSocketServer creates
// (websocket/ requires no server module: the server composes protocols).
let serverFactory = null;
function setServerFactory(fn) { serverFactory = fn; }

// Sec-WebSocket-Protocol: comma-separated tokens, no duplicates (as ws's
// subprotocol.parse); throws SyntaxError on anything else.
function parseProtocols(header) {
  const protocols = new Set();
  for (const part of header.split(',')) {
    const p = part.trim();
    if (!tokenRegex.test(p) || protocols.has(p)) {
      throw new SyntaxError(`Invalid Sec-WebSocket-Protocol header`);
    }
    protocols.add(p);
  }
  return protocols;
}

function socketOnError() {
  this.destroy();
}

// ws's abortHandshake: an HTTP answer on the raw socket, then close.
function abortHandshake(socket, code, message, headers) {
  message = message || STATUS_CODES[code];
  const all = {
    Connection: 'close',
    'Content-Type': 'text/html',
    'Content-Length': Buffer.byteLength(message),
    ...headers,
  };
  socket.once('finish', socket.destroy);
  socket.end(
    `HTTP/1.1 ${code} ${STATUS_CODES[code]}\r\n` +
    Object.keys(all).map((h) => `${h}: ${all[h]}`).join('\r\n') +
    '\r\n\r\n' + message);
}

function abortOrClientError(server, req, socket, code, message, headers) {
  if (server.listenerCount('wsClientError') > 0) {
    const err = new Error(message);
    Error.captureStackTrace(err, abortOrClientError);
    server.emit('wsClientError', err, socket, req);
  } else {
    abortHandshake(socket, code, message, headers);
  }
}

class WebSocketServer extends EventEmitter {
  constructor(options, callback) {
    super();
    options = {
      allowSynchronousEvents: true,
      autoPong: true,
      maxFragments: 16 * 1024,
      maxPayload: 100 * 1024 * 1024,
      maxPendingAutoPongs: 60,
      skipUTF8Validation: false,
      perMessageDeflate: false,
      handleProtocols: null,
      clientTracking: true,
      closeTimeout: 30000,
      idleTimeout: 0,
      http2: true,
      maxBackpressure: 0,
      verifyClient: null,
      noServer: false,
      pubsub: undefined,
      backlog: null,
      server: null,
      host: null,
      path: null,
      port: null,
      ...options,
    };
    if ((options.port == null && !options.server && !options.noServer) ||
        (options.port != null && (options.server || options.noServer)) ||
        (options.server && options.noServer)) {
      throw new TypeError('One and only one of the "port", "server", or "noServer" options must be specified');
    }
    this.options = options;
    this._state = RUNNING;
    const pmd = options.perMessageDeflate;
    if (pmd && pmd.sharedCompressor && pmd.serverNoContextTakeover === false) {
      throw new TypeError('perMessageDeflate.sharedCompressor needs server_no_context_takeover: ' +
        'serverNoContextTakeover cannot be false');
    }
    // With perMessageDeflate.sharedCompressor the hub deflates a published
    // message once for every deflate subscriber.
    this._hub = new binding.NativeWsHub(pmd ? permessageDeflate.sharedConfig(pmd) : undefined);
    // What wsAccept reads, once per server.
    this._config = {
      maxPayload: options.maxPayload,
      skipUTF8Validation: !!options.skipUTF8Validation,
      autoPong: options.autoPong !== false,
      maxPendingAutoPongs: options.maxPendingAutoPongs | 0,
      maxFragments: options.maxFragments | 0,
      idleTimeout: options.idleTimeout,
      closeTimeout: options.closeTimeout,
      maxBackpressure: options.maxBackpressure,
    };
    if (options.port != null) {
      if (serverFactory === null) throw codedError('ERR_SLUICE_WS_NO_SERVER', 'No server factory');
      this._server = serverFactory((req, res) => {
        const body = STATUS_CODES[426];
        res.writeHead(426, { 'Content-Length': body.length, 'Content-Type': 'text/plain' });
        res.end(body);
      });
      this._server.listen(options.port, options.host, options.backlog, callback);
    } else if (options.server) {
      this._server = options.server;
    } else {
      this._server = null;
    }
    if (this._server !== null) {
      const onListening = () => this.emit('listening');
      const onError = (err) => this.emit('error', err);
      const onUpgrade = (req, socket, head) => {
        this.handleUpgrade(req, socket, head, (ws) => this.emit('connection', ws, req));
      };
      this._server.on('listening', onListening);
      this._server.on('error', onError);
      this._server.on('upgrade', onUpgrade);
      // WebSockets on the server's HTTP/2 sessions too (RFC 8441), unless
      // options.http2 is false.
      if (options.http2 !== false) http2Accept.attach(this._server, this);
      this._removeListeners = () => {
        this._server.removeListener('listening', onListening);
        this._server.removeListener('error', onError);
        this._server.removeListener('upgrade', onUpgrade);
        http2Accept.detach(this._server, this);
      };
    }
    if (options.clientTracking) {
      this.clients = new Set();
      this._shouldEmitClose = false;
    }
    this._bus = null;
    this._startBus(options.pubsub);
  }

  // The pub/sub bus (lib/websocket/pubsub/bus.js): by default the machine
  // adapter among the processes serving the same port, started once the
  // port is known; `pubsub: false` none; an adapter object that one.
  _startBus(pubsub) {
    if (pubsub === false || pubsub === null) return;
    if (pubsub !== undefined && (typeof pubsub !== 'object' || typeof pubsub.attach !== 'function' ||
        typeof pubsub.publish !== 'function' || typeof pubsub.subscribe !== 'function' ||
        typeof pubsub.unsubscribe !== 'function' || typeof pubsub.close !== 'function')) {
      throw codedTypeError('ERR_SLUICE_PUBSUB_ADAPTER',
        'options.pubsub must be false or an adapter (attach, subscribe, unsubscribe, publish, close)');
    }
    if (pubsub === undefined && this._server === null) return;  // noServer: no port to share
    const bus = new Bus(this, this._hub, pubsub || new MachineAdapter(),
      { text: WS_OPCODE_TEXT, binary: WS_OPCODE_BINARY });
    this._bus = bus;
    const path = this.options.path || '';
    const server = this._server;
    if (server === null) {
      bus.start({ port: null, path });
      return;
    }
    const start = () => {
      const a = server.address();
      bus.start({ port: typeof a === 'string' ? a : a && a.port, path });
    };
    const stop = () => bus.close();
    if (server.listening) start();
    else server.once('listening', start);
    server.once('close', stop);
    this._stopBus = () => {
      server.removeListener('listening', start);
      server.removeListener('close', stop);
      bus.close();
    };
  }

  // The bus' counters: published (messages handed to it), received (from
  // other processes), dropped (not carried: engine down, peer too slow),
  // topics (listened to on the bus); null without a bus.
  pubsubStats() {
    return this._bus === null ? null : this._bus.stats();
  }

  address() {
    if (this.options.noServer) throw new Error('The server is operating in "noServer" mode');
    if (!this._server) return null;
    return this._server.address();
  }

  // As ws 8: stops accepting; open connections stay (terminate them to
  // close them); 'close' once the server and every tracked client closed.
  close(cb) {
    if (typeof cb === 'function') this.once('close', cb);
    if (this._state === CLOSED) {
      process.nextTick(() => this._emitClose());
      return;
    }
    if (this._state === CLOSING) return;
    this._state = CLOSING;
    if (this._bus !== null) {
      if (this._stopBus) this._stopBus();
      else this._bus.close();
    }
    if (this.options.noServer || this.options.server) {
      if (this._server) {
        this._removeListeners();
        this._removeListeners = this._server = null;
      }
      if (this.clients && this.clients.size > 0) {
        this._shouldEmitClose = true;
      } else {
        process.nextTick(() => this._emitClose());
      }
    } else {
      const server = this._server;
      this._removeListeners();
      this._removeListeners = this._server = null;
      server.close(() => this._emitClose());
    }
  }

  _emitClose() {
    this._state = CLOSED;
    this.emit('close');
  }

  shouldHandle(req) {
    if (this.options.path) {
      const index = req.url.indexOf('?');
      const pathname = index !== -1 ? req.url.slice(0, index) : req.url;
      if (pathname !== this.options.path) return false;
    }
    return true;
  }

  // ---- pub/sub (beyond ws) ---------------------------------------------------
  // To every subscriber of `topic`; -> how many it was queued for.
  publish(topic, data, options) {
    if (typeof data === 'number') data = data.toString();
    if (ArrayBuffer.isView(data) && !Buffer.isBuffer(data)) {
      data = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    } else if (data instanceof ArrayBuffer) {
      data = Buffer.from(data);
    } else if (typeof data !== 'string' && !Buffer.isBuffer(data)) {
      data = String(data);
    }
    const binary = options && options.binary !== undefined ? !!options.binary : typeof data !== 'string';
    // compress: false keeps it plain for every subscriber (as send's).
    const compress = !(options && options.compress === false);
    topic = String(topic);
    const opcode = binary ? WS_OPCODE_BINARY : WS_OPCODE_TEXT;
    const n = this._hub.publish(topic, data, opcode, compress);
    if (this._bus !== null) this._bus.publish(topic, data, opcode, compress);
    return n;
  }

  // Local subscribers only (this process): a count across processes would
  // cost a round trip to every one of them.
  subscribers(topic) {
    return this._hub.subscribers(String(topic));
  }

  handleUpgrade(req, socket, head, cb) {
    // Over HTTP/2: the compat request of an extended CONNECT (RFC 8441)
    // that reached the app's 'request' listener; socket and head are not
    // used (the stream is the WebSocket's, the session goes on).
    if (req != null && req.httpVersionMajor === 2) {
      const stream = http2Accept.takeCompat(req);
      if (stream === null) return;
      if (stream !== undefined) {
        this._handleUpgradeHttp2(stream, req, cb);
        return;
      }
    }
    const conn = socket != null ? socket[kConn] : undefined;
    if (conn === undefined || typeof conn.wsAccept !== 'function' ||
        typeof socket._takeOver !== 'function') {
      throw codedTypeError('ERR_SLUICE_WS_SOCKET',
        'handleUpgrade() needs the socket of a sluice server\'s \'upgrade\' event');
    }
    socket.on('error', socketOnError);
    const key = req.headers['sec-websocket-key'];
    const upgrade = req.headers.upgrade;
    const version = +req.headers['sec-websocket-version'];
    if (req.method !== 'GET') {
      abortOrClientError(this, req, socket, 405, 'Invalid HTTP method');
      return;
    }
    if (upgrade === undefined || upgrade.toLowerCase() !== 'websocket') {
      abortOrClientError(this, req, socket, 400, 'Invalid Upgrade header');
      return;
    }
    if (key === undefined || !keyRegex.test(key)) {
      abortOrClientError(this, req, socket, 400, 'Missing or invalid Sec-WebSocket-Key header');
      return;
    }
    if (version !== 13 && version !== 8) {
      abortOrClientError(this, req, socket, 400, 'Missing or invalid Sec-WebSocket-Version header',
        { 'Sec-WebSocket-Version': '13, 8' });
      return;
    }
    if (!this.shouldHandle(req)) {
      abortHandshake(socket, 400);
      return;
    }
    const secWebSocketProtocol = req.headers['sec-websocket-protocol'];
    let protocols = new Set();
    if (secWebSocketProtocol !== undefined) {
      try {
        protocols = parseProtocols(secWebSocketProtocol);
      } catch {
        abortOrClientError(this, req, socket, 400, 'Invalid Sec-WebSocket-Protocol header');
        return;
      }
    }
    // permessage-deflate: accepted as ws accepts it, compressed natively.
    const deflate = this._negotiateDeflate(req);
    if (deflate === undefined) {
      abortOrClientError(this, req, socket, 400, 'Invalid or unacceptable Sec-WebSocket-Extensions header');
      return;
    }
    const verifyClient = this.options.verifyClient;
    if (verifyClient) {
      const info = {
        origin: req.headers[`${version === 8 ? 'sec-websocket-origin' : 'origin'}`],
        secure: !!(req.socket.authorized || req.socket.encrypted),
        req,
      };
      if (verifyClient.length === 2) {
        verifyClient(info, (verified, code, message, headers) => {
          if (!verified) {
            abortHandshake(socket, code || 401, message, headers);
            return;
          }
          this.completeUpgrade(deflate, key, protocols, req, socket, head, cb);
        });
        return;
      }
      if (!verifyClient(info)) {
        abortHandshake(socket, 401);
        return;
      }
    }
    this.completeUpgrade(deflate, key, protocols, req, socket, head, cb);
  }

  // The accepted permessage-deflate parameters, null (none offered or
  // configured), or undefined (a malformed or unacceptable offer: 400).
  _negotiateDeflate(req) {
    const secWebSocketExtensions = req.headers['sec-websocket-extensions'];
    if (!this.options.perMessageDeflate || secWebSocketExtensions === undefined) return null;
    try {
      const offers = permessageDeflate.parseExtensions(secWebSocketExtensions);
      if (!offers['permessage-deflate']) return null;
      return permessageDeflate.accept(this.options.perMessageDeflate, offers['permessage-deflate']);
    } catch {
      return undefined;
    }
  }

  // handleUpgrade's HTTP/2 half (a stream taken from the compat request):
  // what http2_accept.js checked before handing an attached server the
  // stream — CONNECT with :protocol websocket, shouldHandle — answered on
  // the stream as ws answers them on a socket (405, 400), then as below.
  _handleUpgradeHttp2(stream, req, cb) {
    if (req.method !== 'CONNECT') {
      stream.refuse(405, 'Invalid HTTP method');
      return;
    }
    if (stream.protocol !== 'websocket') {
      stream.refuse(400, 'Invalid :protocol pseudo-header');
      return;
    }
    if (!this.shouldHandle(req)) {
      stream.refuse(400);
      return;
    }
    this._handleHttp2(stream, req, cb);
  }

  // An extended CONNECT (RFC 8441) on an HTTP/2 stream (http2_accept.js
  // after shouldHandle, or handleUpgrade): ws's checks, less the
  // HTTP/1.1-only ones (GET, Upgrade, Sec-WebSocket-Key: RFC 8441 5 has
  // none of them), each refusal answered on the stream with its status (no
  // 'wsClientError': there is no socket to hand over, the connection is
  // the session's). Then 200 without Sec-WebSocket-Accept, and cb(ws, req)
  // ('connection' for an attached server).
  _handleHttp2(stream, req, cb) {
    if (req.headers['sec-websocket-version'] !== '13') {
      stream.refuse(400, 'Missing or invalid Sec-WebSocket-Version header', { 'sec-websocket-version': '13' });
      return;
    }
    const secWebSocketProtocol = req.headers['sec-websocket-protocol'];
    let protocols = new Set();
    if (secWebSocketProtocol !== undefined) {
      try {
        protocols = parseProtocols(secWebSocketProtocol);
      } catch {
        stream.refuse(400, 'Invalid Sec-WebSocket-Protocol header');
        return;
      }
    }
    const deflate = this._negotiateDeflate(req);
    if (deflate === undefined) {
      stream.refuse(400, 'Invalid or unacceptable Sec-WebSocket-Extensions header');
      return;
    }
    const complete = () => this._completeHttp2(stream, req, protocols, deflate, cb);
    const verifyClient = this.options.verifyClient;
    if (verifyClient) {
      const info = {
        origin: req.headers.origin,
        secure: !!(req.socket.authorized || req.socket.encrypted),
        req,
      };
      if (verifyClient.length === 2) {
        verifyClient(info, (verified, code, message, headers) => {
          if (!verified) stream.refuse(code || 401, message, headers);
          else complete();
        });
        return;
      }
      if (!verifyClient(info)) {
        stream.refuse(401);
        return;
      }
    }
    complete();
  }

  _completeHttp2(stream, req, protocols, deflate, cb) {
    if (this._state > RUNNING) {
      stream.refuse(503);
      return;
    }
    // The first line has the shape of HTTP/1.1's status line for 'headers'
    // listeners; it is not sent (HTTP/2 has :status).
    const headers = ['HTTP/2 200'];
    const { protocol, config, extensions } =
      this._negotiate(headers, 'sec-websocket-protocol', 'sec-websocket-extensions', protocols, deflate, req);
    let lines = '';
    for (let i = 1; i < headers.length; i++) lines += headers[i] + '\r\n';
    const ws = stream.accept(lines, config, this._hub, this, protocol, extensions);
    if (ws === null) return;
    this._track(ws);
    cb(ws, req);
    stream.feedPending();
  }

  // The subprotocol and permessage-deflate answer of a handshake, shared by
  // HTTP/1.1's 101 and HTTP/2's 200 (field names in each protocol's case):
  // appends their fields to `headers`, then emits 'headers' so listeners
  // see (and may add to) the whole answer before it is sent.
  _negotiate(headers, protocolName, extensionsName, protocols, deflate, req) {
    let protocol = '';
    if (protocols.size) {
      protocol = this.options.handleProtocols ?
        this.options.handleProtocols(protocols, req) : protocols.values().next().value;
      if (protocol) headers.push(`${protocolName}: ${protocol}`);
      else protocol = '';
    }
    let config = this._config;
    let extensions = '';
    if (deflate) {
      headers.push(`${extensionsName}: ${permessageDeflate.format(deflate)}`);
      config = { ...config, deflate: permessageDeflate.nativeConfig(this.options.perMessageDeflate, deflate) };
      extensions = 'permessage-deflate';
    }
    this.emit('headers', headers, req);
    return { protocol, config, extensions };
  }

  // clientTracking: `ws` in `clients` until it closes.
  _track(ws) {
    if (!this.clients) return;
    this.clients.add(ws);
    ws.on('close', () => {
      this.clients.delete(ws);
      if (this._shouldEmitClose && !this.clients.size) process.nextTick(() => this._emitClose());
    });
  }

  // deflate: the accepted permessage-deflate parameters, or null.
  completeUpgrade(deflate, key, protocols, req, socket, head, cb) {
    if (!socket.readable || !socket.writable) {
      socket.destroy();
      return;
    }
    const conn = socket[kConn];
    if (conn[kWebSocket] !== undefined) {
      throw http2Accept.handledTwice();
    }
    if (this._state > RUNNING) {
      abortHandshake(socket, 503);
      return;
    }
    const digest = createHash('sha1').update(key + GUID).digest('base64');
    const headers = [
      'HTTP/1.1 101 Switching Protocols',
      'Upgrade: websocket',
      'Connection: Upgrade',
      `Sec-WebSocket-Accept: ${digest}`,
    ];
    const { protocol, config, extensions } =
      this._negotiate(headers, 'Sec-WebSocket-Protocol', 'Sec-WebSocket-Extensions', protocols, deflate, req);
    const pending = socket._takeOver();
    socket.removeListener('error', socketOnError);
    if (conn.wsAccept(headers.join('\r\n') + '\r\n\r\n', config, this._hub) !== 0) {
      socket.destroy();
      return;
    }
    const ws = new WebSocket(conn, this, protocol, extensions);
    conn[kWebSocket] = ws;
    // Drain and close reach the WebSocket through the connection state's
    // tunnel slot (lib/http1/session.js onDrain / onClose).
    const st = conn[kConnState];
    if (st !== undefined) {
      st.tunnel = {
        _onData() {},
        _onEnd() {},
        _onDrain() { ws._onDrain(); },
        _closed() { ws._onClosed(); },
      };
    }
    this._track(ws);
    cb(ws, req);
    // Frames that came with the handshake or while it was decided, parsed
    // once the handler has its listeners on.
    let input = head && head.length > 0 ? head : null;
    if (pending !== null && pending.length > 0) input = input === null ? pending : Buffer.concat([input, pending]);
    if (input !== null) conn.wsFeed(input);
  }
}

module.exports = { WebSocketServer, setServerFactory, kWsConn };
