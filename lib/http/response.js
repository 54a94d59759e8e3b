'use strict';

// ServerResponse: node's http.ServerResponse for sluice. Headers live in
// JS until the response starts; then status line, headers and (on end) the
// body cross into native code in one call, which serializes them into the
// connection's corked output buffer.

const Stream = require('stream');
const http = require('http');
const {
  validateHeaderName, validateHeaderValue, validateStatusCode, validateStatusMessage,
  validateLinkHeaderValue, wireValue, headersSentError,
} = require('./headers');
const { codedError, codedTypeError, invalidArgType } = require('../common/errors');
const fileResponse = require('../files/file_response');
const { toChunk } = require('./body');
const compression = require('../compress/compression');
const {
  HEAD_USER_CONTENT_LENGTH, HEAD_USER_TRANSFER_ENCODING, HEAD_USER_CHUNKED, HEAD_USER_DATE,
  HEAD_USER_CONNECTION, HEAD_USER_CONNECTION_CLOSE, HEAD_USER_KEEP_ALIVE, HEAD_WHOLE_BODY,
  HEAD_END, STATUS_MASK, STATUS_FLAGS_SHIFT, RESULT_CLOSED, RESULT_WAIT_DRAIN, RESULT_NO_BODY,
} = require('../common/binding').constants;
const { respondHttp1 } = require('../common/binding');

const {
  kConn, kSeq, kHeaders, kNeedDrain, kTrailers, kSocket, kHeadOnWire, kClosed, kReq, kFileBody,
} = require('../common/symbols');
const { STATUS_CODES } = http;
// Taken once: node defines globalThis.process as an accessor, so each
// `process.nextTick` on the per-response path ran a getter call first.
const { nextTick } = process;

// The head as writeHead() fixed it (node writes the status line there: a
// statusCode / statusMessage changed later is not sent).
const kStatus = Symbol('sluice.status');
const kReason = Symbol('sluice.reason');
// Framing headers removed with removeHeader(): node then adds none of its
// own (Connection; Content-Length / Transfer-Encoding when the user set
// neither).
const kRemoved = Symbol('sluice.removedHeaders');
// 'finish' was emitted (writableFinished is node's accessor, below).
const kFinished = Symbol('sluice.finished');
// destroy(err)'s error (node's res.errored).
const kErrored = Symbol('sluice.errored');
// Body bytes written so far, counted under strictContentLength only.
const kBytesWritten = Symbol('sluice.bytesWritten');
const REMOVED_CONNECTION = 1;
const REMOVED_CONTENT_LENGTH = 2;
const REMOVED_TRANSFER_ENCODING = 4;
const bridge = require('./prototype_bridge');
const { finishObserved, responseFinish } = require('../observe/channels');

const chunkedRegExp = /(?:^|\W)chunked\s*$/i;
const closeRegExp = /(?:^|\W)close(?:$|\W)/i;

function headerFlag(key, value) {
  switch (key.length) {
    case 4: return key === 'date' ? HEAD_USER_DATE : 0;
    case 10:
      if (key === 'connection') {
        return HEAD_USER_CONNECTION | (closeRegExp.test(String(value)) ? HEAD_USER_CONNECTION_CLOSE : 0);
      }
      return key === 'keep-alive' ? HEAD_USER_KEEP_ALIVE : 0;
    case 14: return key === 'content-length' ? HEAD_USER_CONTENT_LENGTH : 0;
    case 17:
      if (key === 'transfer-encoding') {
        return HEAD_USER_TRANSFER_ENCODING | (chunkedRegExp.test(String(value)) ? HEAD_USER_CHUNKED : 0);
      }
      return 0;
    default: return 0;
  }
}

// The response's constructor parent: EventEmitter's fields as
// EventEmitter.init leaves them, less the listener dictionary. Most
// responses get no listener (res.end() in the handler), and their
// 'finish' / 'close' then cost an emit that finds no dictionary; the first
// listener makes one (EventEmitter's methods create `_events` when it is
// undefined), as for IncomingRequest (lib/http/request.js). The object is
// still a Stream: prototype_bridge chains ServerResponse.prototype to
// node's, which chains to Stream.prototype.
function LazyEmitter() {
  this._events = undefined;
  this._eventsCount = 0;
  this._maxListeners = undefined;
}
Object.setPrototypeOf(LazyEmitter, Stream);

