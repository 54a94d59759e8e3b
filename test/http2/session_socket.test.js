'use strict';

// The socket of an HTTP/2 connection is one object for the server's
// 'connection' event, session.socket and the compat req.socket /
// res.socket: node hands out a proxy of the 'connection' socket, so what a
// 'connection' listener attaches (a connection id, a tracer's context) is
// seen on every request, and byte counts are the connection's. Shared with
// node:http2 (SLUICE_TEST_IMPL=node).

const http2 = require('node:http2');
const common = require('../common');
const h2 = require('./h2common');
const { assert } = common;

async function startH2Server() {
  if (common.isNode) {
    const server = common.trackServer(http2.createServer());
    server.on('session', (s) => common.trackSocket(s));
    await common.listenLocal(server);
    return { server, port: server.address().port };
  }
  return common.startServer();
}

describe('HTTP/2: the session socket is the connection\'s socket', function () {
  afterEach(common.cleanup);

  it('compat req.socket and res.socket see what the \'connection\' listener set; byte counts are the connection\'s', async function () {
    const { server, port } = await startH2Server();
    const sockets = [];
    server.on('connection', (socket) => {
      sockets.push(socket);
      socket.connectionId = `c${sockets.length}`;
    });
    server.on('request', (req, res) => {
      const first = req.socket.seenBefore === undefined;
      req.socket.seenBefore = true;
      res.end(JSON.stringify({
        id: req.socket.connectionId,
        resId: res.socket.connectionId,
        first,
        remotePort: req.socket.remotePort,
        bytesRead: req.socket.bytesRead,
      }));
    });
    const session = h2.connect(port);
    await new Promise((resolve) => session.once('connect', resolve));
    const localPort = session.socket.localPort;
    const a = JSON.parse((await h2.request(session, { ':path': '/a' })).body);
    const b = JSON.parse((await h2.request(session, { ':path': '/b' })).body);
    assert.strictEqual(sockets.length, 1, "one 'connection' for the session");
    for (const r of [a, b]) {
      assert.strictEqual(r.id, 'c1');
      assert.strictEqual(r.resId, 'c1');
      assert.strictEqual(r.remotePort, localPort);
    }
    assert.strictEqual(a.first, true);
    assert.strictEqual(b.first, false, 'a property set on req.socket stays for the next stream');
    assert.strictEqual(sockets[0].seenBefore, true, "and is the 'connection' socket's");
    assert.ok(b.bytesRead > a.bytesRead && a.bytesRead > 24,
      `bytesRead counts the connection's input (${a.bytesRead}, ${b.bytesRead})`);
    const closed = new Promise((resolve) => sockets[0].once('close', resolve));
    session.close();
    await closed;
  });

  it("the stream API's session.socket is the 'connection' socket's too", async function () {
    const { server, port } = await startH2Server();
    server.on('connection', (socket) => { socket.connectionId = 'stream-api'; });
    server.on('stream', (stream) => {
      stream.respond({ ':status': 200 });
      stream.end(String(stream.session.socket.connectionId));
    });
    const session = h2.connect(port);
    const r = await h2.request(session, { ':path': '/' });
    assert.strictEqual(r.body.toString(), 'stream-api');
  });
});
