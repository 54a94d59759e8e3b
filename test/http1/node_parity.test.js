'use strict';

// node:http behaviours that node's own test/parallel/test-http-*.js check
// (test/node-compat), each asserted here against real clients: writeHead's
// argument forms and status-code errors, the response's stream surface
// (writable, write after end, 'finish' → 'close'), a request nobody read
// ending and closing after its response, req.destroy(err) without an
// 'error' listener, the server's option checks and the socket's encoding.
// Shared: every test also runs against node:http (SLUICE_TEST_IMPL=node).

const http = require('node:http');
const common = require('../common');
const { assert } = common;

const GET = 'GET / HTTP/1.1\r\nHost: h\r\n\r\n';

async function oneResponse(options, handler, wire) {
  if (typeof options === 'function') {
    wire = handler;
    handler = options;
    options = {};
  }
  const { port } = await common.startServer(options, handler);
  wire = wire === undefined ? GET : wire;
  const c = await common.rawConnect(port);
  c.socket.write(wire);
  const [r] = await c.responses(1);
  return { r, c, port };
}

function deferred() {
  let resolve;
  const promise = new Promise((r) => { resolve = r; });
  return { promise, resolve };
}

function fieldLines(r, name) {
  const out = [];
  for (let i = 0; i < r.rawHeaders.length; i += 2) {
    if (r.rawHeaders[i].toLowerCase() === name) out.push(r.rawHeaders[i + 1]);
  }
  return out;
}

