'use strict';

// ServerHttp2Stream: node:http2's ServerHttp2Stream for sluice, a Duplex
// over one stream of a native HTTP/2 session. The readable side is the
// request body (DATA payloads: copies, or with a requestBufferAllocator
// views of its memory whose release credits the flow-control windows, see
// lib/http2/session.js); the writable side is the response body.
// Backpressure both ways: a full readable buffer pauses the stream
// natively (its window is then not replenished, so the client stops); a
// full native queue holds the write callback until 'drain'. The stream
// idioms with pool memory (pipe, pipeline, for await) are IncomingRequest's
// (lib/http/request.js).

const { Duplex } = require('stream');
const { EventEmitter } = require('events');
const { AsyncResource } = require('async_hooks');
const { h2HeadersObject, serializeHeaders } = require('../http/headers');
const { kH2State } = require('../common/symbols');
const { toChunk } = require('../http/body');
const { codedError, codedTypeError, codedRangeError, invalidArgType, received } = require('../common/errors');
const fileResponse = require('../files/file_response');
const h2compress = require('./compress');
const { byteLength } = require('../compress/compression');
const binding = require('../common/binding');
const { withPoolIdioms, pushChunk, releaseQueuedChunks } = require('../http/request');
const { releaseHold } = require('../uploads/buffer_pool');
const channels = require('../observe/channels');

const { streamFinish, streamError, streamClose } = channels;

// NGHTTP2 error codes (RFC 9113 7).
const constants = Object.freeze({
  NGHTTP2_NO_ERROR: 0,
  NGHTTP2_PROTOCOL_ERROR: 1,
  NGHTTP2_INTERNAL_ERROR: 2,
  NGHTTP2_FLOW_CONTROL_ERROR: 3,
  NGHTTP2_SETTINGS_TIMEOUT: 4,
  NGHTTP2_STREAM_CLOSED: 5,
  NGHTTP2_FRAME_SIZE_ERROR: 6,
  NGHTTP2_REFUSED_STREAM: 7,
  NGHTTP2_CANCEL: 8,
  NGHTTP2_COMPRESSION_ERROR: 9,
  NGHTTP2_CONNECT_ERROR: 10,
  NGHTTP2_ENHANCE_YOUR_CALM: 11,
  NGHTTP2_INADEQUATE_SECURITY: 12,
  NGHTTP2_HTTP_1_1_REQUIRED: 13,
  NGHTTP2_FLAG_END_STREAM: 0x1,
  NGHTTP2_FLAG_END_HEADERS: 0x4,
});
const errorNames = [
  'NGHTTP2_NO_ERROR', 'NGHTTP2_PROTOCOL_ERROR', 'NGHTTP2_INTERNAL_ERROR',
  'NGHTTP2_FLOW_CONTROL_ERROR', 'NGHTTP2_SETTINGS_TIMEOUT', 'NGHTTP2_STREAM_CLOSED',
  'NGHTTP2_FRAME_SIZE_ERROR', 'NGHTTP2_REFUSED_STREAM', 'NGHTTP2_CANCEL',
  'NGHTTP2_COMPRESSION_ERROR', 'NGHTTP2_CONNECT_ERROR', 'NGHTTP2_ENHANCE_YOUR_CALM',
  'NGHTTP2_INADEQUATE_SECURITY', 'NGHTTP2_HTTP_1_1_REQUIRED',
];

const {
  H2_END_STREAM, H2_WAIT_FOR_TRAILERS, H2_ADD_DATE, H2_END_AFTER_BODY,
  RESULT_CLOSED, RESULT_WAIT_DRAIN, RESULT_BAD_BODY, RESULT_COMPRESS_FAILED,
} = binding.constants;
// stream.flush(): a write of this (empty) chunk asks the native compressor
// for a sync flush once the writes before it reached native code.
const FLUSH = Buffer.alloc(0);

// What stream.session gives: the parts of Http2Session a handler touches.
// node:http2's SETTINGS, by id (RFC 9113 6.5.2, RFC 8441 3): the names
// of session.settings() / localSettings / remoteSettings, and their range.
const SETTINGS = [
  ['headerTableSize', 1, 0, 2 ** 32 - 1],
  ['enablePush', 2, 0, 1],
  ['maxConcurrentStreams', 3, 0, 2 ** 32 - 1],
  ['initialWindowSize', 4, 0, 2 ** 31 - 1],
  ['maxFrameSize', 5, 16384, 2 ** 24 - 1],
  ['maxHeaderListSize', 6, 0, 2 ** 32 - 1],
  ['enableConnectProtocol', 8, 0, 1],
];
// session.state's fields, in the order of the native state() array.
const STATE_FIELDS = [
  'effectiveLocalWindowSize', 'effectiveRecvDataLength', 'nextStreamID', 'localWindowSize',
  'lastProcStreamID', 'remoteWindowSize', 'outboundQueueSize', 'deflateDynamicTableSize',
  'inflateDynamicTableSize',
];
// As node's default maxOutstandingPings.
const MAX_OUTSTANDING_PINGS = 10;

// Validates node's settings object; returns [id, value, ...] for the native
// settings() call.
function settingsEntries(settings) {
  // As node's: no argument sends an empty SETTINGS (acked all the same).
  if (settings === undefined) return [];
  if (settings === null || typeof settings !== 'object') {
    throw invalidArgType('"settings" argument', 'of type object', settings);
  }
  const out = [];
  for (const [name, id, min, max] of SETTINGS) {
    let v = settings[name];
    if (name === 'maxHeaderListSize' && v === undefined) v = settings.maxHeaderSize;
    if (v === undefined) continue;
    if (name === 'enablePush' || name === 'enableConnectProtocol') {
      if (typeof v !== 'boolean') {
        throw codedTypeError('ERR_HTTP2_INVALID_SETTING_VALUE',
          `Invalid value for setting "${name}": ${v}`);
      }
      v = v ? 1 : 0;
    } else if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      throw codedRangeError('ERR_HTTP2_INVALID_SETTING_VALUE',
        `Invalid value for setting "${name}": ${v}`);
    }
    out.push(id, v);
  }
  return out;
}

function readSettings(native, remote) {
  const out = {};
  for (const [name, id] of SETTINGS) {
    const v = native.setting(id, remote);
    out[name] = name === 'enablePush' || name === 'enableConnectProtocol' ? v !== 0 : v;
    if (name === 'maxHeaderListSize') out.maxHeaderSize = v;
  }
  return out;
}

