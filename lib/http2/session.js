'use strict';

// The HTTP/2 half of Server: the native callbacks that
// turn HTTP/2 stream events into 'stream' events (ServerHttp2Stream) or,
// when only a 'request' listener exists, into the same req/res objects
// HTTP/1.1 uses (IncomingRequest / ServerResponse over a per-stream
// adapter that speaks the native connection's method names).

const http2 = require('http2');
const prototypeBridge = require('../http/prototype_bridge');
const binding = require('../common/binding');
const { IncomingRequest, kPoolBacked } = require('../http/request');
const { retainChunk, releaseHold } = require('../uploads/buffer_pool');
const { ServerResponse, kFinished } = require('../http/response');
const { SluiceSocket } = require('../net/socket');
const { connState } = require('../net/connection_state');
const { h2HeadersObject, h2HeadersFromPacked, validateHeaderName } = require('../http/headers');
const { ServerHttp2Stream, Http2SessionHandle, IdleTimer, validateTimeout, originOf, constants } = require('./stream');
const { toChunk } = require('../http/body');
const { codedError, codedTypeError, codedRangeError, invalidArgType } = require('../common/errors');
const channels = require('../observe/channels');

const { streamCreated, streamStart } = channels;

const { kH2State: kState, kConnState, kH2WebSocket, kReq, kTrailers, kFileBody } = require('../common/symbols');

const {
  H2_HTTP1_BLOCK, H2_ADD_DATE, H2_END_AFTER_BODY, HEAD_USER_DATE, HEAD_END,
  STATUS_MASK, STATUS_FLAGS_SHIFT, RESULT_CLOSED, RESULT_BAD_BODY, RESULT_COMPRESS_FAILED,
  RESULT_NO_BODY, VERSION_2_0, VERSION_3_0, ALLOC_FALLBACK, ALLOC_ERROR,
} = binding.constants;

// ---- compat: one HTTP/2 stream seen through the HTTP/1.1 objects -------------

// node's compat warns once per process when a status message is set: HTTP/2
// has no reason phrase (RFC 9113 8.3.2).
let statusMessageWarned = false;
function statusMessageWarn() {
  if (statusMessageWarned) return;
  statusMessageWarned = true;
  process.emitWarning('Status message is not supported by HTTP/2 (RFC7540 8.1.2.4)', 'UnsupportedWarning');
}

const kStatusCode = Symbol('kStatusCode');
const kCorked = Symbol('kCorked');
const kCompat = Symbol('kCompat');  // req/res -> their CompatEntry
const kBodyDone = Symbol('kBodyDone');  // Http2ServerRequest: the whole body arrived
const kMethod = Symbol('kMethod');
const kClosedEmitted = Symbol('kClosedEmitted');  // Http2ServerResponse: 'finish' emitted at the close

function trimName(name) {
  return typeof name === 'string' ? name.trim() : name;
}

// setHeader / appendHeader: pseudo-headers are HTTP/2's own, as node's.
function settableName(name) {
  if (typeof name !== 'string') throw invalidArgType('"name" argument', 'of type string', name);
  name = name.trim();
  if (name[0] === ':') {
    throw codedTypeError('ERR_HTTP2_PSEUDOHEADER_NOT_ALLOWED', 'Cannot set HTTP/2 pseudo-headers');
  }
  return name;
}

// As node's compat: a Connection field (HTTP/2 has none, RFC 9113
// 8.2.2) is dropped when set, with a warning once per process; other
// connection-specific fields are dropped natively.
let connectionWarned = false;
function droppedConnection(name, value) {
  if (name.length !== 10 || name.toLowerCase() !== 'connection' || value === 'trailers') return false;
  if (!connectionWarned) {
    connectionWarned = true;
    process.emitWarning('The provided connection header is not valid, the value will be dropped from ' +
      'the header and will never be in use.', 'UnsupportedWarning');
  }
  return true;
}

function h2HeadersSent() {
  return codedError('ERR_HTTP2_HEADERS_SENT', 'Response has already been initiated.');
}

// The compat request of an HTTP/2 stream: IncomingRequest with node's
// Http2ServerRequest setTimeout (the stream's idle timeout, not the
// connection's).
class Http2ServerRequest extends IncomingRequest {
  setTimeout(ms, cb) { return compatSetTimeout(this[kCompat], this, ms, cb); }

  get stream() { return compatStream(this[kCompat]); }

  // As node's: true once the body was read to its end, or the request
  // aborted or its stream closed; not merely when the body arrived
  // (kBodyDone, what the server itself goes by).
  get complete() {
    const entry = this[kCompat];
    return this.aborted || (this._built && this.readableEnded) || (entry !== undefined && entry.closed);
  }

  set complete(v) { this[kBodyDone] = v; }

  // node's compat: the pseudo-headers' values (req.url is :path).
  get authority() { return this.headers[':authority'] || this.headers.host; }

  get scheme() { return this.headers[':scheme']; }

  // As node's compat: a method set by the handler (method-override
  // middleware) is checked.
  get method() { return this[kMethod]; }

  set method(method) {
    if (typeof method !== 'string') throw invalidArgType('"method" argument', 'of type string', method);
    // (Every request's own method passes through here: trim() only when
    // the first character could be white space.)
    const c = method.charCodeAt(0);
    if (method.length === 0 || ((c <= 32 || c >= 0x80) && method.trim() === '')) {
      throw codedTypeError('ERR_INVALID_ARG_VALUE', `The argument 'method' is invalid. Received '${method}'`);
    }
    this[kMethod] = method;
  }
}

