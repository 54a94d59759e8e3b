'use strict';

// HTTP/2 request bodies in allocator memory: with a requestBufferAllocator
// the session reads into the pool and DATA payloads reach JS as views of
// it (ServerHttp2Stream 'data' and the compat req), and the stream's and
// the connection's flow-control windows are credited only when a chunk is
// released — so a consumer that keeps its chunks stalls its client at the
// window, not the pool. Clients are node's http2 (h2c, and h2 over TLS via
// ALPN). Sluice-only: node:http2 has no requestBufferAllocator.

const crypto = require('node:crypto');
const http2 = require('node:http2');
const v8 = require('node:v8');
const vm = require('node:vm');
const common = require('../common');
const h2 = require('../http2/h2common');
const { fixtures, startSecure } = require('../tls/tls_common');
const { KiB, MiB, BUF, pool: makePool, waitUntil, waitInUseZero, hashBody } = require('./pool_helpers');
const { assert } = common;

const sluice = common.impl;
const pool = (maxBuffers = 1024) => makePool(maxBuffers);

// POST `body` on `session`; resolves the response body as a string.
async function post(session, body, path = '/up', timeout = 20000) {
  const r = await h2.request(session, { ':method': 'POST', ':path': path }, { body, timeout });
  assert.strictEqual(r.headers[':status'], 200, `status ${r.headers[':status']}: ${r.body}`);
  return r.body.toString();
}

function streamHashServer(options) {
  return common.startServer(options, null).then((s) => {
    s.server.on('stream', (stream) => hashBody(stream, (json) => {
      stream.respond({ ':status': 200 });
      stream.end(json);
    }));
    return s;
  });
}

function checkHash(json, body) {
  const j = JSON.parse(json);
  assert.strictEqual(j.length, body.length);
  assert.strictEqual(j.sha, common.sha256(body));
  assert.ok(j.pooled >= 0.9 * body.length,
    `only ${j.pooled} of ${body.length} bytes (${(100 * j.pooled / body.length).toFixed(1)}%) were views of pool memory`);
  return j;
}

