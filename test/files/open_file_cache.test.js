'use strict';

// The open-file cache (`openFileCache` server option, src/core/files/):
// a file changed while cached is served as it is now once the change's
// event came (or the validity window ended); descriptors never leak; the
// small-file part hands out the cached bytes; statCheck still gets the
// stat; respondWithFD does not touch the cache.
//
// The change table runs on HTTP/2 against node:http2 too (no cache there:
// it proves what the table expects); the rest is sluice-only.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const zlib = require('node:zlib');
const http2 = require('node:http2');
const common = require('../common');
const h2 = require('../http2/h2common');
const { assert } = common;
const { fdCount, settled } = require('./settled');

const sluiceIt = common.isSluice ? it : it.skip;
const stats = () => (common.isSluice ? common.impl.openFileCacheStats() : null);

// Waits until pred() is true (polling), at most `ms`.
async function waitFor(pred, ms, what) {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await common.sleep(10);
  }
}

// An HTTP/2 server answering every stream with respondWithFile(root + path)
// (404 through onError): sluice with the cache on, or node:http2.
async function startH2FileServer(root, cacheOptions, extra = {}) {
  const handler = (stream, headers) => {
    const p = path.join(root, headers[':path']);
    stream.respondWithFile(p, { 'content-type': 'text/plain' }, {
      onError(err) {
        stream.respond({ ':status': err.code === 'ENOENT' ? 404 : 500 });
        stream.end();
      },
    });
  };
  if (common.isNode) {
    const server = http2.createServer();
    server.on('stream', handler);
    common.trackServer(server);
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { server, port: server.address().port };
  }
  const { server, port } = await common.startServer({ openFileCache: cacheOptions, ...extra });
  server.on('stream', handler);
  return { server, port };
}