// req.stream / res.stream: node's compat objects sit on a
// ServerHttp2Stream; sluice's talk to the native stream directly (no
// Duplex per request). The stream is made on first access, over the same
// native stream, and hears its native events through the CompatEntry.
// Its head state is the response's: a head the response sent is the
// stream's (close() then ends the response before its reset, as node's).
class CompatHttp2Stream extends ServerHttp2Stream {
  constructor(entry, headers) {
    super(entry.native, entry.id, headers, entry.session, entry.req[kBodyDone]);
    this._res = entry.res;
    // As node's compat: a stream error is the stream's own; the request
    // and the response hear the close ('aborted', 'close').
    this.on('error', noop);
  }

  get headersSent() { return this._ownHead || this._res.headersSent; }

  set headersSent(v) { this._ownHead = v; }
}

function noop() {}

function compatStream(entry) {
  if (entry.stream !== null) return entry.stream;
  const raw = entry.head.raw;
  const headers = typeof raw === 'string' ? h2HeadersFromPacked(raw, []) : h2HeadersObject(raw);
  const stream = entry.stream = new CompatHttp2Stream(entry, headers);
  if (entry.closed) stream._onClose(entry.closeCode);
  return stream;
}

// The server's Http2ServerRequest / Http2ServerResponse options (node's
// names): null for the default, else the class. A class extending node's
// (http2.Http2ServerRequest) has the base of its chain — the prototype
// that inherits node's directly — re-chained onto sluice's class, once:
// the class's members come first, then sluice's; the constructor that
// runs is sluice's, with the class as new.target.
function adoptCompatClass(cls, kind) {
  const own = kind === 'Http2ServerRequest' ? Http2ServerRequest : Http2ServerResponse;
  const nodeProto = http2[kind].prototype;
  if (cls === undefined || cls === null || cls === own) return null;
  if (typeof cls !== 'function' || cls.prototype === null || typeof cls.prototype !== 'object' ||
      !(own.prototype.isPrototypeOf(cls.prototype) || nodeProto.isPrototypeOf(cls.prototype))) {
    throw invalidArgType(`"options.${kind}" property`, `a class extending http2.${kind}`, cls);
  }
  if (own.prototype.isPrototypeOf(cls.prototype)) return cls;
  let base = cls.prototype;
  for (let p = Object.getPrototypeOf(base); p !== nodeProto; p = Object.getPrototypeOf(p)) base = p;
  Object.setPrototypeOf(base, own.prototype);
  return cls;
}

// req/res.setTimeout(ms, cb): as node's compat, the stream's idle timer;
// when it fires, cb, then 'timeout' on req and on res. A no-op once the
// stream closed or the response finished.
function compatSetTimeout(entry, self, ms, cb) {
  validateTimeout(ms, cb);
  if (entry.closed || entry.res.writableFinished) return self;
  if (ms === 0) {
    if (entry.idle !== null) entry.idle.clear();
    return self;
  }
  if (cb !== undefined) entry.timeoutCbs.push(cb);
  if (entry.idle === null) entry.idle = new IdleTimer(compatTimeout, entry);
  entry.idle.set(ms);
  return self;
}

function compatTimeout(entry) {
  const cbs = entry.timeoutCbs;
  entry.timeoutCbs = [];
  for (const cb of cbs) cb();
  entry.req.emit('timeout');
  entry.res.emit('timeout');
}

// The compat response of an HTTP/2 stream: ServerResponse with node's
// Http2ServerResponse differences (statusMessage, setTrailer, trailers
// that accumulate).
class Http2ServerResponse extends ServerResponse {
  // Always '' (node's); reading or setting it warns (once per process).
  // The constructor's and writeHead()'s own stores of undefined do not.
  get statusMessage() {
    statusMessageWarn();
    return '';
  }

  set statusMessage(v) {
    if (v !== undefined) statusMessageWarn();
  }

  // node's range for an HTTP/2 status: 1xx go through writeContinue /
  // writeEarlyHints, not here.
  get statusCode() { return this[kStatusCode]; }

  set statusCode(code) {
    code |= 0;
    if (code >= 100 && code < 200) {
      throw codedRangeError('ERR_HTTP2_INFO_STATUS_NOT_ALLOWED', 'Informational status codes cannot be used');
    }
    if (code < 100 || code > 599) throw codedRangeError('ERR_HTTP2_STATUS_INVALID', `Invalid status code: ${code}`);
    this[kStatusCode] = code;
  }

  // HTTP/2's error code for a head already sent, node's message; names
  // trimmed as node's compat does (HTTP/2 field names are lower case: the
  // lookups are by lower case already).
  setHeader(name, value) {
    if (this.headersSent) throw h2HeadersSent();
    name = settableName(name);
    // As node's: a field without a value is an HTTP/2 error (a bad name
    // is the base class's to report first).
    if (value == null && name !== '') {
      throw codedTypeError('ERR_HTTP2_INVALID_HEADER_VALUE',
        `Invalid value "${value}" for header "${name.toLowerCase()}"`);
    }
    if (droppedConnection(name, value)) return this;
    return super.setHeader(name, value);
  }

  appendHeader(name, value) {
    if (this.headersSent) throw h2HeadersSent();
    name = settableName(name);
    if (droppedConnection(name, value)) return this;
    return super.appendHeader(name, value);
  }

  removeHeader(name) {
    if (this.headersSent) throw h2HeadersSent();
    name = trimName(name);
    // As node's: removing Date turns the automatic one off.
    if (typeof name === 'string' && name.toLowerCase() === 'date') this.sendDate = false;
    return super.removeHeader(name);
  }

