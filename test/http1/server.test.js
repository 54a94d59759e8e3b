'use strict';

// Server lifecycle: listen/address, listening/close/error events,
// EADDRINUSE, close() with idle keep-alive connections and in-flight
// requests, closeAllConnections/closeIdleConnections, prompt process exit.

const net = require('node:net');
const common = require('../common');
const { assert, impl } = common;

function listen(server, ...args) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(...args, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
}

function closeP(server) {
  return new Promise((resolve) => server.close((err) => resolve(err)));
}

// The child printed 'closed at <Date.now()>' from server.close's callback;
// it must exit soon after it: no handle of ours keeps the loop alive (a
// keep-alive timer would hold it for keepAliveTimeout, 5 s or more here).
// Measured from that callback, not from the spawn, so that a slow start
// (sanitizer build, a loaded machine) does not count.
function assertExitedPromptly(r) {
  const m = /closed at (\d+)/.exec(r.stdout);
  assert.ok(m, `no close callback: ${r.stdout} ${r.stderr}`);
  const delay = r.endedAt - Number(m[1]);
  assert.ok(delay < 2500, `child exited ${delay} ms after server.close's callback`);
}

function connectRefused(port) {
  return new Promise((resolve) => {
    const s = common.trackSocket(net.connect(port, '127.0.0.1'));
    s.on('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.on('error', (e) => resolve(e.code === 'ECONNREFUSED'));
  });
}

describe(`http1 server lifecycle [${common.implName}]`, function () {
  afterEach(common.cleanup);

  describe('listen', function () {
    it('listen(0, host, cb): address() reports the port; "listening" is emitted', async function () {
      const server = common.trackServer(impl.createServer((req, res) => res.end('hi')));
      let listeningEvents = 0;
      server.on('listening', () => listeningEvents++);
      await listen(server, 0, '127.0.0.1');
      const addr = server.address();
      assert.strictEqual(typeof addr.port, 'number');
      assert.ok(addr.port > 0);
      assert.strictEqual(addr.address, '127.0.0.1');
      assert.strictEqual(addr.family, 'IPv4');
      assert.strictEqual(listeningEvents, 1);
      const r = await common.httpRequest(addr.port);
      assert.strictEqual(r.body.toString(), 'hi');
    });

    it('listen(port, host, backlog, cb)', async function () {
      const server = common.trackServer(impl.createServer((req, res) => res.end('backlog')));
      await listen(server, 0, '127.0.0.1', 128);
      const r = await common.httpRequest(server.address().port);
      assert.strictEqual(r.body.toString(), 'backlog');
    });

    it('listen on a specific free port', async function () {
      // find a free port, release it, listen on it
      const probe = net.createServer();
      await new Promise((r) => probe.listen(0, '127.0.0.1', r));
      const { port } = probe.address();
      await new Promise((r) => probe.close(r));
      const server = common.trackServer(impl.createServer((req, res) => res.end('fixed')));
      await listen(server, port, '127.0.0.1');
      assert.strictEqual(server.address().port, port);
      const r = await common.httpRequest(port);
      assert.strictEqual(r.body.toString(), 'fixed');
    });

    it('EADDRINUSE is emitted as "error" with that code', async function () {
      const { port } = await common.startServer((req, res) => res.end('first'));
      const second = common.trackServer(impl.createServer((req, res) => res.end('second')));
      const errP = common.once(second, 'error', 3000);
      second.listen(port, '127.0.0.1');
      const [err] = await errP;
      assert.ok(err instanceof Error);
      assert.strictEqual(err.code, 'EADDRINUSE');
      // the first server is unaffected
      const r = await common.httpRequest(port);
      assert.strictEqual(r.body.toString(), 'first');
    });
  });

  describe('close', function () {
    it('close(cb) emits "close", stops accepting, and the callback fires', async function () {
      const { server, port } = await common.startServer((req, res) => res.end());
      let closeEvents = 0;
      server.on('close', () => closeEvents++);
      const err = await common.withTimeout(closeP(server), 2000, 'close callback');
      assert.ok(!err, `close error: ${err}`);
      assert.strictEqual(closeEvents, 1);
      assert.strictEqual(await connectRefused(port), true, 'still accepting after close()');
    });

    it('close() with an idle keep-alive connection open closes it and finishes promptly', async function () {
      const { server, port } = await common.startServer((req, res) => res.end('ok'));
      const c = await common.rawConnect(port);
      c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
      await c.responses(1);
      const t0 = Date.now();
      await common.withTimeout(closeP(server), 1500, 'close callback with an idle keep-alive connection');
      await c.waitClose(1000);
      assert.ok(Date.now() - t0 < 1500);
    });

    it('close() with idle keep-alive connections from fetch and an http Agent', async function () {
      const http = require('node:http');
      const { server, port } = await common.startServer((req, res) => res.end('ok'));
      const agent = new http.Agent({ keepAlive: true });
      try {
        const r1 = await common.httpRequest(port, { agent });
        assert.strictEqual(r1.body.toString(), 'ok');
        const r2 = await fetch(`http://127.0.0.1:${port}/`);
        assert.strictEqual(await r2.text(), 'ok');
        await common.withTimeout(closeP(server), 1500, 'close callback');
      } finally {
        agent.destroy();
      }
    });

    it('close() lets an in-flight request finish, with its usual keep-alive header (as node)', async function () {
      let release;
      let started;
      const startedP = new Promise((r) => { started = r; });
      const { server, port } = await common.startServer((req, res) => {
        started();
        release = () => res.end('finished after close');
      });
      const c = await common.rawConnect(port);
      c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
      await startedP;
      const closed = closeP(server);
      await common.sleep(100);
      assert.strictEqual(c.closed, false, 'in-flight connection was closed');
      assert.strictEqual(await connectRefused(port), true, 'still accepting after close()');
      release();
      const [r] = await c.responses(1);
      assert.strictEqual(r.statusCode, 200);
      assert.strictEqual(r.body.toString(), 'finished after close');
      // node's close() closes idle connections only: the request in
      // flight is answered as any other (node's test-http-raw-headers).
      assert.strictEqual(r.headers.connection, 'keep-alive');
      void closed;
    });

    // node keeps the connection open after the in-flight response until
    // keepAliveTimeout (+1 s) expires; sluice closes it once the response is
    // done (the response still says keep-alive, as node's), so close()
    // completes promptly.
    common.sluiceOnly('close(): once the in-flight response is done its connection closes and the callback fires promptly', async function () {
      let release;
      let started;
      const startedP = new Promise((r) => { started = r; });
      const { server, port } = await common.startServer((req, res) => {
        started();
        release = () => res.end('done');
      });
      const c = await common.rawConnect(port);
      c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
      await startedP;
      const closed = closeP(server);
      await common.sleep(50);
      release();
      const t0 = Date.now();
      await common.withTimeout(closed, 1500, 'close callback after the in-flight response');
      await c.waitClose(1000);
      assert.ok(Date.now() - t0 < 1500);
      assert.strictEqual(common.parseAll(c.data)[0].body.toString(), 'done');
    });

    it('closeAllConnections() closes active and idle connections', async function () {
      let inHandler;
      const inHandlerP = new Promise((r) => { inHandler = r; });
      const { server, port } = await common.startServer((req, res) => {
        if (req.url === '/hang') {
          inHandler();
          return; // never answers
        }
        res.end('ok');
      });
      const idle = await common.rawConnect(port);
      idle.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
      await idle.responses(1);
      const active = await common.rawConnect(port);
      active.socket.write('GET /hang HTTP/1.1\r\nHost: h\r\n\r\n');
      await inHandlerP;
      const closed = closeP(server);
      server.closeAllConnections();
      await idle.waitClose(1000);
      await active.waitClose(1000);
      await common.withTimeout(closed, 1500, 'close callback');
    });

    it('closeIdleConnections() closes idle connections only', async function () {
      let release;
      let inHandler;
      const inHandlerP = new Promise((r) => { inHandler = r; });
      const { server, port } = await common.startServer((req, res) => {
        if (req.url === '/slow') {
          inHandler();
          release = () => res.end('slow done');
          return;
        }
        res.end('ok');
      });
      const idle = await common.rawConnect(port);
      idle.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
      await idle.responses(1);
      const active = await common.rawConnect(port);
      active.socket.write('GET /slow HTTP/1.1\r\nHost: h\r\n\r\n');
      await inHandlerP;
      server.closeIdleConnections();
      await idle.waitClose(1000);
      await common.sleep(50);
      assert.strictEqual(active.closed, false, 'an active connection was closed');
      release();
      const [r] = await active.responses(1);
      assert.strictEqual(r.body.toString(), 'slow done');
      // the server is still listening
      const r2 = await common.httpRequest(port);
      assert.strictEqual(r2.body.toString(), 'ok');
    });

    it('a process with a server closed while a keep-alive connection was idle exits promptly (no leaked handle)', async function () {
      const script = `
        const common = require('./test/common');
        const net = require('node:net');
        const http = require('node:http');
        const server = common.impl.createServer((req, res) => res.end('ok'));
        server.listen(0, '127.0.0.1', async () => {
          const { port } = server.address();
          // a raw keep-alive connection, an http.Agent one and a fetch one
          const raw = net.connect(port, '127.0.0.1');
          raw.on('error', () => {});
          raw.write('GET / HTTP/1.1\\r\\nHost: h\\r\\n\\r\\n');
          await new Promise((r) => raw.once('data', r));
          const agent = new http.Agent({ keepAlive: true });
          await new Promise((resolve, reject) => {
            http.get({ host: '127.0.0.1', port, agent }, (res) => { res.resume(); res.on('end', resolve); }).on('error', reject);
          });
          const f = await fetch('http://127.0.0.1:' + port + '/');
          await f.text();
          server.close(() => console.log('closed at ' + Date.now()));
        });
      `;
      const r = await common.runNodeScript(script, { timeout: 8000 });
      assert.strictEqual(r.signal, null, `child killed after ${r.ms} ms (did not exit): ${r.stderr}`);
      assert.strictEqual(r.code, 0, r.stderr);
      assertExitedPromptly(r);
    });

    it('a process whose server served requests and was closed exits promptly', async function () {
      const script = `
        const common = require('./test/common');
        const server = common.impl.createServer({ keepAliveTimeout: 60000, headersTimeout: 60000, requestTimeout: 120000 }, (req, res) => {
          req.on('data', () => {});
          req.on('end', () => res.end('ok'));
        });
        server.listen(0, '127.0.0.1', async () => {
          const { port } = server.address();
          for (let i = 0; i < 5; i++) {
            const r = await fetch('http://127.0.0.1:' + port + '/', { method: 'POST', body: 'x'.repeat(100000) });
            await r.text();
          }
          server.closeAllConnections();
          server.close(() => console.log('closed at ' + Date.now()));
        });
      `;
      const r = await common.runNodeScript(script, { timeout: 8000 });
      assert.strictEqual(r.signal, null, `child killed after ${r.ms} ms (did not exit): ${r.stderr}`);
      assert.strictEqual(r.code, 0, r.stderr);
      assertExitedPromptly(r);
    });
  });
});
