'use strict';

// Fastify 4 and 5 (serverFactory) with @fastify/static, @fastify/multipart
// and @fastify/compress, on node:http and on sluice; HTTP/2 (h2c prior
// knowledge) against node's http2 server.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { Readable } = require('node:stream');
const common = require('../common');
const { assert } = common;
const { forEachServer, get, nodeGet, h2request, gunzip, sluice } = require('./helpers');

const DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-fastify-'));
const FILE = crypto.randomBytes(200000);
fs.writeFileSync(path.join(DIR, 'data.bin'), FILE);
fs.writeFileSync(path.join(DIR, 'page.txt'), 'text '.repeat(2000));
after(() => fs.rmSync(DIR, { recursive: true, force: true }));

const sha = (b) => crypto.createHash('sha256').update(b).digest('hex');

// Fastify on impl: node:http's own server, or sluice through serverFactory.
function makeFastify(Fastify, impl, opts = {}) {
  if (!impl.isSluice) return Fastify(opts);
  const { http2, ...rest } = opts;  // sluice speaks h2c on the same port
  void http2;
  return Fastify({ ...rest, serverFactory: (handler) => sluice.createServer(handler) });
}

async function start(app) {
  const addr = await app.listen({ port: 0, host: '127.0.0.1' });
  common.trackServer(app.server);
  return addr;
}

function routes(app, log) {
  app.addHook('onRequest', async (req, reply) => { reply.header('x-hook', 'on'); });
  app.addHook('onResponse', async (req, reply) => { log.push(`${req.url} ${reply.statusCode}`); });
  app.get('/json', async (req) => ({ q: req.query.q, v: req.raw.httpVersion }));
  app.post('/echo', async (req) => ({ body: req.body }));
  app.post('/bytes', async (req, reply) => {
    let n = 0;
    const h = crypto.createHash('sha256');
    for await (const chunk of req.raw) { n += chunk.length; h.update(chunk); }
    reply.type('text/plain');
    return `${n} ${h.digest('hex')}`;
  });
  app.addContentTypeParser('application/octet-stream', (req, payload, done) => done(null, payload));
  app.get('/stream', (req, reply) => {
    reply.type('text/plain').send(Readable.from(['a'.repeat(30000), 'b'.repeat(30000)]));
  });
  app.get('/fail', async () => { throw Object.assign(new Error('nope'), { statusCode: 418 }); });
  app.get('/hijack', (req, reply) => {
    reply.hijack();
    reply.raw.writeHead(200, { 'content-type': 'text/plain' });
    reply.raw.end('raw');
  });
}

// What every Fastify major answers alike from routes(): the query and the
// hook, a JSON body echoed, the error handler's status. Resolves with the
// /fail response.
async function checkRoutes(base, q, json) {
  let r = await get(`${base}/json?q=${q}`);
  assert.deepStrictEqual(JSON.parse(r.text), { q, v: '1.1' });
  assert.strictEqual(r.headers.get('x-hook'), 'on');
  r = await get(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(json) });
  assert.deepStrictEqual(JSON.parse(r.text), { body: json });
  r = await get(`${base}/fail`);
  assert.strictEqual(r.status, 418);
  return r;
}

