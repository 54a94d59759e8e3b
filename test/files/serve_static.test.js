'use strict';

// server.serveStatic(urlPrefix, root[, options]): files answered by the
// core with no JS per request (docs/files.md "serveStatic"). The
// traversal and conditional/range tables are compared row by row with
// what the `serve-static` middleware answers for the same bytes on
// node:http (fallthrough: false, so its refusals show as their status):
// sluice must never serve what serve-static refuses, and must answer the
// conditional and range rows as it does. serveStatic is sluice's own API:
// these tests are sluice-only (each starts the node:http reference itself).

const fs = require('node:fs');
const path = require('node:path');
const http = require('node:http');
const http2 = require('node:http2');
const { execFile } = require('node:child_process');
const zlib = require('node:zlib');
const serveStatic = require('serve-static');
const common = require('../common');
const h2 = require('../http2/h2common');
const { assert } = common;
const { fdCount, settled } = require('./settled');

const describeSluice = common.isSluice ? describe : describe.skip;

const {
  SECRET, BODY_1000, makeTree, raw, TRAVERSAL_ROWS, conditionalRows: conditionalHeaderRows,
} = require('./static_tree');

// A sluice server mounting `root` at `prefix`; misses answer 404 "miss"
// from JS and count.
async function startSluice(root, prefix = '/', options, serverOptions = {}) {
  const state = { js: 0 };
  const server = common.impl.createServer(serverOptions, (req, res) => {
    state.js++;
    res.statusCode = 404;
    res.end('miss');
  });
  server.serveStatic(prefix, root, options);
  const port = await common.listenLocal(server);
  return { server, port, state };
}

// node:http + serve-static (fallthrough: false: its refusals keep their
// status; a miss is 404).
async function startReference(root, options = {}) {
  const mw = serveStatic(root, { fallthrough: false, ...options });
  const server = http.createServer((req, res) => {
    mw(req, res, (err) => {
      res.statusCode = err ? (err.status || err.statusCode || 500) : 404;
      if (err && err.headers) for (const k of Object.keys(err.headers)) res.setHeader(k, err.headers[k]);
      res.end(err ? 'refused' : 'miss');
    });
  });
  const port = await common.listenLocal(server);
  return { server, port };
}