  getHeader(name) { return super.getHeader(trimName(name)); }

  hasHeader(name) { return super.hasHeader(trimName(name)); }

  // As node's: a response whose stream is gone ignores writeHead().
  writeHead(statusCode, reason, headers) {
    if (this.destroyed || this.writableFinished) return this;
    if (this.headersSent) throw h2HeadersSent();
    super.writeHead(statusCode, reason, headers);
    // As node's compat, whose writeHead sends the head: a HEAD request's
    // response (no body) is complete with it, the stream ends; end() is
    // still the handler's to call. A file response's head waits for the
    // native file (respondWithFile answers HEAD with the head alone).
    if (this[kReq].method === 'HEAD' && this[kFileBody] === undefined) this.flushHeaders();
    return this;
  }

  // node's count of cork() calls not yet uncork()ed. Writes are framed
  // once per loop turn whatever the count (every write is corked until
  // the native flush), so the count is the only effect.
  get writableCorked() { return this[kCorked] || 0; }

  cork() { this[kCorked] = (this[kCorked] || 0) + 1; }

  uncork() {
    if (this[kCorked] > 0) this[kCorked]--;
  }

  setTimeout(ms, cb) { return compatSetTimeout(this[kCompat], this, ms, cb); }

  get stream() { return compatStream(this[kCompat]); }

  // As node's compat: the stream's close is the response's 'finish' —
  // whether or not it ended — then its 'close'.
  _closed() {
    if (!this[kFinished] && !this[kClosedEmitted] && !this._nativeFileDone) {
      this[kClosedEmitted] = true;
      this.emit('finish');
    }
    super._closed();
  }

  // As node's compat: no socket once the response finished or its
  // stream closed (the request keeps its own).
  get socket() { return this[kFinished] || this[kCompat].closed ? undefined : super.socket; }

  get connection() { return this.socket; }

  // As node's compat: a write after end() or once the stream closed
  // tells its callback (ERR_STREAM_WRITE_AFTER_END, ERR_HTTP2_INVALID_STREAM);
  // the response emits no 'error'.
  write(chunk, encoding, cb) {
    const ended = this.writableEnded;
    if (ended || this[kCompat].closed) {
      if (typeof encoding === 'function') cb = encoding;
      if (typeof cb === 'function') {
        process.nextTick(cb, ended ? codedError('ERR_STREAM_WRITE_AFTER_END', 'write after end') :
          codedError('ERR_HTTP2_INVALID_STREAM', 'The stream has been destroyed'));
      }
      return false;
    }
    return super.write(chunk, encoding, cb);
  }

  // As node's compat: end() once ended or once the stream closed only
  // calls its callback.
  end(chunk, encoding, cb) {
    if (this.writableEnded || this[kCompat].closed) {
      if (typeof chunk === 'function') cb = chunk;
      else if (typeof encoding === 'function') cb = encoding;
      if (typeof cb === 'function') process.nextTick(cb);
      return this;
    }
    return super.end(chunk, encoding, cb);
  }

  // As node's: false once too late (the head is out, or the stream gone).
  writeContinue(cb) {
    if (this.headersSent || this.destroyed || this[kCompat].closed) return false;
    super.writeContinue(cb);
    return true;
  }

  setTrailer(name, value) {
    if (typeof name !== 'string') throw invalidArgType('"name" argument', 'of type string', name);
    validateHeaderName(name);
    if (value === undefined || value === null) {
      throw codedTypeError('ERR_HTTP2_INVALID_HEADER_VALUE', `Invalid value "${value}" for header "${name}"`);
    }
    this.addTrailers({ [name]: value });
  }

  // As node's: trailers given in several calls add up.
  addTrailers(headers) {
    for (const name of Object.keys(headers)) validateHeaderName(name);
    const before = this[kTrailers];
    super.addTrailers(headers);
    this[kTrailers] = before + this[kTrailers];
  }
}

// The subset of NativeConnection that IncomingRequest and ServerResponse
// call, mapped onto one stream of a native HTTP/2 session. `seq` arguments
// are ignored: the adapter is per stream.
class StreamConn {
  constructor(native, id) {
    this._native = native;
    this._id = id;
  }

  respond(seq, statusWord, reason, block, body, trailers) {
    const f = statusWord >>> STATUS_FLAGS_SHIFT;
    let flags = H2_HTTP1_BLOCK;
    if (!(f & HEAD_USER_DATE)) flags |= H2_ADD_DATE;
    if (f & HEAD_END) flags |= H2_END_AFTER_BODY;
    const r = this._native.respond(this._id, statusWord & STATUS_MASK, block || '', flags,
      body === undefined ? undefined : toChunk(body), trailers);
    return r < 0 ? RESULT_CLOSED : r;
  }

  write(seq, body) {
    const r = this._native.write(this._id, toChunk(body));
    return r < 0 ? RESULT_CLOSED : r;
  }

  // res.end(body) with a negotiated coding (lib/compress/compression.js respond):
  // head, compressed body (content-length = its size) and end in one
  // native call; on the threadpool from 32 KiB.
  respondCompressed(seq, statusWord, reason, block, body, trailers, coding, level, quality) {
    const f = statusWord >>> STATUS_FLAGS_SHIFT;
    let flags = H2_HTTP1_BLOCK;
    if (!(f & HEAD_USER_DATE)) flags |= H2_ADD_DATE;
    const r = this._native.respondCompressed(this._id, statusWord & STATUS_MASK, block || '', flags,
      body === undefined ? undefined : toChunk(body), trailers, coding, level, quality);
    // Stream results (gone, closed) read as closed, as respond's; a bad
    // body or a compression failure is thrown by res.
    return r < 0 && r !== RESULT_BAD_BODY && r !== RESULT_COMPRESS_FAILED ? RESULT_CLOSED : r;
  }

