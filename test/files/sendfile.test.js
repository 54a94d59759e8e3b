'use strict';

// Cleartext HTTP/1.1 file bodies go out with sendfile(2) from the loop
// while their pages are resident (docs/files.md "sendfile"); the head and
// any bytes already in memory leave first, through the writer. Checked
// with real clients (curl, node http, raw sockets for byte-exact cases)
// on server.serveStatic and res.respondWithFile: sizes 0 B .. 16 MiB
// (sha256), ranges, HEAD, 304, keep-alive and pipelining after a sendfile
// body, a client leaving mid-body, a file truncated while it is sent, a
// slow reader (no buffers held), pages not resident (the threadpool path
// takes over), and the paths that must not use it (TLS, compression, the
// option off). The counters are NativeFile.stats().sendfile. sendfile is
// sluice's own: sluice-only.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const https = require('node:https');
const { execFileSync } = require('node:child_process');
const common = require('../common');
const { assert } = common;
const { fdCount, settled } = require('./settled');

const describeSluice = common.isSluice ? describe : describe.skip;

const KiB = 1024;
const MiB = 1024 * KiB;
const SIZES = [0, 1, 1000, 64 * KiB, 128 * KiB, 128 * KiB + 1, MiB, 3 * MiB + 7, 16 * MiB];

// The addon's binding (lib/common/binding.js; lib/binding.js before the
// lib/ move).
function nativeStats() {
  let binding;
  try {
    binding = require(path.join(common.ROOT, 'lib/common/binding'));
  } catch {
    binding = require(path.join(common.ROOT, 'lib/binding'));
  }
  return binding.NativeFile.stats();
}
function sendfileStats() {
  return nativeStats().sendfile;
}

// Drops the file's pages from the page cache (GNU dd: count=0 with
// iflag=nocache advises the whole file away; dirty pages stay, so the file
// is written back first).
function evict(file) {
  const fd = fs.openSync(file, 'r+');
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  execFileSync('dd', [`if=${file}`, 'of=/dev/null', 'iflag=nocache', 'count=0', 'status=none']);
}