class ServerResponse extends LazyEmitter {
  constructor(req, conn, seq, socket) {
    super();
    this.req = req;
    this[kReq] = req;
    this[kConn] = conn;
    this[kSeq] = seq;
    this[kSocket] = socket;
    this[kHeaders] = null;
    this[kNeedDrain] = false;
    this[kTrailers] = '';
    this.statusCode = 200;
    this.statusMessage = undefined;
    this.sendDate = true;
    this.headersSent = false;
    this[kHeadOnWire] = false;
    this.writableEnded = false;
    this[kFinished] = false;
    this[kErrored] = null;
    this.destroyed = false;
    // As node's OutgoingMessage: a plain property that stays true (also
    // after end() and 'close').
    this.writable = true;
    this.chunkedEncoding = false;
    this.shouldKeepAlive = true;
    this.strictContentLength = false;
    this._headFlags = 0;
    this[kClosed] = false;
    this[kStatus] = 0;
    this[kReason] = undefined;
    this[kRemoved] = 0;
    // Set by the server that made the response (lib/http1/session.js,
    // lib/http2/session.js) and read on every response: present from the
    // start, so every response has one shape and no store adds a property.
    this._onFinish = null;
    this._st = undefined;
    this._compressCfg = null;
    this._fileCache = 0;
    this._rejectBodyWrites = false;
    this._compressor = null;
    this._nativeFile = null;
    // Ended with nobody listening: 'finish' / 'close' are owed, settled
    // without a tick unless a listener comes first (finishTick below).
    this._finOwed = false;
  }

  // EventEmitter's, plus: a 'finish' or 'close' listener added to a
  // response that ended with none (the same tick, or a tick or microtask
  // queued before the settle) still hears both, in a tick, as on node.
  // (once() and prependOnceListener() come through these two.)
  on(type, listener) {
    if (this._finOwed) wakeOwed(this, type);
    return super.on(type, listener);
  }

  prependListener(type, listener) {
    if (this._finOwed) wakeOwed(this, type);
    return super.prependListener(type, listener);
  }

  get socket() { return this[kSocket]; }
  get connection() { return this[kSocket]; }
  get finished() { return this.writableEnded; }
  // As node's getter: ended and nothing left to hand to the socket (the
  // native queue is not waiting for 'drain', no file body is streaming).
  get writableFinished() {
    return this[kFinished] ||
      (this.writableEnded && !this[kNeedDrain] && this[kFileBody] === undefined);
  }
  get writableNeedDrain() { return this[kNeedDrain]; }
  get writableLength() { return 0; }
  // As node's: the socket's (the connection's backpressure threshold).
  get writableHighWaterMark() { return this[kSocket].writableHighWaterMark; }
  get writableCorked() { return 0; }
  get _header() { return this.headersSent; }
  // As node: true once 'close' was emitted.
  get closed() { return this[kClosed]; }
  get errored() { return this[kErrored]; }
  get writableObjectMode() { return false; }

  // ---- headers ---------------------------------------------------------
  setHeader(name, value) {
    if (this.headersSent) throw headersSentError('set');
    validateHeaderName(name);
    validateHeaderValue(name, value);
    if (this[kHeaders] === null) this[kHeaders] = Object.create(null);
    this[kHeaders][name.toLowerCase()] = [name, value];
    return this;
  }

  appendHeader(name, value) {
    if (this.headersSent) throw headersSentError('append');
    validateHeaderName(name);
    validateHeaderValue(name, value);
    if (this[kHeaders] === null) this[kHeaders] = Object.create(null);
    const key = name.toLowerCase();
    const prev = this[kHeaders][key];
    if (prev === undefined) {
      this[kHeaders][key] = [name, value];
    } else {
      const list = Array.isArray(prev[1]) ? prev[1] : [prev[1]];
      this[kHeaders][key] = [prev[0], list.concat(value)];
    }
    return this;
  }

  getHeader(name) {
    if (typeof name !== 'string') throw invalidArgType('"name" argument', 'of type string', name);
    const entry = this[kHeaders] && this[kHeaders][name.toLowerCase()];
    return entry ? entry[1] : undefined;
  }

  getHeaders() {
    const out = Object.create(null);
    if (this[kHeaders]) {
      for (const key in this[kHeaders]) out[key] = this[kHeaders][key][1];
    }
    return out;
  }

  getHeaderNames() { return this[kHeaders] ? Object.keys(this[kHeaders]) : []; }

  getRawHeaderNames() {
    return this[kHeaders] ? Object.values(this[kHeaders]).map((e) => e[0]) : [];
  }

  hasHeader(name) {
    if (typeof name !== 'string') throw invalidArgType('"name" argument', 'of type string', name);
    return !!(this[kHeaders] && this[kHeaders][name.toLowerCase()] !== undefined);
  }

  // As node: removing a header sluice would otherwise add (Date,
  // Connection, Content-Length, Transfer-Encoding) keeps it out.
  removeHeader(name) {
    if (typeof name !== 'string') throw invalidArgType('"name" argument', 'of type string', name);
    if (this.headersSent) throw headersSentError('remove');
    const key = name.toLowerCase();
    switch (key) {
      case 'date': this.sendDate = false; break;
      case 'connection': this[kRemoved] |= REMOVED_CONNECTION; break;
      case 'content-length': this[kRemoved] |= REMOVED_CONTENT_LENGTH; break;
      case 'transfer-encoding': this[kRemoved] |= REMOVED_TRANSFER_ENCODING; break;
      default: break;
    }
    if (this[kHeaders]) delete this[kHeaders][key];
  }

