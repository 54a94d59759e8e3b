'use strict';

// Static mounts (server.serveStatic, the sluice.serveStatic middleware)
// use the open-file and small-file caches by default (docs/files.md "The
// open-file cache"): files changed, replaced, deleted or made unreadable
// under a running server are still served as they are now, on both
// protocols; concurrent misses of one path cost one open; when inotify
// watches run out, paths are served uncached (and still correctly).
// serveStatic is sluice's own API: sluice-only.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const common = require('../common');
const h2 = require('../http2/h2common');
const { assert } = common;

const describeSluice = common.isSluice ? describe : describe.skip;

describeSluice('[sluice-only] static mounts cache by default', function () {
  this.timeout(30000);
  let dir;
  const stats = () => common.impl.openFileCacheStats();

  beforeEach(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-static-cache-'));
  });
  afterEach(async function () {
    await common.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function start(serverOptions = {}) {
    const server = common.impl.createServer(serverOptions, (req, res) => {
      res.statusCode = 404;
      res.end('miss');
    });
    server.serveStatic('/s', dir);
    const port = await common.listenLocal(server);
    return { server, port };
  }

  // Until the cache has seen `n` more invalidations than `from` (events
  // come through the loop; a request racing the event may meet the old
  // entry, as docs/files.md says).
  async function invalidated(from, n = 1) {
    await h2.waitFor(() => stats().invalidations >= from + n, 5000);
  }

  it('default options: repeated requests hit the cache (no open); openFileCache: false opens every time', async function () {
    fs.writeFileSync(path.join(dir, 'a.txt'), 'cached by default');
    const { port } = await start();
    const before = stats();
    for (let i = 0; i < 5; i++) {
      const r = await common.httpRequest(port, { path: '/s/a.txt' });
      assert.strictEqual(r.body.toString(), 'cached by default');
    }
    const after = stats();
    assert.strictEqual(after.enabled, true);
    assert.strictEqual(after.opens - before.opens, 1);
    assert.strictEqual(after.hits - before.hits, 4);
    assert.strictEqual(after.contentHits - before.contentHits, 4);
    await common.cleanup();

    const off = await start({ openFileCache: false });
    for (let i = 0; i < 3; i++) {
      const r = await common.httpRequest(off.port, { path: '/s/a.txt' });
      assert.strictEqual(r.body.toString(), 'cached by default');
    }
    const st = stats();
    assert.strictEqual(st.enabled, false);
    assert.strictEqual(st.hits + st.misses, 0);
  });

  for (const proto of ['HTTP/1.1', 'HTTP/2']) {
    it(`${proto}: a file rewritten (new bytes, new size), replaced by rename, deleted, chmod 000 is served as it is now`, async function () {
      const f = path.join(dir, 'f.txt');
      fs.writeFileSync(f, 'version one');
      const { port } = await start();
      let session;
      const get = async () => {
        if (proto === 'HTTP/1.1') {
          const r = await common.httpRequest(port, { path: '/s/f.txt' });
          return { status: r.statusCode, body: r.body.toString(), length: r.headers['content-length'] };
        }
        session = session || h2.connect(port);
        const r = await h2.request(session, { ':path': '/s/f.txt' });
        return { status: r.headers[':status'], body: r.body.toString(), length: r.headers['content-length'] };
      };
      assert.deepStrictEqual(await get(), { status: 200, body: 'version one', length: '11' });
      assert.deepStrictEqual(await get(), { status: 200, body: 'version one', length: '11' });

      // Rewritten in place, longer.
      let inv = stats().invalidations;
      fs.writeFileSync(f, 'version two, longer');
      await invalidated(inv);
      assert.deepStrictEqual(await get(), { status: 200, body: 'version two, longer', length: '19' });

      // Replaced by a rename over the path (the held inode's link count drops).
      inv = stats().invalidations;
      fs.writeFileSync(path.join(dir, 'tmp'), 'v3');
      fs.renameSync(path.join(dir, 'tmp'), f);
      await invalidated(inv);
      assert.deepStrictEqual(await get(), { status: 200, body: 'v3', length: '2' });
      assert.deepStrictEqual(await get(), { status: 200, body: 'v3', length: '2' });

      // chmod 000: the entry is dropped (IN_ATTRIB) and the path opened
      // again: root may still open it (200, the bytes), anyone else gets 403.
      inv = stats().invalidations;
      fs.chmodSync(f, 0o000);
      await invalidated(inv);
      const asRoot = process.getuid() === 0;
      const locked = await get();
      assert.strictEqual(locked.status, asRoot ? 200 : 403);
      if (asRoot) assert.strictEqual(locked.body, 'v3');
      fs.chmodSync(f, 0o644);

      // Deleted: a miss (the JS handler's 404).
      await get();  // cached again (a watch with the mode back)
      inv = stats().invalidations;
      fs.unlinkSync(f);
      await invalidated(inv);
      assert.deepStrictEqual(await get(), { status: 404, body: 'miss', length: '4' });
      // And back.
      fs.writeFileSync(f, 'reborn');
      assert.deepStrictEqual(await get(), { status: 200, body: 'reborn', length: '6' });
      if (session) session.close();
    });
  }

  it('N concurrent misses of one cold path cost one open (HTTP/1.1 connections, HTTP/2 streams, the middleware)', async function () {
    // The threadpool is held by 4 blocked FIFO opens, so the first miss's
    // open job cannot run until every request has arrived: all the others
    // are misses that find it pending. Without coalescing each would open.
    this.timeout(30000);
    const N = 12;
    const script = `
      const sluice = require(${JSON.stringify(common.ROOT)});
      const fs = require('fs'); const http = require('http'); const http2 = require('http2');
      const dir = ${JSON.stringify(dir)};
      const body = (name) => name.repeat(5000);
      for (const n of ['a', 'b', 'c']) fs.writeFileSync(dir + '/' + n + '.txt', body(n));
      const fifo = dir + '/fifo';
      require('child_process').execFileSync('mkfifo', [fifo]);
      const mw = sluice.serveStatic(dir);
      const s = sluice.createServer((req, res) => mw(req, res, () => { res.statusCode = 404; res.end(); }));
      s.serveStatic('/s', dir);
      const get = (port, p) => new Promise((resolve, reject) => http.get({ host: '127.0.0.1', port, path: p, agent: false }, (res) => {
        let b = ''; res.on('data', (d) => b += d); res.on('end', () => resolve(b));
      }).on('error', reject));
      const get2 = (session, p) => new Promise((resolve, reject) => {
        const req = session.request({ ':path': p }); let b = '';
        req.on('data', (d) => b += d); req.on('end', () => resolve(b)); req.on('error', reject);
      });
      s.listen(0, '127.0.0.1', async () => {
        const port = s.address().port;
        const t = setTimeout(() => { console.log('stuck ' + JSON.stringify(sluice.openFileCacheStats())); process.exit(1); }, 15000);
        for (let i = 0; i < 4; i++) fs.open(fifo, 'r', () => {});
        await new Promise((r) => setTimeout(r, 100));
        const before = sluice.openFileCacheStats();
        const session = http2.connect('http://127.0.0.1:' + port);
        const all = [];
        for (let i = 0; i < ${N}; i++) {
          all.push(get(port, '/s/a.txt'));
          all.push(get2(session, '/s/b.txt'));
          all.push(get(port, '/c.txt'));  // the middleware (a JS handler)
        }
        // Every request reached the cache (one opener per path, the rest waiting).
        while (sluice.openFileCacheStats().coalesced - before.coalesced < 3 * (${N} - 1)) {
          await new Promise((r) => setTimeout(r, 20));
        }
        fs.closeSync(fs.openSync(fifo, 'w'));  // a writer frees the 4 threads
        const got = await Promise.all(all);
        clearTimeout(t);
        const after = sluice.openFileCacheStats();
        const ok = got.every((b, i) => b === body('abc'[i % 3]));
        console.log(JSON.stringify({ ok, opens: after.opens - before.opens, coalesced: after.coalesced - before.coalesced,
          hits: after.hits - before.hits }));
        // Exit once the client session is closed (node's http2 client
        // session left open at exit is reported by LeakSanitizer under
        // npm run test:asan).
        session.close(() => process.exit(0));
      });`;
    const r = await common.runNodeScript(script, { timeout: 25000, env: { UV_THREADPOOL_SIZE: '4' } });
    assert.strictEqual(r.code, 0, r.stdout + r.stderr.slice(0, 2000));
    const res = JSON.parse(r.stdout.trim());
    assert.deepStrictEqual(res, { ok: true, opens: 3, coalesced: 3 * (N - 1), hits: 3 * (N - 1) });
  });

  it('when inotify watches run out, paths are served uncached and still follow changes', async function () {
    // A user namespace of our own with max_inotify_watches = 1: the first
    // file takes the only watch (cached); the second cannot be watched and
    // is opened per request (never served stale). Skipped where user
    // namespaces are not available.
    try {
      execFileSync('unshare', ['-Ur', 'sh', '-c', 'echo 1 > /proc/sys/user/max_inotify_watches'], { stdio: 'ignore' });
    } catch {
      this.skip();
    }
    const script = `
      const sluice = require(${JSON.stringify(common.ROOT)});
      const fs = require('fs'); const http = require('http');
      const dir = ${JSON.stringify(dir)};
      fs.writeFileSync(dir + '/one.txt', 'one');
      fs.writeFileSync(dir + '/two.txt', 'two');
      const s = sluice.createServer((req, res) => { res.statusCode = 404; res.end(); });
      s.serveStatic('/', dir);
      const get = (port, p) => new Promise((resolve, reject) => http.get({ host: '127.0.0.1', port, path: p, agent: false }, (res) => {
        let b = ''; res.on('data', (d) => b += d); res.on('end', () => resolve(b));
      }).on('error', reject));
      s.listen(0, '127.0.0.1', async () => {
        const port = s.address().port;
        const out = [];
        out.push(await get(port, '/one.txt'), await get(port, '/one.txt'));
        out.push(await get(port, '/two.txt'), await get(port, '/two.txt'));
        fs.writeFileSync(dir + '/two.txt', 'two, changed');
        out.push(await get(port, '/two.txt'));
        const st = sluice.openFileCacheStats();
        console.log(JSON.stringify({ out, entries: st.entries, hits: st.hits, opens: st.opens }));
        process.exit(0);
      });`;
    const source = script.replace(/\n\s*/g, ' ');
    const r = await new Promise((resolve) => {
      const { execFile } = require('node:child_process');
      execFile('unshare', ['-Ur', 'sh', '-c',
        'echo 1 > /proc/sys/user/max_inotify_watches && exec "$0" -e "$1"', process.execPath, source],
      { env: common.nodeChildEnv(), timeout: 20000 }, (err, stdout, stderr) => resolve({ err, stdout, stderr }));
    });
    assert.ifError(r.err);
    const res = JSON.parse(r.stdout.trim());
    assert.deepStrictEqual(res.out, ['one', 'one', 'two', 'two', 'two, changed']);
    // one.txt cached (one open, one hit); two.txt never cached (an open per request).
    assert.strictEqual(res.entries, 1);
    assert.strictEqual(res.hits, 1);
  });
});
