'use strict';

// WebSockets over HTTP/2 (RFC 8441): the extended CONNECT streams
// (:method CONNECT, :protocol websocket) of a sluice server's HTTP/2
// sessions reach the WebSocketServers attached to it. lib/http2/session.js
// hands such a stream to server[kH2WebSocket] (set here while a
// WebSocketServer is attached) before its 'stream' / 'request' listeners;
// the WebSocketServer decides the handshake (websocket_server.js
// _handleHttp2) and the stream either carries a native WebSocket from then
// on (Http2Session::AcceptWebSocket) or gets the refusal's status.
//
// While a WebSocketServer is attached, the server advertises
// SETTINGS_ENABLE_CONNECT_PROTOCOL in the SETTINGS of every new session
// (the server limit http2ConnectProtocol): without it a client may not
// send an extended CONNECT (browsers then open a new HTTP/1.1 connection
// for the WebSocket). The setting stays on when the server was created
// with node's settings.enableConnectProtocol.

const { STATUS_CODES } = require('http');
const { constants: h2constants } = require('http2');

const binding = require('../common/binding');
const { kH2WebSocket, kNative, kConn, kH2State, kSocketPaused } = require('../common/symbols');
const { IncomingRequest } = require('../http/request');
const { releaseHold } = require('../uploads/buffer_pool');
const { WebSocket } = require('./websocket');
const { kWebSocket } = require('./native_events');

const { H2_HTTP1_BLOCK, H2_ADD_DATE, H2_END_AFTER_BODY, VERSION_2_0, RESULT_CLOSED } = binding.constants;
const { NGHTTP2_CANCEL } = h2constants;

// What lib/websocket/websocket.js (its kConn) and IncomingRequest call on
// "the connection", for the WebSocket of stream `id` of a native HTTP/2
// session: the session's ws*(id, ...) methods; pause / resume hold back
// the stream's flow-control window, destroy resets the stream (the
// session and its other streams go on).
class Http2WsConn {
  constructor(native, id) {
    this._native = native;
    this._id = id;
  }

  wsSend(data, opcode, fin, compress, copy) { return this._native.wsSend(this._id, data, opcode, fin, compress, copy); }
  wsClose(code, reason) { return this._native.wsClose(this._id, code, reason); }
  wsBuffered() { return this._native.wsBuffered(this._id); }
  wsSubscribe(topic) { return this._native.wsSubscribe(this._id, topic); }
  wsUnsubscribe(topic) { return this._native.wsUnsubscribe(this._id, topic); }
  wsIsSubscribed(topic) { return this._native.wsIsSubscribed(this._id, topic); }
  wsTopics() { return this._native.wsTopics(this._id); }
  wsPublish(topic, data, opcode, compress) { return this._native.wsPublish(this._id, topic, data, opcode, compress); }
  pause() { this._native.pauseStream(this._id); }
  resume() { this._native.resumeStream(this._id); }
  destroy() { this._native.rstStream(this._id, NGHTTP2_CANCEL); }
}

// One extended CONNECT stream, registered in the session state's streams
// (lib/http2/session.js calls the _on* methods). Before the accept it keeps
// what the client sent early (fed to the WebSocket once accepted: a
// client need not wait for the 200) and whether the stream went; after
// it, the stream's drain and close are the WebSocket's.
class Http2WsStream {
  constructor(native, id, st) {
    this.native = native;
    this.id = id;
    this.st = st;
    this.conn = new Http2WsConn(native, id);
    this.ws = null;
    this.pending = null;
    this.closed = false;
    this.answered = false;
    // The :protocol (lib/http2/session.js hands over only 'websocket';
    // takeCompat sets the compat request's).
    this.protocol = 'websocket';
    st.streams.set(id, this);
  }

