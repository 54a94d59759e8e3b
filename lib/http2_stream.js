'use strict';

// ServerHttp2Stream: node:http2's ServerHttp2Stream for sluice, a Duplex
// over one stream of a native HTTP/2 session. The readable side is the
// request body (DATA payloads: copies, or with a requestBufferAllocator
// views of its memory whose release credits the flow-control windows, see
// lib/http2_server.js); the writable side is the response body.
// Backpressure both ways: a full readable buffer pauses the stream
// natively (its window is then not replenished, so the client stops); a
// full native queue holds the write callback until 'drain'. The stream
// idioms with pool memory (pipe, pipeline, for await) are IncomingRequest's
// (lib/incoming.js).

const { Duplex } = require('stream');
const { EventEmitter } = require('events');
const { headersObject, serializeHeaders } = require('./headers');
const { toChunk } = require('./body');
const { codedError, codedTypeError, codedRangeError } = require('./errors');
const fileResponse = require('./file_response');
const h2compress = require('./http2_compress');
const { byteLength } = require('./compression');
const binding = require('./binding');
const { withPoolIdioms, pushChunk, releaseQueuedChunks } = require('./incoming');
const { releaseHold } = require('./buffer_pool');

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
class Http2SessionHandle extends EventEmitter {
  constructor(native, socket) {
    super();
    this._native = native;
    this.socket = socket;
    this.closed = false;
    this.destroyed = false;
    this.encrypted = false;
    this.alpnProtocol = 'h2c';
  }

  close(cb) {
    if (cb) this.once('close', cb);
    this._native.goaway(0);
  }

  goaway(code = 0) { this._native.goaway(code); }

  destroy() { this._native.destroy(); }

  setTimeout() { return this; }

  _closed() {
    if (this.destroyed) return;
    this.closed = true;
    this.destroyed = true;
    this.emit('close');
  }
}

// Shared by every stream (Duplex does not keep or change it).
const duplexOptions = Object.freeze({ allowHalfOpen: true, decodeStrings: false, autoDestroy: false });

class ServerHttp2Stream extends Duplex {
  constructor(native, id, headers, session, endStream) {
    super(duplexOptions);
    this._native = native;
    this._id = id;
    this._session = session;
    this._requestHeaders = headers;
    this._isHead = headers[':method'] === 'HEAD';
    this._readPaused = false;
    this._pendingWriteCb = null;
    this._noBody = false;
    this._nativeEnded = false;
    this._nativeClosed = false;
    this._nativeResets = false;  // the session resets the stream itself (413)
    this._localClose = false;
    this.headersSent = false;
    this._sentHeaders = undefined;
    this._status = 0;
    this.sentTrailers = undefined;
    this.sentInfoHeaders = [];
    this.rstCode = undefined;
    this.aborted = false;
    this.endAfterHeaders = endStream;
    this.timeout = 0;
    // Response compression (lib/http2_compress.js): the server's config
    // (null: off), and a head waiting for the body's length.
    this._compressCfg = null;
    this._fileCache = false;  // file responses use the open-file cache
    this._deferredHead = null;
    this._fileResponding = false;
    this._nativeFile = null;
    this._wantTrailers = false;
    // A plain head held back while the 'stream' event is dispatched (see
    // respond()): its status, block and flags; _heldBlock null = none.
    this._dispatching = false;
    this._heldStatus = 0;
    this._heldBlock = null;
    this._heldFlags = 0;
  }

  get id() { return this._id; }
  get pending() { return false; }
  get closed() { return this._nativeClosed; }
  get session() { return this._session; }
  get bufferSize() { return this.writableLength; }
  get sentHeaders() {
    return this._sentHeaders === undefined ? undefined : { ...this._sentHeaders, ':status': this._status };
  }
  get state() {
    return {
      state: this._nativeClosed ? 7 : 2,
      localClose: this._nativeEnded ? 1 : 0,
      remoteClose: this.readableEnded || this.endAfterHeaders ? 1 : 0,
      weight: 16,
      sumDependencyWeight: 0,
    };
  }

