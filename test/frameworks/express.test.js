'use strict';

// Express 4 and 5, unmodified, with the middleware people use, on node:http
// and on sluice: the same app, the same checks, real clients.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');
const crypto = require('node:crypto');
const { Writable } = require('node:stream');
const common = require('../common');
const { assert } = common;
const { forEachServer, listen, get, nodeGet, h2request, gunzip, sluice } = require('./helpers');

const STATIC_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-express-'));
const FILE = Buffer.alloc(100000);
for (let i = 0; i < FILE.length; i++) FILE[i] = (i * 7 + 3) & 0xff;
fs.writeFileSync(path.join(STATIC_DIR, 'data.bin'), FILE);
fs.writeFileSync(path.join(STATIC_DIR, 'index.html'), '<h1>index</h1>');
after(() => fs.rmSync(STATIC_DIR, { recursive: true, force: true }));

const sha = (b) => crypto.createHash('sha256').update(b).digest('hex');

// The app every check below talks to. `log` collects morgan lines and
// on-finished calls.
function buildApp(express, log) {
  const multer = require('multer');
  const compression = require('compression');
  const cookieParser = require('cookie-parser');
  const session = require('express-session');
  const cors = require('cors');
  const helmet = require('helmet');
  const morgan = require('morgan');
  const responseTime = require('response-time');
  const onFinished = require('on-finished');
  const serveStatic = require('serve-static');
  const send = require('send');

  const app = express();
  app.use(morgan(':method :url :status :res[content-length]', {
    stream: new Writable({ write(c, e, cb) { log.morgan.push(String(c).trim()); cb(); } }),
  }));
  app.use(responseTime());
  app.use((req, res, next) => {
    onFinished(res, () => log.finished.push(req.url));
    next();
  });

  app.get('/hello', (req, res) => res.send(`hello ${req.query.name}`));
  app.get('/json', (req, res) => res.status(201).json({ ok: true, ip: typeof req.ip }));
  app.get('/redirect', (req, res) => res.redirect('/hello?name=r'));
  app.get('/error', () => { throw new Error('boom'); });
  app.get('/instance', (req, res) => res.json({
    req: req instanceof http.IncomingMessage,
    res: res instanceof http.ServerResponse,
    hostname: req.hostname,
    protocol: req.protocol,
    fresh: req.fresh,
  }));

  app.post('/json', express.json({ limit: '2mb' }), (req, res) => {
    res.json({ keys: Object.keys(req.body).length, a: req.body.a });
  });
  app.post('/form', express.urlencoded({ extended: false }), (req, res) => res.json(req.body));
  app.post('/raw', express.raw({ type: '*/*', limit: '4mb' }), (req, res) => {
    res.type('text').send(`${req.body.length} ${sha(req.body)}`);
  });
  app.post('/text', express.text(), (req, res) => res.send(req.body.toUpperCase()));
  app.post('/small', express.json({ limit: 100 }), (req, res) => res.send('unreachable'));

  const upload = multer({ storage: multer.memoryStorage() });
  app.post('/upload', upload.single('file'), (req, res) => {
    res.json({ field: req.body.field, name: req.file.originalname,
      size: req.file.size, sha: sha(req.file.buffer) });
  });

  app.use('/gz', compression({ threshold: 0 }));
  app.get('/gz/text', (req, res) => res.type('text').send('z'.repeat(20000)));
  app.get('/gz/stream', (req, res) => {
    res.type('text');
    res.write('a'.repeat(10000));
    setImmediate(() => res.end('b'.repeat(10000)));
  });

  app.use('/static', express.static(STATIC_DIR));
  app.use('/ss', serveStatic(STATIC_DIR, { index: false }));
  app.get('/send', (req, res) => send(req, 'data.bin', { root: STATIC_DIR }).pipe(res));
  app.get('/sendfile', (req, res) => res.sendFile(path.join(STATIC_DIR, 'data.bin')));

  app.use('/s', cookieParser('secret'), session({
    secret: 'secret', resave: false, saveUninitialized: false,
  }));
  app.get('/s/count', (req, res) => {
    req.session.n = (req.session.n || 0) + 1;
    res.json({ n: req.session.n, signed: req.signedCookies });
  });

  app.use('/cors', cors({ origin: 'http://example.test', credentials: true }));
  app.get('/cors/x', (req, res) => res.send('cors'));
  app.get('/helmet', helmet(), (req, res) => res.send('safe'));

  const sub = express();
  sub.get('/where', (req, res) => res.json({ base: req.baseUrl, path: req.path }));
  app.use('/sub', sub);

  const router = express.Router();
  router.get('/:id', (req, res) => res.send(`item ${req.params.id}`));
  app.use('/items', router);

  // eslint-disable-next-line no-unused-vars
  app.use((err, req, res, next) => {
    res.status(err.status || 500).send(`handled ${err.message}`);
  });
  return app;
}