  // The request as 'connection' / verifyClient / handleProtocols see it:
  // node's compat request shape (method CONNECT, url :path, :authority as
  // Host), as HTTP/2's 'request' listeners get it.
  request(raw) {
    let url = '/';
    let authority;
    const rawHeaders = [];
    let host = false;
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i];
      if (name[0] === ':') {
        if (name === ':path') url = raw[i + 1];
        else if (name === ':authority') authority = raw[i + 1];
      } else {
        if (name === 'host') host = true;
        rawHeaders.push(name, raw[i + 1]);
      }
    }
    if (authority !== undefined && !host) rawHeaders.push('host', authority);
    const req = new IncomingRequest(this.conn, this.id, 'CONNECT', url, rawHeaders, VERSION_2_0,
      this.st.socket);
    req.joinDuplicateHeaders = undefined;
    return req;
  }

  // The handshake refused: `code` with a short text body, the stream
  // ended (END_STREAM; the client's half is its own to end).
  refuse(code, message, headers) {
    if (this.answered || this.closed) return;
    this.answered = true;
    this.pending = null;
    message = message || STATUS_CODES[code];
    let block = 'content-type: text/html\r\n';
    if (headers) {
      for (const name of Object.keys(headers)) block += `${name}: ${headers[name]}\r\n`;
    }
    this.native.respond(this.id, code, block, H2_HTTP1_BLOCK | H2_ADD_DATE | H2_END_AFTER_BODY,
      Buffer.from(message));
  }

  // The handshake accepted: 200 with `lines` ("Name: value\r\n"...), the
  // stream a WebSocket from now on. -> the WebSocket, or null when the
  // stream went meanwhile (then it is reset).
  accept(lines, config, hub, server, protocol, extensions) {
    if (this.answered || this.closed) return null;
    this.answered = true;
    if (this.native.wsAccept(this.id, lines, config, hub) !== 0) {
      this.native.rstStream(this.id, NGHTTP2_CANCEL);
      return null;
    }
    const ws = new WebSocket(this.conn, server, protocol, extensions);
    let byId = this.native[kWebSocket];
    if (byId === undefined) {
      byId = new Map();
      this.native[kWebSocket] = byId;
    }
    byId.set(this.id, ws);
    this.ws = ws;
    return ws;
  }

  // Frames the client sent before the accept, parsed now (after the
  // 'connection' handler put its listeners on).
  feedPending() {
    const pending = this.pending;
    this.pending = null;
    if (pending !== null && this.ws !== null) {
      this.native.wsFeed(this.id, pending.length === 1 ? pending[0] : Buffer.concat(pending));
    }
  }

  // ---- lib/http2/session.js's stream callbacks ----
  // DATA before the accept (after it, DATA goes to the native WebSocket).
  _onData(chunk) {
    if (!this.answered) {
      if (this.pending === null) this.pending = [];
      this.pending.push(Buffer.from(chunk));
    }
    releaseHold(chunk);
  }

  // END_STREAM before the accept: the accept will fail (the stream is
  // half-closed) and reset it.
  _onEnd() {}

  _onDrain() {
    if (this.ws !== null) this.ws._onDrain();
  }

  _onWantTrailers() {}

  // DATA past maxRequestBodySize before the accept: answered 413 natively.
  _onBodyTooLarge() {
    this.answered = true;
    this.pending = null;
  }

  // The stream closed (END_STREAM both ways, a reset, the session gone):
  // the WebSocket's 'close' (1006 unless a close frame came).
  _onClose() {
    this.closed = true;
    this.pending = null;
    const ws = this.ws;
    if (ws === null) return;
    const byId = this.native[kWebSocket];
    if (byId !== undefined) byId.delete(this.id);
    ws._onClosed();
  }
}

// What a compat request and response taken by handleUpgrade (takeCompat)
// call from then on: the stream is the WebSocket's, so a late res.end() or
// res.write() must not put bytes between its frames; they read as a closed
// stream (as on a reset one). Addresses still answer.
class TakenConn {
  constructor(native) { this._native = native; }
  respond() { return RESULT_CLOSED; }
  respondCompressed() { return RESULT_CLOSED; }
  respondWithNativeFile() { return RESULT_CLOSED; }
  write() { return RESULT_CLOSED; }
  end() { return RESULT_CLOSED; }
  writeContinue() {}
  writeInfo() {}
  get reasonOnWire() { return false; }
  pause() {}
  resume() {}
  destroy() {}
  peer() { return this._native.peer(); }
  local() { return this._native.local(); }
}

// ws's error for a socket (here: a request) handed to handleUpgrade twice.
function handledTwice() {
  return new Error('server.handleUpgrade() was called more than once with the same ' +
    'socket, possibly due to a misconfiguration');
}

