'use strict';

// Zero-copy uploads (issue 3): request bodies are read straight into memory
// the requestBufferAllocator returned and handed out as views of it; a
// bounded pool keeps memory bounded (TCP backpressure when dry); every
// buffer comes back, also when clients abort; misbehaving allocators fall
// back (non-Buffer) or close only their connection (throw).
//
// All of this is sluice-only (node:http has no requestBufferAllocator).

const crypto = require('node:crypto');
const http = require('node:http');
const { Writable } = require('node:stream');
const common = require('../common');
const { assert } = common;

const sluice = common.impl;
const KiB = 1024;
const MiB = 1024 * 1024;

// Poll `pred` until it holds (the connection close that gives memory back
// happens asynchronously).
async function waitUntil(pred, ms = 3000, what = 'condition') {
  const t0 = Date.now();
  for (;;) {
    const r = pred();
    if (r) return r;
    if (Date.now() - t0 > ms) throw new Error(`timed out after ${ms} ms waiting for ${typeof what === 'function' ? what() : what}`);
    await common.sleep(10);
  }
}

function waitInUseZero(pool, ms = 3000) {
  return waitUntil(() => pool.stats().inUse === 0, ms,
                   () => `pool inUse to return to 0: ${JSON.stringify(pool.stats())}`);
}

// Wrap an allocator: remember every ArrayBuffer it returned, so that a
// chunk can be proven to be a view of allocator memory.
function tracking(alloc) {
  const memory = new Set();
  const sizes = [];
  const fn = function trackingAllocator(size) {
    sizes.push(size);
    const buf = alloc(size);
    if (Buffer.isBuffer(buf)) memory.add(buf.buffer);
    return buf;
  };
  fn.memory = memory;
  fn.sizes = sizes;
  fn.owns = (chunk) => memory.has(chunk.buffer);
  return fn;
}

// Handler: hashes the body, releases every chunk, answers
// { url, sha256, length, chunks, zeroCopyBytes }. `owns(chunk)` tells
// whether a chunk is allocator memory.
function hashHandler(errs, owns, onChunk) {
  return errs.wrap((req, res) => {
    const h = crypto.createHash('sha256');
    let length = 0;
    let chunks = 0;
    let zeroCopyBytes = 0;
    req.on('data', errs.wrap((chunk) => {
      assert.ok(Buffer.isBuffer(chunk), 'chunk is a Buffer');
      h.update(chunk);
      length += chunk.length;
      chunks++;
      if (owns && owns(chunk)) zeroCopyBytes += chunk.length;
      if (onChunk) onChunk(chunk, req);
      sluice.releaseBuffer(chunk);
    }));
    req.on('end', () => {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ url: req.url, sha256: h.digest('hex'), length, chunks, zeroCopyBytes }));
    });
  });
}