// The 'session' object of a connection: node:http2's ServerHttp2Session
// surface over the native session (ping, settings, windows, ALTSVC /
// ORIGIN frames, state); events 'stream', 'ping', 'localSettings',
// 'remoteSettings', 'goaway', 'close'.
class Http2SessionHandle extends EventEmitter {
  constructor(native, socket) {
    super();
    this._native = native;
    this.socket = socket;
    this.closed = false;
    this.destroyed = false;
    this.encrypted = false;
    this.alpnProtocol = 'h2c';
    this.type = 0;  // NGHTTP2_SESSION_SERVER
    this.connecting = false;
    this.pendingSettingsAck = true;  // the initial SETTINGS until acked
    this._pings = [];       // [{ cb, start }] in submit order
    this._settingsCbs = []; // [{ cb, start }] (undefined cb for the initial ones)
    this._localSettings = undefined;
    this._remoteSettings = undefined;
    this._initialAcked = false;
    // node's maxOutstandingSettings: SETTINGS frames (the initial one
    // included) sent and not yet acked; settings() past it destroys the
    // session (ERR_HTTP2_MAX_PENDING_SETTINGS_ACK).
    this._maxPendingAck = 10;
    this._closeEmitted = false;
  }

  get localSettings() {
    if (this.destroyed) return {};
    if (this._localSettings === undefined) this._localSettings = readSettings(this._native, false);
    return this._localSettings;
  }

  get remoteSettings() {
    if (this.destroyed) return {};
    if (this._remoteSettings === undefined) this._remoteSettings = readSettings(this._native, true);
    return this._remoteSettings;
  }

  get state() {
    if (this.destroyed) return {};
    const a = this._native.state();
    const out = {};
    for (let i = 0; i < STATE_FIELDS.length; i++) out[STATE_FIELDS[i]] = a[i];
    return out;
  }

  _checkLive() {
    if (this.destroyed) throw codedError('ERR_HTTP2_INVALID_SESSION', 'The session has been destroyed');
  }

  ping(payload, cb) {
    this._checkLive();
    if (typeof payload === 'function') {
      cb = payload;
      payload = undefined;
    }
    if (payload !== undefined) {
      if (!ArrayBuffer.isView(payload)) {
        throw invalidArgType('"payload" argument', 'an instance of Buffer, TypedArray, or DataView', payload);
      }
      if (payload.byteLength !== 8) {
        throw codedRangeError('ERR_HTTP2_PING_LENGTH', 'HTTP2 ping payload must be 8 bytes');
      }
      payload = Buffer.from(payload.buffer, payload.byteOffset, 8);
    } else {
      payload = Buffer.alloc(8);
    }
    if (typeof cb !== 'function') throw invalidArgType('"callback" argument', 'of type function', cb);
    if (this._pings.length >= MAX_OUTSTANDING_PINGS) return false;
    if (this._native.ping(payload) < 0) return false;
    // As node's: the callback runs in the async context of the ping
    // (an async resource of type HTTP2PING).
    this._pings.push({ cb, start: process.hrtime.bigint(), resource: new AsyncResource('HTTP2PING') });
    return true;
  }

  settings(settings, cb) {
    this._checkLive();
    const entries = settingsEntries(settings);
    if (cb !== undefined && typeof cb !== 'function') {
      throw invalidArgType('"callback" argument', 'of type function', cb);
    }
    this.pendingSettingsAck = true;
    if (this._settingsCbs.length + (this._initialAcked ? 0 : 1) >= this._maxPendingAck) {
      this.destroy(codedError('ERR_HTTP2_MAX_PENDING_SETTINGS_ACK',
        `Maximum number of pending settings acknowledgements`));
      return;
    }
    this._native.settings(entries);
    this._settingsCbs.push({ cb, start: process.hrtime.bigint() });
  }

  setLocalWindowSize(windowSize) {
    this._checkLive();
    if (typeof windowSize !== 'number') {
      throw invalidArgType('"windowSize" argument', 'of type number', windowSize);
    }
    if (!Number.isInteger(windowSize) || windowSize < 0 || windowSize > 2 ** 31 - 1) {
      throw codedRangeError('ERR_OUT_OF_RANGE',
        `The value of "windowSize" is out of range. It must be >= 0 && <= 2147483647. Received ${windowSize}`);
    }
    this._native.setLocalWindowSize(windowSize);
  }

  altsvc(alt, originOrStream) {
    this._checkLive();
    if (typeof alt !== 'string') throw invalidArgType('"alt" argument', 'of type string', alt);
    if (!/^[\x09\x20-\x5b\x5d-\x7e\x80-\xff]*$/.test(alt)) {
      throw codedTypeError('ERR_INVALID_CHAR', 'Invalid character in alt');
    }
    let id = 0;
    let origin = '';
    if (typeof originOrStream === 'number') {
      if (!Number.isInteger(originOrStream) || originOrStream < 1 || originOrStream > 2 ** 32 - 1) {
        throw codedRangeError('ERR_OUT_OF_RANGE',
          `The value of "originOrStream" is out of range. It must be > 0 && < 4294967296. Received ${originOrStream}`);
      }
      // A stream id nghttp2 cannot hold names no stream: nothing is sent.
      if (originOrStream > 2 ** 31 - 1) return;
      id = originOrStream;
    } else if (originOrStream !== undefined) {
      origin = undefined;
      if (typeof originOrStream === 'string') {
        try {
          origin = new URL(originOrStream).origin;
        } catch {
          throw codedTypeError('ERR_INVALID_URL', 'Invalid URL');
        }
      } else if (originOrStream !== null && typeof originOrStream === 'object') {
        origin = originOrStream.origin;
      }
      if (typeof origin !== 'string') {
        throw codedTypeError('ERR_INVALID_ARG_TYPE',
          `The "originOrStream" argument must be of type string or number or an instance of URL or Object.${received(originOrStream)}`);
      }
      if (origin === 'null' || origin.length === 0) {
        throw codedTypeError('ERR_HTTP2_ALTSVC_INVALID_ORIGIN', 'HTTP/2 ALTSVC frames require a valid origin');
      }
    } else {
      return;
    }
    if (origin.length + alt.length > 16382) {
      throw codedTypeError('ERR_HTTP2_ALTSVC_LENGTH', 'HTTP/2 ALTSVC frames are limited to 16382 bytes');
    }
    this._native.altsvc(id, origin, alt);
  }

  origin(...origins) {
    this._checkLive();
    const list = [];
    let length = 0;
    for (const o of origins) {
      const s = originOf(o, 'ERR_HTTP2_INVALID_ORIGIN', 'HTTP/2 ORIGIN frames require a valid origin', 'origin');
      length += s.length;
      list.push(s);
    }
    if (length > 16382) {
      throw codedTypeError('ERR_HTTP2_ORIGIN_LENGTH', 'HTTP/2 ORIGIN frames are limited to 16382 bytes');
    }
    if (list.length > 0) this._native.origin(list.join('\n'));
  }