  // As node: a Headers or a Map (anything with keys() and get()), each
  // entry through setHeader; Set-Cookie values gathered into one array.
  setHeaders(headers) {
    if (this.headersSent) throw headersSentError('set');
    if (!headers || Array.isArray(headers) || typeof headers.keys !== 'function' ||
        typeof headers.get !== 'function') {
      throw codedTypeError('ERR_INVALID_ARG_TYPE',
        'The "headers" argument must be an instance of Headers or Map');
    }
    const cookies = [];
    for (const [key, value] of headers) {
      if (key === 'set-cookie') {
        if (Array.isArray(value)) cookies.push(...value);
        else cookies.push(value);
        continue;
      }
      this.setHeader(key, value);
    }
    if (cookies.length) this.setHeader('set-cookie', cookies);
    return this;
  }

  // sluice's own framing headers (lib/compress/compression.js: Content-Encoding,
  // Vary), set between writeHead() and the head's serialization, when
  // setHeader() no longer may.
  _putHeader(name, value) {
    if (this[kHeaders] === null) this[kHeaders] = Object.create(null);
    this[kHeaders][name.toLowerCase()] = [name, value];
  }

  _dropHeader(name) {
    if (this[kHeaders]) delete this[kHeaders][name.toLowerCase()];
  }

  writeHead(statusCode, reason, headers) {
    if (this.headersSent) throw headersSentError('write');
    if (typeof reason !== 'string') {
      // As node: writeHead(code, headers), and writeHead(code, undefined,
      // headers) keeps the third argument.
      if (headers === undefined || headers === null) headers = reason;
      reason = undefined;
    }
    const code = this.statusCode = validateStatusCode(statusCode);
    // As node: the argument replaces the property, an unset one becomes the
    // code's standard phrase ('unknown' for codes without one), and
    // whichever it is is checked once the headers are applied.
    const onWire = this[kConn].reasonOnWire !== false;
    if (reason !== undefined) this.statusMessage = reason;
    else if (onWire && !this.statusMessage) this.statusMessage = STATUS_CODES[code] || 'unknown';
    if (headers) {
      if (Array.isArray(headers)) {
        // Flat [name, value, ...] or [[name, value], ...], as node takes.
        let pairs = headers;
        if (headers.length && Array.isArray(headers[0])) {
          pairs = [];
          for (const [k, v] of headers) pairs.push(k, v);
        } else if (headers.length % 2 !== 0) {
          throw codedTypeError('ERR_INVALID_ARG_VALUE', 'The argument \'headers\' is invalid');
        }
        // As node: the array's fields replace those set before
        // (setHeader), duplicates within the array are all sent.
        if (this[kHeaders] !== null) {
          for (let i = 0; i < pairs.length; i += 2) {
            if (pairs[i]) this.removeHeader(pairs[i]);
          }
        }
        for (let i = 0; i < pairs.length; i += 2) {
          if (pairs[i]) this.appendHeader(pairs[i], pairs[i + 1]);
        }
      } else {
        for (const key of Object.keys(headers)) {
          const v = headers[key];
          if (v !== undefined) this.setHeader(key, v);
        }
      }
    }
    // The standard phrase is known to be valid: only another one is checked.
    if (onWire && this.statusMessage !== STATUS_CODES[code]) validateStatusMessage(this.statusMessage);
    if (this[kHeaders] !== null && this[kHeaders].trailer !== undefined) this._checkTrailerHeader(code);
    this[kStatus] = code;
    // The standard phrase is native code's own (no string crosses over).
    // No reason phrase off the wire (HTTP/2, whose compat statusMessage
    // getter warns: not read here).
    this[kReason] = !onWire || this.statusMessage === STATUS_CODES[code] ? undefined : this.statusMessage;
    this.headersSent = true;
    return this;
  }

  // As node: a Trailer header announces trailers, which only a chunked
  // HTTP/1.1 body can carry: with a Content-Length, a Transfer-Encoding
  // without chunked, or no body at all (HEAD, 1xx, 204, 304, an HTTP/1.0
  // request) the head is refused. (HTTP/2 carries trailers either way.)
  _checkTrailerHeader(code) {
    const req = this[kReq];
    if (req.httpVersionMajor >= 2) return;
    const h = this[kHeaders];
    const te = h['transfer-encoding'];
    if (h['content-length'] !== undefined ||
        (te !== undefined && !chunkedRegExp.test(String(te[1]))) ||
        req.httpVersionMajor < 1 || (req.httpVersionMajor === 1 && req.httpVersionMinor < 1) ||
        req.method === 'HEAD' || code === 204 || code === 304 || (code >= 100 && code < 200)) {
      throw codedError('ERR_HTTP_TRAILER_INVALID', 'Trailers are invalid with this transfer encoding');
    }
  }

