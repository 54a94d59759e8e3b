'use strict';

// req.socket / the 'connection' socket / 'dropRequest''s socket are
// `instanceof net.Socket`, as node's, and the net.Socket members HTTP code
// calls work on them (sluice's own implementations, not net.Socket's
// internals). Shared: also run against node:http.

const net = require('node:net');
const common = require('../common');
const { assert } = common;

describe(`http1 the socket is a net.Socket [${common.implName}]`, function () {
  afterEach(common.cleanup);

  it("req.socket is instanceof net.Socket, the same object as 'connection''s, and its common members work", async function () {
    let connSocket = null;
    const seen = new Promise((resolve, reject) => {
      common.startServer((req, res) => {
        try {
          const s = req.socket;
          assert.ok(s instanceof net.Socket);
          assert.strictEqual(s, connSocket);
          assert.strictEqual(res.socket, s);
          assert.strictEqual(s.setTimeout(500), s);
          s.setTimeout(0);
          assert.strictEqual(s.setNoDelay(true), s);
          assert.strictEqual(s.setKeepAlive(true, 1000), s);
          assert.strictEqual(s.ref(), s);
          assert.strictEqual(s.unref(), s);
          s.ref();
          const a = s.address();
          assert.strictEqual(a.port, s.localPort);
          assert.strictEqual(a.address, '127.0.0.1');
          assert.strictEqual(a.family, 'IPv4');
          assert.strictEqual(s.remoteFamily, 'IPv4');
          assert.strictEqual(s.remoteAddress, '127.0.0.1');
          assert.strictEqual(typeof s.remotePort, 'number');
          assert.strictEqual(s.destroyed, false);
          assert.strictEqual(s.readable, true);
          assert.strictEqual(s.writable, true);
          const onData = () => {};
          s.on('data', onData);
          s.removeListener('data', onData);
          s.once('close', () => {});
          assert.strictEqual(s.listenerCount('close') >= 1, true);
          res.end('ok');
          resolve();
        } catch (err) {
          res.end();
          reject(err);
        }
      }).then(({ server, port }) => {
        server.on('connection', (socket) => { connSocket = socket; });
        return common.httpRequest(port, { path: '/' });
      }).catch(reject);
    });
    await common.withTimeout(seen, 5000, 'request');
  });

  it("maxRequestsPerSocket: 'dropRequest' hears a net.Socket", async function () {
    // Answered after a turn, so the second request is read before the
    // first response closes the connection.
    const { server, port } = await common.startServer((req, res) => setImmediate(() => res.end('ok')));
    server.maxRequestsPerSocket = 1;
    const dropped = new Promise((resolve) => server.on('dropRequest', (req, socket) => resolve(socket)));
    const c = await common.rawConnect(port);
    c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n');
    const socket = await common.withTimeout(dropped, 5000, "'dropRequest'");
    assert.ok(socket instanceof net.Socket);
  });
});
