'use strict';

// sluice.serveStatic(root[, options]): the (req, res, next) middleware
// (docs/files.md "The serveStatic middleware"). It runs where the
// application mounts it, answers hits from the native static machinery and
// calls next() on a miss. The reference is the same Express app with
// express.static (serve-static) mounted the same way, served by node:http:
// the traversal and conditional/range tables (test/files/static_tree.js)
// are compared row by row. The middleware serves only sluice requests:
// these tests are sluice-only (each starts its node:http reference itself).

const fs = require('node:fs');
const path = require('node:path');
const http = require('node:http');
const http2 = require('node:http2');
const onFinished = require('on-finished');
const morgan = require('morgan');
const Koa = require('koa');
const common = require('../common');
const h2 = require('../http2/h2common');
const { assert } = common;
const { fdCount, settled } = require('./settled');
const { BODY_1000, makeTree, raw, TRAVERSAL_ROWS, conditionalRows } = require('./static_tree');

const describeSluice = common.isSluice ? describe : describe.skip;
const sluice = common.isSluice ? require('../..') : null;

const EXPRESSES = { 'Express 4': require('express4'), 'Express 5': require('express5') };

// An Express app: a logger (on-finished) and an auth check in front of
// `files` mounted at `prefix`, a route behind it, and an error handler
// answering err.status with err.headers (as Express's final handler).
function makeApp(express, files, prefix = '/') {
  const app = express();
  const log = [];
  app.use((req, res, next) => {
    onFinished(res, () => log.push(`${req.method} ${req.originalUrl} ${res.statusCode}`));
    next();
  });
  app.use((req, res, next) => {
    if (req.headers['x-deny']) {
      res.statusCode = 401;
      res.end('denied');
      return;
    }
    next();
  });
  app.use(prefix, files);
  app.get('/static/dyn', (req, res) => res.send('dynamic'));
  app.use((req, res) => {
    res.statusCode = 404;
    res.end('miss');
  });
  // eslint-disable-next-line no-unused-vars
  app.use((err, req, res, next) => {
    res.statusCode = err.status || 500;
    if (err.headers) for (const k of Object.keys(err.headers)) res.setHeader(k, err.headers[k]);
    // The status, and sluice's own codes (a miss's error is not send's fs
    // error: docs/files.md).
    res.end(`refused ${err.status || 500}${/^ERR_/.test(err.code) ? ` ${err.code}` : ''}`);
  });
  return { app, log };
}

// Express 4's serve-static (send 0.x) spells the charset "UTF-8", 5's
// "utf-8" (as sluice): the same type.
function sameCase(v) {
  return typeof v === 'string' ? v.replace(/charset=UTF-8/, 'charset=utf-8') : v;
}

async function startSluiceApp(app, serverOptions = {}) {
  const server = sluice.createServer(serverOptions, app);
  const port = await common.listenLocal(server);
  return { server, port };
}

async function startNodeApp(app) {
  const server = http.createServer(app);
  const port = await common.listenLocal(server);
  return { server, port };
}

