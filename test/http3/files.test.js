'use strict';

// Native file bodies on HTTP/3 (src/core/http3/http3_pipe_body.h):
// stream.respondWithFile / respondWithFD, the compat res.respondWithFile
// and the serveStatic middleware, read off the loop by the same pipe as on
// HTTP/2 and written as DATA frames on the QUIC stream. Checked with the
// project's QUIC client (test/http3/quic_client.js: exact frames, resets)
// and gtlsclient (ngtcp2, an independent HTTP/3 client): bodies by sha256,
// offset/length, HEAD, 304, ENOENT, a truncated file (reset, never short),
// client resets and connection loss mid-file (no fd or source left), many
// concurrent file streams, and a bound on the time of each small response:
// output queued from outside the endpoint's pass (a file read completing on
// the loop) must go out at once, not when some QUIC timer fires.
// server.serveStatic mounts answer HTTP/3 natively too (the TCP server's
// mounts, shared with the endpoint; src/core/http3/http3_session.cc
// TryStatic): hits never reach 'request' / 'stream' (counted), misses do.
// [sluice-only]: node has no HTTP/3 server.

const crypto = require('node:crypto');
const fs = require('node:fs');
const http2 = require('node:http2');
const https = require('node:https');
const os = require('node:os');
const path = require('node:path');
const common = require('../common');
const { assert } = common;
const { h3, haveClient, startH3Server, gtls, sluice } = require('./h3common');
const { headersFrame, h3Clients } = require('./quic_client');
const { fdCount, settled } = require('../files/settled');

const run = common.isSluice && h3 ? describe : describe.skip;

const H3 = { NO_ERROR: 0x100, INTERNAL_ERROR: 0x102, REQUEST_CANCELLED: 0x10c };
const SIZES = [0, 1, 16 * 1024, 1024 * 1024, 16 * 1024 * 1024];
// A stalled flush waits for a QUIC timer (PTO, idle: seconds); a loaded
// machine answers a small file in well under this.
const SMALL_BOUND_MS = 3000;

const sha = (b) => crypto.createHash('sha256').update(b).digest('hex');