for (const [label, mod] of [['Express 4', 'express4'], ['Express 5', 'express5']]) {
  forEachServer(label, (impl) => {
    const express = require(mod);
    let base;
    let log;

    beforeEach(async () => {
      log = { morgan: [], finished: [] };
      base = await listen(impl.createServer(buildApp(express, log)));
    });

    it('routes, query, json, redirect, 404 and the error handler', async () => {
      let r = await get(`${base}/hello?name=x`);
      assert.strictEqual(r.status, 200);
      assert.strictEqual(r.text, 'hello x');
      assert.strictEqual(r.headers.get('x-powered-by'), 'Express');
      assert.match(r.headers.get('etag'), /^W\/"/);
      assert.match(r.headers.get('x-response-time'), /ms$/);
      r = await get(`${base}/json`);
      assert.strictEqual(r.status, 201);
      assert.deepStrictEqual(JSON.parse(r.text), { ok: true, ip: 'string' });
      r = await get(`${base}/redirect`, { redirect: 'manual' });
      assert.strictEqual(r.status, 302);
      assert.strictEqual(r.headers.get('location'), '/hello?name=r');
      r = await get(`${base}/nope`);
      assert.strictEqual(r.status, 404);
      assert.match(r.text, /Cannot GET \/nope/);
      r = await get(`${base}/error`);
      assert.strictEqual(r.status, 500);
      assert.strictEqual(r.text, 'handled boom');
      r = await get(`${base}/sub/where`);
      assert.deepStrictEqual(JSON.parse(r.text), { base: '/sub', path: '/where' });
      r = await get(`${base}/items/42`);
      assert.strictEqual(r.text, 'item 42');
    });

    it('req/res are node IncomingMessage/ServerResponse; 304 from req.fresh', async () => {
      let r = await get(`${base}/instance`);
      assert.deepStrictEqual(JSON.parse(r.text),
        { req: true, res: true, hostname: '127.0.0.1', protocol: 'http', fresh: false });
      r = await get(`${base}/hello?name=e`);
      const etag = r.headers.get('etag');
      r = await nodeGet(`${base}/hello?name=e`, { 'if-none-match': etag });
      assert.strictEqual(r.status, 304);
      assert.strictEqual(r.body.length, 0);
    });

    it('body parsers: json (1 MiB), urlencoded, raw, text, limit -> 413', async () => {
      const big = {};
      for (let i = 0; i < 20000; i++) big[`k${i}`] = 'v'.repeat(40);
      big.a = 'A';
      let r = await get(`${base}/json`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(big),
      });
      assert.strictEqual(r.status, 200);
      assert.deepStrictEqual(JSON.parse(r.text), { keys: 20001, a: 'A' });
      r = await get(`${base}/form`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1&b=two',
      });
      assert.deepStrictEqual(JSON.parse(r.text), { a: '1', b: 'two' });
      const raw = crypto.randomBytes(3 * 1024 * 1024);
      r = await get(`${base}/raw`, {
        method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: raw,
      });
      assert.strictEqual(r.text, `${raw.length} ${sha(raw)}`);
      r = await get(`${base}/text`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'shout' });
      assert.strictEqual(r.text, 'SHOUT');
      r = await get(`${base}/small`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ x: 'y'.repeat(500) }),
      });
      assert.strictEqual(r.status, 413);
      // The connection still serves the next request.
      r = await get(`${base}/hello?name=after`);
      assert.strictEqual(r.text, 'hello after');
    });

    it('multer: multipart upload', async () => {
      const file = crypto.randomBytes(700000);
      const form = new FormData();
      form.append('field', 'value');
      form.append('file', new Blob([file]), 'f.bin');
      const r = await get(`${base}/upload`, { method: 'POST', body: form });
      assert.strictEqual(r.status, 200);
      assert.deepStrictEqual(JSON.parse(r.text),
        { field: 'value', name: 'f.bin', size: file.length, sha: sha(file) });
    });

    it('compression: gzip of send() and of a streamed body', async () => {
      for (const p of ['/gz/text', '/gz/stream']) {
        const r = await common.curl(['-D', '-', '-H', 'accept-encoding: gzip', `${base}${p}`]);
        const text = r.stdout.toString('latin1');
        const split = text.indexOf('\r\n\r\n');
        const head = text.slice(0, split).toLowerCase();
        assert.match(head, /content-encoding: gzip/, p);
        assert.match(head, /vary: accept-encoding/, p);
        const body = gunzip(r.stdout.subarray(split + 4)).toString();
        assert.strictEqual(body, p === '/gz/text' ? 'z'.repeat(20000) : 'a'.repeat(10000) + 'b'.repeat(10000));
      }
    });

    it('express.static / serve-static / send / sendFile: Range, ETag -> 304, HEAD', async () => {
      for (const p of ['/static/data.bin', '/ss/data.bin', '/send', '/sendfile']) {
        let r = await get(base + p);
        assert.strictEqual(r.status, 200, p);
        assert.ok(r.body.equals(FILE), p);
        const etag = r.headers.get('etag');
        assert.ok(etag, p);
        r = await get(base + p, { headers: { range: 'bytes=10-19' } });
        assert.strictEqual(r.status, 206, p);
        assert.strictEqual(r.headers.get('content-range'), `bytes 10-19/${FILE.length}`);
        assert.ok(r.body.equals(FILE.subarray(10, 20)), p);
        r = await nodeGet(base + p, { 'if-none-match': etag });
        assert.strictEqual(r.status, 304, p);
        assert.strictEqual(r.body.length, 0, p);
        r = await get(base + p, { method: 'HEAD' });
        assert.strictEqual(r.status, 200, p);
        assert.strictEqual(r.headers.get('content-length'), String(FILE.length), p);
        assert.strictEqual(r.body.length, 0, p);
      }
      const r = await get(`${base}/static/`);
      assert.strictEqual(r.text, '<h1>index</h1>');
    });

    it('cookie-parser + express-session (cookie set from the on-headers hook)', async () => {
      let r = await get(`${base}/s/count`);
      assert.deepStrictEqual(JSON.parse(r.text), { n: 1, signed: {} });
      const cookie = r.headers.get('set-cookie');
      assert.match(cookie, /^connect\.sid=/);
      r = await get(`${base}/s/count`, { headers: { cookie: cookie.split(';')[0] } });
      const j = JSON.parse(r.text);
      assert.strictEqual(j.n, 2);
      assert.ok(j.signed['connect.sid']);
    });

    it('cors preflight and helmet headers', async () => {
      let r = await get(`${base}/cors/x`, {
        method: 'OPTIONS',
        headers: { origin: 'http://example.test', 'access-control-request-method': 'PUT' },
      });
      assert.strictEqual(r.status, 204);
      assert.strictEqual(r.headers.get('access-control-allow-origin'), 'http://example.test');
      assert.strictEqual(r.headers.get('access-control-allow-credentials'), 'true');
      assert.match(r.headers.get('access-control-allow-methods'), /PUT/);
      r = await get(`${base}/helmet`);
      assert.strictEqual(r.text, 'safe');
      assert.ok(r.headers.get('content-security-policy'));
      assert.strictEqual(r.headers.get('x-content-type-options'), 'nosniff');
      assert.strictEqual(r.headers.get('x-powered-by'), null);
    });

    it('morgan, response-time and on-finished see every response', async () => {
      await get(`${base}/hello?name=m`);
      await get(`${base}/nope`);
      await common.sleep(20);
      assert.deepStrictEqual(log.morgan, ['GET /hello?name=m 200 7', 'GET /nope 404 143']);
      assert.deepStrictEqual(log.finished, ['/hello?name=m', '/nope']);
    });

    it('http-proxy-middleware streams req to a backend and the answer back', async () => {
      const { createProxyMiddleware } = require('http-proxy-middleware');
      const backend = http.createServer((req, res) => {
        const h = crypto.createHash('sha256');
        let n = 0;
        req.on('data', (d) => { h.update(d); n += d.length; });
        req.on('end', () => res.end(`${req.method} ${req.url} ${n} ${h.digest('hex')}`));
      });
      const target = await listen(backend);
      const app = express();
      app.use('/api', createProxyMiddleware({ target, changeOrigin: true }));
      const proxyBase = await listen(impl.createServer(app));
      const body = crypto.randomBytes(2 * 1024 * 1024);
      const r = await get(`${proxyBase}/api/up?x=1`, { method: 'POST', body });
      assert.strictEqual(r.status, 200);
      assert.strictEqual(r.text, `POST /up?x=1 ${body.length} ${sha(body)}`);
    });
  });
}

