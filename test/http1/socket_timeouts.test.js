'use strict';

// Socket idle timeouts as node:http has them: server.setTimeout(ms, cb) /
// server.timeout for every new connection, req.setTimeout / res.setTimeout
// / socket.setTimeout, and who hears 'timeout' (the request still
// receiving its body, the response in progress, the server; nobody: the
// socket is destroyed). Real clients over raw sockets.
// Shared: every test also runs against node:http (SLUICE_TEST_IMPL=node).

const common = require('../common');
const { assert } = common;

function deferred() {
  let resolve;
  const promise = new Promise((r) => { resolve = r; });
  return { promise, resolve };
}

describe(`http1 socket idle timeouts [${common.implName}]`, function () {
  afterEach(common.cleanup);

  it('server.setTimeout: an idle keep-alive connection is handed to the server\'s \'timeout\'', async function () {
    const timedOut = deferred();
    const { server, port } = await common.startServer({ keepAliveTimeout: 0 }, (req, res) => res.end('ok'));
    assert.strictEqual(server.setTimeout(80, (socket) => timedOut.resolve(socket)), server);
    assert.strictEqual(server.timeout, 80);
    const c = await common.rawConnect(port);
    const t0 = Date.now();
    c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
    await c.responses(1);
    const socket = await common.withTimeout(timedOut.promise, 3000, 'server timeout');
    assert.ok(Date.now() - t0 >= 70, `fired after ${Date.now() - t0} ms`);
    assert.strictEqual(c.closed, false, 'a listener was there: the socket is left open');
    socket.destroy();
    await c.waitClose();
  });

  it('an expired keepAliveTimeout goes to the server\'s \'timeout\' listeners, the socket left open', async function () {
    const timedOut = deferred();
    const { server, port } = await common.startServer({ keepAliveTimeout: 100 }, (req, res) => res.end('ok'));
    server.on('timeout', (socket) => timedOut.resolve(socket));
    const c = await common.rawConnect(port);
    const t0 = Date.now();
    c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
    await c.responses(1);
    const socket = await common.withTimeout(timedOut.promise, 3000, 'server timeout');
    assert.ok(Date.now() - t0 >= 90, `fired after ${Date.now() - t0} ms`);
    await common.sleep(50);
    assert.strictEqual(c.closed, false, 'a listener was there: the socket is left open');
    c.socket.write('GET /again HTTP/1.1\r\nHost: h\r\n\r\n');
    const [, again] = await c.responses(2);
    assert.strictEqual(again.body.toString(), 'ok');
    socket.destroy();
    await c.waitClose();
  });

  it('without a \'timeout\' listener an expired keepAliveTimeout closes the connection', async function () {
    const { port } = await common.startServer({ keepAliveTimeout: 100 }, (req, res) => res.end('ok'));
    const c = await common.rawConnect(port);
    c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
    await c.responses(1);
    await c.waitClose(3000);
  });

  it('a connection idle before its first request times out too', async function () {
    const timedOut = deferred();
    const { server, port } = await common.startServer((req, res) => res.end('ok'));
    server.setTimeout(50, (socket) => {
      timedOut.resolve();
      socket.destroy();
    });
    const c = await common.rawConnect(port);
    await common.withTimeout(timedOut.promise, 3000, 'server timeout');
    await c.waitClose();
  });

  it('nobody listening: the idle socket is destroyed', async function () {
    const { server, port } = await common.startServer((req, res) => {});
    server.timeout = 50;
    const c = await common.rawConnect(port);
    c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
    await c.waitClose(3000);
    assert.strictEqual(c.len, 0);
  });

  it('req.setTimeout: the request still receiving its body hears it', async function () {
    const heard = deferred();
    const { port } = await common.startServer((req, res) => {
      const r = req.setTimeout(50, (socket) => {
        heard.resolve(socket === req.socket);
        socket.destroy();
      });
      assert.strictEqual(r, req);
    });
    const c = await common.rawConnect(port);
    c.socket.write('POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nhello');
    assert.strictEqual(await common.withTimeout(heard.promise, 3000, 'req timeout'), true);
    await c.waitClose();
  });

  it('res.setTimeout: the response in progress hears it, a complete request does not', async function () {
    const heard = deferred();
    const { server, port } = await common.startServer((req, res) => {
      req.setTimeout(50, () => heard.resolve('req'));
      const r = res.setTimeout(50, (socket) => heard.resolve('res'));
      assert.strictEqual(r, res);
    });
    const serverHeard = deferred();
    server.on('timeout', (socket) => {
      serverHeard.resolve();
      socket.destroy();
    });
    const c = await common.rawConnect(port);
    c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
    assert.strictEqual(await common.withTimeout(heard.promise, 3000, 'res timeout'), 'res');
    await common.withTimeout(serverHeard.promise, 3000, 'server timeout');
    await c.waitClose();
  });

  it('bytes moving keep the connection from timing out; setTimeout(0) turns it off', async function () {
    let timeouts = 0;
    let body = 0;
    const done = deferred();
    const { port } = await common.startServer((req, res) => {
      req.socket.setTimeout(150, () => { timeouts++; });
      req.on('data', (d) => { body += d.length; });
      req.on('end', () => {
        req.socket.setTimeout(0);
        common.setTimer(() => {
          res.end('ok');
          done.resolve();
        }, 250);
      });
    });
    const c = await common.rawConnect(port);
    c.socket.write('POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 8\r\n\r\n');
    for (let i = 0; i < 8; i++) {
      await common.sleep(50);
      c.socket.write('x');
    }
    await done.promise;
    const [r] = await c.responses(1);
    assert.strictEqual(r.body.toString(), 'ok');
    assert.strictEqual(body, 8);
    assert.strictEqual(timeouts, 0);
  });

  it('socket.setTimeout checks its argument as node', async function () {
    const errors = [];
    const got = deferred();
    const { port } = await common.startServer((req, res) => {
      for (const bad of ['1', -1]) {
        try { req.socket.setTimeout(bad); } catch (e) { errors.push(e.code); }
      }
      res.end();
      got.resolve();
    });
    const c = await common.rawConnect(port);
    c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
    await got.promise;
    assert.deepStrictEqual(errors, ['ERR_INVALID_ARG_TYPE', 'ERR_OUT_OF_RANGE']);
  });
});
