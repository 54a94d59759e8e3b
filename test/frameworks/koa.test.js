'use strict';

// Koa with koa-body, @koa/router and koa-static, on node:http and on sluice.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const common = require('../common');
const { assert } = common;
const { forEachServer, listen, get, nodeGet } = require('./helpers');

const DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-koa-'));
const FILE = crypto.randomBytes(150000);
fs.writeFileSync(path.join(DIR, 'data.bin'), FILE);
after(() => fs.rmSync(DIR, { recursive: true, force: true }));

const sha = (b) => crypto.createHash('sha256').update(b).digest('hex');

forEachServer('Koa', (impl) => {
  const Koa = require('koa');
  const { koaBody } = require('koa-body');
  const { Router } = require('@koa/router');
  const serve = require('koa-static');
  let base;

  beforeEach(async () => {
    const app = new Koa();
    const router = new Router();
    app.use(async (ctx, next) => {
      const t = Date.now();
      await next();
      ctx.set('x-took', String(Date.now() - t));
    });
    router.get('/items/:id', (ctx) => { ctx.body = { id: ctx.params.id, q: ctx.query.q }; });
    router.post('/json', koaBody(), (ctx) => { ctx.body = { got: ctx.request.body }; });
    router.post('/form', koaBody({ multipart: true }), (ctx) => {
      const f = ctx.request.files.file;
      const buf = fs.readFileSync(f.filepath);
      ctx.body = { field: ctx.request.body.field, name: f.originalFilename, size: buf.length, sha: sha(buf) };
    });
    router.get('/throw', (ctx) => ctx.throw(422, 'bad input'));
    router.get('/stream', (ctx) => {
      ctx.type = 'application/octet-stream';
      ctx.body = fs.createReadStream(path.join(DIR, 'data.bin'));
    });
    // Conditional GET as koa-conditional-get does it (koa-static leaves it
    // to such a middleware): ctx.fresh reads the request and response heads.
    app.use(async (ctx, next) => {
      await next();
      if (ctx.fresh) ctx.status = 304;
    });
    app.use(router.routes()).use(router.allowedMethods());
    app.use(serve(DIR));
    base = await listen(impl.createServer(app.callback()));
  });

  it('router params, JSON body, ctx.throw, allowedMethods, streams', async () => {
    let r = await get(`${base}/items/7?q=z`);
    assert.deepStrictEqual(JSON.parse(r.text), { id: '7', q: 'z' });
    assert.ok(r.headers.get('x-took'));
    r = await get(`${base}/json`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"k":"v"}' });
    assert.deepStrictEqual(JSON.parse(r.text), { got: { k: 'v' } });
    r = await get(`${base}/throw`);
    assert.strictEqual(r.status, 422);
    assert.strictEqual(r.text, 'bad input');
    r = await get(`${base}/items/7`, { method: 'DELETE' });
    assert.strictEqual(r.status, 405);
    assert.match(r.headers.get('allow'), /GET/);
    r = await get(`${base}/stream`);
    assert.ok(r.body.equals(FILE));
  });

  it('koa-body multipart upload', async () => {
    const file = crypto.randomBytes(300000);
    const form = new FormData();
    form.append('field', 'f');
    form.append('file', new Blob([file]), 'up.bin');
    const r = await get(`${base}/form`, { method: 'POST', body: form });
    assert.deepStrictEqual(JSON.parse(r.text), { field: 'f', name: 'up.bin', size: file.length, sha: sha(file) });
  });

  it('koa-static: file, 304 from If-Modified-Since, HEAD', async () => {
    let r = await get(`${base}/data.bin`);
    assert.ok(r.body.equals(FILE));
    const lm = r.headers.get('last-modified');
    r = await nodeGet(`${base}/data.bin`, { 'if-modified-since': lm });
    assert.strictEqual(r.status, 304);
    r = await nodeGet(`${base}/data.bin`, {}, 'HEAD');
    assert.strictEqual(r.headers['content-length'], String(FILE.length));
    assert.strictEqual(r.body.length, 0);
  });
});

// A client that aborts mid-upload: Koa's response (and so on-finished and
// every cleanup hook waiting for 'close') closes, on node:http and on
// sluice, with koa-body reading the body and with a handler that never
// reads it.
forEachServer('Koa, a client aborting mid-upload', (impl) => {
  const net = require('node:net');
  const Koa = require('koa');
  const { koaBody } = require('koa-body');
  const onFinished = require('on-finished');

  for (const reads of [true, false]) {
    it(`${reads ? 'koa-body reading' : 'a handler not reading'}: req 'aborted', req and res 'close', on-finished`, async () => {
      const seen = [];
      let started;
      const startedP = new Promise((r) => { started = r; });
      const app = new Koa();
      app.silent = true;
      app.use(async (ctx, next) => {
        ctx.res.on('close', () => seen.push('res close'));
        ctx.req.on('aborted', () => seen.push('req aborted'));
        ctx.req.on('close', () => seen.push('req close'));
        onFinished(ctx.res, () => seen.push('on-finished'));
        started();
        await next();
      });
      if (reads) app.use(koaBody());
      else app.use(() => new Promise(() => {}));  // waits forever
      app.use((ctx) => { ctx.body = 'never'; });
      const base = await listen(impl.createServer(app.callback()));
      const sock = common.trackSocket(net.connect(Number(new URL(base).port), '127.0.0.1'));
      sock.on('error', () => {});
      sock.write('POST /up HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        'Content-Length: 100000\r\n\r\n{"a":"' + 'x'.repeat(1000));
      await common.withTimeout(startedP, 5000, 'the handler');
      await common.sleep(50);
      sock.destroy();
      const all = ['on-finished', 'req aborted', 'req close', 'res close'];
      await common.withTimeout((async () => {
        while (!all.every((e) => seen.includes(e))) await common.sleep(10);
      })(), 5000, () => `${all.join(', ')}; got [${seen}]`);
      // Koa's error handler saw an unwritable socket: nothing else ran.
      assert.deepStrictEqual([...seen].sort(), all);
    });
  }
});