  // Checks what the head will carry before anything changes state, so
  // that a throw leaves the response as it was (a handler may still answer
  // 500): the status code and message, which are plain properties set at
  // any time, and header values that are objects (an array mutated after
  // setHeader, a toString). _headBlock checks the strings it writes again.
  _checkHead() {
    if (!this.headersSent) {
      this.statusCode = validateStatusCode(this.statusCode);
      if (this[kConn].reasonOnWire !== false) validateStatusMessage(this.statusMessage);
    }
    const h = this[kHeaders];
    if (h === null) return;
    for (const key in h) {
      const [name, value] = h[key];
      if (typeof value !== 'object' || value === null) continue;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) wireValue(name, value[i]);
      } else {
        wireValue(name, value);
      }
    }
  }

  // As node: the head a write()/end() starts goes through this.writeHead,
  // so a wrapped writeHead (on-headers) sees it.
  _implicitHeader() {
    this.writeHead(this.statusCode);
  }

  // Serializes user headers into "Name: value\r\n" lines and the flags
  // telling native code which framing headers the user set.
  // The flags are left in this._headFlags (no array per response).
  // Names and primitive values were checked by setHeader and cannot have
  // changed; an object value is stringified once here, and that string is
  // checked, written and read for the framing flags.
  _headBlock() {
    let block = '';
    let flags = this.sendDate ? 0 : HEAD_USER_DATE;
    const h = this[kHeaders];
    if (h !== null) {
      for (const key in h) {
        const [name, value] = h[key];
        if (typeof value !== 'object' || value === null) {
          block += name + ': ' + value + '\r\n';
          flags |= headerFlag(key, value);
        } else if (Array.isArray(value)) {
          let all = '';
          for (let i = 0; i < value.length; i++) {
            const v = wireValue(name, value[i]);
            block += name + ': ' + v + '\r\n';
            all += (i > 0 ? ',' : '') + v;
          }
          flags |= headerFlag(key, all);
        } else {
          const v = wireValue(name, value);
          block += name + ': ' + v + '\r\n';
          flags |= headerFlag(key, v);
        }
      }
    }
    if (flags & HEAD_USER_CONNECTION_CLOSE) this.shouldKeepAlive = false;
    // A removed Connection: none added, the connection persists as the
    // request asks (node's _removedConnection).
    if (this[kRemoved] & REMOVED_CONNECTION) flags |= HEAD_USER_CONNECTION;
    this._headFlags = flags;
    return block;
  }

  // The framing flags of a head, given the user's (from _headBlock) and
  // whether the whole body is at hand (end(body)): as node, with neither
  // Content-Length nor Transfer-Encoding set, a whole body gets a length
  // unless Content-Length was removed, anything else is chunked unless
  // Transfer-Encoding was removed; with both removed (or only TE, for a
  // streamed body) the body runs to the close. The core reads a
  // Transfer-Encoding flag without chunked as exactly that.
  _framing(flags, whole) {
    const removed = this[kRemoved];
    if (flags & (HEAD_USER_CONTENT_LENGTH | HEAD_USER_TRANSFER_ENCODING)) {
      return whole ? flags | HEAD_WHOLE_BODY : flags;
    }
    if (whole && !(removed & REMOVED_CONTENT_LENGTH)) return flags | HEAD_WHOLE_BODY;
    if (removed & REMOVED_TRANSFER_ENCODING) return flags | HEAD_USER_TRANSFER_ENCODING;
    return flags;
  }

  _statusFlags(flags) {
    // A writeHead replaced without calling the original never fixed one.
    const status = this[kStatus] || validateStatusCode(this.statusCode);
    return (status & STATUS_MASK) | (flags << STATUS_FLAGS_SHIFT);
  }

  _result(r) {
    if (r < 0) {
      if (r === RESULT_CLOSED) return false;
      throw codedError('ERR_SLUICE_RESPONSE', `response error ${r}`);
    }
    if (r & RESULT_WAIT_DRAIN) {
      this[kNeedDrain] = true;
      return false;
    }
    return true;
  }

  // Starts the response without a body (write() with headers pending,
  // flushHeaders()).
  _sendHead() {
    this._checkHead();
    if (!this.headersSent) this._implicitHeader();
    if (this._compressCfg) compression.startStream(this, this._compressCfg, this[kConn]);
    const block = this._headBlock();
    const flags = this[kRemoved] === 0 ? this._headFlags : this._framing(this._headFlags, false);
    this.headersSent = true;
    this[kHeadOnWire] = true;
    if (!(flags & (HEAD_USER_CONTENT_LENGTH | HEAD_USER_TRANSFER_ENCODING))) this.chunkedEncoding = true;
    return this[kConn].respond(this[kSeq], this._statusFlags(flags), this[kReason],
      block, undefined, undefined);
  }

  flushHeaders() {
    if (!this[kHeadOnWire]) this._result(this._sendHead());
  }

  // As the `compression` middleware's res.flush(): what was written so far
  // leaves the compressor now (server-sent events).
  flush() {
    if (!this[kHeadOnWire]) this.flushHeaders();
    if (this._compressor && !this.writableEnded && !this.destroyed) {
      this._result(this._compressor.write(this[kConn], this[kSeq], undefined, true));
    }
  }

  writeContinue(cb) {
    this[kConn].writeContinue(this[kSeq]);
    if (cb) nextTick(cb);
  }

  // 102 Processing, as node.
  writeProcessing(cb) {
    this._writeInfo(102, '', cb);
  }

  // 103 Early Hints with a Link header (node's format check), and any other
  // hints as headers. Unlike node (whose Link check lets CR/LF through
  // inside <...> and which checks no other hint), every line is checked.
  writeEarlyHints(hints, cb) {
    if (hints === null || typeof hints !== 'object' || Array.isArray(hints)) {
      throw invalidArgType('"hints" argument', 'of type object', hints);
    }
    if (hints.link === null || hints.link === undefined) return;
    const link = validateLinkHeaderValue(hints.link);
    if (link.length === 0) return;
    let block = 'Link: ' + wireValue('Link', link) + '\r\n';
    for (const key of Object.keys(hints)) {
      if (key === 'link') continue;
      validateHeaderName(key);
      block += key + ': ' + wireValue(key, hints[key]) + '\r\n';
    }
    this._writeInfo(103, block, cb);
  }

  // An interim response before the head (ignored once the head is out).
  _writeInfo(status, block, cb) {
    if (!this.headersSent && !this.destroyed) this[kConn].writeInfo(this[kSeq], status, block);
    if (cb) nextTick(cb);
  }

  // As node: replaces earlier trailers; an array value of several elements
  // is one line each, a shorter one is joined with '; '.
  addTrailers(headers) {
    let block = '';
    const isArray = Array.isArray(headers);
    for (const key of Object.keys(headers)) {
      const field = isArray ? headers[key][0] : key;
      let value = isArray ? headers[key][1] : headers[key];
      validateHeaderName(field, 'Trailer name');
      if (Array.isArray(value) && value.length > 1) {
        for (let j = 0; j < value.length; j++) {
          block += field + ': ' + wireValue(field, value[j], 'trailer content') + '\r\n';
        }
        continue;
      }
      if (Array.isArray(value)) value = value.join('; ');
      block += field + ': ' + wireValue(field, value, 'trailer content') + '\r\n';
    }
    this[kTrailers] = block;
  }

  // ---- body ----------------------------------------------------------------
  write(chunk, encoding, cb) {
    if (typeof encoding === 'function') { cb = encoding; encoding = undefined; }
    if (this.writableEnded) {
      writeAfterEnd(this, cb, true);
      return false;
    }
    if (chunk === null) {
      throw codedTypeError('ERR_STREAM_NULL_VALUES', 'May not write null values to stream');
    }
    const body = toChunk(chunk, encoding);
    if (this.destroyed) return false;
    if (this.strictContentLength || this._rejectBodyWrites) this._checkBodyWrite(body, false);
    if (!this[kHeadOnWire]) this._sendHead();
    const ok = this._result(this._compressor ?
      this._compressor.write(this[kConn], this[kSeq], body, false) :
      this[kConn].write(this[kSeq], body));
    if (cb) nextTick(cb);
    return ok;
  }

  end(chunk, encoding, cb) {
    if (typeof chunk === 'function') { cb = chunk; chunk = undefined; encoding = undefined; }
    if (typeof encoding === 'function') { cb = encoding; encoding = undefined; }
    if (this.writableEnded) {
      // As node: more body is a write after end; a bare end(cb) waits for
      // 'finish', or hears that it is past.
      if (chunk) {
        writeAfterEnd(this, cb, false);
      } else if (typeof cb === 'function') {
        if (!this.writableFinished) this.once('finish', cb);
        else cb(codedError('ERR_STREAM_ALREADY_FINISHED', 'Cannot call end after a stream was finished'));
      }
      return this;
    }
    const body = chunk === undefined || chunk === null ? undefined : toChunk(chunk, encoding);
    if ((this.strictContentLength || (this._rejectBodyWrites && body !== undefined)) &&
        !this.destroyed) {
      this._checkBodyWrite(body, true);
    }
    // A head that cannot be written throws before the response ends (as
    // node's implicit writeHead): the handler can still answer.
    // The check comes before the implicit writeHead, which marks the head
    // sent; what a wrapped writeHead adds is checked by _headBlock.
    // As node, end(body)'s length frames the body only when end() starts
    // the head: after an explicit writeHead() (node fixes the head there)
    // the body is chunked, as with a Trailer header (see `whole` below).
    const explicitHead = this.headersSent;
    if (!this[kHeadOnWire] && !this.destroyed) {
      this._checkHead();
      if (!explicitHead) this._implicitHeader();
    }
    this.writableEnded = true;
    if (this.destroyed) return this;
    let r;
    const trailers = this[kTrailers] || undefined;
    if (!this[kHeadOnWire]) {
      const coding = this._compressCfg ?
        compression.prepare(this, this._compressCfg, compression.byteLength(body)) : 0;
      const block = this._headBlock();
      // As node: end(body)'s length frames the body only when end() starts
      // the head and no trailers come (added, or announced by a Trailer
      // header); after an explicit writeHead() the body is chunked (HTTP/1.x;
      // HTTP/2 ends the stream instead). User framing headers win; a
      // compressed body is framed by its compressed length.
      const whole = (this._headFlags & (HEAD_USER_CONTENT_LENGTH | HEAD_USER_TRANSFER_ENCODING)) !== 0 ||
        (trailers === undefined && (this[kHeaders] === null || this[kHeaders].trailer === undefined) &&
          (!explicitHead || coding !== 0 || this[kReq].httpVersionMajor >= 2));
      const flags = this[kRemoved] === 0 ?
        (whole ? this._headFlags | HEAD_WHOLE_BODY : this._headFlags) :
        this._framing(this._headFlags, whole);
      this.headersSent = true;
      this[kHeadOnWire] = true;
      const statusWord = this._statusFlags(flags | HEAD_END);
      const cfg = this._compressCfg;
      const st = this._st;
      if (coding) {
        r = this[kConn].respondCompressed(this[kSeq], statusWord, this[kReason], block, body,
          trailers, coding, cfg.level, cfg.brotliQuality);
      } else if (st !== undefined) {
        // HTTP/1.1: the connection's native handle, taken once per
        // connection, saves the method call's unwrap of the connection.
        if (st.handle === null) st.handle = this[kConn].handle();
        r = respondHttp1(st.handle, this[kSeq], statusWord, this[kReason], block, body, trailers);
      } else {
        r = this[kConn].respond(this[kSeq], statusWord, this[kReason], block, body, trailers);
      }
    } else if (this._compressor) {
      r = this._compressor.end(this[kConn], this[kSeq], body, trailers);
    } else {
      r = this[kConn].end(this[kSeq], body, trailers);
    }
    this._result(r);
    if (cb) this.once('finish', cb);
    finishTick(this);
    return this;
  }

  // As node: the response's socket is destroyed with `err` (HTTP/1.1: the
  // connection's socket, whose 'error' reaches the server's 'clientError';
  // HTTP/2: the stream is reset, as node's compat does); the response
  // itself emits no 'error', only 'close'.
  destroy(err) {
    if (this.destroyed) return this;
    this.destroyed = true;
    this[kErrored] = err;
    if (this._compressor) this._compressor.close();
    if (this._nativeFile) this._nativeFile.close();
    if (this[kFinished]) return this;
    if (this[kReq].httpVersionMajor >= 2) {
      this[kConn].destroy(err);
    } else if (!isFront(this)) {
      // As node: a pipelined response gets the socket only when the ones
      // before it have finished (assignSocket), and its destroy() waits for
      // that; the server destroys the socket then (lib/http1/session.js
      // onResponseFinish), so the responses before it are still sent.
    } else {
      this[kSocket].destroy(err);
    }
    return this;
  }

  // sluice's own APIs (respondWithFile's head checks): as node:http2's
  // stream, the response itself reports the error it is destroyed with.
  _fail(err) {
    if (this.destroyed) return;
    this.destroy();
    nextTick(() => this.emit('error', err));
  }

  // A body write as node checks it, before anything is sent (a throw leaves
  // the response as it was): with rejectNonStandardBodyWrites, body for a
  // HEAD request or a 204 / 304 / 1xx status is ERR_HTTP_BODY_NOT_ALLOWED
  // (else it is dropped); with strictContentLength and the user's
  // Content-Length (no Transfer-Encoding), more bytes than it, or at end()
  // a different total, is ERR_HTTP_CONTENT_LENGTH_MISMATCH.
  _checkBodyWrite(body, fromEnd) {
    const status = this[kStatus] || this.statusCode;
    const noBody = this[kReq].method === 'HEAD' || status === 204 || status === 304 ||
      (status >= 100 && status < 200);
    const len = body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    if (noBody) {
      if (this._rejectBodyWrites && len > 0) {
        throw codedError('ERR_HTTP_BODY_NOT_ALLOWED',
          'Adding content for this request method or response status is not allowed.');
      }
      return;
    }
    if (!this.strictContentLength || (this[kRemoved] & REMOVED_CONTENT_LENGTH)) return;
    const h = this[kHeaders];
    if (h === null || h['content-length'] === undefined || h['transfer-encoding'] !== undefined) return;
    const expected = Number(h['content-length'][1]);
    const total = (this[kBytesWritten] || 0) + len;
    if (fromEnd ? total !== expected : total > expected) {
      throw codedError('ERR_HTTP_CONTENT_LENGTH_MISMATCH',
        `Response body's content-length of ${total} byte(s) does not match the content-length of ${expected} byte(s) set in header`);
    }
    this[kBytesWritten] = total;
  }

  // ---- native file bodies (lib/files/file_response.js) ---------------------------
  // As node:http2's stream.respondWithFile(path[, headers][, options]): the
  // file is opened, stat'ed and sent by native code (async fs on the
  // threadpool, no JS per chunk), with Content-Length from the stat and
  // range; HEAD gets the head only.
  respondWithFile(path, headers, options) {
    fileResponse.respond(this, path, false, headers, options);
  }

  // The same for a descriptor (or FileHandle) the caller keeps: never
  // closed by sluice.
  respondWithFD(fd, headers, options) {
    fileResponse.respond(this, fd, true, headers, options);
  }

  // Sends the head, then hands the opened native file to the connection's
  // pipe. onError(status) hears a mid-body failure. Returns the native
  // result (< 0: not started).
  _respondWithNativeFile(file, onError) {
    this._checkHead();
    this[kFileBody] = true;  // before the head: writeHead must not send it alone
    if (!this.headersSent) this._implicitHeader();
    const block = this._headBlock();
    const flags = this._headFlags;
    this.headersSent = true;
    this[kHeadOnWire] = true;
    this.writableEnded = true;
    const conn = this[kConn];
    const done = (status) => {
      if (status === 0) {
        this._nativeFileDone = true;  // _closed() may come before the tick
        finishTick(this);
      } else {
        onError(status);
      }
    };
    // The transport feeds the file to its own pipe sink; a negotiated
    // coding (lib/compress/compression.js) puts a native compressor in the pipe.
    const cfg = this._compressCfg;
    const r = cfg && this._fileCoding ?
      conn.respondWithNativeFile(this[kSeq], this._statusFlags(flags), this[kReason],
        block, file, done, this._fileCoding, cfg.level, cfg.brotliQuality) :
      conn.respondWithNativeFile(this[kSeq], this._statusFlags(flags), this[kReason],
        block, file, done);
    if (r === RESULT_NO_BODY) finishTick(this);  // HEAD: no body
    return r;
  }

  cork() {}
  uncork() {}
  setTimeout(ms, cb) {
    if (cb) this.on('timeout', cb);
    this[kSocket].setTimeout(ms);
    return this;
  }

  // Called by the server.
  _drain() {
    if (this[kNeedDrain]) {
      this[kNeedDrain] = false;
      this.emit('drain');
    }
  }

  _closed() {
    if (this._nativeFile) this._nativeFile.close();
    if (this._compressor) this._compressor.close();
    // A native file body that completed: its stream may close before the
    // finish tick (HTTP/2), which must still see 'finish'.
    if (this._nativeFileDone) emitFinish(this);
    if (this[kFinished]) return;
    this.destroyed = true;
    this[kClosed] = true;
    this.emit('close');
  }
}

