'use strict';

// WebSocket: the server side of one connection, with ws's API (ws 8's
// WebSocket as its server hands it out), over the native WebSocketSession
// (src/core/websocket/ws_session.h). Frames are parsed, validated and
// written natively; this object only turns native events into ws's events
// and calls into the connection's ws* methods. One JS call per message.
//
// Differences from ws are listed in docs/websocket.md.

const { EventEmitter } = require('events');

const binding = require('../common/binding');
const { NativeConnection, wsSendHttp1 } = binding;
const { codedError } = require('../common/errors');
const { isPoolMemory } = require('../uploads/buffer_pool');

const {
  WS_SENT, WS_BUFFERED, WS_DROPPED, WS_NOT_OPEN,
  WS_OPCODE_TEXT, WS_OPCODE_BINARY, WS_OPCODE_PING, WS_OPCODE_PONG,
} = binding.constants;

const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;
const readyStates = ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED'];
const EMPTY = Buffer.alloc(0);
const BINARY_TYPES = ['nodebuffer', 'arraybuffer', 'fragments', 'blob'];

const kConn = Symbol('sluice.wsConn');
const kPendingDrain = Symbol('sluice.wsPendingDrain');
const kServer = Symbol('sluice.wsServer');

// A status code an endpoint may send (RFC 6455 7.4), as ws's
// isValidStatusCode.
function isValidStatusCode(code) {
  return (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) ||
    (code >= 3000 && code <= 4999);
}

// The bytes of a send/ping/pong argument, as ws's toBuffer: strings are
// sent as UTF-8 (natively), views and ArrayBuffers as bytes, numbers as
// their text, anything else as its String().
function toData(data) {
  if (data === undefined) return EMPTY;
  if (typeof data === 'string' || Buffer.isBuffer(data)) return data;
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (data instanceof ArrayBuffer || data instanceof SharedArrayBuffer) return Buffer.from(data);
  return String(data);
}

// Pool memory (a message or request body of a server with a
// requestBufferAllocator) is copied into the send queue, as HTTP responses
// copy it (lib/http/body.js): the queue keeps Buffers of 2 KiB and more by
// reference until the kernel has them, and a releaseBuffer right after the
// send would let the pool read into them meanwhile. Smaller sends are
// copied anyway.
const REFERENCED_FROM = 2048;

function mustCopy(data) {
  return typeof data !== 'string' && data.length >= REFERENCED_FROM && isPoolMemory(data);
}

function byteLength(data) {
  return typeof data === 'string' ? Buffer.byteLength(data) : data.length;
}

// ws's message for a protocol error, by the native reason; ws's error
// codes (WS_ERR_*) so handlers that switch on them keep working.
const errorCodes = {
  'RSV2 and RSV3 must be clear': ['WS_ERR_UNEXPECTED_RSV_2_3', RangeError],
  'RSV1 must be clear': ['WS_ERR_UNEXPECTED_RSV_1', RangeError],
  'Invalid opcode': ['WS_ERR_INVALID_OPCODE', RangeError],
  'MASK must be set': ['WS_ERR_EXPECTED_MASK', RangeError],
  'FIN must be set on a control frame': ['WS_ERR_EXPECTED_FIN', RangeError],
  'Control frame payload too long': ['WS_ERR_INVALID_CONTROL_PAYLOAD_LENGTH', RangeError],
  'Continuation frame without a message': ['WS_ERR_INVALID_OPCODE', RangeError],
  'New message inside a fragmented message': ['WS_ERR_INVALID_OPCODE', RangeError],
  'Invalid close payload length': ['WS_ERR_INVALID_CONTROL_PAYLOAD_LENGTH', RangeError],
  'Invalid close code': ['WS_ERR_INVALID_CLOSE_CODE', RangeError],
  'Invalid UTF-8 in close reason': ['WS_ERR_INVALID_UTF8', Error],
  'Invalid UTF-8 sequence': ['WS_ERR_INVALID_UTF8', Error],
  'Max payload size exceeded': ['WS_ERR_UNSUPPORTED_MESSAGE_LENGTH', RangeError],
  'Payload length too large': ['WS_ERR_UNSUPPORTED_MESSAGE_LENGTH', RangeError],
  'Too many message fragments': ['WS_ERR_TOO_MANY_BUFFERED_PARTS', RangeError],
};