describeSluice('serveStatic middleware', function () {
  this.timeout(60000);
  let tree;
  before(() => { tree = makeTree(); });
  after(() => fs.rmSync(tree.tmp, { recursive: true, force: true }));
  afterEach(() => common.cleanup());

  for (const [name, express] of Object.entries(EXPRESSES)) {
    describe(name, function () {
      it('serves hits, falls through on misses, runs after auth, finishes for loggers', async () => {
        const { app, log } = makeApp(express, sluice.serveStatic(tree.root), '/static');
        const sl = await startSluiceApp(app);
        const hit = await common.httpRequest(sl.port, { path: '/static/a.txt' });
        assert.strictEqual(hit.statusCode, 200);
        assert.strictEqual(hit.body.toString(), 'hello\n');
        assert.strictEqual(hit.headers['content-type'], 'text/plain; charset=utf-8');
        assert.strictEqual(hit.headers['content-length'], '6');
        assert.ok(hit.headers.etag && hit.headers['last-modified']);
        const dyn = await common.httpRequest(sl.port, { path: '/static/dyn' });
        assert.strictEqual(dyn.body.toString(), 'dynamic');
        const miss = await common.httpRequest(sl.port, { path: '/static/nope.txt' });
        assert.strictEqual(miss.statusCode, 404);
        assert.strictEqual(miss.body.toString(), 'miss');
        const denied = await common.httpRequest(sl.port, { path: '/static/a.txt', headers: { 'x-deny': '1' } });
        assert.strictEqual(denied.statusCode, 401);
        assert.strictEqual(denied.body.toString(), 'denied');
        const post = await common.httpRequest(sl.port, { path: '/static/a.txt', method: 'POST' });
        assert.strictEqual(post.body.toString(), 'miss');  // other methods: next()
        const idx = await common.httpRequest(sl.port, { path: '/static/dir/' });
        assert.strictEqual(idx.body.toString(), '<h1>index</h1>\n');
        const head = await common.httpRequest(sl.port, { path: '/static/k.txt', method: 'HEAD' });
        assert.strictEqual(head.headers['content-length'], '1000');
        await common.sleep(20);
        assert.deepStrictEqual(log, [
          'GET /static/a.txt 200', 'GET /static/dyn 200', 'GET /static/nope.txt 404',
          'GET /static/a.txt 401', 'POST /static/a.txt 404', 'GET /static/dir/ 200',
          'HEAD /static/k.txt 200',
        ]);
      });

      it('morgan logs the status and length of a hit', async () => {
        const lines = [];
        const app = express();
        app.use(morgan(':method :url :status :res[content-length]', {
          stream: { write: (l) => lines.push(l.trim()) },
        }));
        app.use(sluice.serveStatic(tree.root));
        const sl = await startSluiceApp(app);
        const r = await common.httpRequest(sl.port, { path: '/k.txt', headers: { range: 'bytes=0-9' } });
        assert.strictEqual(r.statusCode, 206);
        assert.strictEqual(r.body.toString(), BODY_1000.subarray(0, 10).toString());
        await common.sleep(20);
        assert.deepStrictEqual(lines, ['GET /k.txt 206 10']);
      });

      it('the answer is native: the body never goes through res.write / res.end', async () => {
        const app = express();
        const calls = [];
        const states = [];
        app.use((req, res, next) => {
          res.write = () => { calls.push('write'); return true; };
          const end = res.end;
          res.end = function (...args) {
            calls.push('end');
            return end.apply(this, args);
          };
          res.on('finish', () => states.push(['finish', res.headersSent, res.statusCode, res.writableEnded]));
          res.on('close', () => states.push(['close']));
          next();
        });
        app.use(sluice.serveStatic(tree.root));
        const sl = await startSluiceApp(app);
        const r = await common.httpRequest(sl.port, { path: '/k.txt' });
        assert.strictEqual(Buffer.compare(r.body, BODY_1000), 0);
        await common.sleep(20);
        assert.deepStrictEqual(calls, []);
        assert.deepStrictEqual(states, [['finish', true, 200, true], ['close']]);
      });

      it('never serves what express.static refuses (traversal table)', async () => {
        const sl = await startSluiceApp(makeApp(express, sluice.serveStatic(tree.root, { fallthrough: false })).app);
        const ref = await startNodeApp(makeApp(express, express.static(tree.root, { fallthrough: false })).app);
        const report = [];
        for (const target of TRAVERSAL_ROWS) {
          const a = await raw(sl.port, target);
          const b = await raw(ref.port, target);
          report.push(`${target}: sluice ${a.statusCode} express.static ${b.statusCode}`);
          const body = a.body.toString('latin1');
          assert.ok(!body.includes('TOP-SECRET'), `${target} leaked the secret: ${report.join('\n')}`);
          if (a.statusCode === 200) {
            assert.strictEqual(b.statusCode, 200, `served what express.static refused: ${target}`);
            assert.strictEqual(body, b.body.toString('latin1'), target);
          }
        }
        // The refusals reach the error handler with their status, as
        // serve-static's (fallthrough: false).
        assert.strictEqual((await raw(sl.port, '/%2e%2e/secret.txt')).statusCode, 403);
        assert.strictEqual((await raw(sl.port, '/escape')).statusCode, 403);
        assert.strictEqual((await raw(sl.port, '/a.txt%00')).statusCode, 400);
        assert.strictEqual((await raw(sl.port, '/nope')).statusCode, 404);
        // With fallthrough (the default) they are misses: next().
        const ft = await startSluiceApp(makeApp(express, sluice.serveStatic(tree.root)).app);
        assert.strictEqual((await raw(ft.port, '/%2e%2e/secret.txt')).body.toString(), 'miss');
        assert.strictEqual((await raw(ft.port, '/escape')).body.toString(), 'miss');
      });

      it('answers the conditional and range table as express.static', async () => {
        const sl = await startSluiceApp(makeApp(express, sluice.serveStatic(tree.root, { fallthrough: false })).app);
        const ref = await startNodeApp(makeApp(express, express.static(tree.root, { fallthrough: false })).app);
        const name = '/k.txt';
        const base = await raw(ref.port, name);
        for (const h of conditionalRows(base.headers.etag, base.headers['last-modified'])) {
          for (const method of ['GET', 'HEAD']) {
            const a = await raw(sl.port, name, h, method);
            const b = await raw(ref.port, name, h, method);
            const what = `${method} ${JSON.stringify(h)}`;
            assert.strictEqual(a.statusCode, b.statusCode, what);
            // A refusal (412, 416) is the error handler's answer, with the
            // fields send had set on res before it refused.
            const fields = ['content-length', 'content-range', 'content-type', 'etag',
              'last-modified', 'accept-ranges', 'cache-control'];
            for (const field of fields) {
              assert.strictEqual(sameCase(a.headers[field]), sameCase(b.headers[field]), `${what}: ${field}`);
            }
            assert.strictEqual(a.body.toString('latin1'), b.body.toString('latin1'), what);
          }
        }
      });

      it('options as serve-static: maxAge, immutable, redirect, fallthrough, headers set before', async () => {
        const opts = { maxAge: 86400000, immutable: true };
        const sl = await startSluiceApp(makeApp(express, sluice.serveStatic(tree.root, opts), '/static').app);
        const ref = await startNodeApp(makeApp(express, express.static(tree.root, opts), '/static').app);
        for (const target of ['/static/a.txt', '/static/dir', '/static/dir?x=1', '/static', '/static/noindex/']) {
          const a = await raw(sl.port, target);
          const b = await raw(ref.port, target);
          assert.strictEqual(a.statusCode, b.statusCode, target);
          for (const field of ['location', 'cache-control', 'content-type', 'content-length']) {
            assert.strictEqual(sameCase(a.headers[field]), sameCase(b.headers[field]), `${target}: ${field}`);
          }
          assert.strictEqual(a.body.toString(), b.body.toString(), target);
        }
        const noRedirect = await startSluiceApp(
          makeApp(express, sluice.serveStatic(tree.root, { redirect: false }), '/static').app);
        assert.strictEqual((await raw(noRedirect.port, '/static/dir')).body.toString(), 'miss');
        const app = express();
        app.use((req, res, next) => {
          res.setHeader('Content-Type', 'text/x-mine');
          next();
        });
        app.use(sluice.serveStatic(tree.root, { fallthrough: false }));
        app.post('/a.txt', (req, res) => res.end('posted'));
        const own = await startSluiceApp(app);
        assert.strictEqual((await raw(own.port, '/a.txt')).headers['content-type'], 'text/x-mine');
        const post = await raw(own.port, '/a.txt', {}, 'POST');
        assert.strictEqual(post.statusCode, 405);  // as serve-static without fallthrough
        assert.strictEqual(post.headers.allow, 'GET, HEAD');
      });
    });
  }

  // serve-static's options, each set in the same Express app as
  // express.static on node:http and as sluice.serveStatic on sluice: every
  // request must get the same status, the same fields and the same body.
  describe('serve-static options against express.static', function () {
    const FIELDS = ['content-type', 'content-length', 'content-range', 'etag', 'last-modified',
      'accept-ranges', 'cache-control', 'location', 'allow', 'x-path', 'x-size', 'x-mtime',
      'x-isfile'];
    let etagA;
    before(() => {
      const r = tree.root;
      fs.mkdirSync(path.join(r, 'dir2'));
      fs.writeFileSync(path.join(r, 'dir2', 'default.htm'), '<p>default</p>\n');
      fs.writeFileSync(path.join(r, 'dir2', 'index.html'), '<p>dir2 index</p>\n');
      fs.mkdirSync(path.join(r, 'dir3'));
      fs.writeFileSync(path.join(r, 'dir3', 'index.html'), '<p>dir3 index</p>\n');
      fs.mkdirSync(path.join(r, 'dir4', 'default.htm'), { recursive: true });
      fs.writeFileSync(path.join(r, 'dir4', 'index.html'), '<p>dir4 index</p>\n');
      fs.mkdirSync(path.join(r, 'about.html'));
      fs.writeFileSync(path.join(r, 'about.htm'), '<p>about</p>\n');
      fs.writeFileSync(path.join(r, 'sub.html'), '<p>not the directory</p>\n');
      fs.mkdirSync(path.join(r, '.hidden'));
      fs.writeFileSync(path.join(r, '.hidden', 'x.txt'), 'hidden\n');
      // A fixed mtime: the ETag below is known before the servers start.
      const t = new Date('2026-01-02T03:04:05.000Z');
      fs.utimesSync(path.join(r, 'a.txt'), t, t);
      etagA = `W/"6-${t.getTime().toString(16)}"`;
    });

    // [title, options (or a function of the root giving them), requests:
    // [target, headers, method]]
    const CASES = [
      ['index as a list: the first that is a file', { index: ['default.htm', 'index.html'] },
        [['/dir2/'], ['/dir3/'], ['/dir4/'], ['/noindex/'], ['/dir2'], ['/dir2/', {}, 'HEAD']]],
      ['index as a string', { index: 'default.htm' }, [['/dir2/'], ['/dir3/'], ['/dir4/']]],
      ['index false', { index: false }, [['/dir/'], ['/dir'], ['/a.txt']]],
      ['extensions', { extensions: ['html', 'htm', 'txt'] },
        [['/page'], ['/page.html'], ['/about'], ['/k'], ['/sub/b'], ['/a'], ['/nope'],
          ['/page.x'], ['/sub'], ['/k', { Range: 'bytes=0-4' }], ['/k', {}, 'HEAD']]],
      ['extensions as a string', { extensions: 'txt' }, [['/k'], ['/page']]],
      ['maxAge as a duration string', { maxAge: '1d' }, [['/a.txt'], ['/dir/']]],
      ['maxAge as hours, immutable', { maxAge: '2 hours', immutable: true }, [['/a.txt']]],
      ['maxage (serve-static spelling)', { maxage: 5500 }, [['/a.txt']]],
      ['maxAge capped at a year', { maxAge: '5y' }, [['/a.txt']]],
      ['setHeaders', (root) => ({
        setHeaders(res, p, stat) {
          res.setHeader('X-Path', p.slice(root.length));
          res.setHeader('X-Size', String(stat.size));
          res.setHeader('X-Mtime', stat.mtime.toUTCString());
          res.setHeader('X-Isfile', String(stat.isFile()));
          if (p.endsWith('.txt')) res.setHeader('Cache-Control', 'no-store');
          if (p.endsWith('.html')) res.setHeader('Content-Type', 'text/x-page');
        },
        extensions: ['html'],
      }), [['/a.txt'], ['/k.txt', { Range: 'bytes=2-5' }], ['/dir/'], ['/page'], ['/nope'],
        ['/a.txt', { 'If-None-Match': () => etagA }], ['/a.txt', { 'If-Match': '"x"' }],
        ['/k.txt', { Range: 'bytes=5000-' }], ['/page.html', { 'If-Modified-Since': 'Fri, 01 Jan 2100 00:00:00 GMT' }],
        ['/a.txt', {}, 'HEAD']]],
      ['setHeaders replacing the validators', {
        setHeaders(res) {
          res.setHeader('ETag', '"mine"');
          res.setHeader('Last-Modified', 'Mon, 01 Jan 2001 00:00:00 GMT');
        },
      }, [['/a.txt'], ['/a.txt', { 'If-None-Match': '"mine"' }], ['/a.txt', { 'If-None-Match': () => etagA }],
        ['/a.txt', { 'If-Match': '"mine"' }], ['/a.txt', { 'If-Match': () => etagA }],
        ['/a.txt', { 'If-Modified-Since': 'Tue, 02 Jan 2001 00:00:00 GMT' }],
        ['/k.txt', { Range: 'bytes=0-1', 'If-Range': '"mine"' }],
        ['/k.txt', { Range: 'bytes=0-1', 'If-Range': () => etagA }]]],
      ['etag false', { etag: false }, [['/a.txt'], ['/a.txt', { 'If-None-Match': () => etagA }],
        ['/a.txt', { 'If-Match': () => etagA }]]],
      ['lastModified false', { lastModified: false },
        [['/a.txt'], ['/a.txt', { 'If-Modified-Since': 'Fri, 01 Jan 2100 00:00:00 GMT' }]]],
      ['acceptRanges false', { acceptRanges: false }, [['/k.txt', { Range: 'bytes=0-4' }]]],
      ['cacheControl false', { cacheControl: false, maxAge: '1d' }, [['/a.txt']]],
      ['dotfiles allow', { dotfiles: 'allow' }, [['/.env'], ['/.hidden/x.txt']]],
      ['dotfiles deny', { dotfiles: 'deny' }, [['/.env'], ['/.hidden/x.txt'], ['/a.txt']]],
      ['dotfiles ignore', { dotfiles: 'ignore' }, [['/.env'], ['/.hidden/x.txt']]],
      ['redirect false', { redirect: false }, [['/dir'], ['/dir/']]],
      ['fallthrough (default): refusals after the file is found reach the error handler', {},
        [['/a.txt', { 'If-Match': '"x"' }], ['/k.txt', { Range: 'bytes=5000-' }],
          ['/nope'], ['/%2e%2e/secret.txt'], ['/a.txt', {}, 'POST']]],
      ['fallthrough false', { fallthrough: false },
        [['/nope'], ['/.env'], ['/%2e%2e/secret.txt'], ['/a.txt%00'], ['/a.txt', {}, 'POST'],
          ['/a.txt', { 'If-Unmodified-Since': 'Mon, 01 Jan 2001 00:00:00 GMT' }],
          ['/k.txt', { Range: 'bytes=5000-' }]]],
      ['fallthrough false, redirect false', { fallthrough: false, redirect: false }, [['/dir'], ['/noindex/']]],
    ];

    for (const [name, express] of Object.entries(EXPRESSES)) {
      for (const [title, options, requests] of CASES) {
        it(`${name}: ${title}`, async () => {
          const opts = typeof options === 'function' ? options(tree.root) : options;
          const sl = await startSluiceApp(makeApp(express, sluice.serveStatic(tree.root, opts)).app);
          const ref = await startNodeApp(makeApp(express, express.static(tree.root, opts)).app);
          for (const [target, headers = {}, method = 'GET'] of requests) {
            const h = {};
            for (const k of Object.keys(headers)) h[k] = typeof headers[k] === 'function' ? headers[k]() : headers[k];
            const a = await raw(sl.port, target, h, method);
            const b = await raw(ref.port, target, h, method);
            const what = `${method} ${target} ${JSON.stringify(h)}`;
            assert.strictEqual(a.statusCode, b.statusCode, what);
            for (const field of FIELDS) {
              assert.strictEqual(sameCase(a.headers[field]), sameCase(b.headers[field]), `${what}: ${field}`);
            }
            assert.strictEqual(a.body.toString('latin1'), b.body.toString('latin1'), what);
          }
        });
      }
    }

    it('the native mount takes index and extensions too', async () => {
      const server = sluice.createServer((req, res) => { res.statusCode = 404; res.end('js'); });
      server.serveStatic('/', tree.root, { index: ['default.htm', 'index.html'], extensions: ['html', 'htm'] });
      const port = await common.listenLocal(server);
      assert.strictEqual((await raw(port, '/dir2/')).body.toString(), '<p>default</p>\n');
      assert.strictEqual((await raw(port, '/dir4/')).body.toString(), '<p>dir4 index</p>\n');
      assert.strictEqual((await raw(port, '/about')).body.toString(), '<p>about</p>\n');
      assert.strictEqual((await raw(port, '/nope')).body.toString(), 'js');
      assert.throws(() => server.serveStatic('/x', tree.root, { setHeaders() {} }), { code: 'ERR_INVALID_ARG_VALUE' });
    });

    it('setHeaders that throws: next(err), nothing sent, no descriptor left', async () => {
      const before = fdCount();
      const app = EXPRESSES['Express 5']();
      const boom = new Error('boom');
      app.use(sluice.serveStatic(tree.root, { setHeaders() { throw boom; } }));
      // eslint-disable-next-line no-unused-vars
      app.use((err, req, res, next) => { res.statusCode = 500; res.end(err === boom ? 'caught' : 'other'); });
      const sl = await startSluiceApp(app);
      for (let i = 0; i < 3; i++) {
        const r = await raw(sl.port, '/k.txt');
        assert.strictEqual(r.statusCode, 500);
        assert.strictEqual(r.body.toString(), 'caught');
      }
      await common.closeServer(sl.server);
      const st = await settled(before + 2);
      assert.strictEqual(st.sources, 0);
    });

    it('koaServeStatic takes the same options', async () => {
      const app = new Koa();
      app.use(sluice.koaServeStatic(tree.root, {
        extensions: ['html'], maxAge: '1h', setHeaders: (res) => res.setHeader('X-Koa', '1'),
      }));
      app.use((ctx) => { ctx.body = 'koa-miss'; });
      const sl = await startSluiceApp(app.callback());
      const r = await raw(sl.port, '/page');
      assert.strictEqual(r.body.toString(), '<p>page</p>\n');
      assert.strictEqual(r.headers['cache-control'], 'public, max-age=3600');
      assert.strictEqual(r.headers['x-koa'], '1');
      assert.strictEqual((await raw(sl.port, '/nope')).body.toString(), 'koa-miss');
    });
  });

  it('HTTP/2 compat: hits, ranges, 304, HEAD and misses through Express', async () => {
    const { app, log } = makeApp(EXPRESSES['Express 5'], sluice.serveStatic(tree.root), '/static');
    const sl = await startSluiceApp(app);
    const session = await h2.connect(sl.port);
    const r = await h2.request(session, { ':path': '/static/k.txt' });
    assert.strictEqual(r.headers[':status'], 200);
    assert.strictEqual(Buffer.compare(r.body, BODY_1000), 0);
    assert.strictEqual(r.headers['content-length'], '1000');
    const range = await h2.request(session, { ':path': '/static/k.txt', range: 'bytes=-10' });
    assert.strictEqual(range.headers[':status'], 206);
    assert.strictEqual(range.body.toString(), BODY_1000.subarray(990).toString());
    const nm = await h2.request(session, { ':path': '/static/k.txt', 'if-none-match': r.headers.etag });
    assert.strictEqual(nm.headers[':status'], 304);
    assert.strictEqual(nm.body.length, 0);
    const head = await h2.request(session, { ':path': '/static/a.txt', ':method': 'HEAD' });
    assert.strictEqual(head.headers['content-length'], '6');
    assert.strictEqual(head.body.length, 0);
    const miss = await h2.request(session, { ':path': '/static/dyn' });
    assert.strictEqual(miss.body.toString(), 'dynamic');
    session.close();
    await common.sleep(20);
    assert.deepStrictEqual(log, ['GET /static/k.txt 200', 'GET /static/k.txt 206',
      'GET /static/k.txt 304', 'HEAD /static/a.txt 200', 'GET /static/dyn 200']);
  });

  it('keep-alive and pipelining go on after middleware hits, in order', async () => {
    const { app } = makeApp(EXPRESSES['Express 4'], sluice.serveStatic(tree.root), '/static');
    const sl = await startSluiceApp(app, { openFileCache: true });
    const c = await common.rawConnect(sl.port);
    const req = (p) => `GET ${p} HTTP/1.1\r\nHost: x\r\n\r\n`;
    c.socket.write(req('/static/a.txt') + req('/static/dyn') + req('/static/k.txt') +
      req('/static/nope') + req('/static/a.txt') + 'GET /static/sub/b.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    const chunks = [];
    c.socket.on('data', (d) => chunks.push(d));
    await common.once(c.socket, 'close', 5000, 'close');
    const all = common.parseAll(Buffer.concat(chunks));
    assert.deepStrictEqual(all.map((m) => m.body.toString().slice(0, 7)),
      ['hello\n', 'dynamic', BODY_1000.subarray(0, 7).toString(), 'miss', 'hello\n', 'bee\n']);
    assert.deepStrictEqual(all.map((m) => m.statusCode), [200, 200, 200, 404, 200, 200]);
  });

  it('clients that leave mid-lookup leak no descriptor or source', async () => {
    const before = fdCount();
    const { app } = makeApp(EXPRESSES['Express 5'], sluice.serveStatic(tree.root));
    const sl = await startSluiceApp(app);
    const conns = [];
    for (let i = 0; i < 20; i++) {
      const c = await common.rawConnect(sl.port);
      c.socket.write('GET /k.txt HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\n');
      conns.push(c);
    }
    for (const c of conns) c.socket.destroy();
    const session = http2.connect(`http://127.0.0.1:${sl.port}`);
    for (let i = 0; i < 20; i++) session.request({ ':path': '/k.txt' }).on('error', () => {}).close();
    session.destroy();
    assert.strictEqual((await raw(sl.port, '/a.txt')).body.toString(), 'hello\n');
    await common.closeServer(sl.server);
    const s = await settled(before + 2);
    assert.strictEqual(s.sources, 0);
    assert.ok(s.fds <= before + 2, `fds ${s.fds} vs ${before}`);
  });

  it('uses the server\'s openFileCache and compression as respondWithFile does', async () => {
    const text = 'static text compresses well. '.repeat(400);
    fs.writeFileSync(path.join(tree.root, 'big.txt'), text);
    const app = EXPRESSES['Express 5']();
    app.use(sluice.serveStatic(tree.root));
    const sl = await startSluiceApp(app, { openFileCache: true, compression: true });
    const hitsBefore = sluice.openFileCacheStats().hits;
    for (let i = 0; i < 3; i++) {
      const r = await common.httpRequest(sl.port, { path: '/big.txt', headers: { 'accept-encoding': 'gzip' } });
      assert.strictEqual(r.headers['content-encoding'], 'gzip');
      assert.strictEqual(require('node:zlib').gunzipSync(r.body).toString(), text);
      assert.match(r.headers.vary, /Accept-Encoding/i);
    }
    assert.ok(sluice.openFileCacheStats().hits > hitsBefore);
  });

  it('a request of another server gets ERR_SLUICE_STATIC_NOT_SLUICE via next(err)', async () => {
    const { app } = makeApp(EXPRESSES['Express 5'], sluice.serveStatic(tree.root));
    const ref = await startNodeApp(app);
    const r = await raw(ref.port, '/a.txt');
    assert.strictEqual(r.statusCode, 500);
    assert.strictEqual(r.body.toString(), 'refused 500 ERR_SLUICE_STATIC_NOT_SLUICE');
  });

  it('Koa: koaServeStatic serves hits and awaits next() on misses', async () => {
    const app = new Koa();
    const seen = [];
    app.use(async (ctx, next) => {
      await next();
      seen.push(`${ctx.path} ${ctx.res.statusCode}`);
    });
    app.use(sluice.koaServeStatic(tree.root));
    app.use((ctx) => { ctx.body = 'koa-miss'; });
    const sl = await startSluiceApp(app.callback());
    const hit = await common.httpRequest(sl.port, { path: '/a.txt' });
    assert.strictEqual(hit.body.toString(), 'hello\n');
    const miss = await common.httpRequest(sl.port, { path: '/nope' });
    assert.strictEqual(miss.body.toString(), 'koa-miss');
    assert.deepStrictEqual(seen, ['/a.txt 200', '/nope 200']);
  });

  it('validates its arguments', () => {
    assert.throws(() => sluice.serveStatic(path.join(tree.root, 'nope')), { code: 'ERR_SLUICE_STATIC_ROOT' });
    assert.throws(() => sluice.serveStatic(path.join(tree.root, 'a.txt')), { code: 'ERR_SLUICE_STATIC_ROOT' });
    assert.throws(() => sluice.serveStatic(1), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => sluice.serveStatic(tree.root, { fallthrough: 'yes' }), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => sluice.serveStatic(tree.root, { setHeaders: 1 }), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => sluice.serveStatic(tree.root, { maxAge: '1 fortnight' }), { code: 'ERR_INVALID_ARG_VALUE' });
    assert.throws(() => sluice.serveStatic(tree.root, { maxAge: -1 }), { code: 'ERR_INVALID_ARG_VALUE' });
    assert.throws(() => sluice.serveStatic(tree.root, { index: 1 }), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => sluice.serveStatic(tree.root, { index: ['../x.html'] }), { code: 'ERR_INVALID_ARG_VALUE' });
    assert.throws(() => sluice.serveStatic(tree.root, { index: ['/x.html'] }), { code: 'ERR_INVALID_ARG_VALUE' });
    assert.throws(() => sluice.serveStatic(tree.root, { extensions: ['a/b'] }), { code: 'ERR_INVALID_ARG_VALUE' });
    assert.throws(() => sluice.serveStatic(tree.root, { extensions: [1] }), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => sluice.serveStatic(tree.root, { start: 1 }), { code: 'ERR_INVALID_ARG_VALUE' });
    assert.strictEqual(typeof sluice.serveStatic(tree.root), 'function');
    assert.strictEqual(sluice.serveStatic(tree.root).length, 3);
  });
});