  end(seq, body, trailers) {
    const r = this._native.end(this._id, body === undefined ? undefined : toChunk(body),
      trailers, H2_HTTP1_BLOCK);
    return r < 0 ? RESULT_CLOSED : r;
  }

  // ServerResponse.respondWithFile over HTTP/2 (lib/http/response.js): the head,
  // then the opened NativeFile into this stream's native pipe sink.
  // Returns < 0 (not started), 0 (onDone(status) follows) or 1 (no body:
  // HEAD, 204, 304; the stream is ended here).
  // coding, level, quality: the response compression res._fileCoding
  // chose (lib/files/file_response.js); the file then runs through a native
  // compressor in the pipe.
  respondWithNativeFile(seq, statusWord, reason, block, file, onDone, coding, level, quality) {
    let r = this.respond(seq, statusWord, reason, block, undefined, undefined);
    if (r < 0) return r;
    const done = (status) => {
      // A cancel (the stream closed first) reaches res as 'close'.
      if (status === 0 || binding.errname(status) !== 'ECANCELED') onDone(status);
    };
    r = coding ? this._native.respondFile(this._id, file, done, coding, level, quality) :
      this._native.respondFile(this._id, file, done);
    if (r === RESULT_NO_BODY) this.end(seq, undefined, undefined);
    return r < 0 ? RESULT_CLOSED : r;
  }

  // The stream's own native compressor (res._compressor).
  newCompressor(coding, cfg) { return new StreamCompressor(this._native, this._id, coding, cfg); }

  writeContinue() { this._native.info(this._id, 100, '', 0); }

  // res.writeEarlyHints / writeProcessing: "Name: value\r\n" lines checked
  // by ServerResponse.
  writeInfo(seq, status, block) { this._native.info(this._id, status, block, H2_HTTP1_BLOCK); }

  // HTTP/2 has no reason phrase: res.statusMessage never reaches the wire
  // (node's compat ignores it too).
  get reasonOnWire() { return false; }

  pause() { this._native.pauseStream(this._id); }

  resume() { this._native.resumeStream(this._id); }

  // res.destroy(err): node's compat codes (its stream's destroy():
  // NO_ERROR, INTERNAL_ERROR with an error).
  destroy(err) {
    this._native.rstStream(this._id, err ? constants.NGHTTP2_INTERNAL_ERROR : constants.NGHTTP2_NO_ERROR);
  }

  peer() { return this._native.peer(); }

  local() { return this._native.local(); }
}

// Express-style re-parenting keeps the compat classes' own members.
prototypeBridge.installVariant(StreamConn, Http2ServerRequest, Http2ServerResponse);

// What req.socket's native side is for an HTTP/2 session: addresses and
// destroy; raw writes are refused (as node's http2 socket proxy does).
// res._compressor of a compat response over HTTP/2 (the role of
// binding.NativeCompressor on HTTP/1.1): the stream's own native
// compressor (Http2Session::StartCompression) does the work, so write,
// flush and end are the stream's.
class StreamCompressor {
  constructor(native, id, coding, cfg) {
    this._native = native;
    this._id = id;
    native.compress(id, coding, cfg.level, cfg.brotliQuality);
  }

  write(conn, seq, chunk, flush) {
    const r = this._native.write(this._id, chunk === undefined ? undefined : toChunk(chunk), flush);
    return r < 0 ? RESULT_CLOSED : r;
  }

  end(conn, seq, chunk, trailers) { return conn.end(seq, chunk, trailers); }

  close() {}  // the stream's compressor dies with the stream
}

function socketConn(native) {
  return {
    peer: () => native.peer(),
    local: () => native.local(),
    tls: () => native.tls(),
    tlsQuery: (...args) => native.tlsQuery(...args),
    destroy: () => native.destroy(),
    writeRaw: () => false,
    endRaw: () => native.goaway(0),
    // Byte counts and keep-alive belong to the connection's own socket,
    // gone with the connection (sessionSocket).
    stats: () => ({}),
    setKeepAlive: () => 0,
    pause() {},
    resume() {},
    copyReads() {},
  };
}

class CompatEntry {
  // protocol: the :protocol of an extended CONNECT (RFC 8441), else
  // undefined; a noServer WebSocketServer's handleUpgrade checks it
  // (lib/websocket/http2_accept.js takeCompat).
  constructor(req, res, protocol, native, id, session, head) {
    this.req = req;
    this.res = res;
    this.protocol = protocol;
    this.native = native;
    this.id = id;
    this.session = session;
    this.head = head;      // H2Head: the request head, for req.stream's headers
    this.stream = null;    // req.stream / res.stream once asked for
    this.closed = false;
    this.closeCode = 0;
    this.idle = null;  // IdleTimer once req/res.setTimeout() was called
    this.timeoutCbs = [];
    req[kCompat] = this;
    res[kCompat] = this;
  }

  _onData(chunk) {
    if (this.idle !== null) this.idle.refresh();
    this.req._pushBody(chunk);
  }

  _onEnd(rawTrailers) {
    this.req._pushEnd(rawTrailers);
    if (this.stream !== null) this.stream._onEnd(undefined);
  }

  _onDrain() {
    if (this.stream !== null) this.stream._onDrain();
    this.res._drain();
  }

