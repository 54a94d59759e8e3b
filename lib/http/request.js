'use strict';

// IncomingRequest: node's IncomingMessage for sluice. A real
// stream.Readable over the body chunks the native session delivers.
// Backpressure: when push() reports a full buffer the connection stops
// reading its socket (uv_read_stop); _read() restarts it.

const { Readable, Writable, Duplex } = require('stream');
const { EventEmitter } = require('events');
const http = require('http');
const bridge = require('./prototype_bridge');
const { headersObject, headersDistinct } = require('./headers');
const { codedError } = require('../common/errors');
const { releaseHold, holdsReference } = require('../uploads/buffer_pool');

const {
  kConn, kSeq, kHeaders, kSocketPaused, kSocket, kRaw, kEofPending,
  kPoolBacked, kOrigWrite, kOrigUnderlyingWrite, kOrigWritev, kCopyOnPush,
} = require('../common/symbols');
// The trailers, null until the body's end brings some or someone reads
// them: most requests have none, and an empty array and object made for
// each of them were two allocations per request nobody looks at.
const kRawTrailers = Symbol('sluice.rawTrailers');
const kTrailers = Symbol('sluice.trailers');

// As node, whose server pauses and resumes the socket itself for a body's
// backpressure: the HTTP/1.1 socket's 'pause' / 'resume' (HTTP/2: the
// connection is shared, node does not pause it for a stream).
function socketEvent(req, event) {
  const socket = req[kSocket];
  if (req.httpVersionMajor < 2 && socket !== null && socket.listenerCount(event) > 0) socket.emit(event);
}

// Someone reads the body: from now on the stream may read ahead
// (maybeReadMore), which the constructor held off.
function startConsuming(req) {
  req._consuming = true;
  req._readableState.readingMore = false;
}

function isReadingBody(req) {
  return req._consuming || req.readableFlowing !== null;
}

const versionStrings = { 10: '1.0', 11: '1.1', 9: '0.9', 20: '2.0', 30: '3.0' };

// ---- a Readable built when touched ------------------------------------------------
// Most requests are bodiless GETs whose handler never reads, pipes or
// listens for the body: for them the Readable's state object (and the
// push(null) / end / close machinery it drives) was the largest JS cost of
// a request after the response. So IncomingRequest's constructor runs none
// of Readable's; the first access to _readableState — which every
// Readable method and property makes — runs Readable's constructor on the
// object (materialize) and replays what the state would have recorded
// meanwhile, so it reads as if it had existed all along. (Not even
// EventEmitter's listener dictionary is made up front: EventEmitter's
// methods create `_events` with the first listener, and most requests
// get none.) What happens while unbuilt is limited to what needs no
// state: the body's end (EOF waits in kEofPending for a _read, as it does
// built), 'end' / 'close' / other listeners (on() below), the server's
// dump decision.
// (lib/http2/stream.js's LazyDuplex is the same for the HTTP/2 stream.)
// The class's prototype chains to node's IncomingMessage.prototype
// (prototype_bridge.chain), so this constructor's prototype is unused.
function LazyReadable() {
  // EventEmitter's own fields, as EventEmitter.init leaves them, less the
  // dictionary (see above); Readable's constructor (materialize) keeps
  // whatever listeners there are by then.
  this._events = undefined;
  this._eventsCount = 0;
  this._maxListeners = undefined;
  this._built = false;
}
Object.setPrototypeOf(LazyReadable, Readable);

function materialize(req) {
  if (req._built) return;
  req._built = true;
  Readable.call(req);  // keeps the listeners (_events, when set)
  // As node's IncomingMessage: no read-ahead (maybeReadMore's read(0))
  // until someone reads, so a body nobody touched is still seen as
  // unconsumed when the response finishes, and is dumped.
  // (startConsuming clears it; a request consumed while unbuilt cannot
  // exist: consuming reads the state.)
  req._readableState.readingMore = !req._consuming;
}

class IncomingRequest extends LazyReadable {
  constructor(conn, seq, method, url, rawHeaders, versionCode, socket) {
    super();
    this[kConn] = conn;
    this[kSeq] = seq;
    this[kHeaders] = null;
    this[kSocketPaused] = false;
    this[kSocket] = socket;
    this.method = method;
    this.url = url;
    // An array, the native side's packed "name\0value\0..." string, or
    // an object whose rawHeaders() builds the array (HTTP/2's compat
    // request): made on first use.
    this[kRaw] = rawHeaders;
    this[kEofPending] = false;
    this[kRawTrailers] = null;
    this[kTrailers] = null;
    this.httpVersionMajor = (versionCode / 10) | 0;
    this.httpVersionMinor = versionCode % 10;
    this.httpVersion = versionStrings[versionCode] ||
      `${this.httpVersionMajor}.${this.httpVersionMinor}`;
    this.complete = false;
    this.aborted = false;
    this.upgrade = false;
    this._dumped = false;
    this._consuming = false;
    // As node's server requests: true when the server's
    // joinDuplicateHeaders option is, null otherwise (lib/http1/session.js
    // sets it; the HTTP/2 compat request leaves it undefined, as node's).
    this.joinDuplicateHeaders = null;
  }

