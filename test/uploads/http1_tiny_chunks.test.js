'use strict';

// Pathological chunking: bodies of 1-byte chunks, or sent one byte per
// segment, arrive intact and cost a bounded number of JS objects. sluice
// coalesces what one read holds of a body into one chunk natively (node
// emits one 'data' per chunk of the chunked coding); with a buffer pool the
// coalesced chunk is still a view of pool memory, and the pool is not grown
// by a trickle. The bounds are counts ('data' events, pool buffers), never
// RSS or time, so they cannot flake; test/soak/tiny_chunks.js measures RSS.

const crypto = require('node:crypto');
const common = require('../common');
const { assert } = common;

const sluice = common.impl;

// Chunked coding of `body`, one chunk per `size` bytes; every third chunk
// carries an extension (framing bytes between the data bytes vary).
function chunked(body, size = 1) {
  const parts = [];
  for (let off = 0, i = 0; off < body.length; off += size, i++) {
    const piece = body.subarray(off, off + size);
    parts.push(Buffer.from(`${piece.length.toString(16)}${i % 3 === 1 ? ';e=1' : ''}\r\n`), piece, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

// Handler: counts 'data' events, hashes the body, releases each chunk;
// `owns(chunk)` tells whether a chunk is pool memory.
function countingHandler(errs, owns) {
  return errs.wrap((req, res) => {
    const h = crypto.createHash('sha256');
    let events = 0;
    let length = 0;
    let copied = 0;
    req.on('data', errs.wrap((chunk) => {
      events++;
      length += chunk.length;
      if (owns && !owns(chunk)) copied += chunk.length;
      h.update(chunk);
      if (common.isSluice) sluice.releaseBuffer(chunk);
    }));
    req.on('end', () => res.end(JSON.stringify({ events, length, copied, sha256: h.digest('hex') })));
  });
}

function poolOwner() {
  const memory = new Set();
  return {
    wrap(alloc) {
      return function trackingAllocator(size) {
        const b = alloc(size);
        if (Buffer.isBuffer(b)) memory.add(b.buffer);
        return b;
      };
    },
    owns: (chunk) => memory.has(chunk.buffer),
  };
}

async function waitInUseZero(pool) {
  const t0 = Date.now();
  while (pool.stats().inUse !== 0) {
    if (Date.now() - t0 > 3000) throw new Error(`pool inUse stuck: ${JSON.stringify(pool.stats())}`);
    await common.sleep(10);
  }
}

// A countingHandler server whose reads land in a pool of 8 buffers of
// `bufferSize` bytes; the handler reports pool memory as not copied.
async function startPoolServer(bufferSize) {
  const errs = common.handlerErrors();
  const pool = sluice.createBufferPool({ bufferSize, maxBuffers: 8 });
  const owner = poolOwner();
  const { port } = await common.startServer({ requestBufferAllocator: owner.wrap(pool.alloc) },
                                            countingHandler(errs, owner.owns));
  return { errs, pool, port };
}

describe(`uploads: pathological chunking [${common.implName}]`, function () {
  afterEach(common.cleanup);
  this.timeout(20000);

  it('4000 one-byte chunks in one write: intact; sluice delivers them in a few \'data\' events', async function () {
    const errs = common.handlerErrors();
    const { port } = await common.startServer(countingHandler(errs));
    const body = crypto.randomBytes(4000);
    const c = await common.rawConnect(port);
    c.socket.write(Buffer.concat([
      Buffer.from('POST /t HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n'), chunked(body),
    ]));
    const [r] = await c.responses(1);
    errs.check();
    const j = JSON.parse(r.body.toString());
    assert.strictEqual(j.length, body.length);
    assert.strictEqual(j.sha256, common.sha256(body));
    // 26 KB in one write reaches the server in one read or a few; node
    // emits one event per chunk (4000).
    if (common.isSluice) assert.ok(j.events <= 16, `${j.events} 'data' events for one write of 4000 chunks`);
    c.destroy();
  });

  common.sluiceOnly('with a pool: the coalesced chunks are views of pool memory, one buffer serves the body', async function () {
    const { errs, pool, port } = await startPoolServer(65536);
    const body = crypto.randomBytes(6000);
    const wire = chunked(body);
    const c = await common.rawConnect(port);
    // The head alone first: the body's reads land in pool memory.
    await c.write('POST /p HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n');
    await common.sleep(20);
    await c.write(wire);
    const [r] = await c.responses(1);
    errs.check();
    const j = JSON.parse(r.body.toString());
    assert.strictEqual(j.length, body.length);
    assert.strictEqual(j.sha256, common.sha256(body));
    assert.strictEqual(j.copied, 0, `${j.copied} body bytes were copied`);
    assert.ok(j.events <= 16, `${j.events} 'data' events for one write of 6000 chunks`);
    assert.ok(pool.stats().allocated <= 2, `pool grew to ${pool.stats().allocated} buffers`);
    c.destroy();
    await waitInUseZero(pool);
  });

  common.sluiceOnly('with a pool: chunk framing cut at every 1-7 bytes, in separate segments, compacts correctly', async function () {
    const { errs, pool, port } = await startPoolServer(4096);
    const body = crypto.randomBytes(3000);
    const wire = Buffer.concat([
      Buffer.from('POST /s HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n'),
      chunked(body.subarray(0, 1000), 1).subarray(0, -5), chunked(body.subarray(1000), 3).subarray(0, -5),
    ]);
    const c = await common.rawConnect(port);
    for (let off = 0, k = 0; off < wire.length; k++) {
      const n = 1 + (k * 5) % 7;
      await c.write(wire.subarray(off, off + n));
      off += n;
    }
    await c.write('0\r\n\r\n');
    const [r] = await c.responses(1);
    errs.check();
    const j = JSON.parse(r.body.toString());
    assert.strictEqual(j.length, body.length);
    assert.strictEqual(j.sha256, common.sha256(body));
    c.destroy();
    await waitInUseZero(pool);
  });

  it('a Content-Length body sent one byte per segment: intact; with a pool sluice retains at most 2 buffers', async function () {
    const errs = common.handlerErrors();
    const pool = common.isSluice ? sluice.createBufferPool({ bufferSize: 16384, maxBuffers: 64 }) : null;
    const { port } = await common.startServer(pool ? { requestBufferAllocator: pool.alloc } : {},
                                              countingHandler(errs));
    const body = crypto.randomBytes(3000);
    const c = await common.rawConnect(port);
    await c.write(`POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: ${body.length}\r\n\r\n`);
    let maxInUse = 0;
    for (let i = 0; i < body.length; i++) {
      await c.write(body.subarray(i, i + 1));
      if (pool) maxInUse = Math.max(maxInUse, pool.stats().inUse);
    }
    const [r] = await c.responses(1);
    errs.check();
    const j = JSON.parse(r.body.toString());
    assert.strictEqual(j.sha256, common.sha256(body));
    assert.ok(j.events <= body.length);
    if (pool) {
      // 3000 reads of 1 byte fill one 16 KiB buffer; it is not replaced
      // per read, and chunks released at once do not pile up.
      assert.ok(maxInUse <= 2, `${maxInUse} pool buffers in use at once`);
      assert.ok(pool.stats().allocated <= 2, `pool grew to ${pool.stats().allocated} buffers`);
      c.destroy();
      await waitInUseZero(pool);
    }
  });
});