run('HTTP/3 native file bodies [sluice-only]', function () {
  this.timeout(120000);
  let dir;
  const files = {};
  const { connect } = h3Clients();

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-h3files-'));
    for (const n of SIZES) {
      const data = crypto.randomBytes(n);
      const p = path.join(dir, `f${n}.bin`);
      fs.writeFileSync(p, data);
      files[n] = { path: p, data, sha: sha(data) };
    }
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const get = (c, port, p, headers = [], method = 'GET') =>
    common.withTimeout(c.request(method, p, headers, null, port), 30000, `${method} ${p}`);

  // A 'stream' server: handler(stream, headers).
  async function streamServer(handler, opts = {}) {
    const r = await startH3Server(opts);
    r.server.on('stream', handler);
    return r;
  }

  // Serves /f<size>.bin from `dir` with stream.respondWithFile.
  const serveByName = (options) => (stream, headers) => {
    const p = path.join(dir, path.basename(headers[':path'].split('?')[0]));
    stream.respondWithFile(p, { 'content-type': 'application/octet-stream' }, options);
  };

  for (const cache of [false, true]) {
    it(`stream.respondWithFile: 0 B, 1 B, 16 KiB, 1 MiB, 16 MiB by sha256 (openFileCache ${cache})`, async function () {
      const { port } = await streamServer(serveByName(), { openFileCache: cache });
      const c = await connect(port);
      for (const n of SIZES) {
        const t0 = Date.now();
        const r = await get(c, port, `/f${n}.bin`);
        const ms = Date.now() - t0;
        assert.strictEqual(r.status, 200, `${n}: ${JSON.stringify(r.reset || r.closed)}`);
        assert.strictEqual(r.headers['content-length'], String(n));
        assert.strictEqual(r.body.length, n);
        assert.strictEqual(sha(r.body), files[n].sha, `sha256 of ${n} B`);
        if (n === 0) assert.strictEqual(r.frames.filter((f) => f.type === 0).length, 0, 'no DATA frame');
        // A stall waits for a QUIC timer (seconds); bodies up to 1 MiB
        // take well under the bound even on a loaded machine.
        if (n <= 1024 * 1024) assert.ok(ms < SMALL_BOUND_MS, `${n} B took ${ms} ms`);
      }
    });
  }

  // The project's QUIC client once left the last frames of such bodies in
  // OpenSSL's stream buffer: its last tick of a pass took them in and
  // nothing read them until the next QUIC timer (the server's keep-alive,
  // 15 s). The first response on a fresh connection, whose last frames
  // meet a full send buffer, showed it every time.
  it('our client: 300,000 B and 307,200 B bodies, each first on a fresh connection, end promptly', async function () {
    const sizes = [300000, 307200];
    const want = {};
    for (const n of sizes) {
      const data = crypto.randomBytes(n);
      fs.writeFileSync(path.join(dir, `g${n}.bin`), data);
      want[n] = sha(data);
    }
    const { port } = await streamServer(serveByName(), { openFileCache: false });
    for (let round = 0; round < 2; round++) {
      for (const n of sizes) {
        const c = await connect(port);
        const t0 = Date.now();
        const r = await get(c, port, `/g${n}.bin`);
        const ms = Date.now() - t0;
        assert.strictEqual(r.status, 200);
        assert.strictEqual(sha(r.body), want[n], `sha256 of ${n} B`);
        assert.ok(ms < SMALL_BOUND_MS, `${n} B took ${ms} ms`);
      }
    }
  });

  // gtlsclient here: an independent client, so a stall of the server's
  // cannot hide behind one of our own test client's (docs/http3.md, File
  // bodies).
  (haveClient ? it : it.skip)('no stall: 3 x 10 file responses of 300 KiB complete promptly (both APIs, gtlsclient)', async function () {
    // 300 KiB: more than the first read the open prefetches, so the rest
    // of each body arrives from fs callbacks outside the endpoint's pass.
    const f = path.join(dir, 'mid.bin');
    const data = crypto.randomBytes(300 * 1024);
    fs.writeFileSync(f, data);
    const want = sha(data);
    const a = await streamServer((stream) => stream.respondWithFile(f), { openFileCache: false });
    const b = await startH3Server({ openFileCache: false }, (req, res) => res.respondWithFile(f));
    const paths = [];
    for (let i = 0; i < 10; i++) paths.push(`/s${i}`);
    for (const port of [a.port, b.port, a.port]) {
      const t0 = Date.now();
      const out = await gtls(port, paths, { timeout: 30000 });
      const ms = Date.now() - t0;
      for (const p of paths) {
        const r = out.responses.get(p);
        assert.ok(r, `${p}: ${out.log.slice(-1500)}`);
        assert.strictEqual(r.status, 200);
        assert.strictEqual(sha(r.body), want);
      }
      // A flush left to a QUIC timer costs seconds (a PTO, the idle timer).
      assert.ok(ms < SMALL_BOUND_MS * 2, `10 responses took ${ms} ms`);
    }
  });

  it('offset and length', async function () {
    const f = files[1024 * 1024];
    const { port } = await streamServer((stream, headers) => {
      const q = new URLSearchParams(headers[':path'].split('?')[1]);
      const o = {};
      if (q.has('offset')) o.offset = Number(q.get('offset'));
      if (q.has('length')) o.length = Number(q.get('length'));
      stream.respondWithFile(f.path, {}, o);
    });
    const c = await connect(port);
    for (const [q, off, len] of [['offset=1000', 1000, f.data.length - 1000], ['offset=5&length=70000', 5, 70000],
      ['length=1', 0, 1], ['offset=1048575', 1048575, 1]]) {
      const r = await get(c, port, `/x?${q}`);
      assert.strictEqual(r.status, 200, q);
      assert.strictEqual(r.headers['content-length'], String(len), q);
      assert.ok(r.body.equals(f.data.subarray(off, off + len)), q);
    }
  });

  it('HEAD: the head with content-length, no DATA frame (stream and compat)', async function () {
    const { port } = await streamServer(serveByName());
    const c = await connect(port);
    const r = await get(c, port, '/f16384.bin', [], 'HEAD');
    assert.strictEqual(r.status, 200);
    assert.strictEqual(r.headers['content-length'], '16384');
    assert.strictEqual(r.frames.filter((x) => x.type === 0).length, 0);
    const compat = await startH3Server({}, (req, res) => res.respondWithFile(files[16 * 1024].path));
    const c2 = await connect(compat.port);
    const r2 = await get(c2, compat.port, '/', [], 'HEAD');
    assert.strictEqual(r2.status, 200);
    assert.strictEqual(r2.headers['content-length'], '16384');
    assert.strictEqual(r2.frames.filter((x) => x.type === 0).length, 0);
  });

  it('304 from statCheck (node:http2 idiom), headers statCheck sets', async function () {
    const f = files[16 * 1024];
    const mtime = fs.statSync(f.path).mtime.toUTCString();
    const { port } = await streamServer((stream, headers) => {
      stream.respondWithFile(f.path, {}, {
        statCheck(stat, h) {
          if (headers['if-modified-since'] === stat.mtime.toUTCString()) {
            stream.respond({ ':status': 304 });
            return false;
          }
          h['last-modified'] = stat.mtime.toUTCString();
          return true;
        },
      });
    });
    const c = await connect(port);
    const r1 = await get(c, port, '/');
    assert.strictEqual(r1.status, 200);
    assert.strictEqual(r1.headers['last-modified'], mtime);
    assert.strictEqual(sha(r1.body), f.sha);
    const r2 = await get(c, port, '/', ['if-modified-since', mtime]);
    assert.strictEqual(r2.status, 304);
    assert.strictEqual(r2.body.length, 0);
  });

  it('ENOENT: onError answers 404; without onError the stream is reset (as node:http2 destroys it)', async function () {
    const errors = [];
    const { port } = await streamServer((stream, headers) => {
      const missing = path.join(dir, 'missing.bin');
      if (headers[':path'] === '/handled') {
        stream.respondWithFile(missing, {}, {
          onError(err) {
            errors.push(err.code);
            stream.respond({ ':status': 404 });
            stream.end('not found');
          },
        });
      } else {
        stream.on('error', (err) => errors.push(`stream ${err.code}`));
        stream.respondWithFile(missing);
      }
    });
    const c = await connect(port);
    const r = await get(c, port, '/handled');
    assert.strictEqual(r.status, 404);
    assert.strictEqual(r.body.toString(), 'not found');
    const r2 = await get(c, port, '/bare');
    assert.strictEqual(r2.reset, H3.INTERNAL_ERROR, JSON.stringify(r2));
    assert.deepStrictEqual(errors, ['ENOENT', 'stream ENOENT']);
  });

  it('respondWithFD: the body, and the descriptor stays the caller\'s', async function () {
    const f = files[1024 * 1024];
    const fd = fs.openSync(f.path, 'r');
    try {
      const { port } = await streamServer((stream) => stream.respondWithFD(fd, {}, { offset: 0 }));
      const c = await connect(port);
      for (let i = 0; i < 3; i++) {
        const r = await get(c, port, '/');
        assert.strictEqual(r.status, 200);
        assert.strictEqual(sha(r.body), f.sha);
      }
      assert.strictEqual(fs.fstatSync(fd).size, f.data.length, 'fd still open');
    } finally {
      fs.closeSync(fd);
    }
  });

  it('compat res.respondWithFile: body, status, headers and \'finish\'', async function () {
    const f = files[1024 * 1024];
    const events = [];
    const { port } = await startH3Server({}, (req, res) => {
      res.on('finish', () => events.push('finish'));
      res.statusCode = 203;
      res.setHeader('x-file', 'yes');
      res.respondWithFile(f.path);
    });
    const c = await connect(port);
    const r = await get(c, port, '/');
    assert.strictEqual(r.status, 203);
    assert.strictEqual(r.headers['x-file'], 'yes');
    assert.strictEqual(r.headers['content-length'], String(f.data.length));
    assert.strictEqual(sha(r.body), f.sha);
    const t0 = Date.now();
    while (events.length === 0 && Date.now() - t0 < 3000) await common.sleep(10);
    assert.deepStrictEqual(events, ['finish']);
  });

  it('serveStatic middleware: bodies, ranges, 304, a miss', async function () {
    const mw = sluice.serveStatic(dir);
    const { port } = await startH3Server({}, (req, res) => mw(req, res, () => {
      res.statusCode = 404;
      res.end('miss');
    }));
    const c = await connect(port);
    const f = files[1024 * 1024];
    const r = await get(c, port, '/f1048576.bin');
    assert.strictEqual(r.status, 200);
    assert.strictEqual(sha(r.body), f.sha);
    const etag = r.headers.etag;
    assert.ok(etag, 'an ETag');
    const part = await get(c, port, '/f1048576.bin', ['range', 'bytes=1000-200999']);
    assert.strictEqual(part.status, 206);
    assert.strictEqual(part.headers['content-range'], `bytes 1000-200999/${f.data.length}`);
    assert.ok(part.body.equals(f.data.subarray(1000, 201000)));
    const nm = await get(c, port, '/f1048576.bin', ['if-none-match', etag]);
    assert.strictEqual(nm.status, 304);
    assert.strictEqual(nm.body.length, 0);
    const small = await get(c, port, '/f1.bin');
    assert.strictEqual(small.status, 200);
    assert.ok(small.body.equals(files[1].data));
    const miss = await get(c, port, '/nope.bin');
    assert.strictEqual(miss.status, 404);
    assert.strictEqual(miss.body.toString(), 'miss');
  });

  (haveClient ? it : it.skip)('gtlsclient: serveStatic and respondWithFile bodies by sha256', async function () {
    const mw = sluice.serveStatic(dir);
    const { port } = await startH3Server({}, (req, res) => {
      if (req.url.startsWith('/rw/')) res.respondWithFile(path.join(dir, path.basename(req.url)));
      else mw(req, res, () => { res.statusCode = 404; res.end(); });
    });
    const paths = ['/f16384.bin', '/f1048576.bin', '/rw/f16777216.bin', '/rw/f1.bin'];
    const out = await gtls(port, paths, { timeout: 60000 });
    for (const p of paths) {
      const r = out.responses.get(p);
      assert.ok(r, `${p}: ${out.log.slice(-2000)}`);
      assert.strictEqual(r.status, 200, p);
      const n = Number(path.basename(p).slice(1, -4));
      assert.strictEqual(sha(r.body), files[n].sha, p);
    }
  });

  it('a file truncated before its body is read: the stream is reset, never ended short', async function () {
    const p = path.join(dir, 'trunc-early.bin');
    fs.writeFileSync(p, crypto.randomBytes(1024 * 1024));
    const errors = [];
    const { port } = await streamServer((stream) => {
      stream.on('error', (err) => errors.push(`stream ${err.code}`));
      stream.respondWithFile(p, {}, {
        // The length is decided (the head says 1 MiB); the file then shrinks.
        statCheck(stat) { fs.truncateSync(p, stat.size >> 1); },
        onError(err) { errors.push(err.code); },
      });
    });
    const c = await connect(port);
    const r = await get(c, port, '/');
    assert.strictEqual(r.reset, H3.INTERNAL_ERROR, JSON.stringify(r.reset === undefined ? r.headers : r));
    assert.ok(r.partial.length < 1024 * 1024);
    const t0 = Date.now();
    while (errors.length < 2 && Date.now() - t0 < 3000) await common.sleep(10);
    // As on HTTP/2: the reset stream closes with INTERNAL_ERROR, and
    // onError hears the read error.
    assert.deepStrictEqual(errors.sort(), ['EOF', 'stream ERR_HTTP2_STREAM_ERROR'].sort());
  });

  it('a file truncated while it is sent: reset, or whole if it was all read first; never short', async function () {
    const SIZE = 16 * 1024 * 1024;
    const results = [];
    for (let i = 0; i < 3; i++) {
      const p = path.join(dir, `trunc-${i}.bin`);
      const data = crypto.randomBytes(SIZE);
      fs.writeFileSync(p, data);
      const { port } = await streamServer((stream) => {
        stream.on('error', () => {});  // the reset stream closes with INTERNAL_ERROR, as on HTTP/2
        stream.respondWithFile(p, {}, { onError() {} });
      });
      const c = await connect(port);
      const req = c.request('GET', '/', [], null, port);
      const st = c.streams.get(req.id);
      // Truncate once the first bytes arrived.
      const t0 = Date.now();
      while (st.chunks.length === 0 && Date.now() - t0 < 10000) await common.sleep(1);
      fs.truncateSync(p, SIZE >> 2);
      const r = await common.withTimeout(req, 30000, 'truncated response');
      if (r.reset !== undefined) {
        assert.strictEqual(r.reset, H3.INTERNAL_ERROR);
        results.push('reset');
      } else {
        assert.strictEqual(r.status, 200);
        assert.strictEqual(r.body.length, SIZE, 'a FIN only after the whole body');
        assert.strictEqual(sha(r.body), sha(data));
        results.push('whole');
      }
    }
    assert.ok(results.includes('reset'), `results: ${results}`);
  });

  it('a client reset mid-file and a connection lost mid-file release the file (fds, sources)', async function () {
    const closes = [];
    let session = null;
    const { port } = await streamServer((stream, headers) => {
      stream.on('close', () => closes.push(1));
      stream.on('error', () => {});  // the lost connection's streams close with an error
      if (headers[':path'].startsWith('/lost/')) session = stream.session;
      stream.respondWithFile(files[16 * 1024 * 1024].path);
    }, { openFileCache: false });
    const c = await connect(port);
    const before = fdCount();  // the client's socket included
    // The request side stays open (no FIN), so the client's RESET_STREAM
    // reaches the server's reader.
    const reqs = [];
    for (let i = 0; i < 4; i++) {
      reqs.push(c.raw(headersFrame([':method', 'GET', ':scheme', 'https',
        ':authority', 'localhost', ':path', `/${i}`]), { noFin: true }));
    }
    for (const p of reqs) {
      const st = c.streams.get(p.id);
      const t0 = Date.now();
      while (st.chunks.length === 0 && Date.now() - t0 < 10000) await common.sleep(1);
      assert.ok(st.chunks.length > 0, 'some of the body arrived');
      c.native.reset(p.id, H3.REQUEST_CANCELLED);
    }
    let t0 = Date.now();
    while (closes.length < 4 && Date.now() - t0 < 10000) await common.sleep(10);
    assert.strictEqual(closes.length, 4, 'each stream closed on the server');
    let s = await settled(before, 5000);
    assert.strictEqual(s.sources, 0, `file sources left: ${JSON.stringify(s)}`);
    assert.ok(s.fds <= before, `fds ${s.fds} > ${before}`);
    // The connection goes away (the server destroys it) with bodies running.
    const lost = [];
    for (let i = 0; i < 3; i++) lost.push(c.request('GET', `/lost/${i}`, [], null, port));
    for (const p of lost) {
      const st = c.streams.get(p.id);
      t0 = Date.now();
      while (st.chunks.length === 0 && Date.now() - t0 < 10000) await common.sleep(1);
    }
    assert.ok(session, 'the session of the lost streams');
    session.destroy();
    t0 = Date.now();
    while (closes.length < 7 && Date.now() - t0 < 10000) await common.sleep(20);
    assert.strictEqual(closes.length, 7, 'the lost connection\'s streams closed');
    s = await settled(before, 5000);
    assert.strictEqual(s.sources, 0, `file sources left: ${JSON.stringify(s)}`);
    assert.ok(s.fds <= before, `fds ${s.fds} > ${before}`);
  });

  it('many concurrent file streams on one connection', async function () {
    const { port } = await streamServer(serveByName());
    const c = await connect(port);
    const pick = [0, 1, 16 * 1024, 1024 * 1024];
    const reqs = [];
    for (let i = 0; i < 60; i++) {
      const n = pick[i % pick.length];
      reqs.push(c.request('GET', `/f${n}.bin?${i}`, [], null, port).then((r) => [n, r]));
    }
    const all = await common.withTimeout(Promise.all(reqs), 40000, 'concurrent file streams');
    for (const [n, r] of all) {
      assert.strictEqual(r.status, 200, JSON.stringify(r.reset || r.closed));
      assert.strictEqual(sha(r.body), files[n].sha, `${n} B`);
    }
    const s = await settled(fdCount() + 100, 3000);
    assert.strictEqual(s.sources, 0);
  });
});