  // The state, built on first access (materialize). Readable's constructor
  // assigns it: an own data property from then on (the accessor is not
  // consulted again).
  get _readableState() {
    materialize(this);
    return this._readableState;
  }

  set _readableState(value) {
    Object.defineProperty(this, '_readableState', {
      value, writable: true, configurable: true, enumerable: true,
    });
  }

  // Readable.prototype.on reads the state for every event; only 'data'
  // and 'readable' need it.
  on(event, listener) {
    if (!this._built && event !== 'data' && event !== 'readable') {
      return EventEmitter.prototype.on.call(this, event, listener);
    }
    return Readable.prototype.on.call(this, event, listener);
  }

  addListener(event, listener) { return this.on(event, listener); }

  // An unbuilt request is not destroyed (destroy() builds it).
  get destroyed() { return this._built ? this._readableState.destroyed : false; }

  set destroyed(value) {
    this._readableState.destroyed = value;
  }

  get rawHeaders() {
    let raw = this[kRaw];
    if (typeof raw === 'string') {
      raw = raw.split('\0');
      raw.length--; // the trailing separator
      this[kRaw] = raw;
    } else if (!Array.isArray(raw)) {
      raw = raw.rawHeaders();  // a protocol's deferred head (lib/http2/session.js H2Head)
      this[kRaw] = raw;
    }
    return raw;
  }

  set rawHeaders(v) { this[kRaw] = v; }

  get headers() {
    if (this[kHeaders] === null) this[kHeaders] = headersObject(this.rawHeaders, this.joinDuplicateHeaders);
    return this[kHeaders];
  }

  set headers(v) { this[kHeaders] = v; }

  // As node's own properties: [] and {} until trailers arrive (made on
  // first read, see kRawTrailers).
  get rawTrailers() {
    if (this[kRawTrailers] === null) this[kRawTrailers] = [];
    return this[kRawTrailers];
  }

  set rawTrailers(v) { this[kRawTrailers] = v; }

  get trailers() {
    if (this[kTrailers] === null) this[kTrailers] = {};
    return this[kTrailers];
  }

  set trailers(v) { this[kTrailers] = v; }

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
    if (!this._consuming) startConsuming(this);
    return super.read(n);
  }

  _read() {
    if (!this._consuming) startConsuming(this);
    if (this[kEofPending]) {
      this[kEofPending] = false;
      this.push(null);
      return;
    }
    if (this[kSocketPaused]) {
      this[kSocketPaused] = false;
      this[kConn].resume();
      socketEvent(this, 'resume');
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
    if (!pushChunk(this, chunk) && !this[kSocketPaused]) {
      this[kSocketPaused] = true;
      this[kConn].pause();
      socketEvent(this, 'pause');
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
      this.trailers = headersObject(rawTrailers, this.joinDuplicateHeaders);
    }
    if (!this._built) {
      // Nobody touched the stream: nothing reads or flows yet; EOF waits
      // for the first _read, as below.
      this[kEofPending] = true;
      return;
    }
    if (this._dumped) {
      // As node: a dumped request (flowing, its data discarded) still
      // ends when its body is complete, then closes.
      if (!this.destroyed) this.push(null);
      return;
    }
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
      socketEvent(this, 'resume');
    }
    this.resume();
  }

  // The connection closed before the response finished. As node's
  // IncomingMessage: 'aborted' unless the body was received and read to
  // its end (a complete GET nobody read is aborted too).
  _abort() {
    if (this.aborted || (this.complete && this._built && this.readableEnded)) return;
    this.aborted = true;
    this.emit('aborted');
    const err = codedError('ECONNRESET', 'aborted');
    // As node: an 'error' only when someone listens for it.
    this.destroy(this.listenerCount('error') > 0 ? err : undefined);
  }

  // HTTP/2 compat (lib/http2/session.js): the stream closed before the
  // response ended. As node's Http2ServerRequest: 'aborted' even when the
  // body was complete, then 'close'; never 'error' (node's HTTP/2 compat
  // emits none).
  _abortStream() {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('aborted');
    this.destroy();
  }

  // HTTP/2 compat (lib/http2/session.js): the stream closed after the
  // response ended. As node's Http2ServerRequest: no 'aborted'; what
  // arrived stays readable, then the request ends; a body nobody reads is
  // dumped.
  _streamClosed() {
    if (this.aborted || this.destroyed) return;
    this.complete = true;
    this[kEofPending] = false;
    this.push(null);
    if (!isReadingBody(this)) this._dump();
  }

  // The request failed while the connection stays (lib/http1/session.js: body
  // over maxRequestBodySize, answered natively): 'error' only when someone
  // listens for it, as _abort; the connection is not destroyed here.
  _fail(err) {
    if (this.complete || this.aborted) return;
    this.aborted = true;
    this.destroy(this.listenerCount('error') > 0 ? err : undefined);
  }

  _destroy(err, cb) {
    releaseQueuedChunks(this);
    // As node: destroying a request that was not read to its end (nor
    // dumped after its response) aborts it and destroys the connection
    // (the rest of the body cannot be skipped safely).
    if (!this.aborted && !this._dumped && (!this.complete || !this.readableEnded)) {
      this.aborted = true;
      this.emit('aborted');
      this[kConn].destroy();
    }
    // As node: the error reaches 'error' listeners only; without any it
    // is dropped (never an uncaught exception).
    cb(err && this.listenerCount('error') > 0 ? err : undefined);
  }
}

