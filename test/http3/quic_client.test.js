'use strict';

// HTTP/3 with a deterministic client of our own on node's OpenSSL QUIC
// client API (test/http3/quic_client.js): valid requests (GET, HEAD, POST,
// trailers, 100 concurrent streams, a client reset) and hostile input —
// malformed frames, bad heads, QPACK dynamic references, an oversized
// head, extra or bad critical streams, more concurrent requests than
// allowed, an idle connection. Each error must come back as the RFC 9114
// code (a stream reset or a connection close), never a crash or a hang.
// [sluice-only]: node has no HTTP/3 server.

const crypto = require('node:crypto');
const common = require('../common');
const { assert } = common;
const { h3, startH3Server } = require('./h3common');
const { frame, headersFrame, varint, h3Clients } = require('./quic_client');

const run = common.isSluice && h3 ? describe : describe.skip;

const H3 = {
  NO_ERROR: 0x100, STREAM_CREATION: 0x103, FRAME_UNEXPECTED: 0x105, EXCESSIVE_LOAD: 0x107,
  MISSING_SETTINGS: 0x10a, REQUEST_REJECTED: 0x10b, REQUEST_CANCELLED: 0x10c, MESSAGE: 0x10e,
  QPACK_DECOMPRESSION_FAILED: 0x200,
};

