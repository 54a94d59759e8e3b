'use strict';

// IncomingRequest: node's IncomingMessage for sluice. A real
// stream.Readable over the body chunks the native session delivers.
// Backpressure: when push() reports a full buffer the connection stops
// reading its socket (uv_read_stop); _read() restarts it.

const { Readable } = require('stream');
const http = require('http');
const bridge = require('./prototype_bridge');
const { headersObject, headersDistinct } = require('./headers');
const { codedError } = require('./errors');
const { releaseHold } = require('./buffer_pool');

const kConn = Symbol('sluice.conn');
const kSeq = Symbol('sluice.seq');
const kHeaders = Symbol('sluice.headers');
const kSocketPaused = Symbol('sluice.socketPaused');
const kSocket = Symbol('sluice.socket');
const kRaw = Symbol('sluice.rawHeaders');
const kEofPending = Symbol('sluice.eofPending');

const versionStrings = { 10: '1.0', 11: '1.1', 9: '0.9', 20: '2.0' };

class IncomingRequest extends Readable {
  constructor(conn, seq, method, url, rawHeaders, versionCode, socket) {
    super();
    this[kConn] = conn;
    this[kSeq] = seq;
    this[kHeaders] = null;
    this[kSocketPaused] = false;
    this[kSocket] = socket;
    this.method = method;
    this.url = url;
    // An array, or the native side's packed "name\0value\0..." string,
    // split on first use.
    this[kRaw] = rawHeaders;
    this[kEofPending] = false;
    this.rawTrailers = [];
    this.trailers = {};
    this.httpVersionMajor = (versionCode / 10) | 0;
    this.httpVersionMinor = versionCode % 10;
    this.httpVersion = versionStrings[versionCode] ||
      `${this.httpVersionMajor}.${this.httpVersionMinor}`;
    this.complete = false;
    this.aborted = false;
    this.upgrade = false;
    this._dumped = false;
    this._consuming = false;
  }

  get rawHeaders() {
    let raw = this[kRaw];
    if (typeof raw === 'string') {
      raw = raw.split('\0');
      raw.length--; // the trailing separator
      this[kRaw] = raw;
    }
    return raw;
  }

  set rawHeaders(v) { this[kRaw] = v; }

  get headers() {
    if (this[kHeaders] === null) this[kHeaders] = headersObject(this.rawHeaders);
    return this[kHeaders];
  }

  set headers(v) { this[kHeaders] = v; }

  get headersDistinct() { return headersDistinct(this.rawHeaders); }

  get trailersDistinct() { return headersDistinct(this.rawTrailers); }

  get socket() { return this[kSocket]; }

  get connection() { return this[kSocket]; }

  setTimeout(ms, cb) {
    if (cb) this.on('timeout', cb);
    this[kSocket].setTimeout(ms);
    return this;
  }

  read(n) {
    this._consuming = true;
    return super.read(n);
  }

  _read() {
    if (this[kEofPending]) {
      this[kEofPending] = false;
      this.push(null);
      return;
    }
    if (this[kSocketPaused]) {
      this[kSocketPaused] = false;
      this[kConn].resume();
    }
  }

  // Called by the server for each body chunk.
  // Pool chunks that are not handed to the user go back here (dumped
  // bodies, chunks a decoder turned into strings); releaseHold ignores
  // memory no pool owns.
  _pushBody(chunk) {
    if (this._dumped || this.destroyed) {
      releaseHold(chunk);
      return;
    }
    const decoding = this._readableState.decoder !== null;
    const more = this.push(chunk);
    if (decoding) releaseHold(chunk);
    if (!more && !this[kSocketPaused]) {
      this[kSocketPaused] = true;
      this[kConn].pause();
    }
  }

  // Called by the server when the body is complete.
  _pushEnd(rawTrailers) {
    this.complete = true;
    // What follows on the socket belongs to the next request: the pause
    // applied for this body's backpressure must not outlive it.
    if (this[kSocketPaused]) {
      this[kSocketPaused] = false;
      this[kConn].resume();
    }
    if (rawTrailers) {
      this.rawTrailers = rawTrailers;
      this.trailers = headersObject(rawTrailers);
    }
    if (this._dumped) return;
    // EOF is pushed when a consumer asks for data (_read): a request nobody
    // reads then costs no stream machinery (emitReadable ticks). If a read
    // is outstanding, it is answered now.
    if (this._readableState.reading) this.push(null);
    else this[kEofPending] = true;
  }

  // The response finished while the body was unread: discard the rest
  // (node's _dump) so the connection keeps reading.
  _dump() {
    if (this._dumped) return;
    this._dumped = true;
    this.removeAllListeners('data');
    if (this[kSocketPaused]) {
      this[kSocketPaused] = false;
      this[kConn].resume();
    }
    this.resume();
  }

  // The connection closed before the body was complete.
  _abort() {
    if (this.complete || this.aborted) return;
    this.aborted = true;
    this.emit('aborted');
    const err = codedError('ECONNRESET', 'aborted');
    // As node: an 'error' only when someone listens for it.
    this.destroy(this.listenerCount('error') > 0 ? err : undefined);
  }

  // HTTP/2 compat (lib/http2_server.js): the stream closed before the
  // response ended. As node's Http2ServerRequest: 'aborted' even when the
  // body was complete, then 'close'; never 'error' (node's HTTP/2 compat
  // emits none).
  _abortStream() {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('aborted');
    this.destroy();
  }

  // The request failed while the connection stays (lib/server.js: body
  // over maxRequestBodySize, answered natively): 'error' only when someone
  // listens for it, as _abort; the connection is not destroyed here.
  _fail(err) {
    if (this.complete || this.aborted) return;
    this.aborted = true;
    this.destroy(this.listenerCount('error') > 0 ? err : undefined);
  }

  _destroy(err, cb) {
    // Chunks still queued in the stream were never handed out: give their
    // pool references back.
    const queued = this._readableState.buffer;
    if (queued && this._readableState.length > 0) {
      for (const chunk of queued) {
        if (typeof chunk !== 'string') releaseHold(chunk);
      }
    }
    // As node: destroying a request whose body is still arriving destroys
    // the connection (the rest of the body cannot be skipped safely).
    if (!this.complete && !this.aborted) {
      this.aborted = true;
      this[kConn].destroy();
    }
    cb(err);
  }
}

// instanceof http.IncomingMessage (lib/prototype_bridge.js).
bridge.chain(IncomingRequest, http.IncomingMessage.prototype, bridge.hiddenRequest,
  bridge.requestData);

module.exports = { IncomingRequest, kSeq, kConn };
