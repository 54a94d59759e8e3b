'use strict';

// stream.respond(headers, { waitForTrailers: true }) on HTTP/3, as
// node:http2 has it: 'wantTrailers' once the body is complete (in-memory
// body, no body, a body written past the stream's buffer, a native file
// body), then stream.sendTrailers() sends a trailing HEADERS frame before
// the FIN; node:http2's errors for sendTrailers too early, twice and after
// close. Checked with the project's QUIC client (the frames as sent) and
// gtlsclient (an independent HTTP/3 stack) for the trailer section.
// [sluice-only]: node has no HTTP/3 server.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const common = require('../common');
const { assert } = common;
const { h3, haveClient, startH3Server, gtls } = require('./h3common');
const { h3Clients } = require('./quic_client');

const run = common.isSluice && h3 ? describe : describe.skip;

const sha = (b) => crypto.createHash('sha256').update(b).digest('hex');

run('HTTP/3 waitForTrailers [sluice-only]', function () {
  this.timeout(30000);
  const { client } = h3Clients();
  let dir;
  let file;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-h3tr-'));
    file = { path: path.join(dir, 'f.bin'), data: crypto.randomBytes(1024 * 1024 + 17) };
    fs.writeFileSync(file.path, file.data);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function connect(port) {
    const c = client();
    return c.connect(port);
  }

  const get = (c, port, p, headers = [], method = 'GET') =>
    common.withTimeout(c.request(method, p, headers, null, port), 20000, `${method} ${p}`);

  // HEADERS, DATA..., HEADERS: exactly one trailing section, after every
  // DATA frame.
  function assertTrailingSection(r, what) {
    const types = r.frames.map((f) => f.type);
    assert.strictEqual(types[0], 0x1, what);
    assert.strictEqual(types[types.length - 1], 0x1, `${what}: ${types}`);
    assert.ok(types.slice(1, -1).every((t) => t === 0x0), `${what}: ${types}`);
  }

  const big = crypto.randomBytes(1024 * 1024);

  it('trailers after an in-memory body, after no body, and after a body written with drain; \'wantTrailers\' after end()', async function () {
    const events = [];
    const { server, port } = await startH3Server({});
    server.on('stream', (stream, headers) => {
      const p = headers[':path'];
      stream.on('wantTrailers', () => {
        events.push(`${p} wantTrailers`);
        stream.sendTrailers({ 'x-path': p, 'x-sum': p === '/big' ? sha(big) : 'none' });
      });
      stream.respond({ 'content-type': 'application/octet-stream' }, { waitForTrailers: true });
      if (p === '/body') {
        stream.end('hello trailers');
      } else if (p === '/empty') {
        stream.end();
      } else {
        // 1 MiB in 64 KiB writes, waiting for 'drain' when told to.
        (async () => {
          for (let off = 0; off < big.length; off += 65536) {
            if (!stream.write(big.subarray(off, off + 65536))) await common.once(stream, 'drain', 10000, 'drain');
          }
          events.push('/big end');
          stream.end();
        })();
      }
      events.push(`${p} handler`);
    });
    const c = await connect(port);
    const r1 = await get(c, port, '/body');
    assert.strictEqual(r1.status, 200);
    assert.strictEqual(r1.body.toString(), 'hello trailers');
    assert.deepStrictEqual(r1.trailers, { 'x-path': '/body', 'x-sum': 'none' });
    assertTrailingSection(r1, '/body');
    const r2 = await get(c, port, '/empty');
    assert.strictEqual(r2.status, 200);
    assert.deepStrictEqual(r2.frames.map((f) => f.type), [0x1, 0x1], 'HEADERS, trailing HEADERS');
    assert.deepStrictEqual(r2.trailers, { 'x-path': '/empty', 'x-sum': 'none' });
    const r3 = await get(c, port, '/big');
    assert.strictEqual(sha(r3.body), sha(big));
    assert.deepStrictEqual(r3.trailers, { 'x-path': '/big', 'x-sum': sha(big) });
    assertTrailingSection(r3, '/big');
    // 'wantTrailers' never from inside end(): after the handler returned,
    // and for the written body after its last write; once each.
    const at = (e) => events.indexOf(e);
    for (const p of ['/body', '/empty', '/big']) {
      assert.strictEqual(events.filter((e) => e === `${p} wantTrailers`).length, 1, `${events}`);
      assert.ok(at(`${p} wantTrailers`) > at(`${p} handler`), `${events}`);
    }
    assert.ok(at('/big wantTrailers') > at('/big end'), `${events}`);
  });

  it('trailers after a native file body (respondWithFile and respondWithFD)', async function () {
    const fd = fs.openSync(file.path, 'r');
    try {
      const { server, port } = await startH3Server({});
      server.on('stream', (stream, headers) => {
        stream.on('wantTrailers', () => stream.sendTrailers({ 'x-sha': sha(file.data) }));
        const opts = { waitForTrailers: true };
        if (headers[':path'] === '/fd') stream.respondWithFD(fd, {}, { ...opts, offset: 0 });
        else stream.respondWithFile(file.path, {}, opts);
      });
      const c = await connect(port);
      for (const p of ['/file', '/fd', '/file']) {
        const r = await get(c, port, p);
        assert.strictEqual(r.status, 200, JSON.stringify(r.reset || r.closed));
        assert.strictEqual(r.headers['content-length'], String(file.data.length));
        assert.strictEqual(sha(r.body), sha(file.data), p);
        assert.deepStrictEqual(r.trailers, { 'x-sha': sha(file.data) }, p);
        assertTrailingSection(r, p);
      }
    } finally {
      fs.closeSync(fd);
    }
  });

  it('sendTrailers errors as node:http2\'s: before \'wantTrailers\', twice, after close', async function () {
    const errors = [];
    const { server, port } = await startH3Server({});
    server.on('stream', (stream, headers) => {
      const p = headers[':path'];
      const attempt = (what) => {
        try {
          stream.sendTrailers({ 'x-what': what });
        } catch (e) {
          errors.push(`${what} ${e.code}`);
        }
      };
      if (p === '/closed') {
        stream.on('close', () => attempt('after close'));
        stream.respond({}, { waitForTrailers: true });
        stream.close(0x8);
        return;
      }
      stream.on('wantTrailers', () => {
        attempt('first');
        attempt('twice');
      });
      stream.respond({}, { waitForTrailers: true });
      attempt('early');
      stream.end('x');
    });
    const c = await connect(port);
    const r = await get(c, port, '/');
    assert.strictEqual(r.body.toString(), 'x');
    assert.deepStrictEqual(r.trailers, { 'x-what': 'first' });
    const closed = await get(c, port, '/closed');
    assert.ok(closed.reset !== undefined || closed.trailers === null, JSON.stringify(closed));
    const t0 = Date.now();
    while (errors.length < 3 && Date.now() - t0 < 5000) await common.sleep(10);
    assert.deepStrictEqual(errors, ['early ERR_HTTP2_TRAILERS_NOT_READY', 'twice ERR_HTTP2_TRAILERS_ALREADY_SENT',
      'after close ERR_HTTP2_INVALID_STREAM']);
  });

  (haveClient ? it : it.skip)('gtlsclient reads the trailer section after the body (in-memory and file)', async function () {
    const { server, port } = await startH3Server({});
    server.on('stream', (stream, headers) => {
      stream.on('wantTrailers', () => stream.sendTrailers({ 'x-trailer': `t${headers[':path']}` }));
      if (headers[':path'] === '/file.bin') stream.respondWithFile(file.path, {}, { waitForTrailers: true });
      else {
        stream.respond({ 'content-type': 'text/plain' }, { waitForTrailers: true });
        stream.end('hello');
      }
    });
    const out = await gtls(port, ['/mem', '/file.bin']);
    for (const [p, id, body] of [['/mem', 0, Buffer.from('hello')], ['/file.bin', 4, file.data]]) {
      const r = out.responses.get(p);
      assert.ok(r, `${p}: ${out.log.slice(-1500)}`);
      assert.strictEqual(r.status, 200);
      assert.strictEqual(sha(r.body), sha(body), p);
      // ngtcp2's client logs the section as trailers (not a second head).
      const hex = id.toString(16);
      const m = out.log.match(new RegExp(`http: stream 0x${hex} trailers started\\n` +
        `http: stream 0x${hex} \\[x-trailer: ([^\\]]*)\\]\\nhttp: stream 0x${hex} trailers ended`));
      assert.ok(m, `${p}: no trailer section in ${out.log.slice(-1500)}`);
      assert.strictEqual(m[1], `t${p}`);
    }
  });
});
