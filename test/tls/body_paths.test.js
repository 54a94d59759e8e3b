'use strict';

// What the cleartext paths promise, over TLS: uploads decrypted straight
// into allocator memory (zero-copy share, a bounded pool that runs dry),
// respondWithFile on both protocols (encrypted from the file pipe's
// buffers), compression, pipelining, pause/resume with records waiting
// inside OpenSSL. sluice-only: node has no allocator, no respondWithFile
// on HTTP/1.1 and no compression option.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');
const https = require('node:https');
const http2 = require('node:http2');
const tls = require('node:tls');
const common = require('../common');
const { assert } = common;
const { fixtures, startSecure } = require('./tls_common');

const maybe = common.isSluice ? describe : describe.skip;
const MiB = 1024 * 1024;

function post(port, path, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path, method: 'POST', servername: 'localhost',
      ca: fixtures().ca, agent: false, headers }, (res) => {
      const chunks = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () => resolve({ res, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    // In 1 MiB writes: the server sees many records and many reads.
    for (let i = 0; i < body.length; i += MiB) req.write(body.subarray(i, i + MiB));
    req.end();
  });
}

function get(port, path, headers = {}) {
  return new Promise((resolve, reject) => {
    https.get({ host: '127.0.0.1', port, path, servername: 'localhost', ca: fixtures().ca, agent: false, headers }, (res) => {
      const chunks = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () => resolve({ res, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

function h2(port, path, headers = {}) {
  return new Promise((resolve, reject) => {
    const client = http2.connect(`https://localhost:${port}`, { ca: fixtures().ca });
    client.on('error', reject);
    const req = client.request({ ':path': path, ...headers });
    let head;
    const chunks = [];
    req.on('response', (h) => { head = h; });
    req.on('data', (d) => chunks.push(d));
    req.on('end', () => { client.close(); resolve({ headers: head, body: Buffer.concat(chunks) }); });
    req.on('error', reject);
    req.end();
  });
}

maybe('TLS: uploads, files, compression', function () {
  afterEach(common.cleanup);

  // An odd buffer size: a pool buffer is its own ArrayBuffer of exactly
  // that size, which no copy of a decrypted read (at most one buffer's
  // worth, made at the chunk's length) can have.
  for (const [title, pool] of [['a pool with room', { bufferSize: 65537, maxBuffers: 256 }],
    ['a pool of 4 buffers that runs dry', { bufferSize: 65537, maxBuffers: 4 }]]) {
    it(`an 8 MiB upload through ${title}: sha256 matches, >= 90% of body bytes are allocator memory`, async function () {
      const p = common.impl.createBufferPool(pool);
      const errs = common.handlerErrors();
      const { port } = await startSecure({ requestBufferAllocator: p.alloc }, errs.wrap((req, res) => {
        const h = crypto.createHash('sha256');
        let total = 0;
        let pooled = 0;
        req.on('data', (chunk) => {
          h.update(chunk);
          total += chunk.length;
          if (chunk.buffer.byteLength === pool.bufferSize) pooled += chunk.length;
          // Released a turn later: the dry pool pauses the connection with
          // records still inside OpenSSL.
          setImmediate(() => common.impl.releaseBuffer(chunk));
        });
        req.on('end', () => res.end(JSON.stringify({ sha: h.digest('hex'), total, pooled })));
      }));
      const body = crypto.randomBytes(8 * MiB);
      const r = await post(port, '/up', body);
      errs.check();
      const j = JSON.parse(r.body);
      assert.strictEqual(j.sha, common.sha256(body));
      assert.strictEqual(j.total, body.length);
      assert.ok(j.pooled >= 0.9 * j.total, `${j.pooled} of ${j.total} bytes in allocator memory`);
      await common.cleanup();
      const t0 = Date.now();
      while (p.stats().inUse !== 0 && Date.now() - t0 < 3000) await common.sleep(10);
      assert.strictEqual(p.stats().inUse, 0, JSON.stringify(p.stats()));
    });
  }

  it('respondWithFile over TLS on HTTP/1.1 and HTTP/2 (compat and stream API)', async function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-tls-file-'));
    const file = path.join(dir, 'big.bin');
    const data = crypto.randomBytes(5 * MiB + 123);
    fs.writeFileSync(file, data);
    try {
      const { server, port } = await startSecure({}, (req, res) => res.respondWithFile(file));
      const a = await get(port, '/f');
      assert.strictEqual(a.res.statusCode, 200);
      assert.strictEqual(common.sha256(a.body), common.sha256(data));
      const b = await h2(port, '/f');
      assert.strictEqual(common.sha256(b.body), common.sha256(data));
      server.removeAllListeners('request');
      server.on('stream', (stream) => stream.respondWithFile(file, { 'x-api': 'stream' }));
      const c = await h2(port, '/s');
      assert.strictEqual(c.headers['x-api'], 'stream');
      assert.strictEqual(common.sha256(c.body), common.sha256(data));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('compressed responses over TLS (gzip on HTTP/1.1, br on HTTP/2)', async function () {
    const text = 'sluice over tls '.repeat(20000);
    const { port } = await startSecure({ compression: true }, (req, res) => {
      res.setHeader('content-type', 'text/plain');
      res.end(text);
    });
    const a = await get(port, '/z', { 'accept-encoding': 'gzip' });
    assert.strictEqual(a.res.headers['content-encoding'], 'gzip');
    assert.strictEqual(zlib.gunzipSync(a.body).toString(), text);
    const b = await h2(port, '/z', { 'accept-encoding': 'br' });
    assert.strictEqual(b.headers['content-encoding'], 'br');
    assert.strictEqual(zlib.brotliDecompressSync(b.body).toString(), text);
  });

  it('pipelined requests in one TLS record are answered in order', async function () {
    const { port } = await startSecure({}, (req, res) => res.end(`<${req.url}>`));
    const s = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ca: fixtures().ca, ALPNProtocols: ['http/1.1'] });
    common.trackSocket(s);
    await common.once(s, 'secureConnect', 5000);
    let text = '';
    s.on('data', (d) => { text += d; });
    s.write(['/1', '/2', '/3'].map((u) => `GET ${u} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''));
    const t0 = Date.now();
    while (!text.includes('</3>') && Date.now() - t0 < 5000) await common.sleep(10);
    assert.deepStrictEqual(text.match(/<[^>]+>/g), ['</1>', '</2>', '</3>']);
  });

  it('a paused request resumes with records already decrypted or waiting in OpenSSL', async function () {
    const body = crypto.randomBytes(2 * MiB);
    const { port } = await startSecure({}, (req, res) => {
      const h = crypto.createHash('sha256');
      req.pause();
      setTimeout(() => {
        req.on('data', (d) => h.update(d));
        req.on('end', () => res.end(h.digest('hex')));
        req.resume();
      }, 200);
    });
    const r = await post(port, '/p', body);
    assert.strictEqual(r.body.toString(), common.sha256(body));
  });

  // The server reads records where its socket read put them and keeps
  // only what a read leaves over (a record header or body cut by the read's
  // end): a relay cuts the client's ciphertext at random points, from 1
  // byte up, each piece written on its own turn so that the server reads
  // it alone, through the handshake, heads and bodies, with and without a
  // pool.
  for (const [title, opts] of [['no pool', {}], ['a pool', { pool: { bufferSize: 16411, maxBuffers: 8 } }]]) {
    it(`ciphertext cut at random points across reads (${title}): uploads and HTTP/2 intact`, async function () {
      const options = {};
      let pool = null;
      if (opts.pool) {
        pool = common.impl.createBufferPool(opts.pool);
        options.requestBufferAllocator = pool.alloc;
      }
      const { port } = await startSecure(options, (req, res) => {
        const h = crypto.createHash('sha256');
        req.on('data', (d) => { h.update(d); if (pool) common.impl.releaseBuffer(d); });
        req.on('end', () => res.end(h.digest('hex')));
      });
      let seed = 7;
      const rand = (n) => { seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff; return seed % n; };
      const relay = require('node:net').createServer((client) => {
        const upstream = require('node:net').connect(port, '127.0.0.1');
        upstream.setNoDelay(true);
        common.trackSocket(client);
        common.trackSocket(upstream);
        const queue = [];
        let pumping = false;
        const pump = () => {
          if (queue.length === 0 || upstream.destroyed) { pumping = false; return; }
          pumping = true;
          let piece = queue[0];
          const cut = 1 + (rand(4) === 0 ? rand(6) : rand(3000));
          if (piece.length > cut) { queue[0] = piece.subarray(cut); piece = piece.subarray(0, cut); } else queue.shift();
          upstream.write(piece, () => setTimeout(pump, rand(8) === 0 ? 1 : 0));
        };
        client.on('data', (d) => { queue.push(d); if (!pumping) pump(); });
        upstream.pipe(client);
        client.on('error', () => upstream.destroy());
        upstream.on('error', () => client.destroy());
        client.on('close', () => upstream.destroy());
      });
      await new Promise((resolve) => relay.listen(0, '127.0.0.1', resolve));
      common.trackServer(relay);
      const rport = relay.address().port;
      const body = crypto.randomBytes(256 * 1024 + 7);
      const r = await post(rport, '/cut', body);
      assert.strictEqual(r.body.toString(), common.sha256(body));
      const r2 = await h2(rport, '/h2');
      assert.strictEqual(r2.headers[':status'], 200);
      assert.strictEqual(r2.body.toString(), common.sha256(Buffer.alloc(0)));
      if (pool) {
        const t0 = Date.now();
        while (pool.stats().inUse !== 0 && Date.now() - t0 < 3000) await common.sleep(10);
        assert.strictEqual(pool.stats().inUse, 0, JSON.stringify(pool.stats()));
      }
    });
  }

  it('close_notify is sent when the server ends a connection (Connection: close)', async function () {
    const { port } = await startSecure({}, (req, res) => res.end('bye'));
    const s = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ca: fixtures().ca, ALPNProtocols: ['http/1.1'] });
    common.trackSocket(s);
    await common.once(s, 'secureConnect', 5000);
    let text = '';
    s.on('data', (d) => { text += d; });
    s.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    // A TLS socket emits 'end' only for close_notify (a bare FIN is an
    // ECONNRESET-like error on node's TLS client).
    await common.once(s, 'end', 5000, "'end' (close_notify)");
    assert.match(text, /\r\n\r\nbye$/);
  });
});

describe('TLS: WebSocket (wss) over the upgrade tunnel', function () {
  afterEach(common.cleanup);

  it('ws echoes 1 MiB and small messages over wss (shared with node)', async function () {
    const { WebSocketServer, WebSocket } = require('ws');
    const { server, port } = await startSecure({}, (req, res) => res.end('http'));
    const wss = new WebSocketServer({ server });
    wss.on('connection', (ws) => ws.on('message', (m, binary) => ws.send(m, { binary })));
    const ws = new WebSocket(`wss://localhost:${port}/`, { ca: fixtures().ca });
    await common.once(ws, 'open', 5000);
    const big = crypto.randomBytes(MiB);
    const got = [];
    const done = new Promise((resolve) => ws.on('message', (m) => { got.push(Buffer.from(m)); if (got.length === 2) resolve(); }));
    ws.send('hello wss');
    ws.send(big);
    await common.withTimeout(done, 10000, 'echoes');
    assert.strictEqual(got[0].toString(), 'hello wss');
    assert.strictEqual(common.sha256(got[1]), common.sha256(big));
    ws.close();
    wss.close();
  });
});