  ref() {
    if (this.socket && typeof this.socket.ref === 'function') this.socket.ref();
  }

  unref() {
    if (this.socket && typeof this.socket.unref === 'function') this.socket.unref();
  }

  close(cb) {
    if (cb) this.once('close', cb);
    this._native.goaway(0);
  }

  goaway(code = 0, lastStreamID, opaqueData) {
    this._checkLive();
    if (opaqueData !== undefined && !ArrayBuffer.isView(opaqueData)) {
      throw invalidArgType('"opaqueData" argument', 'an instance of Buffer, TypedArray, or DataView', opaqueData);
    }
    if (typeof code !== 'number') throw invalidArgType('"code" argument', 'of type number', code);
    if (lastStreamID !== undefined && typeof lastStreamID !== 'number') {
      throw invalidArgType('"lastStreamID" argument', 'of type number', lastStreamID);
    }
    this._native.goaway(code, opaqueData);
  }

  // As node's destroy([error][, code]); a number alone is the code. A code
  // other than NO_ERROR (an error without one: INTERNAL_ERROR) leaves in a
  // GOAWAY written before the connection closes; the open streams are
  // destroyed now with the error and rstCode the code; 'error' (to a
  // listener) follows, 'close' once the connection is gone.
  destroy(error = constants.NGHTTP2_NO_ERROR, code) {
    if (this.destroyed) return;
    if (typeof error === 'number') {
      code = error;
      error = code !== constants.NGHTTP2_NO_ERROR ?
        codedError('ERR_HTTP2_SESSION_ERROR', `Session closed with error code ${code}`) : undefined;
    }
    if (code === undefined) code = error != null ? constants.NGHTTP2_INTERNAL_ERROR : constants.NGHTTP2_NO_ERROR;
    this.destroyed = true;
    // Terminate first: the streams' own resets are not sent after it.
    if (code !== constants.NGHTTP2_NO_ERROR) this._native.goaway(code);
    const st = this._native[kH2State];
    if (st !== undefined) {
      for (const stream of [...st.streams.values()]) {
        if (!(stream instanceof ServerHttp2Stream) || stream.destroyed) continue;
        // As node's: the stream leaves its session (stream.session is
        // undefined from now on); a response not ended is aborted and its
        // writable side ended (a later write() is 'write after end').
        if (!stream.writableEnded) {
          if (!stream.aborted) {
            stream.aborted = true;
            stream.emit('aborted');
          }
          stream.end();
        }
        stream.rstCode = code;
        stream._nativeResets = true;
        stream._session = undefined;
        stream.destroy(error);
      }
    }
    if (code === constants.NGHTTP2_NO_ERROR) this._native.destroy();
    if (error != null && this.listenerCount('error') > 0) process.nextTick(() => this.emit('error', error));
  }

  setTimeout() { return this; }

  // Native events (lib/http2/session.js).
  _onPing(payload, ack) {
    if (!ack) {
      this.emit('ping', payload);
      return;
    }
    const p = this._pings.shift();
    // An ack of no ping of ours is ignored (RFC 9113 6.7; h2spec 6.7/2),
    // where node's server makes it a connection error.
    if (p === undefined) return;
    const ms = Number(process.hrtime.bigint() - p.start) / 1e6;
    p.resource.runInAsyncScope(p.cb, null, null, ms, payload);
    p.resource.emitDestroy();
  }

  _onSettings(ack) {
    if (!ack) {
      this._remoteSettings = undefined;
      if (this.listenerCount('remoteSettings') > 0) this.emit('remoteSettings', this.remoteSettings);
      return;
    }
    this._localSettings = undefined;
    // The first ack is the initial SETTINGS' (sent with the preface).
    const s = this._initialAcked ? this._settingsCbs.shift() : undefined;
    this._initialAcked = true;
    this.pendingSettingsAck = this._settingsCbs.length > 0;
    // Read from nghttp2 only for someone who asks (every session gets the
    // initial ack).
    const cb = s !== undefined ? s.cb : undefined;
    if (cb === undefined && this.listenerCount('localSettings') === 0) return;
    const settings = this.localSettings;
    this.emit('localSettings', settings);
    if (cb) cb(null, settings, Number(process.hrtime.bigint() - s.start) / 1e6);
  }

  _closed() {
    if (this._closeEmitted) return;
    this._closeEmitted = true;
    if (!this.destroyed) this.closed = true;
    this.destroyed = true;
    const pings = this._pings;
    this._pings = [];
    for (const p of pings) {
      p.resource.runInAsyncScope(p.cb, null, codedError('ERR_HTTP2_PING_CANCEL', 'HTTP2 ping cancelled'));
      p.resource.emitDestroy();
    }
    this.emit('close');
  }
}

// An ALTSVC / ORIGIN origin: a string or URL (or { origin }), serialized
// as the URL's origin; 'null' origins (not http/https) are refused.
function originOf(value, code = 'ERR_HTTP2_INVALID_ORIGIN',
  message = 'HTTP/2 ORIGIN frames require a valid origin', name = 'origin') {
  let o;
  if (typeof value === 'string') {
    try {
      o = new URL(value).origin;
    } catch {
      throw codedTypeError('ERR_INVALID_URL', 'Invalid URL');
    }
  } else if (value !== null && typeof value === 'object' && typeof value.origin === 'string') {
    o = value.origin;
  } else {
    throw invalidArgType(`"${name}" argument`, 'of type string or an instance of URL', value);
  }
  if (o === 'null') throw codedTypeError(code, message);
  return o;
}

// Shared by every stream (Duplex does not keep or change it).
const duplexOptions = Object.freeze({ allowHalfOpen: true, decodeStrings: false, autoDestroy: false });