ServerResponse.prototype.addListener = ServerResponse.prototype.on;

// node's deprecated alias.
ServerResponse.prototype.writeHeader = ServerResponse.prototype.writeHead;

// instanceof http.ServerResponse (http/prototype_bridge.js).
bridge.install('ServerResponse', ServerResponse);

// write()/end(body) after end(), as node: while the response is not
// destroyed the callback hears ERR_STREAM_WRITE_AFTER_END and 'error' is
// emitted (not when it was destroyed by then other than by finishing);
// once destroyed, only write()'s callback hears it.
function writeAfterEnd(res, cb, fromWrite) {
  const err = codedError('ERR_STREAM_WRITE_AFTER_END', 'write after end');
  if (!res.destroyed) {
    nextTick(() => {
      if (typeof cb === 'function') cb(err);
      if (!res.destroyed || res[kFinished]) res.emit('error', err);
    });
  } else if (fromWrite && typeof cb === 'function') {
    nextTick(cb, err);
  }
}

// Whether `res` is its connection's first unfinished response (HTTP/1.1;
// `_st` is the connection's state, lib/http1/session.js).
function isFront(res) {
  const st = res._st;
  if (st === undefined || st.tail - st.head < 2 || st.live[st.head + 1] === res) return true;
  const i = st.live.indexOf(res, st.head);
  return i === -1 || i >= st.tail;
}