  _onWantTrailers() {}

  _onFrameError() {}

  // The body passed maxRequestBodySize (as HTTP/1.1's): status 413 was
  // answered natively and the handler's response can no longer be sent;
  // status 0: the handler's response stands. req emits 'error' when
  // listened to, then 'close'.
  _onBodyTooLarge(status, err) {
    if (status !== 0) this.res.destroyed = true;
    this.req._fail(err);
  }

  _onClose(code) {
    this.closed = true;
    this.closeCode = code;
    if (this.idle !== null) this.idle.clear();
    if (this.stream !== null) this.stream._onClose(code);
    // As node's compat: a stream that closes before the response ended
    // (client reset, the client's socket closed) aborts the request
    // whether or not its body was complete; after the response ended, the
    // request ends with what arrived (no 'aborted').
    if (!this.res.writableEnded) this.req._abortStream();
    else this.req._streamClosed();
    this.res._closed();
  }
}

// As node's compat: the response finished and nobody has started reading
// the body — not even by attaching a reader right after res.end() — by
// the next turn of the loop: it is dumped (acknowledged and discarded, so
// the client is not stalled). A reader that came first gets all of it.
function onCompatFinish(res) {
  const req = res[kReq];
  if (!req[kBodyDone] && !isReading(req)) setImmediate(dumpUnread, req);
}

function isReading(req) {
  return req._consuming || req.readableFlowing !== null;
}

function dumpUnread(req) {
  if (!req[kBodyDone] && !req.destroyed && !isReading(req)) req._dump();
}

// ---- request bodies in allocator memory ----------------------------------------

// With a requestBufferAllocator the session reads into the allocator's
// memory and a DATA payload there arrives as (offset, len) into the
// connection's current read buffer (its ConnState's bodyBuf, set by
// BodyMemory.alloc in lib/http1/session.js). It is handed out as a view
// retained with a WindowCredit: when the view's reference is dropped —
// releaseBuffer, a pipe destination's write callback (lib/http/request.js), or
// the view collected unreleased — the session credits the stream's and the
// connection's flow-control windows (native consume). So a consumer that
// keeps its chunks holds back its client (the window shuts), not the pool.
//
// HTTP/3 (src/core/http3/http3_session.h): each request stream is read
// into a buffer of its own, lent by onStreamAlloc and kept here, on the
// native session (kStreamBufs: id → Buffer), until onStreamBufferRelease;
// payloads arrive as (offset, len) into it. consume() there lets the
// session read the stream (and the connection) on once the stream's
// unreleased bytes are under HTTP/2's stream window (and the connection's
// under its connection window): unread, its data keeps QUIC's flow-control
// windows shut, so the same WindowCredit works for both.
const kStreamBufs = Symbol('kStreamBufs');

// A stream's window held shut this long by unreleased chunks, with no
// data and no release meanwhile, warns (once per stream), as a dry pool
// does (lib/uploads/buffer_pool.js): a silent stall is the likely result of a
// handler that never releases.
const WINDOW_HELD_WARNING_MS = 500;

// Per stream: the bytes of its views not yet given back.
class StreamWindow {
  constructor(native, id, threshold, protocol) {
    this.native = native;
    this.id = id;
    this.protocol = protocol;    // 'HTTP/2' or 'HTTP/3', for the warning
    this.threshold = threshold;  // half the window: past it the client may stop
    this.held = 0;
    this.activity = 0;           // views cut + given back, for the stall check
    this.timer = null;
    this.done = false;           // the body ended or the stream closed
  }

  take(n) {
    this.held += n;
    this.activity++;
    if (this.held >= this.threshold && this.timer === null && !this.done) this.arm();
  }

  give(n) {
    this.held -= n;
    this.activity++;
    this.native.consume(this.id, n);
  }

  arm() {
    this.timer = setTimeout(checkWindowHeld, WINDOW_HELD_WARNING_MS, this, this.activity);
    this.timer.unref();
  }

  // No stall can follow: nothing more is due on this stream.
  finish() {
    this.done = true;
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
  }
}

function checkWindowHeld(w, activity) {
  w.timer = null;
  if (w.done || w.held < w.threshold) return;
  if (w.activity !== activity) {
    w.arm();
    return;
  }
  w.done = true;  // once per stream
  process.emitWarning(
    `sluice: ${w.protocol} stream ${w.id} holds ${w.held} bytes of request body chunks that were ` +
    `not released for ${WINDOW_HELD_WARNING_MS} ms: its flow-control window is credited only ` +
    `when chunks are released, so the client is stalled. Call sluice.releaseBuffer(chunk) ` +
    `once done with each 'data' chunk, or consume the body with stream.pipe(writable), ` +
    `stream.pipeline() or for await, which release for you (see docs/uploads.md).`,
    { code: 'SLUICE_H2_WINDOW_HELD' });
}

// One view's share of its stream's window: settled once by the pool
// (lib/uploads/buffer_pool.js retainChunk) when the view's reference is dropped.
// References neither the view nor its memory.
class WindowCredit {
  constructor(window, n) {
    this.window = window;
    this.n = n;
  }

  settle() {
    const n = this.n;
    if (n === 0) return;
    this.n = 0;
    this.window.give(n);
  }
}

