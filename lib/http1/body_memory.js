'use strict';

// requestBufferAllocator on HTTP/1.1 connections: the memory the native
// connection reads a request body into (lib/http2/session.js has HTTP/2's,
// where releasing a chunk credits flow control, and HTTP/3's, whose
// streams ask through allocFor).

const binding = require('../common/binding');
const { connState } = require('../net/connection_state');
const {
  isPoolAllocator, onBufferAvailable, offBufferAvailable,
} = require('../uploads/buffer_pool');

const { ALLOC_FALLBACK, ALLOC_DRY, ALLOC_ERROR } = binding.constants;

// Where body reads land when the server has a requestBufferAllocator. A
// pool's own alloc returning undefined means "dry": the connection stops
// reading and waits for the pool's signal. Any other allocator's
// non-Buffer means "copy this read".
class BodyMemory {
  constructor(server, allocator) {
    this._server = server;
    this._allocator = allocator;
    this._pool = isPoolAllocator(allocator);
    this._waiting = new Set();
    this._onAvailable = this._retryWaiting.bind(this);
    this._attached = false;
    this.attach();
  }

  // The server listens (again, after a close): pool refills retry.
  attach() {
    if (this._pool && !this._attached) onBufferAvailable(this._allocator, this._onAvailable);
    this._attached = true;
  }

  // Native code needs memory for the next body read of `conn`.
  alloc(conn, size) {
    const st = connState(this._server, conn);
    let buf;
    try {
      buf = this._allocator(size);
    } catch (err) {
      // The connection is destroyed (native side); the request learns why.
      const req = st.current;
      if (req !== null && !req.complete) {
        req.aborted = true;
        if (req.listenerCount('error') > 0) req.destroy(err);
      }
      const server = this._server;
      if (server.listenerCount('clientError') > 0) server.emit('clientError', err, st.socket);
      return ALLOC_ERROR;
    }
    if (buf instanceof Uint8Array && buf.length > 0 && Buffer.isBuffer(buf)) {
      st.bodyBuf = buf;
      return buf;
    }
    if (this._pool) {
      this._waiting.add(conn);
      return ALLOC_DRY;
    }
    return ALLOC_FALLBACK;
  }

  // Memory for the next body read of one HTTP/3 request stream: a Buffer,
  // ALLOC_DRY (a pool's alloc returned nothing: `waiter`, the stream's
  // NativeHttp3Session, is told through retryBodyBuffer() once the pool
  // refills) or ALLOC_FALLBACK (copy). Throws what the allocator threw.
  allocFor(waiter, size) {
    const buf = this._allocator(size);
    if (buf instanceof Uint8Array && buf.length > 0 && Buffer.isBuffer(buf)) return buf;
    if (this._pool) {
      this._waiting.add(waiter);
      return ALLOC_DRY;
    }
    return ALLOC_FALLBACK;
  }

  // A pool refilled: retry the connections (and HTTP/3 sessions) waiting
  // for memory. A retry that finds the pool dry again re-registers through
  // alloc (allocFor).
  _retryWaiting() {
    const waiting = [...this._waiting];
    this._waiting.clear();
    for (const conn of waiting) conn.retryBodyBuffer();
  }

  // The server closed: no more retries.
  detach() {
    if (this._pool && this._attached) offBufferAvailable(this._allocator, this._onAvailable);
    this._attached = false;
    this._waiting.clear();
  }
}

module.exports = { BodyMemory };