describeSluice('serveStatic', function () {
  this.timeout(30000);
  let tree;
  before(() => { tree = makeTree(); });
  after(() => fs.rmSync(tree.tmp, { recursive: true, force: true }));
  afterEach(() => common.cleanup());

  it('maxRequestsPerSocket: the mount answers the Nth request with Connection: close; the one after is JS\'s 503 + \'dropRequest\'', async () => {
    const sl = await startSluice(tree.root, '/', undefined, { maxRequestsPerSocket: 1 });
    const drops = [];
    sl.server.on('dropRequest', (req) => drops.push(req.url));
    const c = await common.rawConnect(sl.port);
    c.socket.write('GET /k.txt HTTP/1.1\r\nHost: h\r\n\r\nGET /k.txt HTTP/1.1\r\nHost: h\r\n\r\n');
    const rs = await c.responses(2);
    assert.deepStrictEqual(rs.map((r) => [r.statusCode, r.headers.connection]), [[200, 'close'], [503, 'close']]);
    assert.strictEqual(rs[0].body.length, 1000);
    assert.deepStrictEqual(drops, ['/k.txt']);
    assert.strictEqual(sl.state.js, 0);
    assert.strictEqual(c.closed, false);
  });

  describe('traversal table against serve-static', function () {
    const rows = TRAVERSAL_ROWS;

    async function table(mechanism) {
      const sl = await startSluice(tree.root);
      const ref = await startReference(tree.root);
      const binding = common.libInternal('common/binding');
      assert.strictEqual(binding.staticOpenBeneath(mechanism === 'procfs'), mechanism);
      try {
        const report = [];
        for (const target of rows) {
          const a = await raw(sl.port, target);
          const b = await raw(ref.port, target);
          report.push(`${target}: sluice ${a.statusCode} serve-static ${b.statusCode}`);
          const body = a.body.toString('latin1');
          assert.ok(!body.includes('TOP-SECRET'), `${target} leaked the secret: ${report.join('\n')}`);
          if (a.statusCode === 200 && body !== 'miss') {
            assert.strictEqual(b.statusCode, 200, `sluice served what serve-static refused: ${target}`);
            assert.strictEqual(body, b.body.toString('latin1'), target);
          }
        }
        // What the rows must give on sluice (the refusals are native).
        const st = async (t) => (await raw(sl.port, t)).statusCode;
        assert.strictEqual(await st('/a.txt'), 200);
        assert.strictEqual(await st('/inlink'), 200);
        assert.strictEqual(await st('/dir/across'), 200);
        // RESOLVE_BENEATH refuses a path that leaves the root even when it
        // comes back; the /proc check only looks at where it ends.
        assert.strictEqual(await st('/sub/updown'), mechanism === 'openat2' ? 403 : 200);
        assert.strictEqual(await st('/../secret.txt'), 403);
        assert.strictEqual(await st('/%2e%2e/secret.txt'), 403);
        assert.strictEqual(await st('/..%2fsecret.txt'), 403);
        assert.strictEqual(await st('/..%5csecret.txt'), 403);
        assert.strictEqual(await st('/..\\secret.txt'), 403);
        assert.strictEqual(await st('/%c0%ae%c0%ae/secret.txt'), 400);
        assert.strictEqual(await st('/a.txt%00'), 400);
        assert.strictEqual(await st('/escape'), 403);
        assert.strictEqual(await st('/escape-abs'), 403);
        assert.strictEqual(await st('/escdir/secret.txt'), 403);
        assert.strictEqual(await st('/%252e%252e/secret.txt'), 404);  // a file named "%2e%2e"
        assert.strictEqual(sl.state.js > 0, true);  // the misses reached JS
      } finally {
        binding.staticOpenBeneath(false);
      }
    }

    it('never serves what serve-static refuses (openat2 RESOLVE_BENEATH)', () => table('openat2'));
    it('the same with the /proc/self/fd fallback', () => table('procfs'));

    it('followSymlinks: true follows links out of the root (as serve-static)', async () => {
      const sl = await startSluice(tree.root, '/', { followSymlinks: true });
      const a = await raw(sl.port, '/escape');
      assert.strictEqual(a.statusCode, 200);
      assert.strictEqual(a.body.toString(), SECRET);
      assert.strictEqual((await raw(sl.port, '/../secret.txt')).statusCode, 403);
    });
  });

  describe('conditional and range table against serve-static', function () {
    // node's stat.mtime rounds the sub-millisecond part (half up), so each
    // row runs against files whose mtimes sit just below and just above a
    // half millisecond, and one a hair before a whole second (Last-Modified
    // moves to the next second), as well as the file as written.
    const MTIMES = [null, 1700000000.0004, 1700000000.0006, 1700000000.9996];

    it('answers every row with serve-static\'s status, range and body', async () => {
      const sl = await startSluice(tree.root);
      const ref = await startReference(tree.root);
      for (const [i, mtime] of MTIMES.entries()) {
        const name = `/k${i}.txt`;
        fs.writeFileSync(path.join(tree.root, name), BODY_1000);
        if (mtime !== null) fs.utimesSync(path.join(tree.root, name), mtime, mtime);
        await conditionalRows(sl, ref, name);
      }
      assert.strictEqual(sl.state.js, 0, 'no row reached JS');
    });

    async function conditionalRows(sl, ref, name) {
      const base = await raw(ref.port, name);
      const etag = base.headers.etag;
      const lm = base.headers['last-modified'];
      assert.ok(etag && lm);
      const rows = conditionalHeaderRows(etag, lm);
      for (const h of rows) {
        for (const method of ['GET', 'HEAD']) {
          const a = await raw(sl.port, name, h, method);
          const b = await raw(ref.port, name, h, method);
          const what = `${name} ${method} ${JSON.stringify(h)}`;
          assert.strictEqual(a.statusCode, b.statusCode, what);
          if (b.statusCode === 200 || b.statusCode === 206) {
            for (const name of ['content-length', 'content-range', 'content-type', 'etag',
              'last-modified', 'accept-ranges', 'cache-control']) {
              assert.strictEqual(a.headers[name], b.headers[name], `${what}: ${name}`);
            }
            assert.strictEqual(a.body.toString('latin1'), b.body.toString('latin1'), what);
          } else if (b.statusCode === 304) {
            assert.strictEqual(a.headers.etag, b.headers.etag, what);
            assert.strictEqual(a.body.length, 0, what);
            assert.strictEqual(a.headers['content-type'], undefined, what);
          } else if (b.statusCode === 416) {
            assert.strictEqual(a.headers['content-range'], b.headers['content-range'], what);
          }
        }
      }
    }

    it('maxAge and immutable set Cache-Control as serve-static does', async () => {
      const sl = await startSluice(tree.root, '/', { maxAge: 86400000, immutable: true });
      const ref = await startReference(tree.root, { maxAge: 86400000, immutable: true });
      const a = await raw(sl.port, '/a.txt');
      const b = await raw(ref.port, '/a.txt');
      assert.strictEqual(a.headers['cache-control'], 'public, max-age=86400, immutable');
      assert.strictEqual(a.headers['cache-control'], b.headers['cache-control']);
      const c = await startSluice(tree.root, '/', { etag: false, lastModified: false, cacheControl: false });
      const r = await raw(c.port, '/a.txt');
      assert.strictEqual(r.headers.etag, undefined);
      assert.strictEqual(r.headers['last-modified'], undefined);
      assert.strictEqual(r.headers['cache-control'], undefined);
    });
  });

  describe('files, index, dotfiles, types', function () {
    it('serves content types from the documented table, as serve-static names them', async () => {
      const sl = await startSluice(tree.root);
      const ref = await startReference(tree.root);
      for (const f of ['page.html', 'style.css', 'app.js', 'data.json', 'pic.svg', 'a.txt',
        'blob.unknownext', 'noext']) {
        const a = await raw(sl.port, `/${f}`);
        const b = await raw(ref.port, `/${f}`);
        assert.strictEqual(a.statusCode, 200, f);
        assert.strictEqual(a.headers['content-type'], b.headers['content-type'], f);
      }
      const table = common.libInternal('common/binding').staticContentTypes();
      const doc = fs.readFileSync(path.join(common.ROOT, 'docs/files.md'), 'utf8');
      for (const [ext, type] of table) {
        assert.ok(doc.includes(`| \`.${ext}\` | \`${type}\` |`), `docs/files.md lists .${ext}`);
      }
    });

    it('dir/ serves dir/index.html; dir without the slash and a dir without index fall through', async () => {
      const sl = await startSluice(tree.root, '/static');
      const a = await raw(sl.port, '/static/dir/');
      assert.strictEqual(a.statusCode, 200);
      assert.strictEqual(a.body.toString(), '<h1>index</h1>\n');
      assert.strictEqual(a.headers['content-type'], 'text/html; charset=utf-8');
      assert.strictEqual(sl.state.js, 0);
      assert.strictEqual((await raw(sl.port, '/static/dir')).body.toString(), 'miss');
      assert.strictEqual((await raw(sl.port, '/static/noindex/')).body.toString(), 'miss');
      assert.strictEqual((await raw(sl.port, '/static/nope.txt')).body.toString(), 'miss');
      assert.strictEqual((await raw(sl.port, '/staticx/a.txt')).body.toString(), 'miss');
      assert.strictEqual((await raw(sl.port, '/static/a.txt')).body.toString(), 'hello\n');
      assert.strictEqual(sl.state.js, 4);
      const noIndex = await startSluice(tree.root, '/', { index: false });
      assert.strictEqual((await raw(noIndex.port, '/dir/')).body.toString(), 'miss');
    });

    it('dotfiles: ignore falls through, deny answers 403, allow serves', async () => {
      const ign = await startSluice(tree.root);
      assert.strictEqual((await raw(ign.port, '/.env')).body.toString(), 'miss');
      const deny = await startSluice(tree.root, '/', { dotfiles: 'deny' });
      assert.strictEqual((await raw(deny.port, '/.env')).statusCode, 403);
      assert.strictEqual(deny.state.js, 0);
      const allow = await startSluice(tree.root, '/', { dotfiles: 'allow' });
      const r = await raw(allow.port, '/.env');
      assert.strictEqual(r.statusCode, 200);
      assert.strictEqual(r.body.toString(), 'DOTFILE\n');
    });

    it('other methods and requests with a body or Expect reach JS unchanged', async () => {
      const sl = await startSluice(tree.root);
      assert.strictEqual((await raw(sl.port, '/a.txt', {}, 'POST')).body.toString(), 'miss');
      assert.strictEqual((await raw(sl.port, '/a.txt', {}, 'DELETE')).body.toString(), 'miss');
      const withBody = await common.rawUntilClose(sl.port,
        'GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 3\r\n\r\nabc');
      assert.strictEqual(common.parseAll(withBody.data)[0].body.toString(), 'miss');
      const expect = await raw(sl.port, '/a.txt', { Expect: '100-continue' });
      assert.strictEqual(expect.body.toString(), 'miss');
      assert.strictEqual(sl.state.js, 4);
    });

    it('curl: a hit, a range and a 304', async () => {
      const sl = await startSluice(tree.root);
      const curl = (args) => new Promise((resolve, reject) => {
        execFile('curl', ['-s', '-i', ...args], { encoding: 'latin1' }, (err, out) => (err ? reject(err) : resolve(out)));
      });
      const full = await curl([`http://127.0.0.1:${sl.port}/k.txt`]);
      assert.match(full, /^HTTP\/1\.1 200 OK\r\n/);
      assert.ok(full.endsWith(BODY_1000.toString('latin1')));
      const part = await curl(['-r', '10-19', `http://127.0.0.1:${sl.port}/k.txt`]);
      assert.match(part, /^HTTP\/1\.1 206 Partial Content\r\n/);
      assert.match(part, /Content-Range: bytes 10-19\/1000\r\n/);
      assert.ok(part.endsWith(BODY_1000.subarray(10, 20).toString('latin1')));
      const etag = /ETag: (.*)\r\n/.exec(full)[1];
      const nm = await curl(['-H', `If-None-Match: ${etag}`, `http://127.0.0.1:${sl.port}/k.txt`]);
      assert.match(nm, /^HTTP\/1\.1 304 Not Modified\r\n/);
      assert.strictEqual(sl.state.js, 0);
    });
  });

  describe('no JS per request', function () {
    it('a hit never runs the request listener, on HTTP/1.1 and HTTP/2; misses do', async () => {
      const sl = await startSluice(tree.root, '/', {}, { openFileCache: true });
      for (let i = 0; i < 5; i++) {
        const r = await common.httpRequest(sl.port, { path: '/a.txt' });
        assert.strictEqual(r.statusCode, 200);
      }
      const session = await h2.connect(sl.port);
      for (let i = 0; i < 5; i++) {
        const r = await h2.request(session, { ':path': '/k.txt' });
        assert.strictEqual(r.headers[':status'], 200);
        assert.strictEqual(Buffer.compare(r.body, BODY_1000), 0);
      }
      assert.strictEqual(sl.state.js, 0);
      const miss = await h2.request(session, { ':path': '/nope' });
      assert.strictEqual(miss.headers[':status'], 404);
      assert.strictEqual(miss.body.toString(), 'miss');
      assert.strictEqual(sl.state.js, 1);
      session.close();
    });

    it('HTTP/2: ranges, 304, HEAD and the \'stream\' event for misses', async () => {
      const server = common.impl.createServer({});
      let streams = 0;
      server.on('stream', (stream) => {
        streams++;
        stream.respond({ ':status': 404 });
        stream.end('stream-miss');
      });
      server.serveStatic('/', tree.root);
      const port = await common.listenLocal(server);
      const session = await h2.connect(port);
      const r = await h2.request(session, { ':path': '/k.txt', range: 'bytes=-10' });
      assert.strictEqual(r.headers[':status'], 206);
      assert.strictEqual(r.headers['content-range'], 'bytes 990-999/1000');
      assert.strictEqual(r.body.toString(), BODY_1000.subarray(990).toString());
      const nm = await h2.request(session, { ':path': '/k.txt', 'if-none-match': r.headers.etag });
      assert.strictEqual(nm.headers[':status'], 304);
      assert.strictEqual(nm.body.length, 0);
      const head = await h2.request(session, { ':path': '/k.txt', ':method': 'HEAD' });
      assert.strictEqual(head.headers[':status'], 200);
      assert.strictEqual(head.headers['content-length'], '1000');
      assert.strictEqual(head.body.length, 0);
      const bad = await h2.request(session, { ':path': '/%2e%2e/secret.txt' });
      assert.strictEqual(bad.headers[':status'], 403);
      const miss = await h2.request(session, { ':path': '/nope' });
      assert.strictEqual(miss.body.toString(), 'stream-miss');
      const dir = await h2.request(session, { ':path': '/dir/' });
      assert.strictEqual(dir.body.toString(), '<h1>index</h1>\n');
      assert.strictEqual(streams, 1);
      session.close();
    });
  });

  describe('ordering, the cache and teardown', function () {
    it('pipelined misses and hits answer in order (a lookup pauses parsing)', async () => {
      const sl = await startSluice(tree.root);
      const reqs = ['/a.txt', '/nope', '/sub/b.txt', '/dir/', '/k.txt', '/gone'];
      let data = '';
      reqs.forEach((p, i) => {
        data += `GET ${p} HTTP/1.1\r\nHost: x\r\n${i === reqs.length - 1 ? 'Connection: close\r\n' : ''}\r\n`;
      });
      const c = await common.rawUntilClose(sl.port, data);
      const res = common.parseAll(c.data);
      assert.deepStrictEqual(res.map((r) => r.body.length > 20 ? r.body.length : r.body.toString()),
        ['hello\n', 'miss', 'bee\n', '<h1>index</h1>\n', 1000, 'miss']);
      assert.strictEqual(sl.state.js, 2);
    });

    it('a file changed while cached is served as it is now', async () => {
      const sl = await startSluice(tree.root, '/', {}, { openFileCache: { validMs: 60000 } });
      const file = path.join(tree.root, 'changing.txt');
      fs.writeFileSync(file, 'one\n');
      assert.strictEqual((await raw(sl.port, '/changing.txt')).body.toString(), 'one\n');
      assert.strictEqual((await raw(sl.port, '/changing.txt')).body.toString(), 'one\n');
      const hits = common.impl.openFileCacheStats().hits;
      assert.ok(hits >= 1, 'the second request was a cache hit');
      fs.writeFileSync(file + '.tmp', 'two two\n');
      fs.renameSync(file + '.tmp', file);
      const deadline = Date.now() + 3000;
      let body;
      do {
        body = (await raw(sl.port, '/changing.txt')).body.toString();
      } while (body !== 'two two\n' && Date.now() < deadline && await common.sleep(20) === undefined);
      assert.strictEqual(body, 'two two\n');
      fs.unlinkSync(file);
      let st;
      do {
        st = (await raw(sl.port, '/changing.txt')).statusCode;
      } while (st !== 404 && Date.now() < deadline + 3000 && await common.sleep(20) === undefined);
      assert.strictEqual(st, 404);
    });

    it('clients that leave mid-lookup leak no descriptor or source', async () => {
      const before = fdCount();
      const sl = await startSluice(tree.root);
      const port = sl.port;
      const conns = [];
      for (let i = 0; i < 20; i++) {
        const c = await common.rawConnect(port);
        c.socket.write(`GET /k.txt HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\n`);
        conns.push(c);
      }
      for (const c of conns) c.socket.destroy();
      const session = http2.connect(`http://127.0.0.1:${port}`);
      for (let i = 0; i < 20; i++) session.request({ ':path': '/k.txt' }).on('error', () => {}).close();
      session.destroy();
      assert.strictEqual((await raw(port, '/a.txt')).body.toString(), 'hello\n');
      await common.closeServer(sl.server);
      const s = await settled(before + 2);
      assert.strictEqual(s.sources, 0);
      assert.ok(s.fds <= before + 2, `fds ${s.fds} vs ${before}`);
    });
  });

  describe('compression', function () {
    const TEXT = 'static text compresses well. '.repeat(400);
    let dir;
    before(() => {
      dir = path.join(tree.tmp, 'z');
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, 'pc.txt'), TEXT);
      fs.writeFileSync(path.join(dir, 'pc.txt.br'), zlib.brotliCompressSync(TEXT));
      fs.writeFileSync(path.join(dir, 'pc.txt.gz'), zlib.gzipSync(TEXT));
      fs.writeFileSync(path.join(dir, 'old.txt'), TEXT);
      fs.writeFileSync(path.join(dir, 'old.txt.gz'), zlib.gzipSync('stale'));
      const past = new Date(Date.now() - 3600000);
      fs.utimesSync(path.join(dir, 'old.txt.gz'), past, past);
      fs.writeFileSync(path.join(dir, 'big.txt'), TEXT);
      fs.writeFileSync(path.join(dir, 'tiny.txt'), 'tiny\n');
      fs.writeFileSync(path.join(dir, 'img.png'), Buffer.alloc(5000, 1));
    });

    it('precompressed: .br / .gz siblings by Accept-Encoding, not when older, both protocols', async () => {
      const sl = await startSluice(dir, '/', { precompressed: true }, { openFileCache: true });
      const get = (p, ae) => raw(sl.port, p, ae === undefined ? {} : { 'Accept-Encoding': ae });
      for (let round = 0; round < 2; round++) {  // a miss, then cache hits
        let r = await get('/pc.txt', 'gzip, br');
        assert.strictEqual(r.headers['content-encoding'], 'br');
        assert.strictEqual(r.headers.vary, 'Accept-Encoding');
        assert.strictEqual(zlib.brotliDecompressSync(r.body).toString(), TEXT);
        assert.strictEqual(r.headers['content-type'], 'text/plain; charset=utf-8');
        r = await get('/pc.txt', 'br;q=0, gzip');
        assert.strictEqual(r.headers['content-encoding'], 'gzip');
        assert.strictEqual(zlib.gunzipSync(r.body).toString(), TEXT);
        r = await get('/pc.txt');
        assert.strictEqual(r.headers['content-encoding'], undefined);
        assert.strictEqual(r.body.toString(), TEXT);
        assert.strictEqual(r.headers.vary, 'Accept-Encoding');
        r = await get('/old.txt', 'gzip');
        assert.strictEqual(r.headers['content-encoding'], undefined, 'an older sibling is not used');
        assert.strictEqual(r.body.toString(), TEXT);
      }
      const session = await h2.connect(sl.port);
      const r = await h2.request(session, { ':path': '/pc.txt', 'accept-encoding': 'br' });
      assert.strictEqual(r.headers['content-encoding'], 'br');
      assert.strictEqual(zlib.brotliDecompressSync(r.body).toString(), TEXT);
      session.close();
      assert.strictEqual(sl.state.js, 0);
    });

    it('on-the-fly: compressible types per the server\'s compression option, both protocols', async () => {
      const sl = await startSluice(dir, '/', {}, { compression: { encodings: ['gzip', 'br'] } });
      let r = await raw(sl.port, '/big.txt', { 'Accept-Encoding': 'gzip' });
      assert.strictEqual(r.statusCode, 200);
      assert.strictEqual(r.headers['content-encoding'], 'gzip');
      assert.strictEqual(r.headers['content-length'], undefined);
      assert.strictEqual(r.headers['transfer-encoding'], 'chunked');
      assert.strictEqual(r.headers.vary, 'Accept-Encoding');
      assert.strictEqual(zlib.gunzipSync(r.body).toString(), TEXT);
      r = await raw(sl.port, '/big.txt', { 'Accept-Encoding': 'gzip' }, 'HEAD');
      assert.strictEqual(r.headers['content-encoding'], undefined);
      assert.strictEqual(r.headers['content-length'], String(TEXT.length));
      r = await raw(sl.port, '/big.txt', { 'Accept-Encoding': 'gzip', Range: 'bytes=0-9' });
      assert.strictEqual(r.statusCode, 206);
      assert.strictEqual(r.headers['content-encoding'], undefined);
      assert.strictEqual(r.body.toString(), TEXT.slice(0, 10));
      r = await raw(sl.port, '/tiny.txt', { 'Accept-Encoding': 'gzip' });
      assert.strictEqual(r.headers['content-encoding'], undefined, 'below the threshold');
      assert.strictEqual(r.headers.vary, 'Accept-Encoding');
      r = await raw(sl.port, '/img.png', { 'Accept-Encoding': 'gzip' });
      assert.strictEqual(r.headers['content-encoding'], undefined);
      assert.strictEqual(r.headers.vary, undefined);
      assert.strictEqual(r.body.length, 5000);
      const session = await h2.connect(sl.port);
      const h = await h2.request(session, { ':path': '/big.txt', 'accept-encoding': 'br, gzip' });
      assert.strictEqual(h.headers['content-encoding'], 'gzip', 'the server\'s order breaks the tie');
      assert.strictEqual(zlib.gunzipSync(h.body).toString(), TEXT);
      session.close();
      assert.strictEqual(sl.state.js, 0);
    });
  });

  describe('API', function () {
    it('validates its arguments', () => {
      const server = common.trackServer(common.impl.createServer());
      assert.throws(() => server.serveStatic('/', path.join(tree.root, 'nope')), { code: 'ERR_SLUICE_STATIC_ROOT' });
      assert.throws(() => server.serveStatic('/', path.join(tree.root, 'a.txt')), { code: 'ERR_SLUICE_STATIC_ROOT' });
      assert.throws(() => server.serveStatic('/a/../b', tree.root), { code: 'ERR_INVALID_ARG_VALUE' });
      assert.throws(() => server.serveStatic('/', tree.root, { dotfiles: 'maybe' }), { code: 'ERR_INVALID_ARG_VALUE' });
      assert.throws(() => server.serveStatic('/', tree.root, { maxAge: -1 }), { code: 'ERR_INVALID_ARG_VALUE' });
      assert.throws(() => server.serveStatic('/', tree.root, { redirect: true }), { code: 'ERR_INVALID_ARG_VALUE' });
      assert.throws(() => server.serveStatic(1, tree.root), { code: 'ERR_INVALID_ARG_TYPE' });
      assert.strictEqual(server.serveStatic('/ok', tree.root), server);
    });
  });
});