// ---- the stream idioms with pool memory (docs/uploads.md) ---------------------
// Shared by the Readables sluice delivers request bodies through:
// IncomingRequest (both protocols) and ServerHttp2Stream (lib/http2/stream.js).
// Each sets kPoolBacked when its chunks may carry pool references, pushes
// through pushChunk and gives queued chunks back in _destroy
// (releaseQueuedChunks).
const poolIdioms = {
  // With a pool, chunks piped on are released for the user (no hang, see
  // docs/uploads.md): a plain Writable releases its chunk when its write
  // calls back (it is done with it then: fs, net and http writes call back
  // once the bytes are out); any other destination — a Transform or Duplex
  // that may pass the chunk on or keep it, a legacy stream such as a
  // response — gets a copy and the chunk is released at once.
  // Stream.pipeline uses pipe() for streams, so it is covered too.
  pipe(dest, options) {
    if (this[kPoolBacked] && dest && typeof dest.write === 'function' && !dest[kOrigWrite]) {
      hookPipeDestination(dest);
    }
    return Readable.prototype.pipe.call(this, dest, options);
  },

  // Async iteration with a pool yields copies: each chunk is copied and
  // released as it arrives, so `for await (const c of req) chunks.push(c)`
  // is correct (a chunk kept past the next step stays valid) and nothing
  // can keep the pool dry (or, on HTTP/2, the window shut). (Copying at
  // push time, not per step: read() may join queued chunks into a new
  // Buffer, dropping the originals.) Zero copy: consume 'data' events and
  // release, or pipe().
  iterator(options) {
    if (this[kPoolBacked] && !this[kCopyOnPush]) {
      this[kCopyOnPush] = true;
      forEachQueued(this._readableState, copyOut);
    }
    return Readable.prototype.iterator.call(this, options);
  },

  [Symbol.asyncIterator]() {
    return this.iterator();
  },

  // A chunk a flowing stream emits to no 'data' listener is dropped — the
  // discard idiom, req.resume() / stream.resume() without a listener: its
  // pool reference goes back at once rather than at the next collection
  // (on HTTP/2 the window would stay shut until then). Only in flowing
  // mode: in paused mode read() emits 'data' and also returns the chunk.
  emit(event, chunk) {
    const heard = EventEmitter.prototype.emit.apply(this, arguments);
    if (!heard && event === 'data' && this._readableState.flowing === true) releaseHold(chunk);
    return heard;
  },
};

// Installs poolIdioms on a Readable subclass (non-enumerable, as class
// methods).
function withPoolIdioms(cls) {
  for (const key of Reflect.ownKeys(poolIdioms)) {
    Object.defineProperty(cls.prototype, key, {
      value: poolIdioms[key], writable: true, configurable: true, enumerable: false,
    });
  }
}

// Pushes a body chunk into `readable` → push()'s answer. A copy once async
// iteration started; with a decoder (setEncoding) the chunk is turned into
// a string by push, so its pool reference goes back at once.
function pushChunk(readable, chunk) {
  if (readable[kCopyOnPush]) chunk = copyOut(chunk);
  const decoding = readable._readableState.decoder !== null;
  const more = readable.push(chunk);
  if (decoding) releaseHold(chunk);
  return more;
}