function protocolError(closeCode, reason) {
  const [code, Ctor] = errorCodes[reason] || ['WS_ERR_INVALID_OPCODE', RangeError];
  const err = new Ctor(reason);
  err.code = code;
  err.statusCode = closeCode;
  return err;
}

function notOpenError(ws) {
  return new Error(`WebSocket is not open: readyState ${ws.readyState} (${readyStates[ws.readyState]})`);
}

// ws's sendAfterClose: the callback hears the error; nothing throws.
function afterClose(ws, cb) {
  if (typeof cb === 'function') {
    const err = notOpenError(ws);
    process.nextTick(cb, err);
  }
}

class WebSocket extends EventEmitter {
  // conn: the native connection (after wsAccept); server: the
  // WebSocketServer (pub/sub hub, binaryType default).
  constructor(conn, server, protocol, extensions) {
    super();
    this[kConn] = conn;
    // HTTP/1.1: the connection's native handle for binding.wsSendHttp1,
    // whose call saves wsSend()'s unwrap of the connection per message;
    // this object keeps `conn` (and so what the handle points to) alive.
    // HTTP/2's per-stream conn has none.
    this._sendHandle = conn instanceof NativeConnection ? conn.handle() : null;
    this[kServer] = server;
    this[kPendingDrain] = [];
    this._readyState = OPEN;
    this._protocol = protocol;
    this._extensions = extensions;
    this._binaryType = 'nodebuffer';
    this._closeCode = 1006;
    this._closeMessage = EMPTY;
    this._closeFrameReceived = false;
    this._closeFrameSent = false;
    this._errorEmitted = false;
    this._paused = false;
    this._topics = null;
    // The pool messages' source (native_events.js poolCallbacks) once one
    // reached this socket: told when it closes.
    this._poolSource = null;
  }

  get CONNECTING() { return CONNECTING; }
  get OPEN() { return OPEN; }
  get CLOSING() { return CLOSING; }
  get CLOSED() { return CLOSED; }

  get readyState() { return this._readyState; }
  get protocol() { return this._protocol; }
  get extensions() { return this._extensions; }
  get isPaused() { return this._paused; }
  get url() { return undefined; }
  get binaryType() { return this._binaryType; }
  set binaryType(type) {
    if (!BINARY_TYPES.includes(type)) return;
    this._binaryType = type;
  }
  // Bytes queued natively and not yet taken by the kernel.
  get bufferedAmount() {
    return this._readyState === CLOSED ? 0 : this[kConn].wsBuffered();
  }

  // send(data[, options][, cb]) -> WS_SENT / WS_BUFFERED (a 'drain' on the
  // socket's behalf follows: cb waits for it) / WS_DROPPED (over
  // maxBackpressure: cb gets ERR_SLUICE_WS_BACKPRESSURE) / WS_NOT_OPEN.
  send(data, options, cb) {
    if (typeof options === 'function') {
      cb = options;
      options = {};
    }
    if (this._readyState === CONNECTING) throw notOpenError(this);
    if (typeof data === 'number') data = data.toString();
    data = toData(data);
    if (this._readyState !== OPEN) {
      afterClose(this, cb);
      return WS_NOT_OPEN;
    }
    const binary = options && options.binary !== undefined ? !!options.binary : typeof data !== 'string';
    const fin = !(options && options.fin === false);
    // As ws: compressed unless options.compress is false (when
    // permessage-deflate was negotiated and the message reaches the
    // threshold; decided natively).
    const compress = !(options && options.compress === false);
    const opcode = binary ? WS_OPCODE_BINARY : WS_OPCODE_TEXT;
    const handle = this._sendHandle;
    const r = handle !== null ?
      wsSendHttp1(handle, data, opcode, fin, compress, mustCopy(data)) :
      this[kConn].wsSend(data, opcode, fin, compress, mustCopy(data));
    this._settle(r, cb);
    return r;
  }

  ping(data, mask, cb) { return this._control(WS_OPCODE_PING, data, mask, cb); }

  pong(data, mask, cb) { return this._control(WS_OPCODE_PONG, data, mask, cb); }