describe(`open-file cache: a file changed while cached is served as it is now [${common.implName}]`, function () {
  let dir;
  beforeEach(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-ofc-'));
  });
  afterEach(async function () {
    await common.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  // Each change after the file was served twice (the second a hit on
  // sluice). validMs is a minute: only the change's event can explain a
  // fresh answer within the test.
  const changes = [
    ['renamed over (write a temp file, rename it onto the path)', (f) => {
      fs.writeFileSync(`${f}.tmp`, 'the new, longer content');
      fs.renameSync(`${f}.tmp`, f);
    }, 'the new, longer content'],
    ['truncated in place', (f) => fs.truncateSync(f, 4), 'orig'],
    ['appended to', (f) => fs.appendFileSync(f, '+more'), 'original content+more'],
    ['rewritten in place, same length', (f) => fs.writeFileSync(f, 'ORIGINAL CONTENT'), 'ORIGINAL CONTENT'],
    ['deleted', (f) => fs.unlinkSync(f), null],
  ];
  for (const [what, change, expected] of changes) {
    it(`HTTP/2: ${what}`, async function () {
      const f = path.join(dir, 'file.txt');
      fs.writeFileSync(f, 'original content');
      const { port } = await startH2FileServer(dir, { validMs: 60000 });
      const s = h2.connect(port);
      for (let i = 0; i < 2; i++) {
        const r = await h2.request(s, { ':path': '/file.txt' });
        assert.strictEqual(r.body.toString(), 'original content');
        assert.strictEqual(r.headers['content-length'], '16');
      }
      const before = stats();
      if (before) assert.ok(before.hits >= 1, 'the second response was a hit');
      change(f);
      if (before) {
        await waitFor(() => stats().invalidations > before.invalidations, 5000, 'the change event');
      }
      const r = await h2.request(s, { ':path': '/file.txt' });
      if (expected === null) {
        assert.strictEqual(r.headers[':status'], 404);
      } else {
        assert.strictEqual(r.headers[':status'], 200);
        assert.strictEqual(r.body.toString(), expected);
        assert.strictEqual(r.headers['content-length'], String(expected.length));
      }
    });
  }

  sluiceIt('HTTP/1.1: renamed over, truncated, appended to, deleted', async function () {
    const f = path.join(dir, 'file.txt');
    fs.writeFileSync(f, 'original content');
    const { port } = await common.startServer({ openFileCache: { validMs: 60000 } }, (req, res) => {
      res.respondWithFile(path.join(dir, req.url));
    });
    const get = () => common.httpRequest(port, { path: '/file.txt' });
    for (const [, change, expected] of changes) {
      for (let i = 0; i < 2; i++) {
        const r = await get();
        assert.strictEqual(r.statusCode, 200);
      }
      const before = stats();
      change(f);
      await waitFor(() => stats().invalidations > before.invalidations, 5000, 'the change event');
      const r = await get();
      if (expected === null) {
        assert.strictEqual(r.statusCode, 404);
      } else {
        assert.strictEqual(r.body.toString(), expected);
        assert.strictEqual(r.headers['content-length'], String(expected.length));
      }
      fs.writeFileSync(f, 'original content');
      await common.sleep(20);  // let this write's own event pass
    }
  });

  sluiceIt('a change no event reports (the parent directory renamed) is seen when the window ends', async function () {
    const sub = path.join(dir, 'sub');
    fs.mkdirSync(sub);
    fs.writeFileSync(path.join(sub, 'f.txt'), 'old');
    const validMs = 1500;
    const { port } = await startH2FileServer(dir, { validMs });
    const s = h2.connect(port);
    const t0 = Date.now();
    assert.strictEqual((await h2.request(s, { ':path': '/sub/f.txt' })).body.toString(), 'old');
    // The cached inode is untouched: it moves with its directory.
    fs.renameSync(sub, path.join(dir, 'sub-old'));
    fs.mkdirSync(sub);
    fs.writeFileSync(path.join(sub, 'f.txt'), 'new!');
    const before = stats();
    const r = await h2.request(s, { ':path': '/sub/f.txt' });
    if (Date.now() - t0 < validMs - 200) {
      // Inside the window: the cached descriptor answers (what nginx's
      // open_file_cache_valid allows too).
      assert.strictEqual(r.body.toString(), 'old');
      assert.strictEqual(stats().hits, before.hits + 1);
    }
    await common.sleep(Math.max(0, validMs + 50 - (Date.now() - t0)));
    const after = await h2.request(s, { ':path': '/sub/f.txt' });
    assert.strictEqual(after.body.toString(), 'new!');
    assert.ok(stats().expirations >= 1);
  });

  sluiceIt('a symbolic link swapped to another file (ln -sfn) is seen when the window ends', async function () {
    fs.writeFileSync(path.join(dir, 'v1.txt'), 'version 1');
    fs.writeFileSync(path.join(dir, 'v2.txt'), 'version 2');
    fs.symlinkSync('v1.txt', path.join(dir, 'current.txt'));
    const validMs = 1500;
    const { port } = await startH2FileServer(dir, { validMs });
    const s = h2.connect(port);
    const t0 = Date.now();
    assert.strictEqual((await h2.request(s, { ':path': '/current.txt' })).body.toString(), 'version 1');
    // What ln -sfn does: a new link renamed over the old one. The watched
    // inode (v1.txt, the link's target) does not change.
    fs.symlinkSync('v2.txt', path.join(dir, 'current.tmp'));
    fs.renameSync(path.join(dir, 'current.tmp'), path.join(dir, 'current.txt'));
    const r = await h2.request(s, { ':path': '/current.txt' });
    if (Date.now() - t0 < validMs - 200) assert.strictEqual(r.body.toString(), 'version 1');
    await common.sleep(Math.max(0, validMs + 50 - (Date.now() - t0)));
    assert.strictEqual((await h2.request(s, { ':path': '/current.txt' })).body.toString(), 'version 2');
  });

  sluiceIt('a response in flight keeps the file it started with when the path is renamed over', async function () {
    this.timeout(20000);
    const f = path.join(dir, 'big.bin');
    const oldData = crypto.randomBytes(4 * 1024 * 1024);
    fs.writeFileSync(f, oldData);
    const { port } = await startH2FileServer(dir, { validMs: 60000 });
    const s = h2.connect(port);
    await h2.request(s, { ':path': '/big.bin' });  // cached now
    // A slow reader: a 64 KiB stream window, read paused at first.
    const slow = h2.connect(port, { settings: { initialWindowSize: 65535 } });
    const req = slow.request({ ':path': '/big.bin' });
    const chunks = [];
    const done = new Promise((resolve, reject) => {
      req.on('data', (d) => chunks.push(d));
      req.on('end', resolve);
      req.on('error', reject);
    });
    req.pause();
    await new Promise((resolve) => req.once('response', resolve));
    const newData = crypto.randomBytes(3 * 1024 * 1024);
    fs.writeFileSync(`${f}.tmp`, newData);
    fs.renameSync(`${f}.tmp`, f);
    const before = stats();
    await waitFor(() => stats().invalidations > before.invalidations, 5000, 'the change event');
    req.resume();
    await common.withTimeout(done, 15000, 'the slow response');
    assert.strictEqual(common.sha256(Buffer.concat(chunks)), common.sha256(oldData));
    const r = await h2.request(s, { ':path': '/big.bin' }, { timeout: 15000 });
    assert.strictEqual(common.sha256(r.body), common.sha256(newData));
  });
});

(common.isSluice ? describe : describe.skip)('open-file cache: bounds, descriptors, stat, small files', function () {
  let dir;
  beforeEach(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-ofc-'));
  });
  afterEach(async function () {
    await common.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('respondWithFile uses it only when asked for; false turns it off; the option is validated', async function () {
    const f = path.join(dir, 'a.txt');
    fs.writeFileSync(f, 'a');
    // Default options: the cache is on (static mounts use it), respondWithFile does not.
    const { port } = await common.startServer((req, res) => res.respondWithFile(f));
    await common.httpRequest(port);
    await common.httpRequest(port);
    let st = stats();
    assert.strictEqual(st.enabled, true);
    assert.strictEqual(st.hits + st.misses, 0);
    await common.cleanup();
    // openFileCache: false: no cache at all.
    const off = await common.startServer({ openFileCache: false }, (req, res) => res.respondWithFile(f));
    await common.httpRequest(off.port);
    st = stats();
    assert.strictEqual(st.enabled, false);
    assert.strictEqual(st.hits + st.misses, 0);
    assert.throws(() => common.impl.createServer({ openFileCache: 'yes' }), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => common.impl.createServer({ openFileCache: { max: 0 } }), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => common.impl.createServer({ openFileCache: { validMs: 1.5 } }), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => common.impl.createServer({ openFileCache: { smallFileSize: -1 } }), { code: 'ERR_OUT_OF_RANGE' });
  });

  it('one entry serves both protocols; statCheck gets the stat on a hit; respondWithFD does not use the cache', async function () {
    const f = path.join(dir, 'a.txt');
    fs.writeFileSync(f, 'shared by both protocols');
    const fsStat = fs.statSync(f);
    const seen = [];
    const statCheck = (st, headers) => {
      seen.push(st);
      headers['x-size'] = String(st.size);
    };
    const { server, port } = await common.startServer({ openFileCache: true }, (req, res) => {
      if (req.url === '/fd') {
        const fd = fs.openSync(f, 'r');
        res.respondWithFD(fd, {}, { onError() {} });
        res.on('close', () => fs.closeSync(fd));
        return;
      }
      res.respondWithFile(f, {}, { statCheck: (st) => { seen.push(st); res.setHeader('x-size', String(st.size)); } });
    });
    server.on('stream', (stream, headers) => {
      if (headers[':path'] === '/fd') {
        const fd = fs.openSync(f, 'r');
        stream.respondWithFD(fd);
        stream.on('close', () => fs.closeSync(fd));
        return;
      }
      stream.respondWithFile(f, {}, { statCheck });
    });
    const r1 = await common.httpRequest(port);
    assert.strictEqual(r1.body.toString(), 'shared by both protocols');
    const s = h2.connect(port);
    const r2 = await h2.request(s);
    assert.strictEqual(r2.body.toString(), 'shared by both protocols');
    assert.strictEqual(r2.headers['x-size'], String(fsStat.size));
    const r3 = await common.httpRequest(port);
    assert.strictEqual(r3.headers['x-size'], String(fsStat.size));
    let st = stats();
    assert.strictEqual(st.misses, 1);
    assert.strictEqual(st.hits, 2);
    assert.strictEqual(seen.length, 3);
    for (const x of seen) {
      assert.strictEqual(x.size, fsStat.size);
      assert.strictEqual(x.ino, fsStat.ino);
      assert.strictEqual(x.mtimeMs, fsStat.mtimeMs);
      assert.strictEqual(x.mtime.getTime(), fsStat.mtime.getTime());
      assert.ok(x.isFile());
    }
    assert.strictEqual((await common.httpRequest(port, { path: '/fd' })).body.toString(), 'shared by both protocols');
    assert.strictEqual((await h2.request(s, { ':path': '/fd' })).body.toString(), 'shared by both protocols');
    st = stats();
    assert.strictEqual(st.misses + st.hits, 3, 'respondWithFD looked nothing up');
  });

  it('bounded by max (LRU); no descriptor leaks, and all close when the last server closes', async function () {
    this.timeout(20000);
    const names = [];
    for (let i = 0; i < 30; i++) {
      names.push(`f${i}.txt`);
      fs.writeFileSync(path.join(dir, `f${i}.txt`), `file ${i}`);
    }
    const baseline = fdCount();
    const { server, port } = await startH2FileServer(dir, { max: 8 });
    const s = h2.connect(port);
    for (let round = 0; round < 3; round++) {
      for (const n of names) {
        const r = await h2.request(s, { ':path': `/${n}` });
        assert.strictEqual(r.body.toString(), `file ${n.slice(1, -4)}`);
      }
      // The 8 most recent, again: hits.
      const hitsBefore = stats().hits;
      for (const n of names.slice(-8)) await h2.request(s, { ':path': `/${n}` });
      assert.strictEqual(stats().hits, hitsBefore + 8);
    }
    const st = stats();
    assert.ok(st.entries <= 8, `entries ${st.entries}`);
    assert.ok(st.evictions >= 22 * 3, `evictions ${st.evictions}`);
    // Closing fds is async: wait until the count settles at the bound.
    await waitFor(() => stats().fds <= 8, 3000, 'evicted descriptors to close');
    // The listener, the client's and the server's connection sockets, the
    // inotify instance, and at most 8 cached files.
    assert.ok(fdCount() <= baseline + 3 + 1 + 8 + 2, `fds ${fdCount()} vs baseline ${baseline}`);
    s.destroy();
    await common.closeServer(server);
    await waitFor(() => stats().fds === 0, 3000, 'cached descriptors to close');
    assert.strictEqual(stats().enabled, false);
    const left = await settled(baseline + 1);  // + libuv's inotify fd, kept by the loop
    assert.ok(left.fds <= baseline + 1, `fds ${left.fds} vs baseline ${baseline}`);
  });

  it('client resets mid-file with the cache on leak nothing; many concurrent streams share one descriptor', async function () {
    this.timeout(20000);
    const f = path.join(dir, 'big.bin');
    const data = crypto.randomBytes(1024 * 1024);
    fs.writeFileSync(f, data);
    const { port } = await startH2FileServer(dir, {});
    const s = h2.connect(port);
    await h2.request(s, { ':path': '/big.bin' }, { timeout: 15000 });
    // (Misses that overlap are not coalesced: each opens, the last wins.)
    const rs = await Promise.all(Array.from({ length: 20 }, () => h2.request(s, { ':path': '/big.bin' }, { timeout: 15000 })));
    for (const r of rs) assert.strictEqual(common.sha256(r.body), common.sha256(data));
    assert.strictEqual(stats().misses, 1);
    assert.strictEqual(stats().hits, 20);
    for (let i = 0; i < 10; i++) {
      const req = s.request({ ':path': '/big.bin' });
      req.on('error', () => {});
      await new Promise((resolve) => req.once('data', resolve));
      req.close(http2.constants.NGHTTP2_CANCEL);
    }
    await waitFor(() => common.libInternal('common/binding').NativeFile.stats().sources === 0, 5000, 'sources to close');
    assert.strictEqual(common.libInternal('common/binding').NativeFile.stats().buffersOutstanding, 0);
    assert.strictEqual(stats().fds, 1);
    const r = await h2.request(s, { ':path': '/big.bin' }, { timeout: 15000 });
    assert.strictEqual(common.sha256(r.body), common.sha256(data));
  });

  it('small files are answered from memory: both protocols, ranges, compression, HEAD', async function () {
    const f = path.join(dir, 'page.html');
    const data = Buffer.from('<p>' + 'cached small file '.repeat(60) + '</p>');
    fs.writeFileSync(f, data);
    const { server, port } = await common.startServer({ openFileCache: true, compression: true }, (req, res) => {
      const m = /^\/range\/(\d+)\/(\d+)$/.exec(req.url);
      res.respondWithFile(f, { 'content-type': 'text/html' },
        m ? { offset: Number(m[1]), length: Number(m[2]) } : undefined);
    });
    server.on('stream', (stream) => stream.respondWithFile(f, { 'content-type': 'text/html' }));
    const first = await common.httpRequest(port);
    assert.ok(first.body.equals(data));
    assert.strictEqual(stats().contentBytes, data.length);
    const s = h2.connect(port);
    for (let i = 0; i < 3; i++) {
      assert.ok((await common.httpRequest(port)).body.equals(data));
      assert.ok((await h2.request(s)).body.equals(data));
    }
    assert.strictEqual(stats().contentHits, 6);
    const part = await common.httpRequest(port, { path: '/range/100/50' });
    assert.ok(part.body.equals(data.subarray(100, 150)));
    assert.strictEqual(part.headers['content-length'], '50');
    const gz = await common.httpRequest(port, { headers: { 'accept-encoding': 'gzip' } });
    assert.strictEqual(gz.headers['content-encoding'], 'gzip');
    assert.ok(zlib.gunzipSync(gz.body).equals(data));
    const gz2 = await h2.request(s, { 'accept-encoding': 'gzip' });
    assert.strictEqual(gz2.headers['content-encoding'], 'gzip');
    assert.ok(zlib.gunzipSync(gz2.body).equals(data));
    const head = await common.httpRequest(port, { method: 'HEAD' });
    assert.strictEqual(head.headers['content-length'], String(data.length));
    assert.strictEqual(head.body.length, 0);
  });

  it('small-file bounds: smallFileSize and smallFileBytes', async function () {
    const big = path.join(dir, 'big.txt');
    fs.writeFileSync(big, Buffer.alloc(2001, 'b'));
    const smalls = [0, 1, 2, 3, 4].map((i) => {
      const p = path.join(dir, `s${i}.txt`);
      fs.writeFileSync(p, Buffer.alloc(1000, String(i)));
      return p;
    });
    const { port } = await common.startServer({ openFileCache: { smallFileSize: 2000, smallFileBytes: 3000 } },
      (req, res) => res.respondWithFile(path.join(dir, req.url)));
    const b = await common.httpRequest(port, { path: '/big.txt' });
    assert.strictEqual(b.body.length, 2001);
    assert.strictEqual(stats().contentBytes, 0, 'over smallFileSize: only the descriptor is cached');
    assert.strictEqual(stats().entries, 1);
    for (let i = 0; i < 5; i++) {
      const r = await common.httpRequest(port, { path: `/s${i}.txt` });
      assert.ok(r.body.equals(Buffer.alloc(1000, String(i))));
      assert.ok(stats().contentBytes <= 3000, `contentBytes ${stats().contentBytes}`);
    }
    assert.strictEqual(stats().contentBytes, 3000);
    assert.strictEqual(stats().entries, 6, 'descriptors stay cached when content is pushed out');
    // The oldest content went; its file is still served right (from the fd).
    const r0 = await common.httpRequest(port, { path: '/s0.txt' });
    assert.ok(r0.body.equals(Buffer.alloc(1000, '0')));
    assert.ok(smalls.length === 5);
  });

  it('a cache hit makes no threadpool round trip for the open (UV_THREADPOOL_SIZE busy)', async function () {
    // Every threadpool thread is held by a blocked fs call elsewhere: an
    // uncached small file cannot be answered, a content-cached one can.
    this.timeout(20000);
    const script = `
      const sluice = require(${JSON.stringify(common.ROOT)});
      const fs = require('fs'); const http = require('http');
      const f = ${JSON.stringify(path.join(dir, 'hit.txt'))};
      fs.writeFileSync(f, 'from memory');
      const fifo = ${JSON.stringify(path.join(dir, 'fifo'))};
      require('child_process').execFileSync('mkfifo', [fifo]);
      const s = sluice.createServer({ openFileCache: true }, (req, res) => res.respondWithFile(f));
      const get = (port) => new Promise((resolve, reject) => http.get({ host: '127.0.0.1', port, agent: false }, (res) => {
        let b = ''; res.on('data', (d) => b += d); res.on('end', () => resolve(b));
      }).on('error', reject));
      s.listen(0, '127.0.0.1', async () => {
        const port = s.address().port;
        await get(port);  // cached now
        // 4 blocking opens of a FIFO without a writer: the pool is full
        // (the client connects to an IP: no getaddrinfo on the pool).
        for (let i = 0; i < 4; i++) fs.open(fifo, 'r', () => {});
        setTimeout(async () => {
          const t = setTimeout(() => { console.log('stuck'); process.exit(1); }, 3000);
          const b = await get(port);
          clearTimeout(t);
          console.log(b);
          fs.closeSync(fs.openSync(fifo, 'w'));  // a writer frees the 4 threads
          process.exit(0);
        }, 100);
      });`;
    const r = await common.runNodeScript(script, { timeout: 15000, env: { UV_THREADPOOL_SIZE: '4' } });
    assert.strictEqual(r.stdout.trim(), 'from memory', r.stderr);
  });
});