// One tick for a batch: fn(item) for every item queued before the tick
// runs, in order. A read of 16 pipelined requests ends 16 responses in
// one synchronous run; their 'finish' events then share one tick (and
// their 'close' events the next) instead of one process.nextTick each —
// the tick machinery was most of a response's cost after the read. The
// order against other ticks stays node's where it matters: each event
// still comes a tick after what caused it, and anything scheduled before
// the batch's first item (a write-after-end's 'error') runs first. An
// item whose listener throws does not lose the rest: they go on in a new
// tick (the throw propagates as from any tick).
// After a batch of one or two (one request per read), the next tick's
// queue is the spare array, whose capacity stays: a fresh array per tick
// was an allocation and a growth per read, and GC work. After a larger
// batch (pipelining) it is a fresh array: the reused one is old by then,
// and every store of a young response into an old array takes V8's
// write barrier's slow path, which costs more per response than the
// growth of a fresh array does per batch. Each slot is cleared as its
// item runs, so a finished response is not kept alive by an array.
// `later(run)` schedules the batch: process.nextTick for the events, a
// microtask for the owed settles (whose fn runs no user code: a throw in
// a microtask would be an unhandled rejection, not node's exception).
function tickBatch(fn, later) {
  let items = [];  // items[0, count): waiting for the scheduled run
  let count = 0;
  let spare = [];
  function run() {
    const q = items;
    const n = count;
    items = n > 2 ? [] : spare;
    count = 0;
    let i = 0;
    try {
      for (; i < n; i++) {
        const item = q[i];
        q[i] = undefined;
        fn(item);
      }
    } finally {
      if (i < n - 1) {
        // fn(q[i]) threw: the rest run in a new tick, before what was
        // scheduled meanwhile.
        const rest = q.slice(i + 1, n);
        for (let j = i + 1; j < n; j++) q[j] = undefined;
        for (let j = 0; j < count; j++) {
          rest.push(items[j]);
          items[j] = undefined;
        }
        if (count === 0) later(run);
        spare = items;
        items = rest;
        count = rest.length;
      } else {
        spare = q;
      }
    }
  }
  return function schedule(item) {
    if (count === 0) later(run);
    items[count++] = item;
  };
}

