'use strict';
// file_server.js <sluice|node> --file-size N [--mode file|stream]
// Serves one file of N random bytes (written to a temp dir at startup,
// removed at exit) on every request:
//   sluice, mode file:   res.respondWithFile(path)  (the native pipe)
//   node / sluice, mode stream: fs.createReadStream(path).pipe(res) with
//                        Content-Length from the size known at startup (no
//                        per-request stat: a head start for the stream path)
// Prints "PORT <n>" when listening.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { loadImpl, parseArgs, serve } = require('../server_harness.js');

const opts = parseArgs(process.argv.slice(2), { fileSize: 1024, mode: 'file' });
const impl = opts._[0];
const http = loadImpl(impl);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-file-'));
const file = path.join(dir, `f${opts.fileSize}`);
fs.writeFileSync(file, crypto.randomBytes(opts.fileSize));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

const size = String(opts.fileSize);
const headers = { 'content-type': 'application/octet-stream' };

let handler;
if (opts.mode === 'file') {
  if (typeof http.ServerResponse.prototype.respondWithFile !== 'function') {
    throw new Error(`${impl} has no res.respondWithFile`);
  }
  handler = (req, res) => res.respondWithFile(file, headers);
} else {
  handler = (req, res) => {
    res.writeHead(200, { ...headers, 'content-length': size });
    fs.createReadStream(file).pipe(res);
  };
}

serve(http.createServer(handler));