describe('Express on sluice and node:http in one process', function () {
  afterEach(common.cleanup);

  common.sluiceOnly('one app served by both: node:http requests keep node\'s methods', async () => {
    const express = require('express4');
    const app = express();
    app.use(express.json());
    app.post('/', (req, res) => {
      res.json({ body: req.body, sluice: typeof res.respondWithFile === 'function' && !!req.socket.constructor.name.match(/Sluice/) });
    });
    const a = await listen(sluice.createServer(app));
    const b = await listen(http.createServer(app));
    for (const [base, isSluice] of [[a, true], [b, false], [a, true]]) {
      const r = await get(base, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"q":1}' });
      assert.deepStrictEqual(JSON.parse(r.text), { body: { q: 1 }, sluice: isSluice });
    }
    // Another app never passed to sluice keeps Express's own prototypes.
    const other = express();
    assert.strictEqual(Object.getPrototypeOf(Object.getPrototypeOf(other.request)), http.IncomingMessage.prototype);
  });

  common.sluiceOnly('Express over HTTP/2 (h2c prior knowledge) on sluice', async () => {
    const express = require('express5');
    const app = express();
    app.use(express.json());
    app.get('/x', (req, res) => res.json({ v: req.httpVersion, q: req.query.q }));
    app.post('/x', (req, res) => res.json(req.body));
    app.use('/static', express.static(STATIC_DIR));
    const base = await listen(sluice.createServer(app));
    let r = await h2request(base, { ':path': '/x?q=2' });
    assert.strictEqual(r.status, 200);
    assert.deepStrictEqual(JSON.parse(r.body), { v: '2.0', q: '2' });
    // type-is counts a body only with content-length or transfer-encoding
    // (the latter does not exist in HTTP/2): the client sends the length.
    r = await h2request(base, { ':path': '/x', ':method': 'POST', 'content-type': 'application/json',
      'content-length': '7' }, '{"p":3}');
    assert.deepStrictEqual(JSON.parse(r.body), { p: 3 });
    r = await h2request(base, { ':path': '/static/data.bin', range: 'bytes=0-9' });
    assert.strictEqual(r.status, 206);
    assert.ok(r.body.equals(FILE.subarray(0, 10)));
  });
});