// A microtask without queueMicrotask's AsyncResource (an object, ids and
// a bound function per call): a reaction on a settled promise.
const settled = Promise.resolve();
function microtask(fn) { settled.then(fn); }

const eventTick = tickBatch(emitFinish, nextTick);
const closeTick = tickBatch(emitClose, nextTick);
const settleOwedBatch = tickBatch(settleOwed, microtask);

// EventEmitter's emit, as the response finds it unless something wrapped
// it: tracers (dd-trace) wrap http.ServerResponse.prototype.emit and
// watch for 'finish' / 'close' with no listener on the response.
const plainEmit = require('events').prototype.emit;

// The response ended (or its native file body completed). With a
// listener on the response (any event: pipe()'s, on-finished's), a
// wrapped emit, or a subscriber to 'http.server.response.finish',
// 'finish' comes in a tick and 'close' in the next, as node emits them.
// With none of these, both events are owed instead: a listener added
// later, before the settle, takes the response back to those ticks (on()
// above); else a microtask after the read's handlers settles it as the
// two ticks would have left it, with no tick: node's tick drain after a read (process.nextTick's
// bookkeeping, processTicksAndRejections, twice) was a fifth of a
// one-request-per-read response's instructions. What differs from node
// (docs/api.md): a 'finish' listener added in a tick queued after end()
// hears 'finish' (node emitted it to nobody before that tick), and a
// microtask queued before end() sees the response not yet destroyed
// (node's ticks run before microtasks).
function finishTick(res) {
  if (unheard(res)) {
    res._finOwed = true;
    settleOwedBatch(res);
  } else {
    eventTick(res);
  }
}

