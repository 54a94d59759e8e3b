'use strict';
// secure_server.js <sluice|node-https|node-http2> --mode hello|upload|file
//                  [--use-buffer-pool 0|1] [--file-size N]
//
// A TLS server with a certificate made at start (openssl CLI, EC P-256):
//   sluice      sluice.createSecureServer (h2 + http/1.1 by ALPN)
//   node-https  https.createServer (HTTP/1.1)
//   node-http2  http2.createSecureServer({ allowHTTP1: true })
// Modes: hello (res.end('hello')), upload (consume a POST body, answer
// 'ok'; with --use-buffer-pool 1 sluice reads into a pool and releases each
// chunk), file (respondWithFile of a --file-size file: sluice's and
// node:http2's stream API; node-https pipes an fs stream).
// Prints "PORT <n>" when listening.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { loadImpl, parseArgs, serve } = require('../server_harness.js');

const opts = parseArgs(process.argv.slice(2), { mode: 'hello', useBufferPool: 0, fileSize: 65536 });
const impl = opts._[0];

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-tls-'));
execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
  '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=localhost'],
{ stdio: 'ignore' });
const tlsOptions = { key: fs.readFileSync(path.join(dir, 'key.pem')), cert: fs.readFileSync(path.join(dir, 'cert.pem')) };
const file = path.join(dir, 'file.bin');
if (opts.mode === 'file') fs.writeFileSync(file, Buffer.alloc(opts.fileSize, 'f'));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

let lib;
let pool = null;
const options = { ...tlsOptions };
if (impl === 'sluice') {
  lib = loadImpl('sluice');
  if (opts.useBufferPool) {
    pool = lib.createBufferPool({ bufferSize: 65536, maxBuffers: 4096 });
    options.requestBufferAllocator = pool.alloc;
  }
} else if (impl === 'node-https') {
  lib = require('node:https');
} else if (impl === 'node-http2') {
  lib = require('node:http2');
  options.allowHTTP1 = true;
} else {
  throw new Error(`unknown server ${impl}`);
}
const release = pool ? lib.releaseBuffer : () => {};

function handler(req, res) {
  if (opts.mode === 'upload') {
    req.on('data', release);
    req.on('end', () => res.end('ok'));
    return;
  }
  if (opts.mode === 'file' && impl === 'node-https') {
    res.setHeader('content-length', opts.fileSize);
    fs.createReadStream(file).pipe(res);
    return;
  }
  res.end('hello');
}

const server = impl === 'node-https' ? lib.createServer(options, handler) :
  lib.createSecureServer(options, opts.mode === 'file' ? undefined : handler);
if (opts.mode === 'file' && impl !== 'node-https') {
  server.on('stream', (stream) => stream.respondWithFile(file, { 'content-type': 'application/octet-stream' }));
}
serve(server, { onStats: () => (pool ? { pool: pool.stats() } : {}) });