run('HTTP/3 with a node OpenSSL QUIC client [sluice-only]', function () {
  this.timeout(30000);
  const { client, connect } = h3Clients();

  const echo = (req, res) => {
    const h = crypto.createHash('sha256');
    let n = 0;
    req.on('data', (d) => { h.update(d); n += d.length; });
    req.on('end', () => {
      res.setHeader('x-method', req.method);
      res.end(`${req.method} ${req.url} ${n} ${h.digest('hex')}`);
    });
  };

  it('GET and HEAD', async function () {
    const { port } = await startH3Server({}, echo);
    const c = await connect(port);
    const r = await common.withTimeout(c.request('GET', '/x?y', [], null, port), 10000, 'GET');
    assert.strictEqual(r.status, 200);
    assert.strictEqual(r.headers['x-method'], 'GET');
    assert.strictEqual(r.body.toString(), `GET /x?y 0 ${crypto.createHash('sha256').digest('hex')}`);
    assert.strictEqual(r.headers['content-length'], String(r.body.length));
    const head = await common.withTimeout(c.request('HEAD', '/x', [], null, port), 10000, 'HEAD');
    assert.strictEqual(head.status, 200);
    assert.strictEqual(head.headers['x-method'], 'HEAD');
    assert.strictEqual(head.frames.filter((f) => f.type === 0).length, 0, 'no DATA frame');
  });

  it('POST: a 1 MiB body in DATA frames of varied sizes', async function () {
    const { port } = await startH3Server({}, echo);
    const c = await connect(port);
    const body = crypto.randomBytes(1024 * 1024);
    const parts = [headersFrame([':method', 'POST', ':scheme', 'https', ':authority', 'localhost', ':path', '/up',
      'content-length', String(body.length)])];
    for (let off = 0, i = 0; off < body.length; i++) {
      const n = Math.min(body.length - off, [1, 1000, 16384, 65536, 300000][i % 5]);
      parts.push(frame(0x0, body.subarray(off, off + n)));
      off += n;
    }
    // Unknown and reserved frame types are ignored anywhere (RFC 9114 §9).
    parts.splice(2, 0, frame(0x21, Buffer.from('grease')));
    const r = await common.withTimeout(c.raw(Buffer.concat(parts)), 20000, 'POST');
    assert.strictEqual(r.status, 200);
    assert.strictEqual(r.body.toString(), `POST /up ${body.length} ${crypto.createHash('sha256').update(body).digest('hex')}`);
  });

  it('trailers from the compat response', async function () {
    const { port } = await startH3Server({}, (req, res) => {
      res.addTrailers({ 'x-checksum': 'abc' });
      res.end('with trailers');
    });
    const c = await connect(port);
    const r = await common.withTimeout(c.request('GET', '/t', [], null, port), 10000, 'GET');
    assert.strictEqual(r.body.toString(), 'with trailers');
    assert.deepStrictEqual(r.trailers, { 'x-checksum': 'abc' });
  });

  it('responses arrive as they are sent: 40 sequential GETs of 1-100 KB, each well under a QUIC timer', async function () {
    // A tick of the client's that took in the response after its reads
    // left the data unread until the next timer: ~15 s (a keep-alive
    // PING at half the idle timeout) for about one request in four.
    const { port } = await startH3Server({}, (req, res) => res.end(Buffer.alloc(Number(req.url.slice(1)), 97)));
    const c = await connect(port);
    let worst = 0;
    for (let i = 0; i < 40; i++) {
      const n = [1217, 45923, 46000, 100000][i % 4];
      const t0 = Date.now();
      const r = await common.withTimeout(c.request('GET', `/${n}`, [], null, port), 20000, `GET ${n}`);
      worst = Math.max(worst, Date.now() - t0);
      assert.strictEqual(r.body.length, n);
    }
    assert.ok(worst < 3000, `slowest response ${worst} ms`);
  });

  it('100 concurrent requests', async function () {
    const { port } = await startH3Server({}, (req, res) => setImmediate(() => res.end(req.url)));
    const c = await connect(port);
    const rs = await common.withTimeout(Promise.all(Array.from({ length: 100 },
      (_, i) => c.request('GET', `/r/${i}`, [], null, port))), 20000, '100 requests');
    rs.forEach((r, i) => {
      assert.strictEqual(r.status, 200);
      assert.strictEqual(r.body.toString(), `/r/${i}`);
    });
  });

  it('a client reset reaches the handler as an aborted request', async function () {
    let aborted = null;
    const { port } = await startH3Server({}, (req, res) => {
      req.on('aborted', () => { aborted = 'aborted'; });
      res.on('close', () => { if (aborted === null) aborted = 'close only'; });
    });
    const c = await connect(port);
    const p = c.raw(headersFrame([':method', 'POST', ':scheme', 'https', ':authority', 'x', ':path', '/']), { noFin: true });
    await common.sleep(300);
    c.native.reset(p.id, H3.REQUEST_CANCELLED);
    const t0 = Date.now();
    while (aborted === null && Date.now() - t0 < 10000) await common.sleep(20);
    assert.strictEqual(aborted, 'aborted');
  });

  it('a paused request (body unread, backpressure) still sees the client reset', async function () {
    let aborted = null;
    let received = 0;
    const { port } = await startH3Server({}, (req, res) => {
      req.on('data', (chunk) => {
        received += chunk.length;
        req.pause();  // and never resumed: the stream is no longer read
      });
      req.on('aborted', () => { aborted = 'aborted'; });
      res.on('close', () => { if (aborted === null) aborted = 'close only'; });
    });
    const c = await connect(port);
    const p = c.raw(Buffer.concat([
      headersFrame([':method', 'POST', ':scheme', 'https', ':authority', 'x', ':path', '/']),
      frame(0x0, crypto.randomBytes(256 * 1024)),
    ]), { noFin: true });
    const t0 = Date.now();
    while (received === 0 && Date.now() - t0 < 5000) await common.sleep(10);
    assert.ok(received > 0, 'no body bytes arrived');
    c.native.reset(p.id, H3.REQUEST_CANCELLED);
    while (aborted === null && Date.now() - t0 < 10000) await common.sleep(20);
    assert.strictEqual(aborted, 'aborted');
  });

  describe('bad requests: the stream is reset with H3_MESSAGE_ERROR, the connection lives on', function () {
    const cases = {
      'no :path': [':method', 'GET', ':scheme', 'https', ':authority', 'x'],
      'empty :path': [':method', 'GET', ':scheme', 'https', ':authority', 'x', ':path', ''],
      'an unknown pseudo-header': [':method', 'GET', ':scheme', 'https', ':path', '/', ':protocol', 'x'],
      'a pseudo-header after a field': [':method', 'GET', ':scheme', 'https', 'a', 'b', ':path', '/'],
      'a duplicate :method': [':method', 'GET', ':method', 'GET', ':scheme', 'https', ':path', '/'],
      'an upper-case name': [':method', 'GET', ':scheme', 'https', ':path', '/', 'X-Up', '1'],
      'connection: keep-alive': [':method', 'GET', ':scheme', 'https', ':path', '/', 'connection', 'keep-alive'],
      'te: gzip': [':method', 'GET', ':scheme', 'https', ':path', '/', 'te', 'gzip'],
      'a CR in a value': [':method', 'GET', ':scheme', 'https', ':path', '/', 'a', 'x\ry'],
    };
    for (const [what, fields] of Object.entries(cases)) {
      it(what, async function () {
        let calls = 0;
        const { port } = await startH3Server({}, (req, res) => { calls++; res.end('ok'); });
        const c = await connect(port);
        const r = await common.withTimeout(c.raw(headersFrame(fields)), 10000, what);
        assert.strictEqual(r.reset, H3.MESSAGE, JSON.stringify(r));
        const ok = await common.withTimeout(c.request('GET', '/', [], null, port), 10000, 'after');
        assert.strictEqual(ok.status, 200);
        assert.strictEqual(calls, 1, 'only the good request reached the handler');
      });
    }

    it('content-length that the DATA does not match', async function () {
      const { port } = await startH3Server({}, echo);
      const c = await connect(port);
      const r = await common.withTimeout(c.raw(Buffer.concat([
        headersFrame([':method', 'POST', ':scheme', 'https', ':path', '/', 'content-length', '10']),
        frame(0x0, Buffer.from('12345'))])), 10000, 'short body');
      assert.strictEqual(r.reset, H3.MESSAGE);
    });
  });

  describe('connection errors: CONNECTION_CLOSE with the code', function () {
    async function expectClose(setup, code, opts) {
      const { port } = await startH3Server({}, (req, res) => res.end('x'));
      const c = await connect(port, opts);
      setup(c, port);
      const info = await common.withTimeout(c.closed, 10000, 'connection close');
      assert.strictEqual(info.code, code, JSON.stringify(info));
      assert.strictEqual(info.transport, false);
    }

    it('DATA before HEADERS: H3_FRAME_UNEXPECTED', () =>
      expectClose((c) => c.raw(frame(0x0, Buffer.from('body first'))), H3.FRAME_UNEXPECTED));

    it('SETTINGS on a request stream: H3_FRAME_UNEXPECTED', () =>
      expectClose((c) => c.raw(frame(0x4, Buffer.alloc(0))), H3.FRAME_UNEXPECTED));

    it('an HTTP/2 frame type (PRIORITY 0x2) on a request stream: H3_FRAME_UNEXPECTED', () =>
      expectClose((c) => c.raw(frame(0x2, Buffer.from([0, 0, 0, 0, 0]))), H3.FRAME_UNEXPECTED));

    it('a QPACK dynamic table reference: QPACK_DECOMPRESSION_FAILED', () =>
      // Required Insert Count 1, then an indexed line into the dynamic table.
      expectClose((c) => c.raw(frame(0x1, Buffer.from([0x02, 0x00, 0x80]))), H3.QPACK_DECOMPRESSION_FAILED));

    // One over maxHeaderSize gets a 431 (hostile.test.js); past the hard
    // bound (4x the limit, at least the limit + 16 KiB) it is a
    // connection error before any of it is read.
    it('a HEADERS frame longer than 4x maxHeaderSize: H3_EXCESSIVE_LOAD', () =>
      expectClose((c) => c.raw(headersFrame([':method', 'GET', ':scheme', 'https', ':path', '/',
        'big', 'x'.repeat(300 * 1024)])), H3.EXCESSIVE_LOAD));

    it('a second control stream: H3_STREAM_CREATION_ERROR', () =>
      expectClose((c) => {
        const s = c.native.openStream(true);
        c.native.write(s, Buffer.concat([varint(0x00), frame(0x4, Buffer.alloc(0))]), false);
      }, H3.STREAM_CREATION));

    it('a push stream from the client: H3_STREAM_CREATION_ERROR', () =>
      expectClose((c) => {
        const s = c.native.openStream(true);
        c.native.write(s, Buffer.from([0x01, 0x00]), false);
      }, H3.STREAM_CREATION));

    it('a control stream that does not start with SETTINGS: H3_MISSING_SETTINGS', () =>
      expectClose((c) => {
        const s = c.native.openStream(true);
        c.native.write(s, Buffer.concat([varint(0x00), frame(0x7, varint(0))]), false);
      }, H3.MISSING_SETTINGS, { bare: true }));

    it('an insert on the QPACK encoder stream (capacity 0): QPACK_ENCODER_STREAM_ERROR', () =>
      expectClose((c) => {
        const s = c.native.openStream(true);
        // Type 0x02, then "Insert With Literal Name" (01xxxxxx): nothing fits.
        c.native.write(s, Buffer.from([0x02, 0x41, 0x61, 0x01, 0x62]), false);
      }, 0x201, { bare: true }));

    it('a second QPACK decoder stream: H3_STREAM_CREATION_ERROR', () =>
      expectClose((c) => {
        const s = c.native.openStream(true);
        c.native.write(s, Buffer.from([0x03]), false);
      }, H3.STREAM_CREATION));

    it('a client GOAWAY whose push id grows: H3_ID_ERROR', () =>
      expectClose((c) => c.native.write(c.control,
        Buffer.concat([frame(0x7, varint(4)), frame(0x7, varint(8))]), false), 0x108));

    it('the control stream closed: H3_CLOSED_CRITICAL_STREAM', () =>
      expectClose((c) => c.native.write(c.control, Buffer.alloc(0), true), 0x104));
  });

  it('more concurrent requests than maxStreams: the extra ones are refused (H3_REQUEST_REJECTED)', async function () {
    const held = [];
    const { port } = await startH3Server({ http3: { maxStreams: 5 } }, (req, res) => held.push(res));
    const c = await connect(port);
    const ps = Array.from({ length: 12 }, (_, i) => c.request('GET', `/${i}`, [], null, port));
    const t0 = Date.now();
    while (held.length < 5 && Date.now() - t0 < 10000) await common.sleep(20);
    await common.sleep(300);
    assert.strictEqual(held.length, 5, 'five reached the handler');
    for (const res of held) res.end('done');
    const rs = await common.withTimeout(Promise.all(ps), 10000, 'responses');
    assert.strictEqual(rs.filter((r) => r.status === 200).length, 5);
    assert.strictEqual(rs.filter((r) => r.reset === H3.REQUEST_REJECTED).length, 7);
  });

  it('idle timeout: an idle connection is closed with H3_NO_ERROR', async function () {
    const { server, port } = await startH3Server({ http3: { idleTimeout: 300 } }, (req, res) => res.end('x'));
    const c = await connect(port);
    const t0 = Date.now();
    const info = await common.withTimeout(c.closed, 10000, 'idle close');
    assert.strictEqual(info.code, H3.NO_ERROR);
    assert.ok(Date.now() - t0 >= 250, `closed after ${Date.now() - t0} ms`);
    const t1 = Date.now();
    while (server._http3.connections() !== 0 && Date.now() - t1 < 10000) await common.sleep(50);
    assert.strictEqual(server._http3.connections(), 0);
  });

  it('a client with another ALPN is refused in the handshake', async function () {
    const { port } = await startH3Server({}, (req, res) => res.end('x'));
    const c = client();
    await assert.rejects(common.withTimeout(c.connect(port, { alpn: 'h2' }), 10000, 'refusal'), /closed before connecting/);
    assert.strictEqual(c.closeInfo.transport, true);
  });
});