// The view of stream `id`'s DATA payload at `offset` in `memory` (the
// connection's read buffer; on HTTP/3 the stream's own), retained so that
// its release credits the windows. Memory of an allocator that is not a
// pool carries no reference: credited now.
function bodyView(server, st, native, id, memory, offset, len, protocol) {
  const view = memory.subarray(offset, offset + len);
  let w = st.windows.get(id);
  if (w === undefined) {
    w = new StreamWindow(native, id, Math.max(1, Math.floor(server._h2StreamWindow / 2)), protocol);
    st.windows.set(id, w);
  }
  if (retainChunk(view, new WindowCredit(w, len))) w.take(len);
  else native.consume(id, len);
  return view;
}

function finishWindow(st, id) {
  const w = st.windows.get(id);
  if (w === undefined) return;
  st.windows.delete(id);
  w.finish();
}

// ---- native callbacks ------------------------------------------------------------

// The session's socket (session.socket, req.socket, res.socket) is the
// connection's own socket, the object the server's 'connection' and
// 'secureConnection' events handed out: properties set there are seen
// here, and byte counts are the connection's, as node's session.socket
// proxies the net.Socket of 'connection'. Writing, pausing and ending it
// act on nothing while HTTP/2 owns the connection (node throws
// ERR_HTTP2_NO_SOCKET_MANIPULATION there). A session whose connection is
// already gone gets a socket view of the session itself.
function sessionSocket(server, native) {
  const conn = native.connection();
  if (conn !== undefined) return connState(server, conn).socket;
  return new SluiceSocket(socketConn(native), server);
}

// Whether a request head (raw: [name, value, ...], pseudo-headers first)
// is an extended CONNECT for a WebSocket (RFC 8441 4).
function isWebSocketConnect(raw) {
  let connect = false;
  let websocket = false;
  for (let i = 0; i < raw.length && raw[i][0] === ':'; i += 2) {
    if (raw[i] === ':method') connect = raw[i + 1] === 'CONNECT';
    else if (raw[i] === ':protocol') websocket = raw[i + 1] === 'websocket';
  }
  return connect && websocket;
}

function sessionState(server, native) {
  let st = native[kState];
  if (st === undefined) {
    const socket = sessionSocket(server, native);
    st = {
      streams: new Map(),
      windows: new Map(),  // stream id → StreamWindow, while the stream lives
      socket,
      handle: new Http2SessionHandle(native, socket),
    };
    st.handle._maxPendingAck = server._h2MaxPendingAck;
    native[kState] = st;
    const conn = native.connection();
    if (conn !== undefined) connState(server, conn).h2Session = st.handle;
    if (server._h2Origins !== null) st.handle.origin(...server._h2Origins);
    server.emit('session', st.handle);
  }
  return st;
}

// What differs between the protocols whose streams these callbacks serve:
// the compat requests' httpVersion code; whether responses carry the
// server's Alt-Svc (not on HTTP/3 itself); whether responses may be
// compressed (the server's `compression` option); whether extended
// CONNECT streams are WebSockets (RFC 8441: HTTP/2 advertises it, HTTP/3
// does not, so its sessions never get one).
const PROTOCOLS = {
  h2: { version: VERSION_2_0, altSvc: true, compress: true, webSockets: true },
  h3: { version: VERSION_3_0, altSvc: false, compress: true, webSockets: false },
};

