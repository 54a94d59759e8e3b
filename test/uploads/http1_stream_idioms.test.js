'use strict';

// The stream idioms people write, with a buffer pool and without a single
// releaseBuffer call: none may hang. A 4 MiB POST through a pool of 8
// buffers (512 KiB) must complete intact through req.pipe(file),
// stream.pipeline(req, file), a Transform, and for await; a handler that
// never releases is either rescued by the collector (the chunks it dropped
// are reclaimed, counted) or warned about within a second
// (SLUICE_POOL_DRY). See docs/uploads.md.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const stream = require('node:stream');
const v8 = require('node:v8');
const vm = require('node:vm');
const common = require('../common');
const { assert } = common;

const sluice = common.impl;
const KiB = 1024;
const MiB = 1024 * KiB;

function tmpFile(name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-idioms-'));
  return path.join(dir, name);
}

async function post(port, body, p = '/up') {
  const r = await common.httpRequest(port, { method: 'POST', path: p, body, timeout: 20000 });
  assert.strictEqual(r.statusCode, 200, `status ${r.statusCode}: ${r.body}`);
  return r.body.toString();
}

async function waitInUseZero(pool) {
  const t0 = Date.now();
  while (pool.stats().inUse !== 0) {
    if (Date.now() - t0 > 3000) throw new Error(`pool inUse stuck: ${JSON.stringify(pool.stats())}`);
    await common.sleep(10);
  }
}

// A pool whose buffers an unusual size identifies (chunk.buffer.byteLength).
const BUF = 64 * KiB + 64;
function smallPool() {
  return sluice.createBufferPool({ bufferSize: BUF, maxBuffers: 8 });
}

describe(`uploads: stream idioms with a buffer pool [${common.implName}]`, function () {
  afterEach(common.cleanup);
  this.timeout(30000);

  common.sluiceOnly('req.pipe(fs.createWriteStream(f)): a 4 MiB POST through maxBuffers: 8 completes, zero copy', async function () {
    const pool = smallPool();
    const file = tmpFile('pipe.bin');
    let zeroCopy = 0;
    const { port } = await common.startServer({ requestBufferAllocator: pool.alloc }, (req, res) => {
      req.on('data', (c) => { if (c.buffer.byteLength === BUF) zeroCopy += c.length; });
      const out = fs.createWriteStream(file);
      req.pipe(out);
      out.on('finish', () => res.end('stored'));
    });
    const body = crypto.randomBytes(4 * MiB);
    assert.strictEqual(await post(port, body), 'stored');
    assert.strictEqual(common.sha256(fs.readFileSync(file)), common.sha256(body));
    assert.ok(zeroCopy >= 0.9 * body.length, `${zeroCopy} of ${body.length} bytes were pool views`);
    await waitInUseZero(pool);
  });

  common.sluiceOnly('stream.pipeline(req, fs.createWriteStream(f)) completes', async function () {
    const pool = smallPool();
    const file = tmpFile('pipeline.bin');
    const { port } = await common.startServer({ requestBufferAllocator: pool.alloc }, (req, res) => {
      stream.pipeline(req, fs.createWriteStream(file), (err) => res.end(err ? `error ${err.code}` : 'stored'));
    });
    const body = crypto.randomBytes(4 * MiB);
    assert.strictEqual(await post(port, body), 'stored');
    assert.strictEqual(common.sha256(fs.readFileSync(file)), common.sha256(body));
    await waitInUseZero(pool);
  });

  common.sluiceOnly('stream.pipeline through a Transform that passes chunks on (and keeps some) stays intact', async function () {
    const pool = smallPool();
    const kept = [];
    const { port } = await common.startServer({ requestBufferAllocator: pool.alloc }, (req, res) => {
      const h = crypto.createHash('sha256');
      const pass = new stream.Transform({
        transform(chunk, enc, cb) {
          if (kept.length < 4) kept.push(chunk);  // held past its write
          cb(null, chunk);
        },
      });
      const sink = new stream.Writable({ write(chunk, enc, cb) { h.update(chunk); cb(); } });
      stream.pipeline(req, pass, sink, (err) => res.end(err ? `error ${err.code}` : h.digest('hex')));
    });
    const body = crypto.randomBytes(4 * MiB);
    assert.strictEqual(await post(port, body), common.sha256(body));
    // The kept chunks still hold the bytes they had (no reuse under them).
    const start = Buffer.concat(kept);
    assert.ok(start.length > 0);
    assert.ok(body.subarray(0, start.length).equals(start), 'a chunk kept by the Transform changed');
    await waitInUseZero(pool);
  });

  common.sluiceOnly('req.resume() without a \'data\' listener discards a 4 MiB POST: each chunk goes back as it is dropped (none left to the collector)', async function () {
    const pool = smallPool();
    const { port } = await common.startServer({ requestBufferAllocator: pool.alloc }, (req, res) => {
      req.resume();
      req.on('end', () => res.end('discarded'));
    });
    const body = crypto.randomBytes(4 * MiB);
    assert.strictEqual(await post(port, body), 'discarded');
    assert.strictEqual(pool.stats().reclaimed, 0);
    await waitInUseZero(pool);
  });

  common.sluiceOnly('for await (const chunk of req): a 4 MiB POST completes; collected chunks stay intact', async function () {
    const pool = smallPool();
    const { port } = await common.startServer({ requestBufferAllocator: pool.alloc }, async (req, res) => {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      res.end(common.sha256(Buffer.concat(chunks)));
    });
    const body = crypto.randomBytes(4 * MiB);
    assert.strictEqual(await post(port, body), common.sha256(body));
    await waitInUseZero(pool);
  });

  common.sluiceOnly('a handler that never releases: a SLUICE_POOL_DRY warning within a second; chunks it dropped are reclaimed when collected', async function () {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc');
    const pool = smallPool();
    const warnings = [];
    const onWarning = (w) => { if (w.code === 'SLUICE_POOL_DRY') warnings.push(w); };
    process.on('warning', onWarning);
    try {
      let dryAt = 0;
      const { port } = await common.startServer({ requestBufferAllocator: pool.alloc }, (req, res) => {
        const h = crypto.createHash('sha256');
        req.on('data', (chunk) => {
          h.update(chunk);  // ... and never released
          if (!dryAt && pool.stats().inUse === 8) dryAt = Date.now();
        });
        req.on('end', () => res.end(h.digest('hex')));
      });
      const body = crypto.randomBytes(4 * MiB);
      const answer = post(port, body);
      const t0 = Date.now();
      while (warnings.length === 0 && Date.now() - t0 < 5000) await common.sleep(20);
      assert.strictEqual(warnings.length, 1, 'no SLUICE_POOL_DRY warning');
      assert.ok(Date.now() - dryAt < 1500, `warned ${Date.now() - dryAt} ms after the pool ran dry`);
      assert.match(warnings[0].message, /releaseBuffer/);
      // The handler dropped its chunks: a collection gives them back, and
      // the upload goes on. (Collections happen by themselves under load.)
      let settled = false;
      answer.then(() => { settled = true; }, () => { settled = true; });
      const t1 = Date.now();
      while (!settled && Date.now() - t1 < 15000) {
        gc();
        await common.sleep(20);
      }
      assert.strictEqual(await answer, common.sha256(body));
      assert.ok(pool.stats().reclaimed > 0, `reclaimed ${pool.stats().reclaimed}`);
      gc();
      await common.sleep(20);
      gc();
      await waitInUseZero(pool);
    } finally {
      process.removeListener('warning', onWarning);
    }
  });
});