  respond(headers, options) {
    if (this.destroyed || this._nativeClosed) {
      throw codedError('ERR_HTTP2_INVALID_STREAM', 'The stream has been destroyed');
    }
    if (this.headersSent) throw codedError('ERR_HTTP2_HEADERS_SENT', 'Response has already been initiated.');
    options = options || {};
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
        // body (lib/http2_compress.js).
        this._deferredHead = { headers, status, flags, coding };
        this.headersSent = true;
        this._sentHeaders = headers;
        this._status = status;
        process.nextTick(sendDeferredHead, this);
        return;
      }
    }
    this.headersSent = true;
    this._sentHeaders = headers || {};
    this._status = status;
    if (this._dispatching && coding === 0 && !endStream && !options.waitForTrailers &&
        !this._fileResponding && headers != null && headers['content-length'] !== undefined) {
      // Inside the 'stream' handler, a head that tells its length waits
      // until the handler returns (lib/http2_server.js flushes it): an
      // end(body) meanwhile sends head, body and END_STREAM in one native
      // call. Not without content-length: that call would add one, which
      // node:http2's stream API does not.
      this._heldStatus = status;
      this._heldBlock = block;
      this._heldFlags = flags;
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

  // Sends a head respond() held during the 'stream' dispatch, with `body`
  // and END_STREAM when `body` is given (it is the whole body).
  _flushHeldHead(body) {
    const block = this._heldBlock;
    this._heldBlock = null;
    if (this._nativeClosed) return;
    if (body === undefined) {
      this._native.respond(this._id, this._heldStatus, block, this._heldFlags);
    } else {
      this._nativeEnded = true;
      this._native.respond(this._id, this._heldStatus, block, this._heldFlags | H2_END_AFTER_BODY, body);
    }
  }

  // The 'stream' handler returned (lib/http2_server.js).
  _dispatched() {
    this._dispatching = false;
    if (this._heldBlock !== null) this._flushHeldHead(undefined);
  }

  // Sends the head respond() held back. whole: `body` (may be undefined)
  // is the whole body and the stream ends with it; otherwise the body
  // streams through the compressor.
  _sendDeferredHead(whole, body) {
    const d = this._deferredHead;
    this._deferredHead = null;
    const cfg = this._compressCfg;
    let { headers, coding, flags } = d;
    if (whole && byteLength(body) < cfg.threshold) {
      coding = 0;
      headers = { ...headers };
      delete headers['content-encoding'];
    }
    const [block] = serializeHeaders(headers, true);
    this._sentHeaders = headers;
    if (!whole) {
      const r = this._native.respond(this._id, d.status, block, flags);
      if (r !== RESULT_CLOSED) this._native.compress(this._id, coding, cfg.level, cfg.brotliQuality);
      return;
    }
    this._nativeEnded = true;
    if (coding !== 0) {
      const r = this._native.respondCompressed(this._id, d.status, block, flags, body, undefined,
        coding, cfg.level, cfg.brotliQuality);
      // The compressor failed (nothing was sent): reset rather than leave
      // the client waiting.
      if (r === RESULT_COMPRESS_FAILED || r === RESULT_BAD_BODY) this.close(constants.NGHTTP2_INTERNAL_ERROR);
    } else {
      // Plain: respond + body + end in one call (with its content-length).
      this._native.respond(this._id, d.status, block, flags | H2_END_AFTER_BODY, body);
    }
  }

  // end(body) as one native call: while a compression head waits
  // (_deferredHead), the whole body is known now; after a head held in
  // the 'stream' handler, head + body + END_STREAM; after a sent head,
  // body + END_STREAM (rather than a write and an end).
  end(chunk, encoding, cb) {
    const deferred = this._deferredHead !== null;
    if (chunk !== undefined && chunk !== null && typeof chunk !== 'function' &&
        this.writableLength === 0 && !this.writableEnded && !this.destroyed &&
        (deferred || ((typeof chunk === 'string' || chunk instanceof Uint8Array) &&
          this.headersSent && !this._noBody && !this._nativeEnded && !this.writableCorked))) {
      if (typeof encoding === 'function') { cb = encoding; encoding = undefined; }
      let body;
      try {
        body = toChunk(chunk, encoding);
      } catch (err) {
        return super.end(chunk, encoding, cb);  // reports it as node does
      }
      if (deferred) {
        this._sendDeferredHead(true, body);
      } else if (this._heldBlock !== null) {
        this._flushHeldHead(body);
      } else if (!this._nativeClosed) {
        this._nativeEnded = true;
        this._native.end(this._id, body, undefined, 0);
      }
      return typeof cb === 'function' ? super.end(cb) : super.end();
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
    if (this.destroyed || this._nativeClosed) {
      throw codedError('ERR_HTTP2_INVALID_STREAM', 'The stream has been destroyed');
    }
    if (this.headersSent || this._fileResponding) {
      throw codedError('ERR_HTTP2_HEADERS_SENT', 'Response has already been initiated.');
    }
    target = isFd ? fileResponse.toFd(target) : fileResponse.toPath(target);
    const opts = fileResponse.validateOptions(options);
    const waitForTrailers = !!(options && options.waitForTrailers);
    headers = { ...(headers || {}) };
    serializeHeaders(headers, true);  // throws now, not after the open
    if (options && options.precompressed && !isFd) {
      // path.br / path.gz when acceptable, present and not older
      // (lib/compression.js precompressed), with their own length.
      this._fileResponding = true;
      h2compress.precompressed(this._requestHeaders, headers[':status'] | 0 || 200, headers, target,
        (path, h) => {
          this._fileResponding = false;
          if (this.destroyed || this._nativeClosed || this.headersSent) return;
          this._respondWithNativeFile(path, false, h, { ...options, precompressed: false });
        });
      return;
    }
    this._fileResponding = true;
    this._nativeFile = fileResponse.serveFile(
      new Http2StreamFileTarget(this, headers, waitForTrailers, options), target, isFd, opts);
  }

  additionalHeaders(headers) {
    if (this.headersSent) throw codedError('ERR_HTTP2_HEADERS_AFTER_RESPOND', 'Cannot specify additional headers after response initiated');
    const [block, status] = serializeHeaders(headers, true);
    if (status < 100 || status > 199) {
      throw codedRangeError('ERR_HTTP2_INVALID_INFO_STATUS', `Invalid informational status code: ${status}`);
    }
    this._native.info(this._id, status, block, 0);
    this.sentInfoHeaders.push(headers);
  }

  sendTrailers(headers) {
    if (this.destroyed || this._nativeClosed) {
      throw codedError('ERR_HTTP2_INVALID_STREAM', 'The stream has been destroyed');
    }
    if (this.sentTrailers) throw codedError('ERR_HTTP2_TRAILERS_ALREADY_SENT', 'Trailing headers have already been sent');
    if (!this._wantTrailers) throw codedError('ERR_HTTP2_TRAILERS_NOT_READY', 'Trailing headers cannot be sent until after the wantTrailers event is emitted');
    const [block] = serializeHeaders(headers, false);
    this.sentTrailers = headers;
    this._native.sendTrailers(this._id, block);
  }

  close(code = constants.NGHTTP2_NO_ERROR, callback) {
    if (typeof code !== 'number' || code < 0 || code > 0xffffffff) {
      throw codedRangeError('ERR_OUT_OF_RANGE', 'The value of "code" is out of range.');
    }
    if (typeof callback === 'function') this.once('close', callback);
    if (this._nativeClosed || this.rstCode !== undefined) return;
    this.rstCode = code;
    this._localClose = true;
    if (this._heldBlock !== null) this._flushHeldHead(undefined);  // HEADERS, then RST_STREAM
    this._native.rstStream(this._id, code);
  }

  priority() {}

  setTimeout(ms, cb) {
    this.timeout = ms;
    if (cb) this.on('timeout', cb);
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
    if (!this.headersSent) this.respond();
    if (this._heldBlock !== null) this._flushHeldHead(undefined);
    if (this._deferredHead !== null) this._sendDeferredHead(false);
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
    if (!this.headersSent && !this._nativeClosed) this.respond({ ':status': 200 }, { endStream: true });
    if (this._heldBlock !== null) this._flushHeldHead(undefined);
    if (this._deferredHead !== null && !this._nativeClosed) this._sendDeferredHead(true, undefined);
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
    this._deferredHead = null;
    if (this._heldBlock !== null) this._flushHeldHead(undefined);  // HEADERS, then RST_STREAM
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

  // ---- native events (lib/http2_server.js) -----------------------------------
  _onData(chunk) {
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
    if (this.destroyed) return;
    if (rawTrailers) this.emit('trailers', headersObject(rawTrailers), constants.NGHTTP2_FLAG_END_STREAM);
    this.push(null);
  }

  _onDrain() {
    const cb = this._pendingWriteCb;
    this._pendingWriteCb = null;
    if (cb) cb();
  }

  _onWantTrailers() {
    this._wantTrailers = true;
    this.emit('wantTrailers');
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

  _onClose(code) {
    if (this._nativeClosed) return;
    this._nativeClosed = true;
    if (this.rstCode === undefined) this.rstCode = code;
    const writableDone = this.writableFinished || this._nativeEnded;
    if (!writableDone) {
      if (!this.aborted) {
        this.aborted = true;
        this.emit('aborted');
      }
    }
    let err;
    if (!this._localClose && code !== constants.NGHTTP2_NO_ERROR && code !== constants.NGHTTP2_CANCEL) {
      err = codedError('ERR_HTTP2_STREAM_ERROR', `Stream closed with error code ${errorNames[code] || code}`);
    }
    if (!this.readableEnded) this.push(null);
    this.destroy(err);
  }
}

withPoolIdioms(ServerHttp2Stream);

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

  useCache() { return this.stream._fileCache === true; }

  gone() {
    const s = this.stream;
    return s.destroyed || s._nativeClosed || s.headersSent;
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

function sendDeferredHead(stream) {
  if (stream._deferredHead !== null && !stream._nativeClosed && !stream.destroyed) {
    stream._sendDeferredHead(false);
  }
}

module.exports = { ServerHttp2Stream, Http2SessionHandle, constants };