// ---- a Duplex built when touched ------------------------------------------------
// Most streams are answered with respond() + end(body) and never read,
// piped or listened to: for them, a Duplex's two states (and its end,
// finish, push(null) and destroy ticks) were the largest per-stream cost
// after the native calls. LazyDuplex is a Duplex (instanceof, every
// method) whose constructor runs only EventEmitter's: the first access to
// _readableState or _writableState — which every Readable/Writable method
// and property makes — runs Duplex's constructor on the object
// (materialize) and replays what happened meanwhile (the request body's
// end, a lazy end(), a close), so the states read as if they had existed
// all along. ServerHttp2Stream keeps the common path off the states: its
// end(), its native callbacks and on() for events other than 'data' /
// 'readable' (Readable.prototype.on touches the state for any event).
function LazyDuplex() {
  // EventEmitter's own fields, less the listener dictionary (and the
  // per-object capture flag, read from EventEmitter.prototype instead):
  // EventEmitter's methods create `_events` with the first listener, and
  // most streams get none (as lib/http/request.js's LazyReadable).
  this._events = undefined;
  this._eventsCount = 0;
  this._maxListeners = undefined;
  this.allowHalfOpen = true;
  this._built = false;
  this._lazyReadEnd = false;    // the request body ended (push(null) due)
  this._lazyWriteEnd = false;   // end() was called (its _final has run)
  this._lazyClosed = false;     // the stream closed (destroy() due)
}
Object.setPrototypeOf(LazyDuplex.prototype, Duplex.prototype);
Object.setPrototypeOf(LazyDuplex, Duplex);

function lazyState(key) {
  return {
    configurable: true,
    get() {
      materialize(this);
      return this[key];
    },
    // Duplex's constructor assigns the states: own data properties from
    // then on (the accessor is not consulted again).
    set(value) {
      Object.defineProperty(this, key, { value, writable: true, configurable: true, enumerable: true });
    },
  };
}
Object.defineProperty(LazyDuplex.prototype, '_readableState', lazyState('_readableState'));
Object.defineProperty(LazyDuplex.prototype, '_writableState', lazyState('_writableState'));

function materialize(stream) {
  if (stream._built) return;
  stream._built = true;
  Duplex.call(stream, duplexOptions);  // keeps the listeners (_events is set)
  const r = stream._readableState;
  const w = stream._writableState;
  if (stream._lazyClosed) {
    // Closed while unbuilt: the states of a stream whose 'finish' and
    // 'close' are past (nobody listened), set as end() and destroy()
    // would have left them — without emitting them now to listeners
    // added since.
    r.ended = true;
    if (stream._lazyWriteEnd) {
      w.ending = true;
      w.ended = true;
      w.finalCalled = true;
      w.prefinished = true;
      w.finished = true;
    }
    r.destroyed = w.destroyed = true;
    r.closed = w.closed = true;
    r.closeEmitted = w.closeEmitted = true;
    return;
  }
  if (stream._lazyReadEnd) Duplex.prototype.push.call(stream, null);
  if (stream._lazyWriteEnd) Duplex.prototype.end.call(stream);  // _final again: a no-op
}

// Readable.prototype.on reads the readable state for every event; only
// 'data' and 'readable' need it.
LazyDuplex.prototype.on = function on(event, listener) {
  if (!this._built && event !== 'data' && event !== 'readable') {
    return EventEmitter.prototype.on.call(this, event, listener);
  }
  return Duplex.prototype.on.call(this, event, listener);
};
LazyDuplex.prototype.addListener = LazyDuplex.prototype.on;

// respond() may hold the head back (_held): HELD_DISPATCH, a plain head
// given inside the 'stream' handler (lib/http2/session.js), sent when the
// handler returns — or with the body and END_STREAM when end(body) comes
// first, all in one native call; HELD_COMPRESS, a compressible head
// without a length, waiting one tick for the body to decide whether it is
// worth compressing (lib/http2/compress.js). Either is sent by _flushHead,
// before anything else of the stream reaches the wire (write, end, close,
// destroy), so frames keep node:http2's order.
const HELD_NONE = 0;
const HELD_DISPATCH = 1;
const HELD_COMPRESS = 2;

// node:http2's stream idle timeout (stream.setTimeout, and the compat
// req/res.setTimeout on the same stream): 'timeout' after `ms` without a
// read or write; unref'd, as node's. One per stream, made on first use.
class IdleTimer {
  constructor(onFire, target) {
    this.onFire = onFire;
    this.target = target;
    this.timer = null;
  }

  set(ms) {
    this.clear();
    if (ms > 0) {
      this.timer = setTimeout(fireIdle, ms, this);
      this.timer.unref();
    }
  }

  refresh() {
    if (this.timer !== null) this.timer.refresh();
  }

  clear() {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
  }
}

function fireIdle(t) {
  t.timer = null;
  t.onFire(t.target);
}

// stream.setTimeout / req.setTimeout argument checks, node's messages.
function validateTimeout(ms, cb) {
  if (typeof ms !== 'number') throw invalidArgType('"msecs" argument', 'of type number', ms);
  if (cb !== undefined && typeof cb !== 'function') {
    throw invalidArgType('"callback" argument', 'of type function', cb);
  }
}

class ServerHttp2Stream extends LazyDuplex {
  constructor(native, id, headers, session, endStream) {
    super();
    this._native = native;
    this._id = id;
    this._altSvc = undefined;  // the server's Alt-Svc value (respond adds it)
    this._session = session;
    this._requestHeaders = headers;
    this._isHead = headers[':method'] === 'HEAD';
    this._readPaused = false;
    this._idle = null;  // IdleTimer once setTimeout() was called
    this._pendingWriteCb = null;
    this._noBody = false;
    this._nativeEnded = false;
    this._nativeClosed = false;
    this._nativeResets = false;  // the session resets the stream itself (413)
    this._quietReset = false;    // reset by sluice itself: no 'error' for its code
    this.headersSent = false;
    this._sentHeaders = undefined;
    this._status = 0;
    this.sentTrailers = undefined;
    this.sentInfoHeaders = [];
    this.rstCode = undefined;
    this.aborted = false;
    this.endAfterHeaders = endStream;
    this.timeout = 0;
    // Response compression (lib/http2/compress.js): the server's config
    // (null: off).
    this._compressCfg = null;
    this._fileCache = 0;  // lib/files/open_file_cache.js: OFF, STATIC (mounts only) or ALL
    this._fileResponding = false;
    this._closeAborts = false;   // close(code) came before the writable side finished
    this._nativeFile = null;
    this._wantTrailers = false;
    this._dispatching = false;  // inside the 'stream' handler
    // The held head (see HELD_*): status, flags and block (HELD_DISPATCH)
    // or headers object and coding (HELD_COMPRESS).
    this._held = HELD_NONE;
    this._heldStatus = 0;
    this._heldFlags = 0;
    this._heldBlock = '';
    this._heldHeaders = null;
    this._heldCoding = 0;
    this._lazyReadEnd = endStream;
  }

