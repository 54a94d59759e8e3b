'use strict';

// The server's socket-level surface as node:http has it: the 'connection'
// event (graceful-shutdown libraries count sockets with it), clientError's
// err.rawPacket / err.bytesParsed, server.unref() / ref() deciding whether
// the process may exit, and socket.bytesRead / bytesWritten / setKeepAlive
// on a plain HTTP/1.1 connection. Shared: also run against node:http.

const { execFileSync } = require('node:child_process');
const net = require('node:net');
const common = require('../common');
const { assert } = common;

const GET = 'GET / HTTP/1.1\r\nHost: h\r\n\r\n';

describe(`http1 socket surface [${common.implName}]`, function () {
  afterEach(common.cleanup);

  describe("'connection'", function () {
    it('is emitted once per connection, before its request, with the socket req.socket is', async function () {
      const order = [];
      const sockets = [];
      const { server, port } = await common.startServer((req, res) => {
        order.push('request');
        assert.strictEqual(req.socket, sockets[sockets.length - 1]);
        res.end('ok');
      });
      server.on('connection', (socket) => {
        order.push('connection');
        sockets.push(socket);
        assert.strictEqual(typeof socket.remotePort, 'number');
        assert.strictEqual(socket.remoteAddress, '127.0.0.1');
        assert.strictEqual(socket.localPort, port);
        assert.strictEqual(typeof socket.destroy, 'function');
      });
      for (let i = 0; i < 2; i++) {
        const c = await common.rawConnect(port);
        c.socket.write(GET + GET);
        await c.responses(2);
        c.destroy();
      }
      assert.deepStrictEqual(order, ['connection', 'request', 'request', 'connection', 'request', 'request']);
      assert.notStrictEqual(sockets[0], sockets[1]);
    });

    it('a socket destroyed in the listener closes the connection with no answer', async function () {
      let requests = 0;
      const { server, port } = await common.startServer((req, res) => {
        requests++;
        res.end();
      });
      server.on('connection', (socket) => socket.destroy());
      const c = await common.rawUntilClose(port, GET);
      assert.strictEqual(c.text, '');
      assert.strictEqual(requests, 0);
    });

    it('counts sockets for a graceful shutdown (the "close" of each is heard)', async function () {
      const open = new Set();
      const { server, port } = await common.startServer((req, res) => res.end('x'));
      server.on('connection', (socket) => {
        open.add(socket);
        socket.on('close', () => open.delete(socket));
      });
      const clients = [];
      for (let i = 0; i < 3; i++) {
        const c = await common.rawConnect(port);
        c.socket.write(GET);
        await c.responses(1);
        clients.push(c);
      }
      assert.strictEqual(open.size, 3);
      for (const s of open) s.destroy();
      await Promise.all(clients.map((c) => c.waitClose()));
      await common.withTimeout((async () => { while (open.size) await common.sleep(5); })(), 3000, 'socket close events');
    });

    it('a once() listener hears one connection only', async function () {
      let heard = 0;
      const { server, port } = await common.startServer((req, res) => res.end());
      server.once('connection', () => { heard++; });
      for (let i = 0; i < 2; i++) {
        const c = await common.rawConnect(port);
        c.socket.write(GET);
        await c.responses(1);
        c.destroy();
      }
      assert.strictEqual(heard, 1);
    });
  });

  describe('clientError rawPacket and bytesParsed', function () {
    const rows = [
      ['a bad header name', 'GET / HTTP/1.1\r\nHost: h\r\nBad Header: x\r\n\r\n', 'HPE_INVALID_HEADER_TOKEN', 28],
      ['a bad method', 'XYZ / HTTP/1.1\r\n\r\n', 'HPE_INVALID_METHOD', 0],
      ['two Content-Lengths', 'GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n',
        'HPE_UNEXPECTED_CONTENT_LENGTH', 60],
      ['a bad chunk size', 'GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
        'HPE_INVALID_CHUNK_SIZE', 55],
    ];
    for (const [name, wire, code, parsed] of rows) {
      it(`${name}: the read and the offset of the error`, async function () {
        const { server, port } = await common.startServer((req, res) => res.end());
        const heard = new Promise((resolve) => server.on('clientError', (err, socket) => {
          socket.destroy();
          resolve(err);
        }));
        const c = await common.rawConnect(port);
        c.socket.write(wire);
        const err = await common.withTimeout(heard, 3000, 'clientError');
        assert.strictEqual(err.code, code);
        assert.ok(Buffer.isBuffer(err.rawPacket));
        assert.strictEqual(err.rawPacket.toString('latin1'), wire);
        assert.strictEqual(err.bytesParsed, parsed);
      });
    }

    it('a request timeout carries neither', async function () {
      const { server, port } = await common.startServer({ headersTimeout: 200, requestTimeout: 400 },
        (req, res) => res.end());
      const heard = new Promise((resolve) => server.on('clientError', (err, socket) => {
        socket.destroy();
        resolve(err);
      }));
      const c = await common.rawConnect(port);
      c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n');
      const err = await common.withTimeout(heard, 5000, 'clientError');
      assert.strictEqual(err.code, 'ERR_HTTP_REQUEST_TIMEOUT');
      assert.strictEqual(err.rawPacket, undefined);
      assert.strictEqual(err.bytesParsed, undefined);
    });
  });

  describe('server.unref() / ref()', function () {
    // Exit code 0: the process ended on its own (nothing but the listening
    // socket could hold it); 3: it was still alive after 1.5 s.
    const script = (calls) => `
      const impl = process.env.SLUICE_TEST_IMPL === 'node' ? require('node:http') : require('.');
      const server = impl.createServer((req, res) => res.end());
      ${calls}
      server.listen(0, '127.0.0.1', () => console.log('listening'));
      setTimeout(() => { console.log('still alive'); process.exit(3); }, 1500).unref();
    `;

    it('an unref()ed server lets the process exit (before or after listen)', async function () {
      for (const calls of ['server.unref();', "server.on('listening', () => server.unref());"]) {
        const r = await common.runNodeScript(script(calls));
        assert.strictEqual(r.stdout.trim(), 'listening', r.stderr);
        assert.strictEqual(r.code, 0, r.stderr);
      }
    });

    it('a listening server, or one ref()ed again, keeps it alive', async function () {
      for (const calls of ['', 'server.unref(); server.ref();']) {
        const r = await common.runNodeScript(script(calls));
        assert.strictEqual(r.code, 3, r.stdout + r.stderr);
        assert.ok(r.stdout.includes('still alive'), r.stdout);
      }
    });
  });

  describe('socket counters and keep-alive', function () {
    it('bytesRead and bytesWritten count what crossed the connection', async function () {
      const seen = [];
      const { port } = await common.startServer((req, res) => {
        seen.push([req.socket.bytesRead, req.socket.bytesWritten]);
        res.end('hello');
      });
      const c = await common.rawConnect(port);
      const first = 'GET /a HTTP/1.1\r\nHost: h\r\n\r\n';
      c.socket.write(first);
      await c.responses(1);
      const afterFirst = c.data.length;
      const second = 'GET /bb HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n\r\n';
      c.socket.write(second);
      await c.responses(2);
      assert.deepStrictEqual(seen, [[first.length, 0], [first.length + second.length, afterFirst]]);
    });

    it('setKeepAlive(true, ms) turns TCP keep-alive probes on', async function () {
      const { port } = await common.startServer((req, res) => {
        assert.strictEqual(req.socket.setKeepAlive(true, 30000), req.socket);
        res.end('x');
      });
      const c = await common.rawConnect(port);
      c.socket.write(GET);
      await c.responses(1);
      // ss shows a keepalive timer on the server's side of the connection.
      const out = execFileSync('ss', ['-tnoH', 'state', 'established', `( sport = :${port} )`],
        { encoding: 'utf8' });
      assert.match(out, /timer:\(keepalive,/, out);
      assert.ok(net.isIP(c.socket.localAddress));
    });
  });
});
