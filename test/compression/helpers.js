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

// The HTTP/2 and HTTP/3 tests' application: bodies by name (small: under
// the default threshold; mid: compressed inline; big: on the threadpool)
// and a handler for each API, steered by the query: ?type= ?status=
// ?optout ?ce= ?cl (content-length) ?vary= ?buffer ?stream (a 206 gets a
// Content-Range). { bodies, params, streamHandler, compatHandler }.
function h2App() {
  const bodies = {
    small: jsonBody(600),
    mid: jsonBody(8 * 1024),
    big: jsonBody(300 * 1024),
  };
  // A request path: its body's name and the query.
  const params = (p) => {
    const u = new URL(p, 'http://x');
    return { name: u.pathname.slice(1), q: u.searchParams };
  };
  function streamHandler(stream, headers) {
    const { name, q } = params(headers[':path']);
    const body = bodies[name] || '';
    const h = { ':status': q.has('status') ? Number(q.get('status')) : 200 };
    h['content-type'] = q.has('type') ? q.get('type') : 'application/json; charset=utf-8';
    if (q.has('ce')) h['content-encoding'] = q.get('ce');
    if (q.has('cl')) h['content-length'] = Buffer.byteLength(body);
    if (q.has('vary')) h.vary = q.get('vary');
    if (h[':status'] === 206) h['content-range'] = `bytes 0-${body.length - 1}/${body.length}`;
    stream.respond(h, q.has('optout') ? { compress: false } : undefined);
    if (stream.writableEnded) return;  // HEAD, 204, 304: ended by respond
    if (q.has('stream')) {
      stream.write(body.slice(0, 1000));
      setImmediate(() => stream.end(Buffer.from(body.slice(1000))));
    } else {
      stream.end(q.has('buffer') ? Buffer.from(body) : body);
    }
  }
  function compatHandler(req, res) {
    const { name, q } = params(req.url);
    const body = bodies[name] || '';
    res.setHeader('Content-Type', q.has('type') ? q.get('type') : 'application/json; charset=utf-8');
    if (q.has('status')) res.statusCode = Number(q.get('status'));
    if (res.statusCode === 206) res.setHeader('Content-Range', `bytes 0-${body.length - 1}/${body.length}`);
    if (q.has('optout')) res.compress = false;
    if (q.has('ce')) res.setHeader('Content-Encoding', q.get('ce'));
    if (q.has('cl')) res.setHeader('Content-Length', Buffer.byteLength(body));
    if (q.has('vary')) res.setHeader('Vary', q.get('vary'));
    if (q.has('stream')) {
      res.write(body.slice(0, 1000));
      setImmediate(() => res.end(Buffer.from(body.slice(1000))));
    } else {
      res.end(q.has('buffer') ? Buffer.from(body) : body);
    }
  }
  return { bodies, params, streamHandler, compatHandler };
}

module.exports = { decode, jsonBody, textChunk, waitFor, quietStats, loopLagWhileCompressing, h2App };