  _control(opcode, data, mask, cb) {
    if (this._readyState === CONNECTING) throw notOpenError(this);
    if (typeof data === 'function') {
      cb = data;
      data = mask = undefined;
    } else if (typeof mask === 'function') {
      cb = mask;
      mask = undefined;
    }
    if (typeof data === 'number') data = data.toString();
    data = toData(data);
    if (byteLength(data) > 125) throw new RangeError('The data size must not be greater than 125 bytes');
    if (this._readyState !== OPEN) {
      afterClose(this, cb);
      return WS_NOT_OPEN;
    }
    const r = this[kConn].wsSend(data, opcode, true);
    this._settle(r, cb);
    return r;
  }

  _settle(r, cb) {
    if (r === WS_SENT) {
      if (typeof cb === 'function') process.nextTick(cb);
    } else if (r === WS_BUFFERED) {
      if (typeof cb === 'function') this[kPendingDrain].push(cb);
    } else if (r === WS_DROPPED) {
      if (typeof cb === 'function') {
        process.nextTick(cb, codedError('ERR_SLUICE_WS_BACKPRESSURE',
          'The message was dropped: the send buffer is over maxBackpressure'));
      }
    } else if (typeof cb === 'function') {
      process.nextTick(cb, r === WS_NOT_OPEN ? notOpenError(this) :
        codedError('ERR_INVALID_ARG_TYPE', 'The data cannot be sent'));
    }
  }

  close(code, data) {
    if (this._readyState === CLOSED) return;
    if (this._readyState === CLOSING) {
      if (this._closeFrameSent && this._closeFrameReceived) this[kConn].destroy();
      return;
    }
    if (code !== undefined && (typeof code !== 'number' || !isValidStatusCode(code))) {
      throw new TypeError('First argument must be a valid error code number');
    }
    let reason = '';
    if (data !== undefined) {
      reason = typeof data === 'string' ? data : Buffer.from(toData(data)).toString();
      if (Buffer.byteLength(reason) > 123) {
        throw new RangeError('The message must not be greater than 123 bytes');
      }
    }
    this._readyState = CLOSING;
    this._closeFrameSent = true;
    this[kConn].wsClose(code === undefined ? 0 : code, reason);
  }

  terminate() {
    if (this._readyState === CLOSED) return;
    this._readyState = CLOSING;
    this[kConn].destroy();
  }

  pause() {
    if (this._readyState === CONNECTING || this._readyState === CLOSED) return;
    this._paused = true;
    this[kConn].pause();
  }

  resume() {
    if (this._readyState === CONNECTING || this._readyState === CLOSED) return;
    this._paused = false;
    this[kConn].resume();
  }

  // ---- pub/sub (beyond ws) -------------------------------------------------
  subscribe(topic) { return this[kConn].wsSubscribe(String(topic)); }
  unsubscribe(topic) { return this[kConn].wsUnsubscribe(String(topic)); }
  isSubscribed(topic) { return this[kConn].wsIsSubscribed(String(topic)); }
  get topics() { return this[kConn].wsTopics(); }
  // To every subscriber of `topic` but this socket; framed once, written
  // natively. -> how many subscribers it was queued for.
  publish(topic, data, options) {
    if (typeof data === 'number') data = data.toString();
    data = toData(data);
    const binary = options && options.binary !== undefined ? !!options.binary : typeof data !== 'string';
    const compress = !(options && options.compress === false);
    topic = String(topic);
    const opcode = binary ? WS_OPCODE_BINARY : WS_OPCODE_TEXT;
    const n = this[kConn].wsPublish(topic, data, opcode, compress);
    // And to the other processes (the server's pub/sub bus), where every
    // subscriber gets it: the sender is only here.
    const server = this[kServer];
    if (server && server._bus) server._bus.publish(topic, data, opcode, compress);
    return n;
  }

  // ---- native events (lib/websocket/native_events.js) -----------------------
  _onMessage(data, isBinary) {
    const type = this._binaryType;
    if (type === 'nodebuffer') {
      this.emit('message', data, isBinary);
    } else if (type === 'arraybuffer') {
      this.emit('message', data.buffer.byteLength === data.length ? data.buffer :
        data.buffer.slice(data.byteOffset, data.byteOffset + data.length), isBinary);
    } else if (type === 'fragments') {
      this.emit('message', [data], isBinary);
    } else {
      this.emit('message', new Blob([data]), isBinary);
    }
  }

