'use strict';

// Request bodies: req as a Readable (data/end/pause/resume/pipe/setEncoding/
// async iteration), chunked uploads, an 8 MiB upload checked by sha256, and
// TCP backpressure while req is paused.

const crypto = require('node:crypto');
const { Writable } = require('node:stream');
const common = require('../common');
const { assert } = common;

// Responds with the sha256 and length of the request body.
function hashHandler(req, res) {
  const h = crypto.createHash('sha256');
  let n = 0;
  req.on('data', (d) => {
    h.update(d);
    n += d.length;
  });
  req.on('end', () => res.end(JSON.stringify({ sha256: h.digest('hex'), length: n })));
}

describe(`http1 request body [${common.implName}]`, function () {
  afterEach(common.cleanup);

  it('data and end events deliver the whole body as Buffers', async function () {
    const errs = common.handlerErrors();
    let chunks = [];
    const { port } = await common.startServer(errs.wrap((req, res) => {
      req.on('data', (d) => {
        assert.ok(d instanceof Uint8Array, 'chunk is a Buffer/Uint8Array');
        chunks.push(Buffer.from(d));
      });
      req.on('end', () => res.end('done'));
    }));
    const body = crypto.randomBytes(100000);
    const r = await common.httpRequest(port, { method: 'POST', body });
    errs.check();
    assert.strictEqual(r.body.toString(), 'done');
    assert.ok(Buffer.concat(chunks).equals(body));
    chunks = null;
  });

  it('end fires for a request without a body once consumed', async function () {
    const { port } = await common.startServer((req, res) => {
      let data = 0;
      req.on('data', () => data++);
      req.on('end', () => res.end(`data events: ${data}`));
    });
    const r = await common.httpRequest(port);
    assert.strictEqual(r.body.toString(), 'data events: 0');
    const r2 = await common.httpRequest(port, { method: 'POST', headers: { 'Content-Length': '0' }, body: '' });
    assert.strictEqual(r2.body.toString(), 'data events: 0');
  });

  it('req emits close after end', async function () {
    const events = [];
    const { port } = await common.startServer((req, res) => {
      req.on('data', () => {});
      req.on('end', () => events.push('end'));
      req.on('close', () => {
        events.push('close');
      });
      req.on('end', () => res.end('ok'));
    });
    await common.httpRequest(port, { method: 'POST', body: 'abc' });
    await common.sleep(50);
    assert.deepStrictEqual(events, ['end', 'close']);
  });

  it('pause() stops data events until resume()', async function () {
    const errs = common.handlerErrors();
    const log = [];
    let resumedAt = 0;
    const { port } = await common.startServer(errs.wrap((req, res) => {
      req.pause();
      assert.strictEqual(req.isPaused(), true);
      req.on('data', (d) => {
        log.push(d.length);
        assert.ok(resumedAt > 0, 'data event while paused');
      });
      common.setTimer(() => {
        resumedAt = Date.now();
        req.resume();
        assert.strictEqual(req.isPaused(), false);
      }, 150);
      req.on('end', () => res.end(String(log.reduce((a, b) => a + b, 0))));
    }));
    const c = await common.rawConnect(port);
    c.socket.write('POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n0123456789');
    const [r] = await c.responses(1);
    errs.check();
    assert.strictEqual(r.body.toString(), '10');
  });

  it('pipe() into a Writable and into res (echo)', async function () {
    const { port } = await common.startServer((req, res) => {
      if (req.url === '/echo') {
        req.pipe(res);
        return;
      }
      const parts = [];
      const sink = new Writable({
        write(chunk, enc, cb) {
          parts.push(Buffer.from(chunk));
          cb();
        },
      });
      sink.on('finish', () => res.end(common.sha256(Buffer.concat(parts))));
      req.pipe(sink);
    });
    const body = crypto.randomBytes(300000);
    const r1 = await common.httpRequest(port, { method: 'POST', path: '/sink', body });
    assert.strictEqual(r1.body.toString(), common.sha256(body));
    const r2 = await common.httpRequest(port, { method: 'POST', path: '/echo', body });
    assert.ok(r2.body.equals(body), 'echoed body differs');
  });

  it('setEncoding("utf8") yields strings and keeps split multi-byte characters intact', async function () {
    const errs = common.handlerErrors();
    const { port } = await common.startServer(errs.wrap((req, res) => {
      req.setEncoding('utf8');
      let s = '';
      req.on('data', (d) => {
        assert.strictEqual(typeof d, 'string');
        s += d;
      });
      req.on('end', () => res.end(JSON.stringify(s)));
    }));
    const text = 'price: 5\u20ac, snow: \u2603, face: \u{1F600}.';
    const bytes = Buffer.from(text, 'utf8');
    const c = await common.rawConnect(port);
    await c.write(`POST / HTTP/1.1\r\nHost: h\r\nContent-Length: ${bytes.length}\r\n\r\n`);
    // split inside the euro sign and inside the emoji
    const cut1 = bytes.indexOf(0xe2) + 1;
    const cut2 = bytes.indexOf(0xf0) + 2;
    await c.write(bytes.subarray(0, cut1));
    await common.sleep(20);
    await c.write(bytes.subarray(cut1, cut2));
    await common.sleep(20);
    await c.write(bytes.subarray(cut2));
    const [r] = await c.responses(1);
    errs.check();
    assert.strictEqual(JSON.parse(r.body.toString()), text);
  });

  it('async iteration over req', async function () {
    const { port } = await common.startServer(async (req, res) => {
      const parts = [];
      for await (const chunk of req) parts.push(Buffer.from(chunk));
      res.end(common.sha256(Buffer.concat(parts)));
    });
    const body = crypto.randomBytes(200000);
    const r = await common.httpRequest(port, { method: 'POST', body });
    assert.strictEqual(r.body.toString(), common.sha256(body));
  });

  it('chunked upload from node http client (many writes)', async function () {
    let te;
    const { port } = await common.startServer((req, res) => {
      te = req.headers['transfer-encoding'];
      hashHandler(req, res);
    });
    const parts = [];
    for (let i = 0; i < 50; i++) parts.push(crypto.randomBytes(1 + i * 997));
    const r = await common.httpRequest(port, { method: 'POST', body: parts });
    const all = Buffer.concat(parts);
    assert.strictEqual(te, 'chunked');
    assert.deepStrictEqual(JSON.parse(r.body), { sha256: common.sha256(all), length: all.length });
  });

  it('chunked upload over a raw socket with extensions, odd sizes and trailers', async function () {
    let seen;
    const { port } = await common.startServer((req, res) => {
      const parts = [];
      req.on('data', (d) => parts.push(Buffer.from(d)));
      req.on('end', () => {
        if (req.url === '/chunked') seen = { headers: req.headers, body: Buffer.concat(parts).toString() };
        res.end('ok');
      });
    });
    const c = await common.rawConnect(port);
    c.socket.write('POST /chunked HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n' +
      '5\r\nhello\r\n' +
      '1;ext=val\r\n \r\n' +
      'A\r\n0123456789\r\n' +
      '1a\r\nabcdefghijklmnopqrstuvwxyz\r\n' +
      '0\r\nX-Trailer: t\r\n\r\n' +
      'GET /after HTTP/1.1\r\nHost: h\r\n\r\n');
    const rs = await c.responses(2);
    assert.strictEqual(rs[0].body.toString(), 'ok');
    assert.strictEqual(rs[1].body.toString(), 'ok');
    assert.strictEqual(seen.headers['transfer-encoding'], 'chunked');
    assert.strictEqual(seen.body, 'hello 0123456789abcdefghijklmnopqrstuvwxyz');
  });

  it('chunked upload: body is exact', async function () {
    let body;
    const { port } = await common.startServer((req, res) => {
      const parts = [];
      req.on('data', (d) => parts.push(Buffer.from(d)));
      req.on('end', () => {
        body = Buffer.concat(parts).toString();
        res.end('ok');
      });
    });
    const c = await common.rawConnect(port);
    c.socket.write('POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n' +
      '5\r\nhello\r\n1;ext=val\r\n \r\nA\r\n0123456789\r\n1a\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\n\r\n');
    await c.responses(1);
    assert.strictEqual(body, 'hello 0123456789abcdefghijklmnopqrstuvwxyz');
  });

  it('req.trailers holds request trailers after end (as node)', async function () {
    let trailers;
    const { port } = await common.startServer((req, res) => {
      req.resume();
      req.on('end', () => {
        trailers = req.trailers;
        res.end('ok');
      });
    });
    const c = await common.rawConnect(port);
    c.socket.write('POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n' +
      '3\r\nabc\r\n0\r\nX-Sum: 42\r\n\r\n');
    await c.responses(1);
    assert.deepStrictEqual({ ...trailers }, { 'x-sum': '42' });
  });

  for (const size of [1000, 100000, 1024 * 1024]) {
    it(`bodies of ${size} bytes consumed with resume() only (no data listener), 4 on one keep-alive connection`, async function () {
      const { port } = await common.startServer((req, res) => {
        req.resume();
        req.on('end', () => res.end(req.url));
      });
      const c = await common.rawConnect(port);
      const body = Buffer.alloc(size, 120);
      for (let i = 0; i < 4; i++) {
        c.socket.write(`POST /${i} HTTP/1.1\r\nHost: h\r\nContent-Length: ${size}\r\n\r\n`);
        c.socket.write(body);
        const rs = await c.responses(i + 1, {}, 3000);
        assert.strictEqual(rs[i].body.toString(), `/${i}`);
      }
    });
  }

  it('bodies left unread by the handler are discarded and the connection keeps serving', async function () {
    const { port } = await common.startServer((req, res) => res.end(req.url));
    const c = await common.rawConnect(port);
    for (let i = 0; i < 4; i++) {
      c.socket.write(`POST /${i} HTTP/1.1\r\nHost: h\r\nContent-Length: 200000\r\n\r\n`);
      c.socket.write(Buffer.alloc(200000, 120));
      const rs = await c.responses(i + 1, {}, 3000);
      assert.strictEqual(rs[i].body.toString(), `/${i}`);
    }
  });

  it('8 MiB upload (node http client, Content-Length) arrives intact (sha256)', async function () {
    const { port } = await common.startServer(hashHandler);
    const body = crypto.randomBytes(8 * 1024 * 1024);
    const r = await common.httpRequest(port, { method: 'PUT', path: '/big', body, headers: { 'Content-Length': body.length } });
    assert.deepStrictEqual(JSON.parse(r.body), { sha256: common.sha256(body), length: body.length });
  });

  it('8 MiB upload sent chunked in 64 KiB pieces arrives intact (sha256)', async function () {
    const { port } = await common.startServer(hashHandler);
    const body = crypto.randomBytes(8 * 1024 * 1024);
    const parts = [];
    for (let i = 0; i < body.length; i += 65536) parts.push(body.subarray(i, i + 65536));
    const r = await common.httpRequest(port, { method: 'POST', body: parts });
    assert.deepStrictEqual(JSON.parse(r.body), { sha256: common.sha256(body), length: body.length });
  });

  it('8 MiB upload with curl arrives intact (sha256)', async function () {
    const { url } = await common.startServer(hashHandler);
    const body = crypto.randomBytes(8 * 1024 * 1024);
    const r = await common.curl(['--data-binary', '@-', '-H', 'Content-Type: application/octet-stream', `${url}/curl-big`], { input: body });
    assert.strictEqual(r.code, 0, r.stderr);
    assert.deepStrictEqual(JSON.parse(r.stdout), { sha256: common.sha256(body), length: body.length });
  });

  it('a paused request applies TCP backpressure, and resume() delivers everything', async function () {
    this.timeout(10000);
    let req;
    let received = 0;
    const hash = crypto.createHash('sha256');
    const { port } = await common.startServer((r, res) => {
      req = r;
      r.pause();
      r.on('data', (d) => {
        received += d.length;
        hash.update(d);
      });
      r.on('end', () => res.end('done'));
    });
    const size = 32 * 1024 * 1024;
    const body = crypto.randomBytes(size);
    const c = await common.rawConnect(port);
    c.socket.write(`POST / HTTP/1.1\r\nHost: h\r\nContent-Length: ${size}\r\n\r\n`);
    c.socket.write(body);
    await common.sleep(400);
    assert.ok(req, 'request event not emitted');
    // The server must not have swallowed the whole body while paused.
    assert.ok(received < size / 2, `server read ${received} bytes while paused`);
    assert.ok(c.socket.writableLength > 0, 'client should still have unsent bytes (backpressure)');
    req.resume();
    const [r] = await c.responses(1, {}, 8000);
    assert.strictEqual(r.body.toString(), 'done');
    assert.strictEqual(received, size);
    assert.strictEqual(hash.digest('hex'), common.sha256(body));
  });
});
