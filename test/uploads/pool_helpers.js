'use strict';

// Helpers of the upload tests that run with a buffer pool (HTTP/1.1 and
// HTTP/2 stream idioms, HTTP/2 and HTTP/3 zero copy).

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const common = require('../common');

const KiB = 1024;
const MiB = 1024 * KiB;

// Pool buffers of an unusual size, so that a chunk of pool memory is told
// apart by chunk.buffer.byteLength === BUF.
const BUF = 64 * KiB + 64;
function pool(maxBuffers) {
  return common.impl.createBufferPool({ bufferSize: BUF, maxBuffers });
}

// A path in a fresh temporary directory.
function tmpFile(name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-uploads-'));
  return path.join(dir, name);
}

// Polls `pred` every 10 ms; throws after `ms` naming what(), if given.
async function waitUntil(pred, ms, what = () => 'condition') {
  const t0 = Date.now();
  while (!pred()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out after ${ms} ms waiting for ${what()}`);
    await common.sleep(10);
  }
}

// Every buffer of `p` back (connections close and give theirs back
// asynchronously).
function waitInUseZero(p) {
  return waitUntil(() => p.stats().inUse === 0, 3000,
    () => `pool inUse to return to 0: ${JSON.stringify(p.stats())}`);
}

// Hashes a body, releasing each chunk: done({ sha, length, pooled } as
// JSON) at its end (pooled: bytes that were views of pool memory, told by
// BUF). For the HTTP/2 and HTTP/3 zero-copy tests.
function hashBody(readable, done) {
  const h = crypto.createHash('sha256');
  let length = 0;
  let pooled = 0;
  readable.on('data', (chunk) => {
    h.update(chunk);
    length += chunk.length;
    if (chunk.buffer.byteLength === BUF) pooled += chunk.length;
    common.impl.releaseBuffer(chunk);
  });
  readable.on('end', () => done(JSON.stringify({ sha: h.digest('hex'), length, pooled })));
}

module.exports = { KiB, MiB, BUF, pool, tmpFile, waitUntil, waitInUseZero, hashBody };
