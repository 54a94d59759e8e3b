'use strict';
// post_server.js <sluice|node> [--proto h1|h2] [--use-buffer-pool 0|1] [--json 0|1]
//
// Receives POST bodies over HTTP/1.1 (node:http / sluice) or h2c (node:http2
// createServer with the compat request handler / sluice, whose one port
// speaks both) and answers 'ok'.
//  --json 1   the handler joins the chunks and JSON.parse()s the body (an
//             API server), then releases the chunks; 0: each chunk is
//             released as it arrives (an upload sink).
//  --use-buffer-pool 1  (sluice only) requestBufferAllocator = pool.alloc;
//             the pool's bufferSize (64 KiB + 64) tells its chunks apart
//             (chunk.buffer.byteLength), counted as zero-copy bytes.
// Stats: bodyBytes, zeroCopyBytes, jsonErrors, pool stats.

const { loadImpl, parseArgs, serve } = require('../server_harness.js');

const opts = parseArgs(process.argv.slice(2), { useBufferPool: 0, json: 1, proto: 'h1' });
const impl = opts._[0];
const POOL_BUF = 64 * 1024 + 64;
const mod = loadImpl(impl, opts.proto === 'h2' ? 'node:http2' : 'node:http');

let pool = null;
const serverOptions = {};
if (opts.useBufferPool) {
  if (impl !== 'sluice') throw new Error('--use-buffer-pool 1 needs sluice');
  pool = mod.createBufferPool({ bufferSize: POOL_BUF, maxBuffers: 4096 });
  serverOptions.requestBufferAllocator = pool.alloc;
}
const release = pool ? mod.releaseBuffer : () => {};

let bodyBytes = 0;
let zeroCopyBytes = 0;
let jsonErrors = 0;

function onRequest(req, res) {
  const chunks = [];
  req.on('data', (chunk) => {
    bodyBytes += chunk.length;
    if (chunk.buffer.byteLength === POOL_BUF) zeroCopyBytes += chunk.length;
    if (opts.json) chunks.push(chunk);
    else release(chunk);
  });
  req.on('end', () => {
    if (opts.json && chunks.length > 0) {
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      try {
        JSON.parse(body);
      } catch {
        jsonErrors++;
      }
      for (const c of chunks) release(c);
    }
    res.end('ok');
  });
  req.on('error', () => {});
}

// node:http2's createServer is h2c with the compat request handler;
// sluice's one port answers both protocols.
const server = mod.createServer(serverOptions, onRequest);

serve(server, {
  onStats: () => ({ bodyBytes, zeroCopyBytes, jsonErrors, pool: pool ? pool.stats() : null }),
});