// handleUpgrade of a noServer WebSocketServer with `req`, a compat request
// from a sluice server's HTTP/2 'request' event (an extended CONNECT that
// reached the app: the server advertises SETTINGS_ENABLE_CONNECT_PROTOCOL
// through node's settings.enableConnectProtocol and has no WebSocketServer
// attached). -> undefined when `req` is no such request (the caller treats
// it as HTTP/1.1); null when its stream is gone; else an Http2WsStream
// that replaced the request in the session's streams, so the stream's
// DATA, drain and close are the WebSocket's from now on. What the request
// buffered (frames the client sent early) is kept for the WebSocket; its
// response can no longer write (TakenConn). Throws when the stream was
// taken before, as ws does for a socket handed in twice.
function takeCompat(req) {
  const conn = req[kConn];
  if (conn instanceof TakenConn) {
    throw handledTwice();
  }
  const native = conn !== undefined && conn !== null ? conn._native : undefined;
  // An HTTP/3 session has no WebSockets (no wsAccept): not taken.
  if (native === undefined || typeof native.wsAccept !== 'function') return undefined;
  const st = native[kH2State];
  if (st === undefined) return undefined;
  const id = conn._id;
  const entry = st.streams.get(id);
  if (entry instanceof Http2WsStream) {
    throw handledTwice();
  }
  if (entry === undefined) return null;
  if (entry.req !== req) return undefined;
  const stream = new Http2WsStream(native, id, st);
  stream.protocol = entry.protocol;
  const res = entry.res;
  const taken = new TakenConn(native);
  req[kConn] = taken;
  res[kConn] = taken;
  res._compressCfg = null;
  if (req[kSocketPaused]) {
    // Paused for the request's backpressure: the WebSocket reads on (its
    // own pause() is ws.pause()).
    req[kSocketPaused] = false;
    native.resumeStream(id);
  }
  if (req._built) {
    let chunk;
    while ((chunk = req.read()) !== null) stream._onData(chunk);
  }
  // END_STREAM already came: the accept fails and resets the stream.
  return stream;
}

// Server → the WebSocketServers attached to it, in attach order.
const attached = new WeakMap();

function setConnectProtocol(server, on) {
  const native = server[kNative];
  if (native !== undefined) native.setLimit('http2ConnectProtocol', on ? 1 : 0);
}

// Whether the server was made with node's settings.enableConnectProtocol.
function enabledByOptions(server) {
  const options = server._serverOptions;
  return !!(options && options.settings && options.settings.enableConnectProtocol === true);
}

// A stream lib/http2/session.js hands over: the first attached server
// whose shouldHandle takes the request decides; none: 400 (as ws answers
// an Upgrade its path check refuses).
function take(list, native, id, raw, st) {
  const stream = new Http2WsStream(native, id, st);
  const req = stream.request(raw);
  for (const wss of list) {
    if (wss.shouldHandle(req)) {
      wss._handleHttp2(stream, req, (ws) => wss.emit('connection', ws, req));
      return;
    }
  }
  stream.refuse(400);
}

// `wss` takes the extended CONNECT WebSockets of `server` (a sluice
// server) from now on; its sessions from now on advertise them.
function attach(server, wss) {
  if (server[kNative] === undefined) return;
  let list = attached.get(server);
  if (list === undefined) {
    list = [];
    attached.set(server, list);
    server[kH2WebSocket] = (native, id, raw, st) => take(list, native, id, raw, st);
    setConnectProtocol(server, true);
  }
  list.push(wss);
}

function detach(server, wss) {
  const list = attached.get(server);
  if (list === undefined) return;
  const i = list.indexOf(wss);
  if (i !== -1) list.splice(i, 1);
  if (list.length > 0) return;
  attached.delete(server);
  delete server[kH2WebSocket];
  // Sessions already open keep what they advertised (a SETTINGS cannot
  // take it back, RFC 8441 3); their extended CONNECTs then reach the
  // 'stream' / 'request' listeners.
  if (!enabledByOptions(server)) setConnectProtocol(server, false);
}

module.exports = { attach, detach, takeCompat, handledTwice };