describe(`http1 node parity [${common.implName}]`, function () {
  afterEach(common.cleanup);

  describe('writeHead', function () {
    it('an invalid status code is ERR_HTTP_INVALID_STATUS_CODE with node\'s message', async function () {
      const seen = [];
      await oneResponse((req, res) => {
        for (const code of [{}, [], 'nope', 99, 1000, undefined]) {
          try {
            res.writeHead(code);
            seen.push('no throw');
          } catch (e) {
            seen.push(`${e.name} ${e.code} ${e.message}`);
          }
        }
        res.end();
      });
      assert.deepStrictEqual(seen, [
        'RangeError ERR_HTTP_INVALID_STATUS_CODE Invalid status code: {}',
        'RangeError ERR_HTTP_INVALID_STATUS_CODE Invalid status code: []',
        'RangeError ERR_HTTP_INVALID_STATUS_CODE Invalid status code: nope',
        'RangeError ERR_HTTP_INVALID_STATUS_CODE Invalid status code: 99',
        'RangeError ERR_HTTP_INVALID_STATUS_CODE Invalid status code: 1000',
        'RangeError ERR_HTTP_INVALID_STATUS_CODE Invalid status code: undefined',
      ]);
    });

    // (Duplicates within such an array: node 20 keeps the last, node 22+
    // all, as sluice.)
    it('an array of fields replaces fields set before', async function () {
      const { r } = await oneResponse((req, res) => {
        res.setHeader('x-a', '1');
        res.setHeader('x-keep', 'k');
        res.writeHead(200, ['x-a', '2', 'x-b', '4']);
        res.end();
      });
      assert.deepStrictEqual(fieldLines(r, 'x-a'), ['2']);
      assert.deepStrictEqual(fieldLines(r, 'x-b'), ['4']);
      assert.deepStrictEqual(fieldLines(r, 'x-keep'), ['k']);
    });

    it('an array without fields set before sends every pair', async function () {
      const { r } = await oneResponse((req, res) => {
        res.writeHead(200, ['x-a', '1', 'x-a', '2']);
        res.end();
      });
      assert.deepStrictEqual(fieldLines(r, 'x-a'), ['1', '2']);
    });

    it('writeHead(code, undefined, headers) takes the headers', async function () {
      const { r } = await oneResponse((req, res) => {
        res.writeHead(201, undefined, ['x-foo', 'bar']);
        res.end();
      });
      assert.strictEqual(r.statusCode, 201);
      assert.strictEqual(r.statusMessage, 'Created');
      assert.deepStrictEqual(fieldLines(r, 'x-foo'), ['bar']);
    });
  });

  describe('the response as a stream', function () {
    it('writable stays true after end() and at \'close\'', async function () {
      const seen = [];
      let closed;
      const done = new Promise((resolve) => { closed = resolve; });
      await oneResponse((req, res) => {
        res.end('x');
        seen.push(res.writable);
        res.on('close', () => {
          seen.push(res.writable, res.destroyed);
          closed();
        });
      });
      await done;
      assert.deepStrictEqual(seen, [true, true, true]);
    });

    it('write after end returns false and emits ERR_STREAM_WRITE_AFTER_END before \'close\'', async function () {
      const events = [];
      let closed;
      const done = new Promise((resolve) => { closed = resolve; });
      await oneResponse((req, res) => {
        res.on('error', (e) => events.push(`error ${e.code}`));
        res.on('finish', () => events.push('finish'));
        res.on('close', () => {
          events.push('close');
          closed();
        });
        res.write('a');
        res.end();
        events.push(`write ${res.write('b', (e) => events.push(`cb ${e && e.code}`))}`);
      });
      await done;
      assert.deepStrictEqual(events, [
        'write false', 'finish', 'cb ERR_STREAM_WRITE_AFTER_END',
        'error ERR_STREAM_WRITE_AFTER_END', 'close',
      ]);
    });

    it('\'close\' comes in the tick after \'finish\' (before ticks its listeners schedule)', async function () {
      const events = [];
      let closed;
      const done = new Promise((resolve) => { closed = resolve; });
      await oneResponse((req, res) => {
        res.on('finish', () => {
          events.push(`finish destroyed=${res.destroyed}`);
          process.nextTick(() => events.push('tick'));
        });
        res.on('close', () => {
          events.push(`close destroyed=${res.destroyed}`);
          closed();
        });
        res.end('x');
      });
      await done;
      assert.deepStrictEqual(events, ['finish destroyed=false', 'close destroyed=true', 'tick']);
    });
  });

  describe('the request after its response', function () {
    it('a request nobody read ends and closes after the response closes', async function () {
      const events = [];
      let closed;
      const done = new Promise((resolve) => { closed = resolve; });
      await oneResponse((req, res) => {
        res.end();
        req.on('end', () => events.push(`req end destroyed=${req.destroyed}`));
        req.on('close', () => {
          events.push(`req close destroyed=${req.destroyed}`);
          closed();
        });
        res.on('close', () => events.push('res close'));
      });
      await done;
      // (node 26 ends the request before the response closes, older ones
      // after; the request closes last in all.)
      assert.deepStrictEqual([...events].sort(),
        ['req close destroyed=true', 'req end destroyed=false', 'res close']);
      assert.strictEqual(events[2], 'req close destroyed=true');
    });

    it('a request whose body is read closes before the response', async function () {
      const events = [];
      let closed;
      const done = new Promise((resolve) => { closed = resolve; });
      await oneResponse((req, res) => {
        req.on('data', () => {});
        req.on('close', () => events.push('req close'));
        res.on('close', () => {
          events.push('res close');
          closed();
        });
        common.setTimer(() => res.end(), 50);
      }, 'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc');
      await done;
      assert.deepStrictEqual(events, ['req close', 'res close']);
    });

    it('req.destroy(err) without an \'error\' listener is no uncaught exception; the client is reset', async function () {
      const uncaught = [];
      const onUncaught = (e) => uncaught.push(e);
      process.on('uncaughtException', onUncaught);
      try {
        let aborted = false;
        const { port } = await common.startServer((req, res) => {
          req.on('aborted', () => { aborted = true; });
          req.destroy(new Error('destroy test'));
        });
        const err = await new Promise((resolve) => {
          http.get({ port, host: '127.0.0.1', agent: false }, (r) => r.resume())
            .on('error', resolve);
        });
        await common.sleep(50);
        assert.strictEqual(err.code, 'ECONNRESET');
        assert.strictEqual(aborted, true);
        assert.deepStrictEqual(uncaught, []);
      } finally {
        process.removeListener('uncaughtException', onUncaught);
      }
    });
  });

  describe('the head the server completes', function () {
    it('node\'s order: Date, Connection, Keep-Alive, then the framing header', async function () {
      const { port } = await common.startServer((req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.write('a');
        res.end(req.url === '/len' ? undefined : 'b');
      });
      const c = await common.rawConnect(port);
      c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
      const text = await c.waitFor((cl) => (cl.text.includes('0\r\n\r\n') ? cl.text : null));
      const names = text.slice(0, text.indexOf('\r\n\r\n')).split('\r\n').slice(1)
        .map((l) => l.slice(0, l.indexOf(':')).toLowerCase());
      assert.deepStrictEqual(names,
        ['content-type', 'date', 'connection', 'keep-alive', 'transfer-encoding']);
      const { r } = await oneResponse((req, res) => res.end('hello'));
      assert.deepStrictEqual(r.rawHeaders.filter((x, i) => i % 2 === 0).map((n) => n.toLowerCase()),
        ['date', 'connection', 'keep-alive', 'content-length']);
    });
  });

  describe('trailers', function () {
    it('writeHead, addTrailers, end(body): a chunked body carrying the trailers', async function () {
      const { port } = await common.startServer((req, res) => {
        res.writeHead(200, [['content-type', 'text/plain']]);
        res.addTrailers({ 'x-foo': 'bar' });
        res.end('stuff\n');
      });
      const c = await common.rawConnect(port);
      c.socket.write(GET);
      const text = await c.waitFor((cl) => (/0\r\n(.*\r\n)*\r\n$/.test(cl.text) ? cl.text : null));
      assert.match(text, /Transfer-Encoding: chunked\r\n/);
      assert.ok(text.endsWith('6\r\nstuff\n\r\n0\r\nx-foo: bar\r\n\r\n'), text);
      const trailers = await new Promise((resolve, reject) => {
        http.get({ port, host: '127.0.0.1', agent: false }, (r) => {
          r.resume();
          r.on('end', () => resolve(r.trailers));
        }).on('error', reject);
      });
      assert.deepStrictEqual({ ...trailers }, { 'x-foo': 'bar' });
    });

    it('an HTTP/1.0 request gets no trailers', async function () {
      const { port } = await common.startServer((req, res) => {
        res.writeHead(200);
        res.addTrailers({ 'x-foo': 'bar' });
        res.end('stuff\n');
      });
      const text = (await common.rawUntilClose(port, 'GET / HTTP/1.0\r\n\r\n')).text;
      assert.ok(!/x-foo/.test(text), text);
      assert.ok(text.endsWith('stuff\n'), text);
    });

    it('a Trailer header with a Content-Length is ERR_HTTP_TRAILER_INVALID; removed, the response goes out', async function () {
      let err;
      const { r } = await oneResponse((req, res) => {
        res.setHeader('Trailer', 'baz');
        try { res.writeHead(200, { 'Content-Length': '2' }); } catch (e) { err = e; }
        res.removeHeader('Trailer');
        res.end('ok');
      });
      assert.strictEqual(err.code, 'ERR_HTTP_TRAILER_INVALID');
      assert.strictEqual(err.message, 'Trailers are invalid with this transfer encoding');
      assert.strictEqual(r.headers['content-length'], '2');
      assert.strictEqual(r.body.toString(), 'ok');
    });
  });

  describe('IncomingMessage / ServerResponse options', function () {
    it('requests and responses are made of the given subclasses', async function () {
      class MyRequest extends http.IncomingMessage {
        agent() { return this.headers['user-agent'] || 'unknown'; }
      }
      class MyResponse extends http.ServerResponse {
        status(code) { return this.writeHead(code, { 'Content-Type': 'text/plain' }); }
      }
      const seen = [];
      const { r } = await oneResponse({ IncomingMessage: MyRequest, ServerResponse: MyResponse },
        (req, res) => {
          seen.push(req instanceof MyRequest, res instanceof MyResponse, req.agent());
          res.status(202);
          res.end('x');
        }, 'GET / HTTP/1.1\r\nHost: h\r\nUser-Agent: t\r\n\r\n');
      assert.deepStrictEqual(seen, [true, true, 't']);
      assert.strictEqual(r.statusCode, 202);
      assert.strictEqual(r.headers['content-type'], 'text/plain');
      assert.strictEqual(r.body.toString(), 'x');
    });
  });

  describe('upgrade', function () {
    it('an upgraded socket nobody reads emits \'end\' at the client\'s FIN', async function () {
      const ended = deferred();
      const { server, port } = await common.startServer((req, res) => res.end());
      server.on('upgrade', (req, socket) => {
        socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n');
        socket.on('end', () => {
          ended.resolve();
          socket.end();
        });
      });
      const c = await common.rawConnect(port);
      c.socket.write('GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n');
      await c.waitFor((cl) => cl.text.includes('\r\n\r\n'));
      c.socket.end();
      await common.withTimeout(ended.promise, 3000, 'the upgraded socket\'s end');
      await c.waitClose();
    });
  });

  describe('server options and socket', function () {
    const create = (o) => (common.isNode ? http.createServer(o) : common.impl.createServer(o));

    it('createServer rejects options that are not an object (arrays too)', function () {
      for (const bad of ['foo', 42, true, []]) {
        assert.throws(() => create(bad), { code: 'ERR_INVALID_ARG_TYPE' }, String(bad));
      }
      assert.throws(() => create(42), {
        message: 'The "options" argument must be of type object. Received type number (42)',
      });
    });

    it('requestTimeout alone lowers the default headersTimeout', function () {
      const a = create({ requestTimeout: 20000 });
      assert.strictEqual(a.headersTimeout, 20000);
      const b = create({ requestTimeout: 100000 });
      assert.strictEqual(b.headersTimeout, 60000);
      assert.throws(() => create({ headersTimeout: 10000, requestTimeout: 1000 }),
        { code: 'ERR_OUT_OF_RANGE' });
    });

    it('a parse error without a clientError listener: 400, and the socket\'s \'error\' listeners hear it', async function () {
      const errors = [];
      const { server, port } = await common.startServer((req, res) => res.end());
      server.on('connection', (socket) => socket.on('error', (e) => errors.push(e)));
      const data = (await common.rawUntilClose(port, 'GET / HTTP/1.1\r\nHost: h\r\nBad Header\r\n\r\n')).text;
      assert.strictEqual(data, 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      await common.sleep(20);
      assert.strictEqual(errors.length, 1);
      assert.strictEqual(errors[0].code, 'HPE_INVALID_HEADER_TOKEN');
      assert.ok(Buffer.isBuffer(errors[0].rawPacket));
    });

    it('server[Symbol.asyncDispose]() closes the server', async function () {
      const { server } = await common.startServer((req, res) => res.end());
      let closed = false;
      server.on('close', () => { closed = true; });
      await server[Symbol.asyncDispose]();
      assert.strictEqual(closed, true);
      assert.strictEqual(server.listening, false);
    });

    it('requestTimeout counts from the connection\'s start: a client that connects and waits gets 408', async function () {
      const { port } = await common.startServer({ headersTimeout: 0, requestTimeout: 300 }, (req, res) => res.end());
      const c = await common.rawConnect(port);
      const data = (await c.waitClose(5000)).toString('latin1');
      assert.strictEqual(data, 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
    });

    it('servers created and dropped without listen() are garbage-collected', async function () {
      require('node:v8').setFlagsFromString('--expose-gc');
      const gc = require('node:vm').runInNewContext('gc');
      let collected = 0;
      const registry = new FinalizationRegistry(() => { collected++; });
      (() => {
        for (let i = 0; i < 20; i++) registry.register(create((req, res) => res.end()), i);
      })();
      for (let i = 0; i < 50 && collected < 20; i++) {
        gc();
        await common.sleep(10);
      }
      assert.strictEqual(collected, 20);
    });

    it('socket.setEncoding throws ERR_HTTP_SOCKET_ENCODING', async function () {
      let err;
      await oneResponse((req, res) => {
        try { req.socket.setEncoding('utf8'); } catch (e) { err = e; }
        res.end();
      });
      assert.strictEqual(err.code, 'ERR_HTTP_SOCKET_ENCODING');
      assert.strictEqual(err.message, 'Changing the socket encoding is not allowed per RFC7230 Section 3.');
    });
  });
});