forEachServer('Fastify 5', (impl) => {
  const Fastify = require('fastify');
  let app;
  let base;
  let log;

  beforeEach(async () => {
    log = [];
    app = makeFastify(Fastify, impl);
    await app.register(require('@fastify/compress'), { threshold: 1024 });
    await app.register(require('@fastify/multipart'));
    await app.register(require('@fastify/static'), { root: DIR, prefix: '/static/' });
    routes(app, log);
    app.post('/upload', async (req) => {
      const out = {};
      for await (const part of req.parts()) {
        if (part.type === 'file') {
          const buf = await part.toBuffer();
          out[part.fieldname] = { name: part.filename, size: buf.length, sha: sha(buf) };
        } else {
          out[part.fieldname] = part.value;
        }
      }
      return out;
    });
    base = await start(app);
  });

  afterEach(() => app.close());

  it('routes, hooks, JSON bodies, errors, 404, hijack', async () => {
    let r = await checkRoutes(base, '1', { a: [1, 2] });
    assert.strictEqual(JSON.parse(r.text).message, 'nope');
    r = await get(`${base}/missing`);
    assert.strictEqual(r.status, 404);
    r = await get(`${base}/hijack`);
    assert.strictEqual(r.text, 'raw');
    r = await get(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{bad' });
    assert.strictEqual(r.status, 400);
    await common.sleep(20);
    assert.deepStrictEqual(log.slice(0, 4), ['/json?q=1 200', '/echo 200', '/fail 418', '/missing 404']);
  });

  it('a 4 MiB streamed request body and a streamed reply', async () => {
    const body = crypto.randomBytes(4 * 1024 * 1024);
    let r = await get(`${base}/bytes`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body });
    assert.strictEqual(r.text, `${body.length} ${sha(body)}`);
    r = await get(`${base}/stream`, { headers: { 'accept-encoding': 'identity' } });
    assert.strictEqual(r.text, 'a'.repeat(30000) + 'b'.repeat(30000));
  });

  it('@fastify/compress gzips a streamed reply', async () => {
    const r = await common.curl(['-D', '-', '-H', 'accept-encoding: gzip', `${base}/stream`]);
    const text = r.stdout.toString('latin1');
    const split = text.indexOf('\r\n\r\n');
    assert.match(text.slice(0, split).toLowerCase(), /content-encoding: gzip/);
    assert.strictEqual(gunzip(r.stdout.subarray(split + 4)).toString(), 'a'.repeat(30000) + 'b'.repeat(30000));
  });

  it('@fastify/multipart: fields and a file', async () => {
    const file = crypto.randomBytes(500000);
    const form = new FormData();
    form.append('title', 't1');
    form.append('doc', new Blob([file]), 'doc.bin');
    const r = await get(`${base}/upload`, { method: 'POST', body: form });
    assert.strictEqual(r.status, 200);
    assert.deepStrictEqual(JSON.parse(r.text),
      { title: 't1', doc: { name: 'doc.bin', size: file.length, sha: sha(file) } });
  });

  it('@fastify/static: file, Range, ETag -> 304, HEAD', async () => {
    let r = await get(`${base}/static/data.bin`);
    assert.ok(r.body.equals(FILE));
    const etag = r.headers.get('etag');
    r = await nodeGet(`${base}/static/data.bin`, { range: 'bytes=100-199' });
    assert.strictEqual(r.status, 206);
    assert.ok(r.body.equals(FILE.subarray(100, 200)));
    r = await nodeGet(`${base}/static/data.bin`, { 'if-none-match': etag });
    assert.strictEqual(r.status, 304);
    r = await nodeGet(`${base}/static/data.bin`, {}, 'HEAD');
    assert.strictEqual(r.headers['content-length'], String(FILE.length));
    assert.strictEqual(r.body.length, 0);
  });
});

forEachServer('Fastify 4', (impl) => {
  const Fastify = require('fastify4');
  let app;
  let base;
  let log;

  beforeEach(async () => {
    log = [];
    app = makeFastify(Fastify, impl);
    routes(app, log);
    base = await start(app);
  });

  afterEach(() => app.close());

  it('routes, hooks, JSON bodies, errors, 404, hijack, streams', async () => {
    let r = await checkRoutes(base, '4', { b: true });
    r = await get(`${base}/hijack`);
    assert.strictEqual(r.text, 'raw');
    const body = crypto.randomBytes(1024 * 1024);
    r = await get(`${base}/bytes`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body });
    assert.strictEqual(r.text, `${body.length} ${sha(body)}`);
    r = await get(`${base}/stream`);
    assert.strictEqual(r.body.length, 60000);
  });
});

// HTTP/2: node's side is fastify({ http2: true }) (node:http2, h2c); sluice
// serves h2c prior knowledge on its one port.
forEachServer('Fastify 5 over HTTP/2', (impl) => {
  const Fastify = require('fastify');
  let app;
  let base;

  beforeEach(async () => {
    app = makeFastify(Fastify, impl, { http2: true });
    routes(app, []);
    base = await start(app);
  });

  afterEach(() => app.close());

  it('GET JSON, POST JSON, streamed reply', async () => {
    let r = await h2request(base, { ':path': '/json?q=h2' });
    assert.strictEqual(r.status, 200);
    assert.deepStrictEqual(JSON.parse(r.body), { q: 'h2', v: '2.0' });
    assert.strictEqual(r.headers['x-hook'], 'on');
    r = await h2request(base, { ':path': '/echo', ':method': 'POST', 'content-type': 'application/json' }, '{"x":2}');
    assert.deepStrictEqual(JSON.parse(r.body), { body: { x: 2 } });
    r = await h2request(base, { ':path': '/stream' });
    assert.strictEqual(r.body.length, 60000);
  });
});
