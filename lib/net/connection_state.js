'use strict';

// The JS state of one native connection (TCP or TLS), whatever protocol it
// speaks: the socket view (req.socket, 'connection', TLS events), the
// HTTP/1.1 request/response pairs in flight, the tunnel after an accepted
// Upgrade / CONNECT, the allocator buffer a body read lands in. Created on
// first use and kept on the native connection object; every protocol
// folder reaches it through connState(), none through another protocol.

const { SluiceSocket } = require('./socket');
const { kConnState: kState } = require('../common/symbols');

// Per-connection JS state, kept on the native connection object.
class ConnState {
  constructor(server, conn) {
    this.socket = new SluiceSocket(conn, server);
    this.current = null;  // request receiving body
    this.tunnel = null;   // TunnelSocket after an accepted Upgrade / CONNECT
    this.upgradeReq = null;  // its request, until the native switch
    this.h2Session = null;   // the HTTP/2 session handle when it speaks HTTP/2
    // [req, res] pairs not finished, in request order, in live[head] to
    // live[tail - 1]. Finished front pairs only move `head` (their slots
    // are cleared) and the array is reused from 0 once every pair is done:
    // no splice moving every later pipelined pair (each move a write
    // barrier into this long-lived array) per response.
    this.live = [];
    this.head = 0;
    this.tail = 0;
    this.bodyBuf = null;  // allocator buffer native code reads body bytes into
    // conn.handle(), taken by the first HTTP/1.1 response
    // (binding.respondHttp1): kept here, beside the socket that holds
    // `conn`, so the connection object it points into lives as long as
    // this does.
    this.handle = null;
    this.socket._onHttpTimeout = () => socketOnTimeout(server, this);
    // As node: server.timeout (server.setTimeout) is each new socket's.
    if (server.timeout > 0) this.socket.setTimeout(server.timeout);
  }
}

// The socket's idle timeout, as node's socketOnTimeout: 'timeout' for the
// request still receiving its body, for the response in progress (the
// front one), and for the server; with nobody listening to any of them
// the socket is destroyed.
function socketOnTimeout(server, st) {
  const socket = st.socket;
  if (st.h2Session !== null) {
    // As node:http2: the session times out ('timeout' on it, then on the
    // server with the session); with nobody listening it is destroyed.
    const s = st.h2Session;
    const sessionTimeout = s.emit('timeout');
    if (!server.emit('timeout', s) && !sessionTimeout) s.destroy();
    return;
  }
  const req = st.current;
  const reqTimeout = req !== null && !req.complete && req.emit('timeout', socket);
  const res = st.tail > st.head ? st.live[st.head + 1] : null;
  const resTimeout = res !== null && res.emit('timeout', socket);
  const serverTimeout = server.emit('timeout', socket);
  if (!reqTimeout && !resTimeout && !serverTimeout) socket.destroy();
}

function connState(server, conn) {
  let st = conn[kState];
  if (st === undefined) {
    st = new ConnState(server, conn);
    conn[kState] = st;
  }
  return st;
}

module.exports = { connState };