  get id() { return this._id; }
  get pending() { return false; }
  get closed() { return this._nativeClosed; }
  get session() { return this._session; }
  get bufferSize() { return this.writableLength; }
  get sentHeaders() {
    return this._sentHeaders === undefined ? undefined : { ...this._sentHeaders, ':status': this._status };
  }
  // As node's: read from the live stream; {} once it closed. localClose
  // once the writable side finished ('finish'), not at the end() call.
  get state() {
    if (this._nativeClosed || this._isDestroyed()) return {};
    if (!this._built && this._lazyWriteEnd) materialize(this);  // replays end(): 'finish' follows
    const remoteClose = this._built ? this.readableEnded : this._lazyReadEnd;
    return {
      state: 2,
      localClose: this._built && this.writableFinished ? 1 : 0,
      remoteClose: remoteClose || this.endAfterHeaders ? 1 : 0,
      weight: 16,
      sumDependencyWeight: 0,
      localWindowSize: Math.max(0, this._native.streamWindow(this._id)),
    };
  }

  // `destroyed` without building the Duplex: an unbuilt stream is
  // destroyed only once closed (materialize destroys it then).
  _isDestroyed() { return this._built ? this.destroyed : this._lazyClosed; }

  respond(headers, options) {
    if (this._isDestroyed() || this._nativeClosed) {
      throw codedError('ERR_HTTP2_INVALID_STREAM', 'The stream has been destroyed');
    }
    if (this.headersSent) throw codedError('ERR_HTTP2_HEADERS_SENT', 'Response has already been initiated.');
    if (options == null) options = noOptions;
    // The server's Alt-Svc (HTTP/3 advertised), unless the handler set one.
    if (this._altSvc !== undefined && (headers == null || headers['alt-svc'] === undefined)) {
      headers = { ...headers, 'alt-svc': this._altSvc };
    }
    let [block, status] = serializeHeaders(headers, true);
    if (status === 101) throw codedError('ERR_HTTP2_STATUS_101', 'HTTP status code 101 (Switching Protocols) is forbidden in HTTP/2');
    if (status < 200 || status > 599) {
      if (status >= 100 && status < 200) {
        throw codedRangeError('ERR_HTTP2_INFO_STATUS_NOT_ALLOWED', 'Informational status codes cannot be used');
      }
      throw codedRangeError('ERR_HTTP2_STATUS_INVALID', `Invalid status code: ${status}`);
    }
    let endStream = !!options.endStream;
    if (status === 204 || status === 205 || status === 304 || this._isHead) endStream = true;
    let flags = H2_ADD_DATE;
    if (options.sendDate === false) flags = 0;
    if (endStream) flags |= H2_END_STREAM;
    if (options.waitForTrailers) flags |= H2_WAIT_FOR_TRAILERS;
    let coding = 0;
    const cfg = this._compressCfg;
    if (cfg !== null && !endStream && options.compress !== false) {
      let lengthUnknown;
      [coding, headers, lengthUnknown] =
        h2compress.decide(this._requestHeaders, cfg, status, headers, -1);
      [block] = serializeHeaders(headers, true);
      if (coding !== 0 && lengthUnknown) {
        // Only the threshold is left to decide: the head waits for the
        // body (lib/http2/compress.js).
        this._hold(HELD_COMPRESS, status, flags, '', headers, coding);
        if (streamFinish !== null && streamFinish.hasSubscribers) publishFinish(this, status, flags, options);
        process.nextTick(sendCompressHead, this);
        return;
      }
    }
    this.headersSent = true;
    this._sentHeaders = headers || {};
    this._status = status;
    if (streamFinish !== null && streamFinish.hasSubscribers) publishFinish(this, status, flags, options);
    if (this._dispatching && coding === 0 && !endStream && !options.waitForTrailers &&
        !this._fileResponding && headers != null && headers['content-length'] !== undefined) {
      // Inside the 'stream' handler, a head that tells its length waits
      // until the handler returns: an end(body) meanwhile sends head,
      // body and END_STREAM in one native call. Not without
      // content-length: that call would add one, which node:http2's
      // stream API does not.
      this._hold(HELD_DISPATCH, status, flags, block, null, 0);
      return;
    }
    const r = this._native.respond(this._id, status, block, flags);
    if (r === RESULT_CLOSED) return;
    if (coding !== 0) this._native.compress(this._id, coding, cfg.level, cfg.brotliQuality);
    if (endStream) {
      this._noBody = true;
      this._nativeEnded = true;
      this.end();
    }
  }

  _hold(kind, status, flags, block, headers, coding) {
    this.headersSent = true;
    this._held = kind;
    this._heldStatus = status;
    this._heldFlags = flags;
    this._heldBlock = block;
    this._heldHeaders = headers;
    this._heldCoding = coding;
    if (headers !== null) {
      this._sentHeaders = headers;
      this._status = status;
    }
  }

  // Sends the held head. whole: `body` (may be undefined) is the whole
  // body and the stream ends with it, in the same native call; otherwise
  // the body follows (through the compressor for HELD_COMPRESS).
  _flushHead(whole, body) {
    const kind = this._held;
    this._held = HELD_NONE;
    let block = this._heldBlock;
    const headers = this._heldHeaders;
    this._heldBlock = '';
    this._heldHeaders = null;
    if (this._nativeClosed) return;
    const status = this._heldStatus;
    const flags = this._heldFlags;
    let coding = 0;
    const cfg = this._compressCfg;
    if (kind === HELD_COMPRESS) {
      let sent = headers;
      coding = this._heldCoding;
      if (whole && byteLength(body) < cfg.threshold) {
        coding = 0;
        sent = { ...headers };
        delete sent['content-encoding'];
      }
      [block] = serializeHeaders(sent, true);
      this._sentHeaders = sent;
    }
    if (!whole) {
      const r = this._native.respond(this._id, status, block, flags);
      if (coding !== 0 && r !== RESULT_CLOSED) this._native.compress(this._id, coding, cfg.level, cfg.brotliQuality);
      return;
    }
    this._nativeEnded = true;
    if (coding !== 0) {
      const r = this._native.respondCompressed(this._id, status, block, flags, body, undefined,
        coding, cfg.level, cfg.brotliQuality);
      // The compressor failed (nothing was sent): reset rather than leave
      // the client waiting (the client sees INTERNAL_ERROR; not an 'error'
      // here, which without a listener would throw).
      if (r === RESULT_COMPRESS_FAILED || r === RESULT_BAD_BODY) {
        this._quietReset = true;
        this.close(constants.NGHTTP2_INTERNAL_ERROR);
      }
      return;
    }
    // respond + body + end in one call (content-length added when absent).
    this._native.respond(this._id, status, block, flags | H2_END_AFTER_BODY, body);
  }