// Nobody would hear 'finish' / 'close' now: no listener on the response,
// EventEmitter's own emit, no subscriber to the finish channel.
function unheard(res) {
  return res._eventsCount === 0 && !responseFinish.hasSubscribers && res.emit === plainEmit;
}

function wakeOwed(res, type) {
  if (type === 'finish' || type === 'close') {
    res._finOwed = false;
    eventTick(res);
  }
}

// The owed settle: what emitFinish and emitClose leave, without the
// events. A response that got a listener since (taken back by on(), or
// added past it through EventEmitter.prototype.on.call) or whose finish
// a subscriber now wants gets its events in ticks after all.
function settleOwed(res) {
  if (!res._finOwed) return;
  res._finOwed = false;
  if (!unheard(res)) {
    eventTick(res);
    return;
  }
  if (res[kFinished] || res.destroyed) return;
  res[kFinished] = true;
  if (res._onFinish) res._onFinish(res);
  res.destroyed = true;
  res[kClosed] = true;
}

function emitFinish(res) {
  if (res[kFinished] || res.destroyed) return;
  res[kFinished] = true;
  // As node: 'close' a tick after 'finish', scheduled before the 'finish'
  // listeners run (what was scheduled earlier, such as a write-after-end's
  // 'error', comes first).
  closeTick(res);
  // node's 'http.server.response.finish' before the 'finish' listeners.
  // One call, the check inside (inlined once optimized): this function
  // stays under V8's early-optimization bytecode size (81 bytes in Node
  // 20), which the check written here pushed it over.
  finishObserved(res);
  res.emit('finish');
  if (res._onFinish) res._onFinish(res);
}

function emitClose(res) {
  // As node: destroyed and closed by the time 'close' is heard.
  res.destroyed = true;
  res[kClosed] = true;
  res.emit('close');
}

module.exports = { ServerResponse, kConn, kFinished };
