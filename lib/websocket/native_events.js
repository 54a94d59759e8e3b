'use strict';

// The NativeServer callbacks of WebSocket connections (src/binding/
// js_websocket.h): each finds the WebSocket and hands it the event. The
// first argument is the native connection (HTTP/1.1: its WebSocket is
// conn[kWebSocket]) or, with a stream id as the last argument, the native
// HTTP/2 session (its WebSockets are the Map session[kWebSocket], by
// stream id). lib/server/server.js adds them to the server's callbacks;
// drain and close reach the WebSocket through the connection state's
// tunnel slot (websocket_server.js, takeOver) or the HTTP/2 stream entry.

const { isPoolAllocator, retainChunk, releaseHold } = require('../uploads/buffer_pool');

const kWebSocket = Symbol('sluice.webSocket');

function wsOf(handle, id) {
  const ws = handle[kWebSocket];
  return id === undefined || ws === undefined ? ws : ws.get(id);
}

// data: an ArrayBuffer of the message's own (js_websocket.cc says why
// the Buffer is made here).
function onWsMessage(conn, data, isBinary, id) {
  const ws = wsOf(conn, id);
  if (ws !== undefined) ws._onMessage(Buffer.from(data), isBinary);
}

function onWsPing(conn, data, id) {
  const ws = wsOf(conn, id);
  if (ws !== undefined) ws.emit('ping', data);
}

function onWsPong(conn, data, id) {
  const ws = wsOf(conn, id);
  if (ws !== undefined) ws.emit('pong', data);
}

function onWsPeerClose(conn, code, reason, id) {
  const ws = wsOf(conn, id);
  if (ws !== undefined) ws._onPeerClose(code, reason);
}

function onWsError(conn, code, reason, id) {
  const ws = wsOf(conn, id);
  if (ws !== undefined) ws._onError(code, reason);
}

const callbacks = { onWsMessage, onWsPing, onWsPong, onWsPeerClose, onWsError };

// A server with a requestBufferAllocator: messages arrive in its memory,
// as request bodies do. Native code copies each message into the current
// buffer (one after the other) and reports (offset, len); the message is
// a view of it, retained (retainChunk), so releaseBuffer(message) gives it
// back, and one left unreleased comes back when collected. The buffer's
// own hold is dropped when native code asks for the next one, or once no
// WebSocket that was handed pool memory is open (native code forgets the
// buffer first: nativeOf().wsDropPool()), so an idle server holds no pool
// buffer; never while native code may still write into its free tail (so
// not on server.close(): WebSockets outlive it). A message larger than the
// pool's buffers, or one that meets a dry pool or a throwing allocator, is
// a copy of its own (releasing it is a no-op).
function poolCallbacks(allocator, nativeOf) {
  const pool = isPoolAllocator(allocator);
  let slab = null;
  let size = 0;  // a pool's buffer size, once seen
  let users = 0;  // open WebSockets handed a pool message (ws._poolSource)
  let idleCheck = false;
  const release = () => {
    if (slab !== null) releaseHold(slab);
    slab = null;
  };
  // After the event that closed the last user has returned (native code
  // may be inside a message dispatch), and only if none came meanwhile.
  const dropIfIdle = () => {
    idleCheck = false;
    if (users !== 0 || slab === null) return;
    nativeOf().wsDropPool();
    release();
  };
  const source = {
    // ws._onClosed: a user closed.
    left() {
      users--;
      if (users === 0 && !idleCheck) {
        idleCheck = true;
        setImmediate(dropIfIdle);
      }
    },
  };
  return {
    callbacks: {
      // Native code needs room for `len` bytes: a Buffer (the next
      // current buffer), 0 (larger than the pool's buffers: copy it, keep
      // the current one), undefined (copy it; no current buffer).
      onWsAlloc(len) {
        if (pool && size > 0 && len > size) return 0;
        release();
        let buf;
        try {
          buf = allocator(len);
        } catch {
          return undefined;
        }
        if (!Buffer.isBuffer(buf) || buf.length === 0) return undefined;
        if (pool) size = buf.length;
        if (buf.length < len) {
          releaseHold(buf);
          return undefined;
        }
        slab = buf;
        return buf;
      },
      onWsPoolMessage(conn, offset, len, isBinary, id) {
        const ws = wsOf(conn, id);
        if (ws === undefined || slab === null) return;
        if (ws._poolSource === null && ws._readyState !== ws.CLOSED) {
          ws._poolSource = source;
          users++;
        }
        const chunk = slab.subarray(offset, offset + len);
        const type = ws._binaryType;
        if (type === 'nodebuffer' || type === 'fragments') {
          retainChunk(chunk);
          ws._onMessage(chunk, isBinary);
        } else {
          // An ArrayBuffer or a Blob is a copy: the pool memory is not
          // handed out (a view spanning the whole buffer would otherwise
          // give away the pool's ArrayBuffer itself).
          ws._onMessage(Buffer.from(chunk), isBinary);
        }
      },
    },
  };
}

module.exports = { callbacks, poolCallbacks, kWebSocket };