  _onPeerClose(code, reason) {
    this._closeFrameReceived = true;
    this._closeCode = code;
    this._closeMessage = reason;
    // The native session echoes the close frame after this returns.
    if (this._readyState === OPEN) this._readyState = CLOSING;
    this._closeFrameSent = true;
  }

  _onError(closeCode, reason) {
    if (this._readyState === OPEN) this._readyState = CLOSING;
    this._closeFrameSent = true;
    this._closeCode = closeCode;
    if (this._errorEmitted) return;
    this._errorEmitted = true;
    this.emit('error', protocolError(closeCode, reason));
  }

  // The connection's write backlog fell below the high-water mark.
  _onDrain() {
    const cbs = this[kPendingDrain];
    if (cbs.length === 0) return;
    this[kPendingDrain] = [];
    for (const cb of cbs) cb();
  }

  // The connection closed: ws's 'close' (code, reason).
  _onClosed() {
    if (this._readyState === CLOSED) return;
    this._readyState = CLOSED;
    if (this._poolSource !== null) {
      const source = this._poolSource;
      this._poolSource = null;
      source.left();
    }
    const cbs = this[kPendingDrain];
    this[kPendingDrain] = [];
    for (const cb of cbs) cb(notOpenError(this));
    this.emit('close', this._closeCode, this._closeMessage);
  }
}

for (const [name, value] of [['CONNECTING', CONNECTING], ['OPEN', OPEN], ['CLOSING', CLOSING], ['CLOSED', CLOSED]]) {
  Object.defineProperty(WebSocket, name, { enumerable: true, value });
}

// ---- EventTarget shapes (ws's addEventListener / onmessage ...) --------------

const kListener = Symbol('sluice.wsListener');
const kForOnEventAttribute = Symbol('sluice.wsOnAttribute');

class Event {
  constructor(type, target) {
    this.type = type;
    this.target = target;
  }
}

function makeEvent(type, target, args) {
  const ev = new Event(type, target);
  if (type === 'message') {
    const [data, isBinary] = args;
    ev.data = isBinary ? data : data.toString();
  } else if (type === 'close') {
    ev.code = args[0];
    ev.reason = args[1].toString();
    ev.wasClean = target._closeFrameReceived && target._closeFrameSent;
  } else if (type === 'error') {
    ev.error = args[0];
    ev.message = args[0].message;
  }
  return ev;
}

const EVENTS = ['open', 'error', 'close', 'message'];

WebSocket.prototype.addEventListener = function addEventListener(type, handler, options = {}) {
  if (!EVENTS.includes(type)) return;
  if (!options[kForOnEventAttribute]) {
    for (const l of this.listeners(type)) {
      if (l[kListener] === handler && !l[kForOnEventAttribute]) return;
    }
  }
  const wrapped = function (...args) {
    const ev = makeEvent(type, this, args);
    if (typeof handler === 'function') handler.call(this, ev);
    else handler.handleEvent(ev);
  };
  wrapped[kListener] = handler;
  wrapped[kForOnEventAttribute] = !!options[kForOnEventAttribute];
  if (options.once) this.once(type, wrapped);
  else this.on(type, wrapped);
};

WebSocket.prototype.removeEventListener = function removeEventListener(type, handler) {
  for (const l of this.listeners(type)) {
    if (l[kListener] === handler && !l[kForOnEventAttribute]) {
      this.removeListener(type, l);
      break;
    }
  }
};

for (const type of EVENTS) {
  Object.defineProperty(WebSocket.prototype, `on${type}`, {
    enumerable: true,
    get() {
      for (const l of this.listeners(type)) {
        if (l[kForOnEventAttribute]) return l[kListener];
      }
      return null;
    },
    set(handler) {
      for (const l of this.listeners(type)) {
        if (l[kForOnEventAttribute]) {
          this.removeListener(type, l);
          break;
        }
      }
      if (typeof handler !== 'function') return;
      this.addEventListener(type, handler, { [kForOnEventAttribute]: true });
    },
  });
}

module.exports = { WebSocket, kConn, isValidStatusCode };