run('HTTP/3 serveStatic mounts answered natively [sluice-only]', function () {
  this.timeout(60000);
  let dir;
  const big = crypto.randomBytes(1024 * 1024 + 7);
  const text = 'hello from a mount\n';
  const { connect } = h3Clients();

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-h3static-'));
    fs.writeFileSync(path.join(dir, 'a.txt'), text);
    fs.writeFileSync(path.join(dir, 'big.bin'), big);
    fs.writeFileSync(path.join(dir, 'empty.txt'), '');
    fs.mkdirSync(path.join(dir, 'sub'));
    fs.writeFileSync(path.join(dir, 'sub', 'index.html'), '<p>index</p>');
    fs.mkdirSync(path.join(dir, 'noindex'));
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const get = (c, port, p, headers = [], method = 'GET') =>
    common.withTimeout(c.request(method, p, headers, null, port), 30000, `${method} ${p}`);

  // A server whose JS 'request' handler counts the requests it gets and
  // answers 404 "js" (a 'stream' listener would take every stream from
  // it: lib/http2/session.js); `mount`: serveStatic('/s', dir).
  async function countingServer(opts = {}, mount = true) {
    const state = { js: 0, paths: [] };
    const r = await startH3Server(opts, (req, res) => {
      state.js++;
      state.paths.push(req.url);
      res.statusCode = 404;
      res.end('js');
    });
    // listen() ran inside startH3Server: mounting before it needs its own
    // server; see 'a mount added after listen()' for the other order.
    if (mount) r.server.serveStatic('/s', dir);
    return { ...r, state };
  }

  for (const cache of [false, true]) {
    it(`hits: bytes, content-type, etag / 304, Range 206, HEAD, never the JS handlers (openFileCache ${cache})`, async function () {
      const { port, state } = await countingServer({ openFileCache: cache });
      const c = await connect(port);
      // Twice: with the cache the second round answers from it inside
      // TryStatic (no threadpool job); without, each is a job.
      for (let round = 0; round < 2; round++) {
        const r = await get(c, port, '/s/big.bin');
        assert.strictEqual(r.status, 200, JSON.stringify(r.reset || r.closed || r.headers));
        assert.strictEqual(r.headers['content-length'], String(big.length));
        assert.strictEqual(r.headers['content-type'], 'application/octet-stream');
        assert.strictEqual(sha(r.body), sha(big));
        const etag = r.headers.etag;
        assert.ok(/^W\/"/.test(etag), `etag ${etag}`);
        assert.ok(r.headers['last-modified'], 'last-modified');
        assert.strictEqual(r.headers['accept-ranges'], 'bytes');
        for (const name of Object.keys(r.headers)) assert.strictEqual(name, name.toLowerCase(), name);

        const small = await get(c, port, '/s/a.txt');
        assert.strictEqual(small.status, 200);
        assert.strictEqual(small.headers['content-type'], 'text/plain; charset=utf-8');
        assert.strictEqual(small.body.toString(), text);

        const nm = await get(c, port, '/s/big.bin', ['if-none-match', etag]);
        assert.strictEqual(nm.status, 304);
        assert.strictEqual(nm.body.length, 0);
        assert.strictEqual(nm.frames.filter((f) => f.type === 0).length, 0, 'no DATA frame');
        assert.strictEqual(nm.headers.etag, etag);

        const part = await get(c, port, '/s/big.bin', ['range', 'bytes=1000-200999']);
        assert.strictEqual(part.status, 206);
        assert.strictEqual(part.headers['content-range'], `bytes 1000-200999/${big.length}`);
        assert.strictEqual(part.headers['content-length'], '200000');
        assert.ok(part.body.equals(big.subarray(1000, 201000)), 'the range\'s bytes');

        const head = await get(c, port, '/s/big.bin', [], 'HEAD');
        assert.strictEqual(head.status, 200);
        assert.strictEqual(head.headers['content-length'], String(big.length));
        assert.strictEqual(head.headers.etag, etag);
        assert.strictEqual(head.frames.filter((f) => f.type === 0).length, 0, 'HEAD: no DATA frame');

        const empty = await get(c, port, '/s/empty.txt');
        assert.strictEqual(empty.status, 200);
        assert.strictEqual(empty.headers['content-length'], '0');
        assert.strictEqual(empty.body.length, 0);

        const index = await get(c, port, '/s/sub/');
        assert.strictEqual(index.status, 200);
        assert.strictEqual(index.headers['content-type'], 'text/html; charset=utf-8');
        assert.strictEqual(index.body.toString(), '<p>index</p>');

        const refused = await get(c, port, '/s/%2e%2e/x');
        assert.strictEqual(refused.status, 403);
      }
      assert.strictEqual(state.js, 0, `JS saw ${JSON.stringify(state.paths)}`);
      const s = await settled(fdCount() + 100, 3000);
      assert.strictEqual(s.sources, 0);
    });
  }

  it('misses under the prefix, other methods and requests with a body reach the JS handler', async function () {
    const { port, state } = await countingServer({ openFileCache: false });
    const c = await connect(port);
    const hit = await get(c, port, '/s/a.txt');
    assert.strictEqual(hit.body.toString(), text);
    assert.strictEqual(state.js, 0, 'a hit is native');
    // A miss after the threadpool looked (OnStaticFallThrough), a
    // directory without an index, a path outside the prefix.
    for (const p of ['/s/nope.txt', '/s/noindex/', '/s/sub', '/other/a.txt', '/sx/a.txt']) {
      const r = await get(c, port, p);
      assert.strictEqual(r.status, 404, p);
      assert.strictEqual(r.body.toString(), 'js', p);
    }
    const post = await get(c, port, '/s/a.txt', [], 'POST');
    assert.strictEqual(post.body.toString(), 'js', 'POST');
    // GET with a body: not bodiless, so not the mount's.
    const withBody = await common.withTimeout(c.request('GET', '/s/a.txt', [], Buffer.from('x'), port), 30000, 'GET+body');
    assert.strictEqual(withBody.body.toString(), 'js', 'GET with a body');
    assert.deepStrictEqual(state.paths, ['/s/nope.txt', '/s/noindex/', '/s/sub', '/other/a.txt', '/sx/a.txt',
      '/s/a.txt', '/s/a.txt']);
    // Many misses at once on one connection: each falls through once.
    const reqs = [];
    for (let i = 0; i < 30; i++) reqs.push(get(c, port, `/s/missing-${i}.txt`));
    for (const r of await Promise.all(reqs)) assert.strictEqual(r.body.toString(), 'js');
    assert.strictEqual(state.js, 7 + 30);
  });

  it('a mount added after listen() applies to HTTP/3 (and HTTP/2) requests', async function () {
    const { server, port, tcpPort, state } = await countingServer({}, false);
    const c = await connect(port);
    const before = await get(c, port, '/late/a.txt');
    assert.strictEqual(before.body.toString(), 'js', 'no mount yet');
    server.serveStatic('/late', dir);
    const r = await get(c, port, '/late/a.txt');
    assert.strictEqual(r.status, 200);
    assert.strictEqual(r.body.toString(), text);
    // A second connection too, and the TCP side.
    const c2 = await connect(port);
    const r2 = await get(c2, port, '/late/big.bin');
    assert.strictEqual(sha(r2.body), sha(big));
    const h2 = await h2Get(tcpPort, '/late/a.txt');
    assert.strictEqual(h2.body.toString(), text);
    assert.strictEqual(state.js, 1);
  });

  // GET over HTTP/2 (TLS, node's client) on the TCP port.
  function h2Get(port, p, headers = {}) {
    return common.withTimeout(new Promise((resolve, reject) => {
      const session = http2.connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false });
      session.on('error', reject);
      const req = session.request({ ':path': p, ...headers });
      const chunks = [];
      let head = null;
      req.on('response', (h) => { head = h; });
      req.on('data', (d) => chunks.push(d));
      req.on('end', () => {
        session.close();
        resolve({ headers: head, body: Buffer.concat(chunks) });
      });
      req.on('error', reject);
      req.end();
    }), 30000, `h2 ${p}`);
  }

  it('the same file over HTTP/2 on the TCP port: the same status, headers and bytes', async function () {
    const { port, tcpPort, state } = await countingServer();
    const c = await connect(port);
    // Alt-Svc only on the TCP side (it names the HTTP/3 port); Date on
    // both, each its own clock reading.
    const cases = [['/s/big.bin', {}], ['/s/a.txt', {}], ['/s/big.bin', { range: 'bytes=5-99' }]];
    for (const [p, hdrs] of cases) {
      const over3 = await get(c, port, p, Object.entries(hdrs).flat());
      const over2 = await h2Get(tcpPort, p, hdrs);
      assert.strictEqual(over3.status, over2.headers[':status'], p);
      const names3 = Object.keys(over3.headers).filter((n) => n[0] !== ':' && n !== 'alt-svc').sort();
      const names2 = Object.keys(over2.headers).filter((n) => n[0] !== ':' && n !== 'alt-svc').sort();
      assert.deepStrictEqual(names3, names2, p);
      for (const h of [over3.headers.date, over2.headers.date]) {
        assert.match(h, /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT$/, `${p} date`);
        assert.ok(Math.abs(Date.parse(h) - Date.now()) < 5000, `${p} date ${h}`);
      }
      for (const n of names3) {
        if (n !== 'date') assert.strictEqual(over3.headers[n], String(over2.headers[n]), `${p} ${n}`);
      }
      assert.ok(over3.body.equals(over2.body), `${p} bytes`);
      assert.strictEqual(over2.headers['alt-svc'], `h3=":${port}"; ma=86400`, `${p} alt-svc over HTTP/2`);
      assert.strictEqual(over3.headers['alt-svc'], undefined, `${p} alt-svc over HTTP/3`);
    }
    // HTTP/1.1 (TLS) names the HTTP/3 port too.
    const h1 = await common.withTimeout(new Promise((resolve, reject) => {
      https.get({ host: '127.0.0.1', port: tcpPort, path: '/s/a.txt', rejectUnauthorized: false, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.headers));
      }).on('error', reject);
    }), 30000, 'https GET');
    assert.strictEqual(h1['alt-svc'], `h3=":${port}"; ma=86400`);
    assert.ok(h1.date);
    assert.strictEqual(state.js, 0, 'every protocol native');
  });

  it('connections and streams that go away mid-lookup leak no descriptor or source; the server goes on', async function () {
    const { server, port, state } = await countingServer({ openFileCache: false });
    const before = fdCount();
    for (let round = 0; round < 3; round++) {
      const c = await connect(port);
      const reqs = [];
      for (let i = 0; i < 20; i++) {
        const p = c.request('GET', i % 2 ? '/s/big.bin' : `/s/miss-${i}.txt`, [], null, port);
        reqs.push(p);
        if (i % 5 === 0) c.abandon(p.id);  // STOP_SENDING: the request is closed on the server
      }
      // Let the requests reach the server, then drop every connection
      // while lookups and bodies are in flight.
      await common.sleep(round * 5);
      server.closeAllConnections();
    }
    const s = await settled(before + 4, 5000);
    assert.strictEqual(s.sources, 0, `file sources left: ${JSON.stringify(s)}`);
    const c = await connect(port);
    const r = await get(c, port, '/s/big.bin');
    assert.strictEqual(sha(r.body), sha(big));
    assert.ok(state.js <= 60, 'only misses reach JS');
  });

  (haveClient ? it : it.skip)('gtlsclient: mounted files by sha256, JS never called', async function () {
    const { port, state } = await countingServer();
    const paths = ['/s/a.txt', '/s/big.bin', '/s/sub/index.html'];
    const out = await gtls(port, paths, { timeout: 60000 });
    const want = { '/s/a.txt': Buffer.from(text), '/s/big.bin': big, '/s/sub/index.html': Buffer.from('<p>index</p>') };
    for (const p of paths) {
      const r = out.responses.get(p);
      assert.ok(r, `${p}: ${out.log.slice(-2000)}`);
      assert.strictEqual(r.status, 200, p);
      assert.strictEqual(sha(r.body), sha(want[p]), p);
    }
    assert.strictEqual(state.js, 0);
  });
});