  // Before a reset: a head held in the handler goes out (HEADERS, then
  // RST_STREAM, as node:http2 sends a respond()ed head at once); one
  // waiting for compression is dropped, as its body is.
  _settleHeadForReset() {
    if (this._held === HELD_DISPATCH) this._flushHead(false, undefined);
    else this._held = HELD_NONE;
  }

  // The 'stream' handler returned (lib/http2/session.js).
  _dispatched() {
    this._dispatching = false;
    if (this._held === HELD_DISPATCH) this._flushHead(false, undefined);
  }

  // end(body) as one native call: with a held head, head + body +
  // END_STREAM (a compression head learns the body's size); after a sent
  // head, body + END_STREAM (rather than a write and an end). On an
  // unbuilt stream (nothing wrote, read or listened) end() is done
  // without building it: _final's work now, its 'finish' is the Duplex's
  // once something builds it.
  end(chunk, encoding, cb) {
    const lazy = !this._built && this._eventsCount === 0 && !this._lazyWriteEnd && !this._lazyClosed;
    if (typeof chunk === 'function') {
      cb = chunk;
      chunk = undefined;
    } else if (typeof encoding === 'function') {
      cb = encoding;
      encoding = undefined;
    }
    if (chunk !== undefined && chunk !== null && (lazy ||
        (this.writableLength === 0 && !this.writableEnded && !this.destroyed && !this.writableCorked)) &&
        (this._held === HELD_COMPRESS || ((typeof chunk === 'string' || chunk instanceof Uint8Array) &&
          this.headersSent && !this._noBody && !this._nativeEnded))) {
      let body;
      try {
        body = toChunk(chunk, encoding);
      } catch (err) {
        return super.end(chunk, encoding, cb);  // reports it as node does
      }
      if (this._held !== HELD_NONE) {
        this._flushHead(true, body);
      } else if (!this._nativeClosed) {
        this._nativeEnded = true;
        this._native.end(this._id, body, undefined, 0);
      }
      chunk = undefined;
    }
    if (chunk === undefined && cb === undefined && !this._built && this._eventsCount === 0 &&
        !this._lazyClosed) {
      if (!this._lazyWriteEnd) {
        this._lazyWriteEnd = true;
        this._final(noop);
      }
      return this;
    }
    return super.end(chunk, encoding, cb);
  }

  // As the `compression` middleware's res.flush() (sluice extension): what
  // was written so far leaves the compressor now (server-sent events). A
  // no-op for an uncompressed stream.
  flush() {
    if (this.writableEnded || this.destroyed) return;
    this.write(FLUSH);
  }

  // As node:http2: the file is opened and stat'ed on the threadpool, then
  // its bytes flow natively into DATA frames (src/core/http2/http2_pipe_body.h):
  // no JS per chunk, nothing copied. Options: offset, length,
  // statCheck(stat, headers, statOptions), onError(err) (otherwise the
  // stream is destroyed with the error: 'error', then RST_STREAM
  // INTERNAL_ERROR), waitForTrailers. Non-regular files (FIFOs, pipes,
  // sockets, character devices) stream until EOF without a content-length;
  // offset/length on them fail with ERR_HTTP2_SEND_FILE_NOSEEK.
  respondWithFile(path, headers, options) {
    this._respondWithNativeFile(path, false, headers, options);
  }

  // The same for a descriptor (or FileHandle) the caller keeps: never
  // closed by sluice.
  respondWithFD(fd, headers, options) {
    this._respondWithNativeFile(fd, true, headers, options);
  }

  _respondWithNativeFile(target, isFd, headers, options) {
    if (this._isDestroyed() || this._nativeClosed) {
      throw codedError('ERR_HTTP2_INVALID_STREAM', 'The stream has been destroyed');
    }
    if (this.headersSent || this._fileResponding) {
      throw codedError('ERR_HTTP2_HEADERS_SENT', 'Response has already been initiated.');
    }
    target = isFd ? fileResponse.toFd(target) : fileResponse.toPath(target);
    const opts = fileResponse.validateOptions(options);
    const waitForTrailers = !!(options && options.waitForTrailers);
    headers = { ...(headers || {}) };
    const [, status] = serializeHeaders(headers, true);  // throws now, not after the open
    // As node: a status whose response has no body takes no file.
    if (status === 204 || status === 205 || status === 304) {
      throw codedError('ERR_HTTP2_PAYLOAD_FORBIDDEN', `Responses with ${status} status must not have a payload`);
    }
    if (options && options.precompressed && !isFd) {
      // path.br / path.gz when acceptable, present and not older
      // (lib/compress/compression.js precompressed), with their own length.
      this._fileResponding = true;
      h2compress.precompressed(this._requestHeaders, headers[':status'] | 0 || 200, headers, target,
        (path, h) => {
          this._fileResponding = false;
          if (this._isDestroyed() || this._nativeClosed || this.headersSent) return;
          this._respondWithNativeFile(path, false, h, { ...options, precompressed: false });
        });
      return;
    }
    this._fileResponding = true;
    this._nativeFile = fileResponse.serveFile(
      new Http2StreamFileTarget(this, headers, waitForTrailers, options), target, isFd, opts);
  }

  additionalHeaders(headers) {
    // As node: after close() (rstCode set) the stream is closed for it.
    if (this._isDestroyed() || this._nativeClosed || this.rstCode !== undefined) {
      throw codedError('ERR_HTTP2_INVALID_STREAM', 'The stream has been destroyed');
    }
    if (this.headersSent) throw codedError('ERR_HTTP2_HEADERS_AFTER_RESPOND', 'Cannot specify additional headers after response initiated');
    const [block, status] = serializeHeaders(headers, true);
    if (status === 101) {
      throw codedError('ERR_HTTP2_STATUS_101', 'HTTP status code 101 (Switching Protocols) is forbidden in HTTP/2');
    }
    if (status < 100 || status > 199) {
      throw codedRangeError('ERR_HTTP2_INVALID_INFO_STATUS', `Invalid informational status code: ${status}`);
    }
    this._native.info(this._id, status, block, 0);
    this.sentInfoHeaders.push(headers);
  }

  sendTrailers(headers) {
    if (this._isDestroyed() || this._nativeClosed) {
      throw codedError('ERR_HTTP2_INVALID_STREAM', 'The stream has been destroyed');
    }
    if (this.sentTrailers) throw codedError('ERR_HTTP2_TRAILERS_ALREADY_SENT', 'Trailing headers have already been sent');
    if (!this._wantTrailers) throw codedError('ERR_HTTP2_TRAILERS_NOT_READY', 'Trailing headers cannot be sent until after the wantTrailers event is emitted');
    const [block] = serializeHeaders(headers, false);
    this.sentTrailers = headers;
    this._native.sendTrailers(this._id, block);
  }