describe(`uploads: HTTP/2 request bodies as views of pool memory [${common.implName}]`, function () {
  afterEach(common.cleanup);
  this.timeout(30000);

  for (const size of [4 * MiB, 8 * MiB]) {
    common.sluiceOnly(`stream API: a ${size / MiB} MiB upload arrives intact, >= 90% as pool views; every buffer comes back`, async function () {
      const p = pool();
      const { port } = await streamHashServer({ requestBufferAllocator: p.alloc });
      const body = crypto.randomBytes(size);
      checkHash(await post(h2.connect(port), body), body);
      await common.cleanup();
      await waitInUseZero(p);
    });
  }

  common.sluiceOnly('compat API (req/res): an 8 MiB upload arrives intact, >= 90% as pool views', async function () {
    const p = pool();
    const { port } = await common.startServer({ requestBufferAllocator: p.alloc },
      (req, res) => hashBody(req, (json) => res.end(json)));
    const body = crypto.randomBytes(8 * MiB);
    checkHash(await post(h2.connect(port), body), body);
    await common.cleanup();
    await waitInUseZero(p);
  });

  common.sluiceOnly('8 concurrent 1 MiB uploads on one session: each intact, >= 90% pool views', async function () {
    const p = pool();
    const { port } = await streamHashServer({ requestBufferAllocator: p.alloc });
    const session = h2.connect(port);
    const bodies = Array.from({ length: 8 }, () => crypto.randomBytes(MiB));
    const answers = await Promise.all(bodies.map((b, i) => post(session, b, `/c${i}`)));
    answers.forEach((json, i) => checkHash(json, bodies[i]));
    await common.cleanup();
    await waitInUseZero(p);
  });

  common.sluiceOnly('a consumer that never releases stalls its client at the stream window (the pool holds no more); releasing resumes the upload', async function () {
    const p = pool();
    const WINDOW = 256 * KiB;
    const held = [];
    let received = 0;
    let finish;
    const { server, port } = await common.startServer({
      requestBufferAllocator: p.alloc, http2: { initialWindowSize: WINDOW },
    }, null);
    server.on('stream', (stream) => {
      const h = crypto.createHash('sha256');
      stream.on('data', (chunk) => {
        h.update(chunk);
        received += chunk.length;
        held.push(chunk);
      });
      stream.on('end', () => {
        stream.respond({ ':status': 200 });
        stream.end(h.digest('hex'));
      });
      finish = () => { for (const c of held.splice(0)) sluice.releaseBuffer(c); };
    });
    const body = crypto.randomBytes(4 * MiB);
    const answer = post(h2.connect(port), body);
    // The client stops once the window is used up: nothing more arrives.
    let last = -1;
    await waitUntil(() => {
      const still = received === last && received > 0;
      last = received;
      return still;
    }, 5000, () => `the upload to stall (received ${received})`);
    await common.sleep(200);
    assert.ok(received <= WINDOW, `${received} bytes arrived past a ${WINDOW} byte window`);
    assert.ok(received >= WINDOW / 2, `only ${received} bytes arrived`);
    // The pool lends no more than the window's bytes (plus the buffer being read into).
    assert.ok(p.stats().inUse * BUF <= WINDOW + 2 * BUF, `pool: ${JSON.stringify(p.stats())}`);
    // Releasing as they come from now on completes it.
    const before = received;
    finish();
    const pump = setInterval(finish, 5);
    try {
      assert.strictEqual(await answer, common.sha256(body));
    } finally {
      clearInterval(pump);
      finish();
    }
    assert.ok(received > before);
    await common.cleanup();
    await waitInUseZero(p);
  });

  common.sluiceOnly('a handler that never releases: a SLUICE_H2_WINDOW_HELD warning within a second; chunks it dropped are reclaimed when collected, and the upload completes', async function () {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc');
    const p = pool();
    const warnings = [];
    const onWarning = (w) => { if (w.code === 'SLUICE_H2_WINDOW_HELD') warnings.push(w); };
    process.on('warning', onWarning);
    try {
      let stalledAt = 0;
      let received = 0;
      const { port } = await common.startServer({
        requestBufferAllocator: p.alloc, http2: { initialWindowSize: 256 * KiB },
      }, (req, res) => {
        const h = crypto.createHash('sha256');
        req.on('data', (chunk) => {
          h.update(chunk);  // ... and never released
          received += chunk.length;
          if (!stalledAt && received >= 256 * KiB) stalledAt = Date.now();
        });
        req.on('end', () => res.end(h.digest('hex')));
      });
      const body = crypto.randomBytes(2 * MiB);
      const answer = post(h2.connect(port), body);
      const t0 = Date.now();
      while (warnings.length === 0 && Date.now() - t0 < 5000) await common.sleep(20);
      assert.strictEqual(warnings.length, 1, `no SLUICE_H2_WINDOW_HELD warning (received ${received})`);
      assert.ok(Date.now() - stalledAt < 1500, `warned ${Date.now() - stalledAt} ms after the window filled`);
      assert.match(warnings[0].message, /releaseBuffer/);
      let settled = false;
      answer.then(() => { settled = true; }, () => { settled = true; });
      const t1 = Date.now();
      while (!settled && Date.now() - t1 < 15000) {
        gc();
        await common.sleep(20);
      }
      assert.strictEqual(await answer, common.sha256(body));
      assert.ok(p.stats().reclaimed > 0, `reclaimed ${p.stats().reclaimed}`);
      await common.cleanup();
      gc();
      await common.sleep(20);
      gc();
      await waitInUseZero(p);
    } finally {
      process.removeListener('warning', onWarning);
    }
  });

  common.sluiceOnly('a stream reset mid-body with chunks held: releasing them after the close credits the connection window (the next upload on the session completes)', async function () {
    const p = pool();
    const held = [];
    let closed = 0;
    const { server, port } = await common.startServer({
      requestBufferAllocator: p.alloc,
      // Small windows: chunks released after the close must give the
      // connection window back, or the second upload stalls.
      http2: { initialWindowSize: 512 * KiB, connectionWindowSize: 512 * KiB },
    }, null);
    server.on('stream', (stream, headers) => {
      if (headers[':path'] === '/hold') {
        stream.on('data', (chunk) => held.push(chunk));
        stream.on('close', () => { closed++; });
        stream.on('error', () => {});
        return;
      }
      hashBody(stream, (json) => {
        stream.respond({ ':status': 200 });
        stream.end(json);
      });
    });
    const session = h2.connect(port);
    const req = session.request({ ':method': 'POST', ':path': '/hold' });
    req.on('error', () => {});
    req.write(crypto.randomBytes(400 * KiB));
    await waitUntil(() => held.length > 0 && held.reduce((n, c) => n + c.length, 0) >= 256 * KiB, 5000,
      () => `held chunks (${held.length})`);
    req.close(http2.constants.NGHTTP2_CANCEL);
    await waitUntil(() => closed === 1, 5000, () => 'the stream to close');
    for (const c of held.splice(0)) sluice.releaseBuffer(c);
    const body = crypto.randomBytes(2 * MiB);
    checkHash(await post(session, body), body);
    await common.cleanup();
    await waitInUseZero(p);
  });

  common.sluiceOnly('the client session destroyed mid-upload with chunks held: no crash, releasing later is harmless, every buffer comes back', async function () {
    const p = pool();
    const held = [];
    let closed = 0;
    const { server, port } = await common.startServer({ requestBufferAllocator: p.alloc }, null);
    server.on('stream', (stream) => {
      stream.on('data', (chunk) => held.push(chunk));
      stream.on('close', () => { closed++; });
      stream.on('error', () => {});
    });
    const session = h2.connect(port);
    for (let i = 0; i < 3; i++) {
      const req = session.request({ ':method': 'POST', ':path': `/d${i}` });
      req.on('error', () => {});
      req.write(crypto.randomBytes(300 * KiB));
    }
    await waitUntil(() => held.reduce((n, c) => n + c.length, 0) >= 600 * KiB, 5000,
      () => `held chunks (${held.length})`);
    session.destroy();
    await waitUntil(() => closed === 3, 5000, () => `the streams to close (${closed})`);
    assert.ok(p.stats().outstanding > 0);
    for (const c of held.splice(0)) sluice.releaseBuffer(c);
    await waitInUseZero(p);
    assert.strictEqual(p.stats().outstanding, 0);
  });

  common.sluiceOnly('without an allocator HTTP/2 bodies are copies (no pool memory) and arrive intact', async function () {
    const { port } = await streamHashServer({});
    const body = crypto.randomBytes(2 * MiB);
    const j = JSON.parse(await post(h2.connect(port), body));
    assert.strictEqual(j.sha, common.sha256(body));
    assert.strictEqual(j.pooled, 0);
  });

  common.sluiceOnly('over TLS (h2 via ALPN, allowHTTP1): an 8 MiB upload arrives intact, >= 90% as pool views', async function () {
    const p = pool();
    const { port } = await startSecure({ allowHTTP1: true, requestBufferAllocator: p.alloc },
      (req, res) => hashBody(req, (json) => res.end(json)));
    const session = http2.connect(`https://localhost:${port}`, { ca: fixtures().ca });
    common.trackSocket(session);
    session.on('error', () => {});
    const body = crypto.randomBytes(8 * MiB);
    checkHash(await post(session, body), body);
    await common.cleanup();
    await waitInUseZero(p);
  });
});
