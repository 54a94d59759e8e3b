'use strict';

// Shared by the test/compression/*.test.js files: decoding a response body
// by its Content-Encoding, compressible bodies, and polling a condition.

const zlib = require('node:zlib');
const common = require('../common');

// The body as the client sees it once decoded (no header: as it is).
function decode(enc, buf) {
  switch (enc) {
    case 'gzip': return zlib.gunzipSync(buf);
    case 'deflate': return zlib.inflateSync(buf);
    case 'br': return zlib.brotliDecompressSync(buf);
    case undefined: return buf;
    default: throw new Error(`unexpected content-encoding ${enc}`);
  }
}

// A JSON array of exactly `bytes` characters (cut off at the end: the
// tests compare bytes, nobody parses it).
function jsonBody(bytes) {
  const items = [];
  let n = 0;
  for (let i = 0; n < bytes; i++) {
    const s = JSON.stringify({ id: i, name: `item-${i}`, tag: ['a', 'b', 'c'][i % 3], v: i * 7 % 113 });
    items.push(s);
    n += s.length + 1;
  }
  return ('[' + items.join(',') + ']').slice(0, bytes);
}

// Compressible text where every chunk is distinct (order mistakes show).
function textChunk(tag, bytes) {
  let s = '';
  for (let i = 0; s.length < bytes; i++) s += `${tag}:${i} lorem ipsum dolor sit amet ${i * 7919 % 10007}\n`;
  return s.slice(0, bytes);
}

// Resolves true once fn() is true, false after `ms` (a deadline: jobs run
// at nice +19 and a loaded machine can starve them for seconds).
async function waitFor(fn, ms = 30000) {
  const deadline = Date.now() + ms;
  for (;;) {
    if (fn()) return true;
    if (Date.now() > deadline) return false;
    await common.sleep(20);
  }
}

// The loop-lag check of the streamed-compression tests: a server (options
// from common.startServer) whose handler writes 8 x 1 MiB of text at once
// with gzip level 9, ignoring backpressure on purpose (inline compression
// would block for all of it in one tick), while a 1 ms interval measures
// the loop's lag; `fetch(port)` resolves with the response body (gzip).
// Returns the decoded length, the expected length, the largest lag seen
// and how long compressing it all inline takes on this machine.
async function loopLagWhileCompressing(fetch) {
  const binding = common.libInternal('common/binding');
  const chunk = Buffer.from(textChunk('lag', 1024 * 1024));
  const t0 = process.hrtime.bigint();
  binding.compressBuffer(1, 9, 4, Buffer.concat(Array(8).fill(chunk)));
  const inlineMs = Number(process.hrtime.bigint() - t0) / 1e6;
  let maxLag = 0;
  let lagTimer = null;
  const { port } = await common.startServer({ compression: { encodings: ['gzip'], level: 9 } }, (req, res) => {
    res.setHeader('Content-Type', 'text/plain');
    let last = Date.now();
    lagTimer = setInterval(() => {
      const now = Date.now();
      maxLag = Math.max(maxLag, now - last);
      last = now;
    }, 1);
    for (let i = 0; i < 8; i++) res.write(chunk);
    res.end();
  });
  try {
    const body = await fetch(port);
    return { decoded: zlib.gunzipSync(body).length, expected: 8 * chunk.length, maxLag, inlineMs };
  } finally {
    clearInterval(lagTimer);
  }
}

// The compression counters once no job of an earlier test is still on the
// threadpool: a leak check compares against these, and a job still running
// from before would end (and free its compressor) during the check.
async function quietStats() {
  const binding = common.libInternal('common/binding');
  await waitFor(() => {
    const st = binding.compressionStats();
    return st.jobs === 0 && st.running === 0 && st.waiting === 0;
  });
  return binding.compressionStats();
}

module.exports = { decode, jsonBody, textChunk, waitFor, quietStats, loopLagWhileCompressing };