  close(code = constants.NGHTTP2_NO_ERROR, callback) {
    if (typeof code !== 'number') throw invalidArgType('"code" argument', 'of type number', code);
    if (!Number.isInteger(code)) {
      throw codedRangeError('ERR_OUT_OF_RANGE', `The value of "code" is out of range. It must be an integer. Received ${code}`);
    }
    if (code < 0 || code > 0xffffffff) {
      throw codedRangeError('ERR_OUT_OF_RANGE',
        `The value of "code" is out of range. It must be >= 0 && <= 4294967295. Received ${code}`);
    }
    if (callback !== undefined && typeof callback !== 'function') {
      throw invalidArgType('"callback" argument', 'of type function', callback);
    }
    if (typeof callback === 'function') this.once('close', callback);
    if (this._nativeClosed || this.rstCode !== undefined) return;
    this.rstCode = code;
    // A close before the writable side finished aborts the stream, as
    // node's (its 'aborted' looks at the writable side as close() found it).
    if (!(this._nativeEnded || (this._built ? this.writableFinished : this._lazyWriteEnd))) {
      this._closeAborts = true;
    }
    if (this.headersSent && !this._fileResponding) {
      if (this._nativeEnded) {
        // end() reached the native stream already (end(body) in this
        // turn): the reset follows its END_STREAM, as node's, which sends
        // what is pending before the RST_STREAM. A stream waiting for its
        // trailers (none sent) sends no END_STREAM to wait for: reset now.
        this._native.rstStream(this._id, code, !(this._wantTrailers && !this.sentTrailers));
        return;
      }
      if (!this._built || this.writableLength === 0) {
        // As node's close(), which ends the writable side first: the
        // response ends (END_STREAM) and the reset follows it, so the client
        // gets the complete response (and reports rstCode 0).
        this._nativeEnded = true;
        if (this._held !== HELD_NONE) this._flushHead(true, undefined);
        else this._native.end(this._id, undefined, undefined, 0);
        this._native.rstStream(this._id, code, true);
        return;
      }
      if (code === constants.NGHTTP2_NO_ERROR && this.writableEnded) {
        // write()s still queued behind a window and end() called: as
        // node's, the reset waits for 'finish' (every write and the
        // END_STREAM handed over), then follows the END_STREAM; the
        // writable side was ending, so the stream is not aborted.
        this._closeAborts = false;
        this.once('finish', () => {
          if (!this._nativeClosed) this._native.rstStream(this._id, code, true);
        });
        return;
      }
    }
    if (this._held !== HELD_NONE) this._settleHeadForReset();
    this._native.rstStream(this._id, code);
  }

  // Server push is refused (docs/http2.md): as node's server answers a
  // client that disabled push — which browsers now all do.
  get pushAllowed() { return false; }

  pushStream() {
    throw codedError('ERR_HTTP2_PUSH_DISABLED', 'HTTP/2 client has disabled push streams');
  }

  // No PRIORITY frames are sent (docs/http2.md); as node's, a destroyed
  // stream refuses the call.
  priority() {
    if (this._isDestroyed() || this._nativeClosed) {
      throw codedError('ERR_HTTP2_INVALID_STREAM', 'The stream has been destroyed');
    }
  }

  setTimeout(ms, cb) {
    validateTimeout(ms, cb);
    this.timeout = ms;
    if (ms === 0) {
      if (cb !== undefined) this.removeListener('timeout', cb);
    } else if (cb !== undefined) {
      this.once('timeout', cb);
    }
    if (this._nativeClosed || this._isDestroyed()) return this;
    if (this._idle === null) this._idle = new IdleTimer(emitStreamTimeout, this);
    this._idle.set(ms);
    return this;
  }

  // ---- Duplex --------------------------------------------------------------
  _write(chunk, encoding, cb) {
    let body;
    try {
      body = toChunk(chunk, encoding);
    } catch (err) {
      cb(err);
      return;
    }
    if (this._idle !== null) this._idle.refresh();
    if (!this.headersSent) this.respond();
    if (this._held !== HELD_NONE) this._flushHead(false, undefined);
    if (this._noBody) {
      cb();
      return;
    }
    const r = chunk === FLUSH ? this._native.write(this._id, undefined, true) :
      this._native.write(this._id, body);
    if (r === RESULT_WAIT_DRAIN) {
      this._pendingWriteCb = cb;
    } else {
      cb();
    }
  }

  _final(cb) {
    // As node: end() without respond() sends nothing (no response head,
    // no reset); the stream stays open until the client or the session
    // ends it.
    if (!this.headersSent) {
      cb();
      return;
    }
    if (this._held !== HELD_NONE) this._flushHead(true, undefined);
    if (!this._nativeEnded) {
      this._nativeEnded = true;
      this._native.end(this._id, undefined, undefined, 0);
    }
    cb();
  }

  _read() {
    if (this._readPaused) {
      this._readPaused = false;
      this._native.resumeStream(this._id);
    }
  }

  _destroy(err, cb) {
    releaseQueuedChunks(this);
    if (err && streamError !== null && streamError.hasSubscribers) streamError.publish({ stream: this, error: err });
    if (this._held !== HELD_NONE) this._settleHeadForReset();
    if (this._nativeFile) {
      this._nativeFile.close();
      this._nativeFile = null;
    }
    if (!this._nativeClosed && !this._nativeResets) {
      // Destroyed by the user: reset the stream (as node: CANCEL without an
      // error, INTERNAL_ERROR with one).
      const code = this.rstCode !== undefined ? this.rstCode :
        (err ? constants.NGHTTP2_INTERNAL_ERROR : constants.NGHTTP2_CANCEL);
      if (this.rstCode === undefined) this.rstCode = code;
      this._native.rstStream(this._id, code);
    }
    const pending = this._pendingWriteCb;
    this._pendingWriteCb = null;
    if (pending) pending();
    cb(err);
  }

  // ---- native events (lib/http2/session.js) -----------------------------------
  _onData(chunk) {
    if (this._idle !== null) this._idle.refresh();
    if (this.destroyed) {
      releaseHold(chunk);
      return;
    }
    if (!pushChunk(this, chunk) && !this._readPaused) {
      this._readPaused = true;
      this._native.pauseStream(this._id);
    }
  }

  _onEnd(rawTrailers) {
    if (this._isDestroyed()) return;
    if (rawTrailers) this.emit('trailers', h2HeadersObject(rawTrailers), constants.NGHTTP2_FLAG_END_STREAM);
    if (this._built) this.push(null);
    else this._lazyReadEnd = true;
  }

