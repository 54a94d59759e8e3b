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

// Resolves true once fn() is true, false after `ms`.
async function waitFor(fn, ms = 5000) {
  const deadline = Date.now() + ms;
  for (;;) {
    if (fn()) return true;
    if (Date.now() > deadline) return false;
    await common.sleep(20);
  }
}

module.exports = { decode, jsonBody, textChunk, waitFor };
