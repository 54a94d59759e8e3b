'use strict';

// TunnelSocket: the socket of node's 'upgrade' / 'connect' events. After an
// accepted Upgrade or CONNECT the native connection stops parsing HTTP
// (src/core/net/tunnel_session.h) and becomes a byte stream both ways:
// reads arrive here as 'data', writes go to the connection's native writer.
// A real stream.Duplex, because WebSocket libraries (ws) use the stream
// machinery itself (read(), _readableState, 'end', 'finish').

const { Duplex } = require('stream');

const { kConn } = require('../common/symbols');
const kInfo = Symbol('sluice.socketInfo');
const kPaused = Symbol('sluice.tunnelPaused');
const kPendingWrite = Symbol('sluice.pendingWrite');
const kTimer = Symbol('sluice.idleTimer');
const kEof = Symbol('sluice.eof');

function onReadableEnd() {
  if (!this.allowHalfOpen) this.write = writeAfterFin;
}

// As net.Socket's writeAfterFIN: EPIPE to the callback and as 'error'.
function writeAfterFin(chunk, encoding, cb) {
  if (typeof encoding === 'function') cb = encoding;
  const err = new Error('This socket has been ended by the other party');
  err.code = 'EPIPE';
  process.nextTick(() => {
    this.destroy(err);
    if (typeof cb === 'function') cb(err);
  });
  return false;
}

class TunnelSocket extends Duplex {
  // conn: the native connection; info: the connection's SluiceSocket
  // (addresses, computed once per connection).
  constructor(conn, info) {
    // As node's http server sockets: half-open allowed (the user ends).
    super({ allowHalfOpen: true, decodeStrings: false });
    this[kConn] = conn;
    this[kInfo] = info;
    this[kPaused] = false;
    this[kPendingWrite] = null;
    this[kTimer] = null;
    this[kEof] = false;
    this.timeout = 0;
    this.bytesRead = 0;
    this.bytesWritten = 0;
    this.encrypted = false;
    this.connecting = false;
    // As net.Socket, which listens for its own 'end': once the peer has
    // ended, a socket that does not allow half-open refuses writes.
    this.on('end', onReadableEnd);
  }

  get remoteAddress() { return this[kInfo].remoteAddress; }
  get remotePort() { return this[kInfo].remotePort; }
  get remoteFamily() { return this[kInfo].remoteFamily; }
  get localAddress() { return this[kInfo].localAddress; }
  get localPort() { return this[kInfo].localPort; }
  get readyState() {
    if (this.destroyed) return 'closed';
    if (this.readable && this.writable) return 'open';
    return this.readable ? 'readOnly' : this.writable ? 'writeOnly' : 'closed';
  }

  address() { return this[kInfo].address(); }

  // ---- reading: native reads (lib/http1/session.js onTunnelData / onTunnelEnd) ----
  _onData(chunk) {
    this.bytesRead += chunk.length;
    this._active();
    if (!this.push(chunk) && !this[kPaused]) {
      this[kPaused] = true;
      this[kConn].pause();
    }
  }

  _onEnd() {
    this[kEof] = true;
    this.push(null);
    // As net.Socket at EOF: 'end' is emitted even when nobody reads,
    // provided nothing is left unread.
    this.read(0);
  }

  _read() {
    if (this[kPaused]) {
      this[kPaused] = false;
      this[kConn].resume();
    }
  }

  // A WebSocketServer took the connection over (lib/websocket/): native
  // code parses its frames from now on. Returns the bytes read but not
  // consumed (to be parsed first) and stops this socket's own timer; the
  // connection is no longer paused for this stream's sake.
  _takeOver() {
    this._clearTimer();
    let pending = null;
    if (this.readableLength > 0) pending = this.read();
    if (this[kPaused]) {
      this[kPaused] = false;
      this[kConn].resume();
    }
    return pending;
  }

  // ---- writing -------------------------------------------------------------
  _write(chunk, encoding, cb) {
    if (typeof chunk === 'string') chunk = Buffer.from(chunk, encoding);
    this.bytesWritten += chunk.length;
    this._active();
    if (this[kConn].writeRaw(chunk)) {
      cb();
    } else {
      // Over the high-water mark: the callback waits for the native drain
      // (lib/http1/session.js onDrain -> _onDrain), so the stream's own
      // backpressure reaches the writer.
      this[kPendingWrite] = cb;
    }
  }

  _onDrain() {
    const cb = this[kPendingWrite];
    if (cb !== null) {
      this[kPendingWrite] = null;
      cb();
    }
  }

  _final(cb) {
    this[kConn].endRaw();
    cb();
  }

  _destroy(err, cb) {
    this._clearTimer();
    this[kConn].destroy();
    const pending = this[kPendingWrite];
    this[kPendingWrite] = null;
    if (pending !== null) pending();
    cb(err);
  }

  // The native connection closed (peer gone, or after end/destroy). Closed
  // before the peer's EOF and not by us: a reset, which node reports as
  // ECONNRESET ('error' only when someone listens: a tunnel handler without
  // one must not crash the process over a client that went away).
  _closed() {
    this._clearTimer();
    if (this.destroyed) return;
    if (!this[kEof] && this.listenerCount('error') > 0) {
      const err = new Error('read ECONNRESET');
      err.code = 'ECONNRESET';
      err.errno = -104;
      err.syscall = 'read';
      this.destroy(err);
    } else {
      this.destroy();
    }
  }

  // ---- socket options ------------------------------------------------------
  // An idle timeout as net.Socket's: 'timeout' after ms without reads or
  // writes; the socket is not closed by it.
  setTimeout(ms, cb) {
    this.timeout = ms;
    if (cb) {
      if (ms === 0) this.removeListener('timeout', cb);
      else this.once('timeout', cb);
    }
    this._clearTimer();
    if (ms > 0 && !this.destroyed) {
      this[kTimer] = setTimeout(() => {
        this[kTimer] = null;
        this.emit('timeout');
      }, ms);
      this[kTimer].unref();
    }
    return this;
  }

  _active() {
    if (this[kTimer] !== null) this[kTimer].refresh();
  }

  _clearTimer() {
    if (this[kTimer] !== null) {
      clearTimeout(this[kTimer]);
      this[kTimer] = null;
    }
  }

  // The native connection sets TCP_NODELAY on accept and no keep-alive
  // probes; both are accepted as no-ops here.
  setNoDelay() { return this; }
  setKeepAlive() { return this; }
  ref() { return this; }
  unref() { return this; }
}

module.exports = { TunnelSocket };