  _onDrain() {
    const cb = this._pendingWriteCb;
    this._pendingWriteCb = null;
    if (cb) cb();
  }

  _onWantTrailers() {
    this._wantTrailers = true;
    // As node's: with nobody to send them, an empty trailer block ends
    // the stream (it would otherwise stay open).
    if (!this.emit('wantTrailers') && !this._isDestroyed() && !this._nativeClosed) this.sendTrailers({});
  }

  // The request body passed maxRequestBodySize (none of the excess is
  // pushed): the stream is destroyed, with `err` when 'error' is listened
  // to. status 413: sluice answered 413 and resets the stream with
  // NO_ERROR after it; status 0: the handler had responded, its stream is
  // cancelled.
  _onBodyTooLarge(status, err) {
    if (this.destroyed) return;
    this.rstCode = status !== 0 ? constants.NGHTTP2_NO_ERROR : constants.NGHTTP2_CANCEL;
    // After a native 413 the session resets the stream itself once the
    // 413 is out (a reset now would drop it).
    this._nativeResets = status !== 0;
    this.destroy(this.listenerCount('error') > 0 ? err : undefined);
  }

  // As node's: 'frameError' (type, code, id) before the reset's close.
  _onFrameError(type, code) {
    this.emit('frameError', type, code, this._id);
  }

  _onClose(code) {
    if (this._nativeClosed) return;
    this._nativeClosed = true;
    if (this._idle !== null) this._idle.clear();
    if (this.rstCode === undefined) this.rstCode = code;
    const writableDone = this._nativeEnded || (this._built ? this.writableFinished : this._lazyWriteEnd);
    if (!writableDone || this._closeAborts) {
      if (!this.aborted) {
        this.aborted = true;
        this.emit('aborted');
      }
    }
    if (streamClose !== null && streamClose.hasSubscribers) streamClose.publish({ stream: this });
    // As node:http2: a close with an error code — the client's reset, or
    // the handler's own close(code) (rstCode) — is an 'error'; NO_ERROR
    // and CANCEL are not (CANCEL is how clients abort: 'aborted' says it).
    let err;
    const rst = this.rstCode;
    if (rst !== constants.NGHTTP2_NO_ERROR && rst !== constants.NGHTTP2_CANCEL && !this._quietReset) {
      err = codedError('ERR_HTTP2_STREAM_ERROR', `Stream closed with error code ${errorNames[rst] || rst}`);
    }
    if (!this._built && err === undefined && this._eventsCount === 0) {
      // Never built, nobody listens: nothing to emit. What the Duplex
      // would have done (end of the readable side, destroy) is replayed
      // if something builds it later (materialize).
      this._lazyReadEnd = true;
      this._lazyClosed = true;
      return;
    }
    if (err === undefined && rst === constants.NGHTTP2_NO_ERROR && !this.readableEnded &&
        !this._readableState.errored && !this._writableState.errored) {
      // As node: a reset without an error (the client sent DATA +
      // END_STREAM and RST_STREAM(NO_ERROR) at once) leaves the request
      // body that arrived to be read: the stream ends, and is destroyed
      // once 'end' is emitted; a body nobody reads is dumped.
      this.once('end', () => this.destroy());
      this.push(null);
      if (this.readableFlowing === null) this.resume();
      else this.read(0);
      return;
    }
    if (!this.readableEnded) this.push(null);
    this.destroy(err);
  }
}

withPoolIdioms(ServerHttp2Stream);

function emitStreamTimeout(stream) {
  stream.emit('timeout');
}

// fileResponse.serveFile's target for a ServerHttp2Stream: the headers
// object given to respondWithFile, node:http2's answers.
class Http2StreamFileTarget {
  constructor(stream, headers, waitForTrailers, options) {
    this.stream = stream;
    this.headers = headers;
    this.waitForTrailers = waitForTrailers;
    this.compress = !(options && options.compress === false);
  }

  opened() { this.stream._nativeFile = null; }

  useCache() { return this.stream._fileCache === 2; }  // fileCache.ALL

  gone() {
    const s = this.stream;
    return s._isDestroyed() || s._nativeClosed || s.headersSent;
  }

  // Without onError, as node:http2: the stream is destroyed with the error
  // ('error' on the stream, RST_STREAM INTERNAL_ERROR).
  fail(err) {
    this.stream._fileResponding = false;
    this.stream.destroy(err);
  }

  statCheckHeaders() { return this.headers; }

  applyStatCheck() {}

  cancelled() { this.stream._fileResponding = false; }  // the handler answers itself

  start(file, length, onMidBodyError) {
    const stream = this.stream;
    let headers = this.headers;
    if (length >= 0) headers['content-length'] = length;
    else delete headers['content-length'];
    // Response compression: the file goes through the native compressor
    // in the pipe (then without content-length).
    let coding = 0;
    const cfg = stream._compressCfg;
    try {
      if (cfg !== null && this.compress) {
        [coding, headers] = h2compress.decide(stream._requestHeaders, cfg,
          headers[':status'] | 0 || 200, headers, length);
      }
      stream.respond(headers, { waitForTrailers: this.waitForTrailers, compress: false });
    } catch (e) {
      // statCheck left a header that cannot be sent (nothing was): as
      // node:http2, the stream is destroyed with the error.
      file.close();
      stream.destroy(e);
      return;
    }
    if (stream._noBody) {
      file.close();
      return;
    }
    stream._nativeEnded = true;  // the pipe ends the body
    // A mid-body failure: the core reset the stream.
    const r = coding !== 0 ?
      stream._native.respondFile(stream._id, file, onMidBodyError, coding, cfg.level, cfg.brotliQuality) :
      stream._native.respondFile(stream._id, file, onMidBodyError);
    if (r < 0) file.close();
    stream.end();
  }
}

// A compression head still held a tick after respond(): the body streams.
function sendCompressHead(stream) {
  if (stream._held === HELD_COMPRESS && !stream._nativeClosed && !stream._isDestroyed()) {
    stream._flushHead(false, undefined);
  }
}

// node's 'http2.server.stream.finish' for a head respond() accepted.
function publishFinish(stream, status, flags, options) {
  channels.publishStreamFinish(stream, stream._sentHeaders, status, (flags & H2_ADD_DATE) !== 0,
    stream._isHead, !!options.waitForTrailers);
}

function noop() {}

const noOptions = Object.freeze({});

module.exports = { ServerHttp2Stream, Http2SessionHandle, IdleTimer, validateTimeout, originOf, constants };