// From _destroy: chunks still queued in the stream were never handed out;
// their pool references go back. Each is replaced by a copy, not left in
// place: a Readable still emits its queue after destroy() until 'close'
// (a resume() scheduled before the destroy — a 'data' listener added in
// the same tick as a client reset — flows it), and that 'data' must not
// hand out memory the pool may already reuse, nor a chunk whose
// releaseBuffer throws ERR_SLUICE_BUFFER_RELEASED. The copy is plain
// memory: releasing it is a no-op.
function releaseQueuedChunks(readable) {
  const state = readable._readableState;
  if (state.length > 0 || state.fastChunk != null) forEachQueued(state, copyOut);
}

function isPlainWritable(dest) {
  return dest instanceof Writable && !(dest instanceof Duplex);
}

// Wraps the ways a piped chunk can reach `dest`: write() (node 20–24 pipe
// through it, and legacy streams have nothing else), and for a real
// Writable also _write/_writev — newer nodes (26) hand a chunk from a
// single-destination pipe straight to an idle Writable's _write, bypassing
// write(). A chunk passes both hooks at most once each; releaseHold is
// idempotent (the second release finds no reference).
function hookPipeDestination(dest) {
  const releasing = isPlainWritable(dest);
  dest[kOrigWrite] = dest.write;
  dest.write = releasing ? releasingWrite : copyingWrite;
  if (dest._writableState && typeof dest._write === 'function') {
    dest[kOrigUnderlyingWrite] = dest._write;
    dest._write = releasing ? releasingUnderlyingWrite : copyingUnderlyingWrite;
    if (typeof dest._writev === 'function') {
      dest[kOrigWritev] = dest._writev;
      dest._writev = releasing ? releasingWritev : copyingWritev;
    }
  }
}

function releasingWrite(chunk, encoding, cb) {
  const write = this[kOrigWrite];
  if (!holdsReference(chunk)) return write.call(this, chunk, encoding, cb);
  if (typeof encoding === 'function') {
    cb = encoding;
    encoding = undefined;
  }
  // releaseHold: a chunk the user released meanwhile is left alone.
  return write.call(this, chunk, encoding, (err) => {
    releaseHold(chunk);
    if (typeof cb === 'function') cb(err);
  });
}

function copyingWrite(chunk, encoding, cb) {
  return this[kOrigWrite].call(this, copyOut(chunk), encoding, cb);
}

// Writable's _write contract: cb(err) once, when the chunk is done with.
function releasingUnderlyingWrite(chunk, encoding, cb) {
  const write = this[kOrigUnderlyingWrite];
  if (!holdsReference(chunk)) return write.call(this, chunk, encoding, cb);
  return write.call(this, chunk, encoding, (err) => {
    releaseHold(chunk);
    cb(err);
  });
}

function copyingUnderlyingWrite(chunk, encoding, cb) {
  return this[kOrigUnderlyingWrite].call(this, copyOut(chunk), encoding, cb);
}

// _writev gets [{ chunk, encoding }, ...] (Writable's buffered entries).
function releasingWritev(entries, cb) {
  return this[kOrigWritev].call(this, entries, (err) => {
    for (let i = 0; i < entries.length; i++) releaseHold(entries[i].chunk);
    cb(err);
  });
}

function copyingWritev(entries, cb) {
  for (let i = 0; i < entries.length; i++) entries[i].chunk = copyOut(entries[i].chunk);
  return this[kOrigWritev].call(this, entries, cb);
}

function copyOut(chunk) {
  if (!holdsReference(chunk)) return chunk;
  const copy = Buffer.from(chunk);
  releaseHold(chunk);
  return copy;
}

// Replaces each chunk queued in a Readable by fn(chunk). The queue is a
// BufferList (node 20), or an array read from bufferIndex on (newer nodes;
// slots already read are null), plus, on node 26, the one chunk a flowing
// stream prefetches outside the queue (fastChunk). Strings (setEncoding)
// carry no reference and are left alone.
function forEachQueued(state, fn) {
  const queue = state.buffer;
  if (Array.isArray(queue)) {
    for (let i = state.bufferIndex | 0; i < queue.length; i++) {
      const chunk = queue[i];
      if (chunk != null && typeof chunk !== 'string') queue[i] = fn(chunk);
    }
  } else if (queue && 'head' in queue) {
    for (let p = queue.head; p; p = p.next) {
      if (typeof p.data !== 'string') p.data = fn(p.data);
    }
  }
  if (state.fastChunk != null && typeof state.fastChunk !== 'string') {
    state.fastChunk = fn(state.fastChunk);
  }
}

withPoolIdioms(IncomingRequest);

// instanceof http.IncomingMessage (http/prototype_bridge.js).
bridge.install('IncomingMessage', IncomingRequest);

module.exports = {
  IncomingRequest, kSeq, kConn, kPoolBacked, withPoolIdioms, pushChunk, releaseQueuedChunks,
};