describeSluice('[sluice-only] sendfile for cleartext HTTP/1.1 file bodies', function () {
  this.timeout(60000);
  let dir;
  const files = {};

  before(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-sendfile-'));
    for (const size of SIZES) {
      const buf = crypto.randomBytes(size);
      const name = `f${size}.bin`;
      fs.writeFileSync(path.join(dir, name), buf);
      files[size] = { name, buf, sha: common.sha256(buf) };
    }
    fs.writeFileSync(path.join(dir, 'text.txt'), 'compressible text '.repeat(20000));
  });
  after(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });
  afterEach(async function () {
    await common.cleanup();
  });

  async function start(serverOptions = {}) {
    const server = common.impl.createServer(serverOptions, (req, res) => {
      const m = /^\/rwf\/(.*)$/.exec(req.url);
      if (m) {
        res.respondWithFile(path.join(dir, m[1]), { 'content-type': 'application/octet-stream' });
        return;
      }
      res.statusCode = 404;
      res.end('miss');
    });
    server.serveStatic('/s', dir);
    const port = await common.listenLocal(server);
    return { server, port };
  }

  it('bodies of 0 B .. 16 MiB arrive intact (sha256) through serveStatic and respondWithFile, curl and node http', async function () {
    const { port } = await start();
    const before = sendfileStats();
    for (const size of SIZES) {
      const f = files[size];
      for (const prefix of ['/s/', '/rwf/']) {
        const url = `http://127.0.0.1:${port}${prefix}${f.name}`;
        const c = await common.curl(['--http1.1', url], { timeout: 20000 });
        assert.strictEqual(c.code, 0, c.stderr);
        assert.strictEqual(c.stdout.length, size, `${prefix}${f.name} via curl`);
        assert.strictEqual(common.sha256(c.stdout), f.sha, `${prefix}${f.name} via curl`);
        const r = await common.httpRequest(port, { path: `${prefix}${f.name}`, timeout: 20000 });
        assert.strictEqual(r.statusCode, 200);
        assert.strictEqual(r.headers['content-length'], String(size));
        assert.strictEqual(common.sha256(r.body), f.sha, `${prefix}${f.name} via node http`);
      }
    }
    const after = sendfileStats();
    // Files larger than what is already in memory (the small-file cache:
    // up to 64 KiB; the first read: 128 KiB) were sent with sendfile.
    assert.ok(after.bodies - before.bodies >= 4 * 4, JSON.stringify({ before, after }));
    assert.ok(after.bytes - before.bytes >= 2 * 2 * (16 * MiB - 128 * KiB), JSON.stringify({ before, after }));
  });

  it('ranges (206), HEAD and 304 answer byte-exact', async function () {
    const { port } = await start();
    const f = files[3 * MiB + 7];
    const rows = [[0, 0], [0, 131071], [131072, 131072 + 500000], [1, 3 * MiB + 6], [3 * MiB, 3 * MiB + 6], [2 * MiB + 5, 2 * MiB + 5]];
    for (const [a, b] of rows) {
      for (const prefix of ['/s/']) {
        const c = await common.curl(['--http1.1', '-r', `${a}-${b}`, '-D', '-', `http://127.0.0.1:${port}${prefix}${f.name}`]);
        const headEnd = c.stdout.indexOf('\r\n\r\n');
        const head = c.stdout.subarray(0, headEnd).toString('latin1');
        const body = c.stdout.subarray(headEnd + 4);
        assert.match(head, /^HTTP\/1\.1 206 /);
        assert.match(head, new RegExp(`Content-Range: bytes ${a}-${b}/${f.buf.length}`, 'i'));
        assert.ok(body.equals(f.buf.subarray(a, b + 1)), `range ${a}-${b}`);
      }
      // respondWithFile's offset/length.
      const srv = common.impl.createServer((req, res) => res.respondWithFile(path.join(dir, f.name), {},
        { offset: a, length: b - a + 1 }));
      const p2 = await common.listenLocal(srv);
      const r = await common.httpRequest(p2, { path: '/' });
      assert.ok(r.body.equals(f.buf.subarray(a, b + 1)), `respondWithFile offset ${a} length ${b - a + 1}`);
    }
    // HEAD: the length, no body; then a GET on the same connection.
    const c = await common.rawConnect(port);
    c.write(`HEAD /s/${f.name} HTTP/1.1\r\nHost: x\r\n\r\nGET /s/${files[1000].name} HTTP/1.1\r\nHost: x\r\n\r\n`);
    const [head, get] = await c.responses(2, { methods: ['HEAD', 'GET'] });
    assert.strictEqual(head.headers['content-length'], String(f.buf.length));
    assert.strictEqual(head.body.length, 0);
    assert.ok(get.body.equals(files[1000].buf));
    // 304.
    const first = await common.httpRequest(port, { path: `/s/${f.name}` });
    const nm = await common.httpRequest(port, { path: `/s/${f.name}`, headers: { 'if-none-match': first.headers.etag } });
    assert.strictEqual(nm.statusCode, 304);
    assert.strictEqual(nm.body.length, 0);
  });

  it('keep-alive and pipelining: responses after a sendfile body are intact and in order (raw socket, byte-exact)', async function () {
    const { port } = await start();
    const big = files[3 * MiB + 7];
    const small = files[1000];
    const mid = files[MiB];
    const c = await common.rawConnect(port);
    const reqs = [
      `GET /s/${big.name} HTTP/1.1\r\nHost: x\r\n\r\n`,
      `GET /s/${small.name} HTTP/1.1\r\nHost: x\r\n\r\n`,
      `GET /rwf/${mid.name} HTTP/1.1\r\nHost: x\r\n\r\n`,
      `GET /s/${big.name} HTTP/1.1\r\nHost: x\r\nRange: bytes=1000-2000000\r\n\r\n`,
      `GET /nope HTTP/1.1\r\nHost: x\r\n\r\n`,
      `GET /s/${big.name} HTTP/1.1\r\nHost: x\r\n\r\n`,
    ];
    c.write(reqs.join(''));
    const res = await c.responses(reqs.length, {}, 20000);
    assert.deepStrictEqual(res.map((r) => r.statusCode), [200, 200, 200, 206, 404, 200]);
    assert.ok(res[0].body.equals(big.buf));
    assert.ok(res[1].body.equals(small.buf));
    assert.ok(res[2].body.equals(mid.buf));
    assert.ok(res[3].body.equals(big.buf.subarray(1000, 2000001)));
    assert.strictEqual(res[4].body.toString(), 'miss');
    assert.ok(res[5].body.equals(big.buf));
    // Nothing after the last response.
    const total = res.reduce((n, r) => n + r.body.length, 0);
    assert.ok(c.data.length < total + 4096);
    c.destroy();
  });

  it('head and first bytes leave with MSG_MORE: a big head, a memory response before, a slow reader, byte-exact; no response waits in the kernel', async function () {
    // The head (and what is in memory) is written with MSG_MORE when the
    // first sendfile follows at once; a head larger than the socket takes
    // falls back to uv_write and the queued path. Every response must
    // arrive whole and in order, and none may sit in the kernel waiting
    // for a write that does not come (the probe timer: >= 200 ms each).
    const mid = files[MiB];
    const odd = files[128 * KiB + 1];
    const bigHeader = 'v'.repeat(4 * MiB);
    const server = common.impl.createServer((req, res) => {
      if (req.url === '/mem') {
        res.end('memory body');
        return;
      }
      const extra = req.url.endsWith('?big') ? { 'x-big': bigHeader } : {};
      res.respondWithFile(path.join(dir, req.url.replace(/^\/(.*?)(\?.*)?$/, '$1')),
        { 'content-type': 'application/octet-stream', ...extra });
    });
    const port = await common.listenLocal(server);
    const before = sendfileStats();
    const c = await common.rawConnect(port);
    c.socket.pause();  // a slow reader: the socket fills while the server writes
    const reqs = [
      'GET /mem HTTP/1.1\r\nHost: x\r\n\r\n',
      `GET /${mid.name}?big HTTP/1.1\r\nHost: x\r\n\r\n`,
      'GET /mem HTTP/1.1\r\nHost: x\r\n\r\n',
      `GET /${odd.name} HTTP/1.1\r\nHost: x\r\n\r\n`,
      `GET /${mid.name} HTTP/1.1\r\nHost: x\r\n\r\n`,
    ];
    c.write(reqs.join(''));
    await new Promise((resolve) => setTimeout(resolve, 300));
    c.socket.resume();
    const res = await c.responses(reqs.length, {}, 20000);
    assert.deepStrictEqual(res.map((r) => r.statusCode), [200, 200, 200, 200, 200]);
    assert.strictEqual(res[0].body.toString(), 'memory body');
    assert.strictEqual(res[1].headers['x-big'], bigHeader);
    assert.ok(res[1].body.equals(mid.buf));
    assert.strictEqual(res[2].body.toString(), 'memory body');
    assert.ok(res[3].body.equals(odd.buf));
    assert.ok(res[4].body.equals(mid.buf));
    c.destroy();
    // One at a time on a keep-alive connection: 128 KiB + 1 is the first
    // read (written with MSG_MORE) and one byte by sendfile; 1 MiB is the
    // head and first read, then sendfile; a memory response after a file
    // is a plain write. A response held back by MSG_MORE with no write
    // after it would take the probe timer's 200 ms or more (every one of
    // its kind: 4 of 12).
    const times = [];
    const d = await common.rawConnect(port);
    for (let i = 0; i < 12; i++) {
      const f = [mid, odd, null][i % 3];
      const t0 = process.hrtime.bigint();
      d.write(`GET /${f ? f.name : 'mem'} HTTP/1.1\r\nHost: x\r\n\r\n`);
      const [r] = await d.responses(1, {}, 20000);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      assert.ok(f ? r.body.equals(f.buf) : r.body.toString() === 'memory body', `request ${i}`);
      d.len = 0;  // the next response is parsed from the start
    }
    d.destroy();
    const slow = times.filter((t) => t >= 190).length;
    assert.ok(slow < 3, `${slow} responses took >= 190 ms: ${times.map((t) => t.toFixed(1)).join(', ')}`);
    const after = sendfileStats();
    assert.ok(after.bodies - before.bodies >= 11, JSON.stringify({ before, after }));
  });

  it('a client that leaves mid-body: the connection goes, nothing leaks, the server keeps serving', async function () {
    const { port } = await start();
    const f = files[16 * MiB];
    await common.httpRequest(port, { path: `/s/${f.name}`, timeout: 20000 });  // cached fd
    const fds = fdCount();
    for (let i = 0; i < 10; i++) {
      const c = await common.rawConnect(port);
      c.socket.pause();
      c.write(`GET /s/${f.name} HTTP/1.1\r\nHost: x\r\n\r\n`);
      await common.sleep(30);
      c.socket.resume();
      await c.waitFor((x) => x.data.length > 200000, 10000, 'some body bytes');
      c.socket.resetAndDestroy();
    }
    const st = await settled(fds);
    assert.strictEqual(st.buffersOutstanding, 0);
    assert.ok(st.fds <= fds, `fds ${st.fds} > ${fds}`);
    const r = await common.httpRequest(port, { path: `/s/${f.name}`, timeout: 20000 });
    assert.strictEqual(common.sha256(r.body), f.sha);
  });

  it('a file truncated while it is sent ends the connection early (no hang; the bytes up to the new end are the file\'s)', async function () {
    const { port } = await start();
    const name = 'shrinks.bin';
    const full = crypto.randomBytes(16 * MiB);
    for (const via of ['/s/', '/rwf/']) {
      fs.writeFileSync(path.join(dir, name), full);
      const c = await common.rawConnect(port);
      c.socket.pause();  // the socket buffers fill; sendfile waits for writable
      c.write(`GET ${via}${name} HTTP/1.1\r\nHost: x\r\n\r\n`);
      await common.sleep(200);
      fs.truncateSync(path.join(dir, name), MiB);
      c.socket.resume();
      const data = await c.waitClose(20000);
      const headEnd = data.indexOf('\r\n\r\n');
      assert.match(data.subarray(0, headEnd).toString('latin1'), /Content-Length: 16777216/i);
      const body = data.subarray(headEnd + 4);
      assert.ok(body.length < full.length, `${via}: ${body.length} bytes, the connection should have ended early`);
      // Up to the new end: the file's bytes. Past it, bytes sendfile had
      // already put in the socket buffer still reference the page cache,
      // and the truncation zeroes them (docs/files.md: the client sees a
      // body cut short of its Content-Length either way, as with nginx);
      // never any other data.
      const keep = Math.min(body.length, MiB);
      assert.ok(body.subarray(0, keep).equals(full.subarray(0, keep)), `${via}: wrong bytes before the new end`);
      for (let i = MiB; i < body.length; i++) {
        if (body[i] !== 0 && body[i] !== full[i]) assert.fail(`${via}: byte ${i} is neither the file's nor zero`);
      }
    }
  });

  it('a slow reader gets all of 16 MiB while the server holds no pipe buffers (sendfile waits for writable)', async function () {
    const { port } = await start();
    const f = files[16 * MiB];
    await common.httpRequest(port, { path: `/s/${f.name}`, timeout: 20000 });
    const before = sendfileStats();
    const c = await common.rawConnect(port);
    c.socket.pause();
    c.write(`GET /s/${f.name} HTTP/1.1\r\nHost: x\r\n\r\n`);
    let maxOut = 0;
    const rss0 = process.memoryUsage().rss;
    let maxRss = rss0;
    // Read in small steps with pauses.
    const timer = setInterval(() => {
      maxOut = Math.max(maxOut, nativeStats().buffersOutstanding);
      maxRss = Math.max(maxRss, process.memoryUsage().rss);
      c.socket.resume();
      setTimeout(() => c.socket.pause(), 5);
    }, 20);
    try {
      const [res] = await c.responses(1, {}, 50000);
      assert.strictEqual(common.sha256(res.body), f.sha);
    } finally {
      clearInterval(timer);
    }
    const after = sendfileStats();
    assert.strictEqual(maxOut, 0, 'pipe buffers held during a sendfile body');
    assert.ok(after.waits > before.waits, 'the socket filled: sendfile must have waited for writable');
    c.destroy();
  });

  it('a file the small-file cache holds whole: written from memory below 48 KiB, sent with sendfile from 48 KiB (cheaper there)', async function () {
    const { port } = await start();
    for (const [size, sendfile] of [[16 * KiB, false], [48 * KiB - 1, false], [48 * KiB, true], [64 * KiB, true]]) {
      const buf = crypto.randomBytes(size);
      const name = `cached${size}.bin`;
      fs.writeFileSync(path.join(dir, name), buf);
      // The first request fills the cache (its body is the open's first
      // read); the next ones are cache hits.
      const first = await common.httpRequest(port, { path: `/s/${name}` });
      assert.strictEqual(common.sha256(first.body), common.sha256(buf));
      const before = sendfileStats();
      for (let i = 0; i < 3; i++) {
        const r = await common.httpRequest(port, { path: `/s/${name}` });
        assert.strictEqual(r.statusCode, 200);
        assert.strictEqual(r.headers['content-length'], String(size));
        assert.strictEqual(common.sha256(r.body), common.sha256(buf), `${name} request ${i}`);
      }
      const after = sendfileStats();
      assert.strictEqual(after.bodies - before.bodies, sendfile ? 3 : 0, `${size} B: ${JSON.stringify({ before, after })}`);
      if (sendfile) assert.strictEqual(after.bytes - before.bytes, 3 * size);
    }
  });

  it('respondWithFile with openFileCache: a cache hit larger than one read is sent with sendfile (no prefetch read in its way)', async function () {
    const { port } = await start({ openFileCache: true });
    const f = files[MiB];
    const first = await common.httpRequest(port, { path: `/rwf/${f.name}` });
    assert.strictEqual(common.sha256(first.body), f.sha);
    const before = sendfileStats();
    for (let i = 0; i < 3; i++) {
      const r = await common.httpRequest(port, { path: `/rwf/${f.name}` });
      assert.strictEqual(common.sha256(r.body), f.sha, `request ${i}`);
    }
    const after = sendfileStats();
    assert.strictEqual(after.bodies - before.bodies, 3, JSON.stringify({ before, after }));
  });

  it('pages not in the page cache: the rest is read on the threadpool (fallback), the body intact', async function () {
    const { port } = await start();
    const f = files[16 * MiB];
    const file = path.join(dir, f.name);
    try {
      evict(file);
    } catch {
      this.skip();
    }
    const before = sendfileStats();
    const r = await common.httpRequest(port, { path: `/s/${f.name}`, timeout: 30000 });
    assert.strictEqual(common.sha256(r.body), f.sha);
    const after = sendfileStats();
    assert.ok(after.fallbacks > before.fallbacks, JSON.stringify({ before, after }));
  });

  it('not used: TLS, a compressed body, HTTP/2, the option sendfile: false', async function () {
    const f = files[MiB];
    // sendfile: false.
    const off = await start({ sendfile: false });
    let before = sendfileStats();
    const r = await common.httpRequest(off.port, { path: `/s/${f.name}` });
    assert.strictEqual(common.sha256(r.body), f.sha);
    assert.deepStrictEqual(sendfileStats(), before);
    assert.throws(() => common.impl.createServer({ sendfile: 'yes' }), { code: 'ERR_INVALID_ARG_TYPE' });
    await common.cleanup();

    // Compression: the compressor reads the file.
    const z = common.impl.createServer({ compression: true }, () => {});
    z.serveStatic('/s', dir);
    const zp = await common.listenLocal(z);
    before = sendfileStats();
    const zr = await common.curl(['--http1.1', '--compressed', `http://127.0.0.1:${zp}/s/text.txt`]);
    assert.strictEqual(zr.stdout.toString(), 'compressible text '.repeat(20000));
    assert.deepStrictEqual(sendfileStats(), before);

    // HTTP/2 (h2c): DATA frames need the bytes.
    const h2r = await common.curl(['--http2-prior-knowledge', `http://127.0.0.1:${zp}/s/${f.name}`]);
    assert.strictEqual(common.sha256(h2r.stdout), f.sha);
    assert.deepStrictEqual(sendfileStats(), before);

    // TLS: the record layer needs the bytes.
    const { fixtures } = require('../tls/tls_common');
    const fx = fixtures();
    const tls = common.impl.createSecureServer({ key: fx.localhost.key, cert: fx.localhost.cert }, () => {});
    tls.serveStatic('/s', dir);
    const tp = await common.listenLocal(tls);
    const body = await new Promise((resolve, reject) => {
      https.get({ host: '127.0.0.1', port: tp, path: `/s/${f.name}`, servername: 'localhost', ca: fx.ca, agent: false }, (res) => {
        const chunks = [];
        res.on('data', (d) => chunks.push(d));
        res.on('end', () => resolve(Buffer.concat(chunks)));
      }).on('error', reject);
    });
    assert.strictEqual(common.sha256(body), f.sha);
    assert.deepStrictEqual(sendfileStats(), before);
  });
});