// Chunked transfer-coding of `body`, cut at `sizes` (cycled), with a chunk
// extension now and then.
function encodeChunked(body, sizes) {
  const parts = [];
  let off = 0;
  let i = 0;
  while (off < body.length) {
    const n = Math.min(sizes[i % sizes.length], body.length - off);
    const ext = i % 3 === 1 ? ';ext=v' : '';
    parts.push(Buffer.from(`${n.toString(16)}${ext}\r\n`), body.subarray(off, off + n), Buffer.from('\r\n'));
    off += n;
    i++;
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

function postCL(path, body) {
  return Buffer.concat([
    Buffer.from(`POST ${path} HTTP/1.1\r\nHost: h\r\nContent-Length: ${body.length}\r\n\r\n`), body,
  ]);
}

function postChunked(path, body, sizes) {
  return Buffer.concat([
    Buffer.from(`POST ${path} HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n`),
    encodeChunked(body, sizes),
  ]);
}

function parseJson(r) {
  assert.strictEqual(r.statusCode, 200, `status ${r.statusCode}: ${r.body}`);
  return JSON.parse(r.body.toString());
}

describe(`uploads: zero copy [${common.implName}]`, function () {
  afterEach(common.cleanup);

  common.sluiceOnly('a 16 MiB upload arrives in views of allocator memory (>= 90% of the bytes), intact', async function () {
    const errs = common.handlerErrors();
    const pool = sluice.createBufferPool();
    const alloc = tracking(pool.alloc);
    const { port } = await common.startServer({ requestBufferAllocator: alloc }, hashHandler(errs, alloc.owns));
    const body = crypto.randomBytes(16 * MiB);
    const r = await common.httpRequest(port, { method: 'POST', path: '/big', body, timeout: 15000 });
    errs.check();
    const j = parseJson(r);
    assert.strictEqual(j.length, body.length);
    assert.strictEqual(j.sha256, common.sha256(body));
    assert.ok(j.zeroCopyBytes >= 0.9 * body.length,
              `only ${j.zeroCopyBytes} of ${body.length} bytes (${(100 * j.zeroCopyBytes / body.length).toFixed(1)}%) arrived in allocator memory`);
    assert.ok(alloc.sizes.length > 0, 'the allocator was never called');
    for (const s of alloc.sizes) assert.ok(Number.isInteger(s) && s > 0, `allocator called with size ${s}`);
    // 16 MiB through 64 KiB buffers: the memory is recycled, not grown.
    assert.ok(pool.stats().allocated < 64, `pool grew to ${pool.stats().allocated} buffers for one upload`);
    await waitInUseZero(pool);
  });

  common.sluiceOnly('the views are subarrays of the allocator buffer (several chunks may share one buffer)', async function () {
    const errs = common.handlerErrors();
    const pool = sluice.createBufferPool();
    const alloc = tracking(pool.alloc);
    const views = [];
    const { port } = await common.startServer({ requestBufferAllocator: alloc }, hashHandler(errs, alloc.owns, (chunk) => {
      if (alloc.owns(chunk)) views.push([chunk.byteOffset, chunk.length, chunk.buffer.byteLength]);
    }));
    // Small client writes: a buffer is filled by several reads.
    const body = crypto.randomBytes(256 * KiB);
    const pieces = [];
    for (let off = 0; off < body.length; off += 4 * KiB) pieces.push(body.subarray(off, off + 4 * KiB));
    const c = await common.rawConnect(port);
    await c.write(`POST /v HTTP/1.1\r\nHost: h\r\nContent-Length: ${body.length}\r\n\r\n`);
    for (const p of pieces) {
      await c.write(p);
      await common.sleep(0);
    }
    const [r] = await c.responses(1);
    errs.check();
    const j = parseJson(r);
    assert.strictEqual(j.sha256, common.sha256(body));
    assert.ok(views.length > 0, 'no chunk was a view of allocator memory');
    for (const [off, len, cap] of views) assert.ok(off >= 0 && off + len <= cap, `view [${off}, ${off + len}) outside its ${cap}-byte buffer`);
    const sharing = views.filter(([off]) => off > 0).length;
    assert.ok(sharing > 0, 'every zero-copy chunk started at offset 0: buffers are not filled by several reads');
    c.destroy();
    await waitInUseZero(pool);
  });

  describe('data intact (sha256)', function () {
    let pool;
    let alloc;
    let port;
    let errs;

    beforeEach(async function () {
      if (common.isNode) return;
      errs = common.handlerErrors();
      pool = sluice.createBufferPool();
      alloc = tracking(pool.alloc);
      ({ port } = await common.startServer({ requestBufferAllocator: alloc }, hashHandler(errs, alloc.owns)));
    });

    common.sluiceOnly('Content-Length uploads of many sizes (node http client)', async function () {
      for (const size of [1, 100, 65535, 65536, 65537, 200000, 1 * MiB + 7]) {
        const body = crypto.randomBytes(size);
        const j = parseJson(await common.httpRequest(port, { method: 'POST', path: `/cl${size}`, body }));
        assert.strictEqual(j.length, size, `size ${size}`);
        assert.strictEqual(j.sha256, common.sha256(body), `size ${size}`);
      }
      errs.check();
      await waitInUseZero(pool);
    });

    common.sluiceOnly('chunked uploads (node http client writes, fetch stream, curl)', async function () {
      // node http client: several writes, no Content-Length → chunked.
      const parts = [crypto.randomBytes(10), crypto.randomBytes(100000), crypto.randomBytes(1), crypto.randomBytes(300 * KiB)];
      const all = Buffer.concat(parts);
      const r1 = await common.httpRequest(port, { method: 'POST', path: '/http', body: parts });
      let j = parseJson(r1);
      assert.strictEqual(j.sha256, common.sha256(all));
      assert.strictEqual(j.length, all.length);

      // fetch with a ReadableStream body (chunked).
      const streamed = crypto.randomBytes(512 * KiB);
      const stream = new ReadableStream({
        start(ctl) {
          for (let off = 0; off < streamed.length; off += 50000) ctl.enqueue(streamed.subarray(off, off + 50000));
          ctl.close();
        },
      });
      const fr = await common.withTimeout(fetch(`http://127.0.0.1:${port}/fetch`, {
        method: 'POST', body: stream, duplex: 'half', headers: { connection: 'close' },
      }), 8000, 'fetch');
      j = await fr.json();
      assert.strictEqual(j.sha256, common.sha256(streamed));

      // curl, chunked from stdin.
      const curled = crypto.randomBytes(700 * KiB);
      const cr = await common.curl(['-H', 'Transfer-Encoding: chunked', '--data-binary', '@-', `http://127.0.0.1:${port}/curl`], { input: curled });
      assert.strictEqual(cr.code, 0, cr.stderr);
      j = JSON.parse(cr.stdout.toString());
      assert.strictEqual(j.sha256, common.sha256(curled));
      assert.strictEqual(j.length, curled.length);
      errs.check();
      await waitInUseZero(pool);
    });

    common.sluiceOnly('chunked framing of odd chunk sizes (raw socket): views between the framing bytes', async function () {
      const body = crypto.randomBytes(400 * KiB);
      const wire = postChunked('/odd', body, [1, 2, 3, 65536, 7, 65535, 65537, 100000, 13]);
      const c = await common.rawConnect(port);
      await c.write(wire.subarray(0, 200));
      await common.sleep(20);
      await c.write(wire.subarray(200));
      const [r] = await c.responses(1);
      const j = parseJson(r);
      assert.strictEqual(j.sha256, common.sha256(body));
      assert.strictEqual(j.length, body.length);
      assert.ok(j.zeroCopyBytes >= 0.9 * body.length, `zero-copy bytes ${j.zeroCopyBytes} of ${body.length}`);
      errs.check();
      c.destroy();
      await waitInUseZero(pool);
    });

    common.sluiceOnly('pipelined uploads on one connection (Content-Length and chunked, in one write and in pieces)', async function () {
      const sizes = [5, 70000, 1, 300 * KiB, 65536, 0, 123457, 2 * MiB];
      const bodies = sizes.map((n) => crypto.randomBytes(n));
      const wire = Buffer.concat(bodies.map((b, i) => (i % 2 ? postChunked(`/p${i}`, b, [4096, 1, 70000, 333]) : postCL(`/p${i}`, b))));
      for (const mode of ['one write', 'pieces']) {
        const c = await common.rawConnect(port);
        if (mode === 'one write') {
          await c.write(wire);
        } else {
          for (let off = 0, k = 0; off < wire.length; k++) {
            const n = [1, 17, 1000, 65536, 99999][k % 5];
            await c.write(wire.subarray(off, off + n));
            off += n;
            if (k % 4 === 0) await common.sleep(0);
          }
        }
        const rs = await c.responses(bodies.length, {}, 10000);
        rs.forEach((r, i) => {
          const j = parseJson(r);
          assert.strictEqual(j.url, `/p${i}`, `${mode}: response ${i} out of order`);
          assert.strictEqual(j.length, bodies[i].length, `${mode}: /p${i} length`);
          assert.strictEqual(j.sha256, common.sha256(bodies[i]), `${mode}: /p${i} sha256`);
        });
        assert.strictEqual(c.closed, false);
        c.destroy();
      }
      errs.check();
      await waitInUseZero(pool);
    });

    common.sluiceOnly('uploads split into tiny writes (1-7 bytes, headers included)', async function () {
      this.timeout(30000);
      const a = crypto.randomBytes(12 * KiB);
      const b = crypto.randomBytes(12 * KiB);
      const wire = Buffer.concat([postCL('/tiny-cl', a), postChunked('/tiny-chunked', b, [1, 5, 1000, 3, 4096])]);
      const c = await common.rawConnect(port);
      let k = 0;
      for (let off = 0; off < wire.length; k++) {
        const n = 1 + (k * 5) % 7;
        const piece = wire.subarray(off, off + n);
        off += n;
        // wait for the write to complete so each piece is its own segment
        await c.write(piece);
        if (k % 8 === 0) await new Promise(setImmediate);
      }
      const rs = await c.responses(2, {}, 10000);
      let j = parseJson(rs[0]);
      assert.strictEqual(j.url, '/tiny-cl');
      assert.strictEqual(j.sha256, common.sha256(a));
      j = parseJson(rs[1]);
      assert.strictEqual(j.url, '/tiny-chunked');
      assert.strictEqual(j.sha256, common.sha256(b));
      assert.strictEqual(j.length, b.length);
      errs.check();
      c.destroy();
      await waitInUseZero(pool);
    });
  });

  describe('every read lands in allocator memory (heads too)', function () {
    // Keep-alive node client: several POSTs per connection, the first on a
    // fresh one; head and body leave in one write for the small sizes.
    for (const size of [1 * KiB, 16 * KiB, 1 * MiB]) {
      common.sluiceOnly(`${size / KiB} KiB POSTs: >= 90% of the body bytes are views of pool memory`, async function () {
        const errs = common.handlerErrors();
        const pool = sluice.createBufferPool();
        const alloc = tracking(pool.alloc);
        const { port } = await common.startServer({ requestBufferAllocator: alloc }, hashHandler(errs, alloc.owns));
        const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
        let bytes = 0;
        let zeroCopy = 0;
        try {
          const n = size >= MiB ? 8 : 40;
          await Promise.all(Array.from({ length: n }, async (_, i) => {
            const body = crypto.randomBytes(size);
            const r = await new Promise((resolve, reject) => {
              const req = http.request({ port, method: 'POST', path: `/z${i}`, agent, headers: { 'content-length': size } }, (res) => {
                const parts = [];
                res.on('data', (d) => parts.push(d));
                res.on('end', () => resolve({ statusCode: res.statusCode, body: Buffer.concat(parts) }));
              });
              req.on('error', reject);
              req.end(body);
            });
            const j = parseJson(r);
            assert.strictEqual(j.sha256, common.sha256(body));
            bytes += j.length;
            zeroCopy += j.zeroCopyBytes;
          }));
        } finally {
          agent.destroy();
        }
        errs.check();
        assert.ok(zeroCopy >= 0.9 * bytes, `${zeroCopy} of ${bytes} body bytes (${(100 * zeroCopy / bytes).toFixed(1)}%) were views of pool memory`);
        await waitInUseZero(pool);
      });
    }

    common.sluiceOnly('head and body in one write on a fresh connection: the body is a view of pool memory', async function () {
      const errs = common.handlerErrors();
      const pool = sluice.createBufferPool();
      const alloc = tracking(pool.alloc);
      const { port } = await common.startServer({ requestBufferAllocator: alloc }, hashHandler(errs, alloc.owns));
      const body = crypto.randomBytes(100);
      const c = await common.rawConnect(port);
      c.socket.write(postCL('/fresh', body));
      const [r] = await c.responses(1);
      errs.check();
      const j = parseJson(r);
      assert.strictEqual(j.sha256, common.sha256(body));
      assert.strictEqual(j.zeroCopyBytes, body.length);
      c.destroy();
      await waitInUseZero(pool);
    });

    common.sluiceOnly('an idle keep-alive connection holds no buffer; a trickled head holds none between reads', async function () {
      const pool = sluice.createBufferPool({ maxBuffers: 4 });
      const { port } = await common.startServer({ requestBufferAllocator: pool.alloc }, (req, res) => {
        req.on('data', (d) => sluice.releaseBuffer(d));
        req.on('end', () => res.end('ok'));
      });
      const c = await common.rawConnect(port);
      await c.write(postCL('/a', Buffer.alloc(500, 1)));
      await c.responses(1);
      await waitInUseZero(pool);
      assert.strictEqual(c.closed, false);
      // Half a head, then silence: nothing in the buffer is retained.
      await c.write('GET /b HTTP/1.1\r\nHo');
      await common.sleep(30);
      assert.strictEqual(pool.stats().inUse, 0, `a trickled head holds ${pool.stats().inUse} buffers`);
      await c.write('st: h\r\n\r\n');
      const rs = await c.responses(2);
      assert.strictEqual(rs[1].body.toString(), 'ok');
      c.destroy();
    });

    common.sluiceOnly('a dry pool stops body reads only: requests without a body keep being served', async function () {
      const pool = sluice.createBufferPool({ bufferSize: 16 * KiB, maxBuffers: 2 });
      const held = [];
      const { port } = await common.startServer({ requestBufferAllocator: pool.alloc }, (req, res) => {
        if (req.method === 'GET') return res.end('get ok');
        req.on('data', (d) => held.push(d));  // never released (yet)
        req.on('end', () => res.end('post ok'));
      });
      const up = await common.rawConnect(port);
      const body = crypto.randomBytes(256 * KiB);
      up.socket.write(postCL('/up', body));
      await waitUntil(() => pool.stats().inUse === 2, 3000, 'the pool to run dry');
      // Fresh connections with requests without a body are served anyway.
      for (let i = 0; i < 3; i++) {
        const r = await common.httpRequest(port, { path: `/g${i}` });
        assert.strictEqual(r.body.toString(), 'get ok');
      }
      for (const d of held.splice(0)) sluice.releaseBuffer(d);
      const timer = setInterval(() => { for (const d of held.splice(0)) sluice.releaseBuffer(d); }, 5);
      try {
        const [r] = await up.responses(1, {}, 10000);
        assert.strictEqual(r.body.toString(), 'post ok');
      } finally {
        clearInterval(timer);
        for (const d of held.splice(0)) sluice.releaseBuffer(d);
      }
      up.destroy();
      await waitInUseZero(pool);
    });
  });

  describe('bounded memory', function () {
    common.sluiceOnly('16 concurrent 4 MiB uploads through maxBuffers: 32 with a consumer that pauses per chunk', async function () {
      this.timeout(30000);
      const errs = common.handlerErrors();
      // An unusual bufferSize identifies pool memory (chunk.buffer.byteLength)
      // without wrapping pool.alloc (a wrapper is not the pool's allocator,
      // so "dry" would mean "copy" for it).
      const BUF = 60 * KiB;
      const pool = sluice.createBufferPool({ maxBuffers: 32, bufferSize: BUF });
      const peak = { allocated: 0, inUse: 0 };
      const sample = () => {
        const s = pool.stats();
        if (s.allocated > peak.allocated) peak.allocated = s.allocated;
        if (s.inUse > peak.inUse) peak.inUse = s.inUse;
      };
      let sampler = setInterval(sample, 2);
      try {
        let n = 0;
        const { port } = await common.startServer({ requestBufferAllocator: pool.alloc }, errs.wrap((req, res) => {
          const h = crypto.createHash('sha256');
          let length = 0;
          let zeroCopyBytes = 0;
          req.on('data', errs.wrap((chunk) => {
            sample();
            req.pause();
            h.update(chunk);
            length += chunk.length;
            if (chunk.buffer.byteLength === BUF) zeroCopyBytes += chunk.length;
            const later = () => {
              sample();
              sluice.releaseBuffer(chunk);
              req.resume();
            };
            if (n++ % 2) setImmediate(later);
            else common.setTimer(later, 1);
          }));
          req.on('end', () => res.end(JSON.stringify({ sha256: h.digest('hex'), length, zeroCopyBytes })));
        }));
        const bodies = Array.from({ length: 16 }, () => crypto.randomBytes(4 * MiB));
        const results = await Promise.all(bodies.map((body, i) => common.httpRequest(port, {
          method: 'POST', path: `/u${i}`, body, timeout: 25000,
        })));
        errs.check();
        results.forEach((r, i) => {
          const j = parseJson(r);
          assert.strictEqual(j.length, bodies[i].length, `upload ${i} length`);
          assert.strictEqual(j.sha256, common.sha256(bodies[i]), `upload ${i} sha256`);
          // A dry pool means TCP backpressure, never a fallback to copying.
          assert.ok(j.zeroCopyBytes >= 0.9 * j.length, `upload ${i}: only ${j.zeroCopyBytes} of ${j.length} bytes in pool memory (copied when the pool was dry?)`);
        });
        sample();
        assert.ok(peak.allocated <= 32, `allocated reached ${peak.allocated}`);
        assert.ok(peak.inUse <= 32, `inUse reached ${peak.inUse}`);
        assert.ok(peak.allocated > 0, 'the pool was never used');
        await waitInUseZero(pool);
      } finally {
        clearInterval(sampler);
        sampler = null;
      }
    });

    common.sluiceOnly('a tiny pool (maxBuffers: 2) shared by 4 concurrent uploads: all complete intact, one at a time if need be', async function () {
      this.timeout(20000);
      const errs = common.handlerErrors();
      const pool = sluice.createBufferPool({ maxBuffers: 2 });
      let maxAllocated = 0;
      const { port } = await common.startServer({ requestBufferAllocator: pool.alloc }, hashHandler(errs, null, () => {
        maxAllocated = Math.max(maxAllocated, pool.stats().allocated);
      }));
      const bodies = Array.from({ length: 4 }, () => crypto.randomBytes(1 * MiB));
      const results = await Promise.all(bodies.map((body, i) => common.httpRequest(port, {
        method: 'POST', path: `/t${i}`, body, timeout: 15000,
      })));
      errs.check();
      results.forEach((r, i) => assert.strictEqual(parseJson(r).sha256, common.sha256(bodies[i]), `upload ${i}`));
      assert.ok(maxAllocated <= 2);
      await waitInUseZero(pool);
    });

    common.sluiceOnly('req.pipe(slow Writable) holds only a few buffers of its connection', async function () {
      this.timeout(20000);
      const pool = sluice.createBufferPool();
      let maxInUse = 0;
      const sample = () => { maxInUse = Math.max(maxInUse, pool.stats().inUse); };
      const { port } = await common.startServer({ requestBufferAllocator: pool.alloc }, (req, res) => {
        const h = crypto.createHash('sha256');
        let length = 0;
        const slow = new Writable({
          highWaterMark: 64 * KiB,
          write(chunk, enc, cb) {
            sample();
            h.update(chunk);
            length += chunk.length;
            common.setTimer(() => {
              sluice.releaseBuffer(chunk);
              cb();
            }, 1);
          },
        });
        req.pipe(slow);
        slow.on('finish', () => res.end(JSON.stringify({ sha256: h.digest('hex'), length })));
      });
      const body = crypto.randomBytes(8 * MiB);
      const r = await common.httpRequest(port, { method: 'POST', body, timeout: 15000 });
      const j = parseJson(r);
      assert.strictEqual(j.sha256, common.sha256(body));
      assert.ok(maxInUse <= 8, `a slow piped consumer held ${maxInUse} buffers of one connection`);
      await waitInUseZero(pool);
    });
  });

  describe('buffers come back', function () {
    common.sluiceOnly('inUse returns to 0 after normal uploads', async function () {
      const errs = common.handlerErrors();
      const pool = sluice.createBufferPool();
      const { port } = await common.startServer({ requestBufferAllocator: pool.alloc }, hashHandler(errs));
      for (let i = 0; i < 5; i++) {
        const body = crypto.randomBytes(300 * KiB + i);
        const j = parseJson(await common.httpRequest(port, { method: 'POST', body }));
        assert.strictEqual(j.sha256, common.sha256(body));
      }
      errs.check();
      assert.ok(pool.stats().allocated > 0, 'pool unused');
      await waitInUseZero(pool);
    });

    // A connection that does not read (its request is paused, or the pool
    // is dry) cannot see its client go away (a paused node:http request
    // stops its socket too): the abort is noticed when it reads again. Each
    // case below makes it read again.
    common.sluiceOnly('inUse returns to 0 after clients abort mid-body (consuming, paused then resumed, destroyed while paused, holding chunks; Content-Length and chunked)', async function () {
      const pool = sluice.createBufferPool();
      const received = new Map();
      const closed = new Set();
      const paused = [];
      const { port } = await common.startServer({ requestBufferAllocator: pool.alloc }, (req, res) => {
        const url = req.url;
        received.set(url, 0);
        req.on('close', () => closed.add(url));
        req.on('error', () => {});
        const held = [];
        req.on('data', (chunk) => {
          received.set(url, received.get(url) + chunk.length);
          if (url.startsWith('/hold')) held.push(chunk);
          else sluice.releaseBuffer(chunk);
        });
        // The user gives back what it kept once the request is gone.
        req.on('close', () => { for (const c of held.splice(0)) sluice.releaseBuffer(c); });
        if (url.startsWith('/paused') || url.startsWith('/destroyed')) {
          // Reads nothing for now: chunks stay queued in the stream.
          req.pause();
          paused.push(req);
          received.set(url, 1);
        }
      });
      const cases = ['/consume-cl', '/consume-chunked', '/paused-cl', '/paused-chunked',
                     '/destroyed-cl', '/destroyed-chunked', '/hold-cl', '/hold-chunked'];
      const clients = [];
      for (const url of cases) {
        const c = await common.rawConnect(port);
        const body = crypto.randomBytes(400 * KiB);
        if (url.endsWith('-cl')) {
          await c.write(`POST ${url} HTTP/1.1\r\nHost: h\r\nContent-Length: ${4 * MiB}\r\n\r\n`);
          await c.write(body);
        } else {
          // stops in the middle of a chunk
          const wire = encodeChunked(Buffer.concat([body, crypto.randomBytes(MiB)]), [100000]);
          await c.write(`POST ${url} HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n`);
          await c.write(wire.subarray(0, 400 * KiB + 50));
        }
        clients.push(c);
      }
      await waitUntil(() => cases.every((u) => received.get(u) > 0), 3000,
                      () => `the server to receive body bytes on every connection: ${JSON.stringify([...received])}`);
      await common.sleep(50);
      assert.ok(pool.stats().inUse > 0, 'no pool memory was in use mid-body');
      assert.ok(paused.every((r) => r.readableLength > 0), 'a paused request has no queued chunk');
      for (const c of clients) c.destroy();
      await common.sleep(50);
      for (const r of paused) {
        // Server-side destroy with chunks still queued in the stream.
        if (r.url.startsWith('/destroyed')) r.destroy();
        else r.resume();
      }
      await waitUntil(() => closed.size === cases.length, 3000, () => `req 'close' on every request: ${[...closed]}`);
      await waitInUseZero(pool);
    });

    common.sluiceOnly('a dry pool with stalled connections: aborted clients give everything back once memory returns, and the pool serves again', async function () {
      const pool = sluice.createBufferPool({ maxBuffers: 2 });
      const held = [];
      let holding = true;
      let stalledRequests = 0;
      let closedRequests = 0;
      const errs = common.handlerErrors();
      const okHandler = hashHandler(errs);
      const { port } = await common.startServer({ requestBufferAllocator: pool.alloc }, (req, res) => {
        if (req.url === '/ok') return okHandler(req, res);
        stalledRequests++;
        req.on('error', () => {});
        req.on('close', () => closedRequests++);
        // Keeps every chunk (until told otherwise): the pool runs dry and
        // the connections stall.
        req.on('data', (chunk) => {
          if (holding) held.push(chunk);
          else sluice.releaseBuffer(chunk);
        });
        return undefined;
      });
      const clients = [];
      for (let i = 0; i < 3; i++) {
        const c = await common.rawConnect(port);
        c.socket.write(`POST /stall${i} HTTP/1.1\r\nHost: h\r\nContent-Length: ${8 * MiB}\r\n\r\n`);
        c.socket.write(crypto.randomBytes(2 * MiB));
        clients.push(c);
      }
      await waitUntil(() => stalledRequests === 3 && pool.stats().inUse === 2, 3000,
                      () => `the pool to run dry: ${stalledRequests} requests, ${JSON.stringify(pool.stats())}`);
      await common.sleep(50);
      assert.strictEqual(pool.stats().allocated, 2);
      for (const c of clients) c.destroy();
      await common.sleep(50);
      // The consumer catches up: memory comes back, the stalled connections
      // read again, find their clients gone and give everything back.
      holding = false;
      for (const c of held.splice(0)) sluice.releaseBuffer(c);
      await waitUntil(() => closedRequests === 3, 3000, () => `req 'close' on the 3 stalled requests (${closedRequests})`);
      await waitInUseZero(pool);
      // The pool is not wedged: a new upload goes through it.
      const body = crypto.randomBytes(1 * MiB);
      const j = parseJson(await common.httpRequest(port, { method: 'POST', path: '/ok', body }));
      assert.strictEqual(j.sha256, common.sha256(body));
      errs.check();
      await waitInUseZero(pool);
    });
  });

  describe('release', function () {
    common.sluiceOnly('releasing a chunk twice throws ERR_SLUICE_BUFFER_RELEASED (releaseBuffer and pool.release)', async function () {
      const pool = sluice.createBufferPool();
      const alloc = tracking(pool.alloc);
      const outcomes = [];
      const { port } = await common.startServer({ requestBufferAllocator: alloc }, (req, res) => {
        let tested = 0;
        req.on('data', (chunk) => {
          if (!alloc.owns(chunk) || tested >= 2) {
            sluice.releaseBuffer(chunk);
            return;
          }
          const release = tested++ === 0 ? sluice.releaseBuffer : pool.release;
          const o = { first: null, second: null };
          try { release(chunk); } catch (e) { o.first = e; }
          try { release(chunk); } catch (e) { o.second = e; }
          outcomes.push(o);
        });
        req.on('end', () => res.end('ok'));
      });
      const body = crypto.randomBytes(1 * MiB);
      const r = await common.httpRequest(port, { method: 'POST', body });
      assert.strictEqual(r.body.toString(), 'ok');
      assert.strictEqual(outcomes.length, 2, 'fewer than two zero-copy chunks');
      for (const o of outcomes) {
        assert.strictEqual(o.first, null, `first release threw ${o.first}`);
        assert.ok(o.second instanceof Error, 'second release did not throw');
        assert.strictEqual(o.second.code, 'ERR_SLUICE_BUFFER_RELEASED');
      }
      await waitInUseZero(pool);
    });

    common.sluiceOnly('poison: a chunk kept after its release reads 0xDB', async function () {
      const pool = sluice.createBufferPool({ poison: true });
      const alloc = tracking(pool.alloc);
      let kept = null;
      let keptCopy = null;
      const { port } = await common.startServer({ requestBufferAllocator: alloc }, (req, res) => {
        req.on('data', (chunk) => {
          if (kept === null && alloc.owns(chunk) && chunk.length >= 1024) {
            kept = chunk;
            keptCopy = Buffer.from(chunk);
          }
          sluice.releaseBuffer(chunk);
        });
        req.on('end', () => res.end('ok'));
      });
      const body = crypto.randomBytes(512 * KiB);
      const r = await common.httpRequest(port, { method: 'POST', body });
      assert.strictEqual(r.body.toString(), 'ok');
      assert.ok(kept !== null, 'no zero-copy chunk of at least 1 KiB');
      assert.ok(body.includes(keptCopy), 'the kept chunk did not hold body bytes when delivered');
      await waitInUseZero(pool);
      assert.ok(kept.every((b) => b === 0xdb), `released memory is not poisoned: ${kept.subarray(0, 16).toString('hex')}`);
    });
  });

  describe('allocator fallbacks and failures', function () {
    for (const [name, ret] of [
      ['undefined', () => undefined],
      ['null', () => null],
      ['a string', () => 'memory'],
      ['a plain object', () => ({ length: 65536 })],
      ['a Uint8Array (not a Buffer)', (size) => new Uint8Array(size)],
      ['a zero-length Buffer', () => Buffer.alloc(0)],
    ]) {
      common.sluiceOnly(`an allocator returning ${name} falls back to copying and delivers intact data`, async function () {
        const errs = common.handlerErrors();
        let calls = 0;
        const allocator = (size) => {
          calls++;
          return ret(size);
        };
        const { port } = await common.startServer({ requestBufferAllocator: allocator }, hashHandler(errs));
        const body = crypto.randomBytes(1 * MiB + 3);
        const j = parseJson(await common.httpRequest(port, { method: 'POST', path: '/cl', body }));
        assert.strictEqual(j.sha256, common.sha256(body));
        assert.strictEqual(j.length, body.length);
        const chunked = [crypto.randomBytes(70000), crypto.randomBytes(200000)];
        const j2 = parseJson(await common.httpRequest(port, { method: 'POST', path: '/chunked', body: chunked }));
        assert.strictEqual(j2.sha256, common.sha256(Buffer.concat(chunked)));
        errs.check();
        assert.ok(calls > 0, 'the allocator was never called');
      });
    }

    common.sluiceOnly('an allocator that alternates Buffers and non-Buffers: intact data, zero copy where it gave memory', async function () {
      const errs = common.handlerErrors();
      const pool = sluice.createBufferPool();
      let k = 0;
      const alloc = tracking((size) => (k++ % 2 ? pool.alloc(size) : undefined));
      const { port } = await common.startServer({ requestBufferAllocator: alloc }, hashHandler(errs, alloc.owns));
      const body = crypto.randomBytes(4 * MiB);
      const j = parseJson(await common.httpRequest(port, { method: 'POST', body }));
      errs.check();
      assert.strictEqual(j.sha256, common.sha256(body));
      assert.ok(j.zeroCopyBytes > 0, 'no chunk in allocator memory');
      assert.ok(j.zeroCopyBytes < body.length, 'every chunk in allocator memory although half the calls returned undefined');
      await waitInUseZero(pool);
    });

    common.sluiceOnly('an allocator that throws closes only that connection; req and server see the error', async function () {
      const errs = common.handlerErrors();
      const pool = sluice.createBufferPool();
      const boomError = new Error('allocator boom');
      let armed = false;
      let thrown = 0;
      const allocator = (size) => {
        if (armed) {
          armed = false;
          thrown++;
          throw boomError;
        }
        return pool.alloc(size);
      };
      const reqErrors = [];
      const clientErrors = [];
      let boomReq = null;
      const okHandler = hashHandler(errs);
      const { server, port } = await common.startServer({ requestBufferAllocator: allocator }, (req, res) => {
        if (req.url !== '/boom') return okHandler(req, res);
        boomReq = req;
        req.on('error', (e) => reqErrors.push(e));
        req.on('data', (chunk) => sluice.releaseBuffer(chunk));
        req.on('end', () => res.end('should not end'));
        // The next memory sluice asks for is for this request's body.
        armed = true;
        return undefined;
      });
      server.on('clientError', (e, socket) => clientErrors.push(e));

      // A: an upload in progress on another connection.
      const aBody = crypto.randomBytes(1 * MiB);
      const a = await common.rawConnect(port);
      await a.write(`POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: ${aBody.length}\r\n\r\n`);
      await a.write(aBody.subarray(0, 10 * KiB));

      // B: headers first; the body once the handler armed the allocator.
      const b = await common.rawConnect(port);
      await b.write(`POST /boom HTTP/1.1\r\nHost: h\r\nContent-Length: ${1 * MiB}\r\n\r\n`);
      await waitUntil(() => boomReq !== null, 3000, 'the /boom request');
      b.socket.write(crypto.randomBytes(1 * MiB));
      await b.waitClose(3000);
      assert.strictEqual(thrown, 1);
      assert.strictEqual(b.data.length, 0, `B got a response: ${JSON.stringify(b.text.slice(0, 200))}`);
      await waitUntil(() => reqErrors.length > 0 && clientErrors.length > 0, 2000,
                      () => `errors: req ${reqErrors.length}, clientError ${clientErrors.length}`);
      assert.strictEqual(reqErrors[0], boomError);
      assert.strictEqual(clientErrors[0], boomError);
      assert.strictEqual(boomReq.aborted, true);

      // A keeps working: the rest of its upload, then another request.
      await a.write(aBody.subarray(10 * KiB));
      let [r] = await a.responses(1);
      assert.strictEqual(parseJson(r).sha256, common.sha256(aBody));
      const aBody2 = crypto.randomBytes(300 * KiB);
      await a.write(postCL('/a2', aBody2));
      const rs = await a.responses(2);
      r = rs[1];
      assert.strictEqual(parseJson(r).sha256, common.sha256(aBody2));
      assert.strictEqual(a.closed, false);
      // and new connections too
      const j = parseJson(await common.httpRequest(port, { method: 'POST', path: '/c', body: aBody2 }));
      assert.strictEqual(j.sha256, common.sha256(aBody2));
      errs.check();
      assert.strictEqual(reqErrors.length, 1);
      assert.strictEqual(clientErrors.length, 1);
      a.destroy();
      // Nothing leaked by the failed connection.
      await waitInUseZero(pool);
    });

    common.sluiceOnly('an allocator that throws with no error listeners still closes only that connection', async function () {
      const pool = sluice.createBufferPool();
      let armed = false;
      const allocator = (size) => {
        if (armed) {
          armed = false;
          throw new Error('boom, unobserved');
        }
        return pool.alloc(size);
      };
      let boomSeen = false;
      const errs = common.handlerErrors();
      const okHandler = hashHandler(errs);
      const { port } = await common.startServer({ requestBufferAllocator: allocator }, (req, res) => {
        if (req.url !== '/boom') return okHandler(req, res);
        boomSeen = true;
        req.on('data', (chunk) => sluice.releaseBuffer(chunk));
        armed = true;
        return undefined;
      });
      const b = await common.rawConnect(port);
      await b.write(`POST /boom HTTP/1.1\r\nHost: h\r\nContent-Length: ${1 * MiB}\r\n\r\n`);
      await waitUntil(() => boomSeen, 3000, 'the /boom request');
      b.socket.write(crypto.randomBytes(1 * MiB));
      await b.waitClose(3000);
      const body = crypto.randomBytes(200 * KiB);
      const j = parseJson(await common.httpRequest(port, { method: 'POST', body }));
      assert.strictEqual(j.sha256, common.sha256(body));
      errs.check();
      await waitInUseZero(pool);
    });
  });
});