// The stream callbacks of one protocol: 'h2' (a native HTTP/2 session,
// spread into the NativeServer's) or 'h3' (lib/http3/endpoint.js).
function callbacks(server, protocol = 'h2') {
  const { version, altSvc, compress, webSockets } = PROTOCOLS[protocol];
  return {
    // raw: the request head packed as "name\0value\0..." (or, should a
    // field hold a NUL, already an array; src/binding/js_http2.h).
    onStream(native, id, raw, endStream) {
      const st = sessionState(server, native);
      // An attached WebSocketServer takes WebSocket streams before the
      // 'stream' / 'request' listeners (a session only has them when the
      // server advertised SETTINGS_ENABLE_CONNECT_PROTOCOL).
      const takeWebSocket = server[kH2WebSocket];
      if (webSockets && takeWebSocket !== undefined && !endStream) {
        // Only a head with :protocol is split here: every other stream
        // keeps the packed form its handler path parses once.
        const fields = typeof raw !== 'string' ? raw
          : raw.indexOf(':protocol\0') === -1 ? null : raw.split('\0');
        if (fields !== null && isWebSocketConnect(fields)) {
          takeWebSocket(native, id, fields, st);
          return;
        }
      }
      const onSession = st.handle.listenerCount('stream') > 0;
      if (onSession || server.listenerCount('stream') > 0) {
        let headers;
        if (typeof raw === 'string') {
          const packed = raw;
          raw = [];
          headers = h2HeadersFromPacked(packed, raw);
        } else {
          headers = h2HeadersObject(raw);
        }
        const stream = new ServerHttp2Stream(native, id, headers, st.handle, endStream);
        if (server.requestBufferAllocator !== null) stream[kPoolBacked] = true;
        stream._compressCfg = compress ? server._compression : null;
        stream._fileCache = server._fileCache;
        if (altSvc && server._altSvc !== null) stream._altSvc = server._altSvc;
        st.streams.set(id, stream);
        if (streamStart !== null && (streamCreated.hasSubscribers || streamStart.hasSubscribers)) {
          channels.publishStreamStart(stream, headers);
        }
        // A head the handler gives without ending the stream is held until
        // the handler returns, so respond() + end(body) leave as one
        // native call (ServerHttp2Stream.respond).
        stream._dispatching = true;
        try {
          const flags = constants.NGHTTP2_FLAG_END_HEADERS |
            (endStream ? constants.NGHTTP2_FLAG_END_STREAM : 0);
          // As node: the server hears a session's streams first.
          server.emit('stream', stream, headers, flags, raw);
          if (onSession) st.handle.emit('stream', stream, headers, flags, raw);
        } finally {
          stream._dispatched();
        }
      } else if (server.listenerCount('request') > 0) {
        emitCompat(server, st, native, id, raw, endStream, version, altSvc, compress);
      } else {
        native.rstStream(id, constants.NGHTTP2_REFUSED_STREAM);
      }
    },
    // (native, id, chunk) with a copy; (native, id, offset, len, conn)
    // for a payload in the allocator's read buffer; HTTP/3: (native, id,
    // offset, len), in the stream's buffer (kStreamBufs).
    onStreamData(native, id, chunk, len, conn) {
      const st = native[kState];
      if (typeof chunk === 'number') {
        chunk = conn !== undefined ?
          bodyView(server, st, native, id, conn[kConnState].bodyBuf, chunk, len, 'HTTP/2') :
          bodyView(server, st, native, id, native[kStreamBufs].get(id), chunk, len, 'HTTP/3');
      }
      const e = st.streams.get(id);
      if (e !== undefined) e._onData(chunk);
      else releaseHold(chunk);
    },
    onStreamEnd(native, id, rawTrailers) {
      const st = native[kState];
      finishWindow(st, id);
      const e = st.streams.get(id);
      if (e !== undefined) e._onEnd(rawTrailers);
    },
    onStreamDrain(native, id) {
      const e = native[kState].streams.get(id);
      if (e !== undefined) e._onDrain();
    },
    onStreamWantTrailers(native, id) {
      const e = native[kState].streams.get(id);
      if (e !== undefined) e._onWantTrailers();
    },
    // A frame of the stream could not be sent (a header block over
    // nghttp2's 64 KiB): the stream is reset FRAME_SIZE_ERROR next.
    onStreamFrameError(native, id, type, code) {
      const e = native[kState].streams.get(id);
      if (e !== undefined) e._onFrameError(type, code);
    },
    onStreamBodyTooLarge(native, id, status) {
      const e = native[kState].streams.get(id);
      if (e === undefined) return;
      const err = codedError('ERR_SLUICE_BODY_TOO_LARGE',
        `Request body larger than maxRequestBodySize (${server.maxRequestBodySize} bytes)`);
      err.statusCode = 413;
      e._onBodyTooLarge(status, err);
    },
    onStreamClose(native, id, code) {
      const st = native[kState];
      if (st === undefined) return;
      finishWindow(st, id);
      const e = st.streams.get(id);
      if (e === undefined) return;
      st.streams.delete(id);
      e._onClose(code);
    },
    // The connection's first HTTP/2 bytes: 'session' is emitted here, as
    // node emits it when the connection starts (also for a connection
    // whose first SETTINGS is refused, or that never opens a stream).
    onSessionStart(native) {
      sessionState(server, native);
    },
    onPing(native, payload, ack) {
      sessionState(server, native).handle._onPing(payload, ack);
    },
    // The client's first SETTINGS is its connection preface: the session
    // starts (and 'session' is emitted) there, not at its first stream.
    onSettings(native, ack) {
      sessionState(server, native).handle._onSettings(ack);
    },
    onGoaway(native, code, lastStreamId) {
      const st = sessionState(server, native);
      st.handle.emit('goaway', code, lastStreamId);
    },
    // HTTP/3 only (src/binding/js_http3.h): memory for the next read of
    // request stream `id`, kept until onStreamBufferRelease. An allocator
    // that throws closes the connection (native side, H3_INTERNAL_ERROR),
    // as it destroys an HTTP/1.1 or HTTP/2 connection; 'clientError' hears
    // why.
    onStreamAlloc(native, id, size) {
      const memory = server._bodyMemory;
      if (memory === null) return ALLOC_FALLBACK;
      let buf;
      try {
        buf = memory.allocFor(native, size);
      } catch (err) {
        if (server.listenerCount('clientError') > 0) {
          server.emit('clientError', err, sessionState(server, native).socket);
        }
        return ALLOC_ERROR;
      }
      if (typeof buf !== 'number') {
        let bufs = native[kStreamBufs];
        if (bufs === undefined) native[kStreamBufs] = bufs = new Map();
        bufs.set(id, buf);
      }
      return buf;
    },
    // The session reads no more into stream `id`'s buffer: our hold on it
    // goes (views cut from it keep theirs).
    onStreamBufferRelease(native, id) {
      const bufs = native[kStreamBufs];
      const buf = bufs === undefined ? undefined : bufs.get(id);
      if (buf === undefined) return;
      bufs.delete(id);
      releaseHold(buf);
    },
    onSessionClose(native) {
      // HTTP/3: holds the session did not give back (it does, for every
      // stream, before this).
      const bufs = native[kStreamBufs];
      if (bufs !== undefined) {
        native[kStreamBufs] = undefined;
        for (const buf of bufs.values()) releaseHold(buf);
      }
      const st = native[kState];
      if (st === undefined) return;
      for (const w of st.windows.values()) w.finish();
      st.windows.clear();
      const entries = [...st.streams.values()];
      st.streams.clear();
      for (const e of entries) e._onClose(constants.NGHTTP2_CANCEL);
      st.handle._closed();
      st.socket._closed();
    },
  };
}

// The compat request's head, kept packed until req.rawHeaders or
// req.headers is first read (lib/http/request.js): every field as
// received, pseudo-headers included (as node's compat), and, when there
// is no host field, host from :authority (one handler for both
// protocols: HTTP/2's authority is HTTP/1.1's Host).
class H2Head {
  constructor(raw, authority) {
    this.raw = raw;  // packed "name\0value..." or an array
    this.authority = authority;
  }

  rawHeaders() {
    const raw = this.raw;
    const out = typeof raw === 'string' ? (raw === '' ? [] : raw.split('\0')) : raw.slice();
    if (this.authority !== undefined && !out.includes('host')) out.push('host', this.authority);
    return out;
  }
}

function emitCompat(server, st, native, id, raw, endStream, version, altSvc, compress) {
  // method, url and authority from the pseudo-headers; nghttp2 and the
  // HTTP/3 message rules refuse one after a regular field, so in the
  // packed head they lead. The rest stays packed (H2Head).
  let method = 'GET';
  let url = '/';
  let authority;
  let protocol;
  if (typeof raw === 'string') {
    const end = raw.length;
    let p = 0;
    while (p < end && raw.charCodeAt(p) === 58 /* ':' */) {
      const n = raw.indexOf('\0', p);
      let v = raw.indexOf('\0', n + 1);
      if (v < 0) v = end;
      const len = n - p;
      if (len === 7 && raw.startsWith(':method', p)) method = raw.slice(n + 1, v);
      else if (len === 5 && raw.startsWith(':path', p)) url = raw.slice(n + 1, v);
      else if (len === 10 && raw.startsWith(':authority', p)) authority = raw.slice(n + 1, v);
      else if (len === 9 && raw.startsWith(':protocol', p)) protocol = raw.slice(n + 1, v);
      p = v + 1;
    }
  } else {
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i];
      if (name === ':method') method = raw[i + 1];
      else if (name === ':path') url = raw[i + 1];
      else if (name === ':authority') authority = raw[i + 1];
      else if (name === ':protocol') protocol = raw[i + 1];
    }
  }
  const rawHeaders = new H2Head(raw, authority);
  const conn = new StreamConn(native, id);
  const req = server._Http2ServerRequest == null ?
    new Http2ServerRequest(conn, id, method, url, rawHeaders, version, st.socket) :
    Reflect.construct(Http2ServerRequest, [conn, id, method, url, rawHeaders, version, st.socket],
      server._Http2ServerRequest);
  if (server.requestBufferAllocator !== null) req[kPoolBacked] = true;
  // node's Http2ServerRequest has no joinDuplicateHeaders.
  req.joinDuplicateHeaders = undefined;
  const res = server._Http2ServerResponse == null ? new Http2ServerResponse(req, conn, id, st.socket) :
    Reflect.construct(Http2ServerResponse, [req, conn, id, st.socket], server._Http2ServerResponse);
  if (altSvc && server._altSvc !== null) res.setHeader('alt-svc', server._altSvc);
  res._onFinish = onCompatFinish;
  res._fileCache = server._fileCache;
  const cfg = compress ? server._compression : null;
  if (cfg) {
    // Response compression as on HTTP/1.1 (lib/compress/compression.js): whole
    // bodies through conn.respondCompressed, streams through the stream's
    // compressor, files through the pipe's.
    res._compressCfg = cfg;
  }
  st.streams.set(id, new CompatEntry(req, res, protocol, native, id, st.handle, rawHeaders));
  if (endStream) req._pushEnd(undefined);
  // As node's compat: CONNECT goes to 'connect' (req, res) when it is
  // listened to (else 405, below);
  // an Expect header to 'checkContinue' (or an automatic 100 Continue
  // before 'request') and 'checkExpectation' (or 417).
  if (method === 'CONNECT') {
    if (server.listenerCount('connect') > 0) {
      server.emit('connect', req, res);
      return;
    }
    // As node's: a CONNECT nobody listens for is answered 405. An
    // extended CONNECT (RFC 8441, :protocol) still goes to 'request',
    // where a noServer WebSocketServer's handleUpgrade takes it.
    if (protocol === undefined) {
      res.statusCode = 405;
      res.end();
      return;
    }
  }
  const expect = expectOf(raw);
  if (expect !== undefined) {
    if (expect.toLowerCase() === '100-continue') {
      if (server.listenerCount('checkContinue') > 0) {
        server.emit('checkContinue', req, res);
        return;
      }
      res.writeContinue();
    } else {
      if (server.listenerCount('checkExpectation') > 0) {
        server.emit('checkExpectation', req, res);
      } else {
        res.statusCode = 417;
        res.end();
      }
      return;
    }
  }
  server.emit('request', req, res);
}

// The Expect field of a request head (packed or an array; HTTP/2 names
// are lower case), without parsing the rest.
function expectOf(raw) {
  if (typeof raw === 'string') {
    if (raw.indexOf('expect\0') === -1) return undefined;
    for (let p = 0; p < raw.length;) {
      const n = raw.indexOf('\0', p);
      if (n < 0) break;
      let v = raw.indexOf('\0', n + 1);
      if (v < 0) v = raw.length;
      if (n - p === 6 && raw.startsWith('expect', p)) return raw.slice(n + 1, v);
      p = v + 1;
    }
    return undefined;
  }
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i] === 'expect') return raw[i + 1];
  }
  return undefined;
}

// The server's `origins` option: null, or the origins (each serialized
// and checked by Http2SessionHandle's origin rules, now rather than at
// the first connection).
function checkOrigins(origins) {
  if (origins === undefined || origins === null) return null;
  if (!Array.isArray(origins)) throw invalidArgType('"options.origins" property', 'an instance of Array', origins);
  return origins.map((o) => originOf(o));
}

module.exports = { callbacks, constants, checkOrigins, adoptCompatClass };
