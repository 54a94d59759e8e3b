'use strict';
// file_server.js <sluice|node> --file-size N [--mode file|stream|memory|compat]
// HTTP/2 (h2c, prior knowledge) file responses. Serves one file of N random
// bytes (written to a temp dir at startup, removed at exit) on every stream:
//   mode file:   stream.respondWithFile(path, headers)
//                (sluice: the native pipe into NO_COPY DATA frames;
//                 node:http2: its own FileHandle pipe)
//   mode stream: stream.respond(headers with content-length) and
//                fs.createReadStream(path).pipe(stream)
//   mode memory: stream.respond(headers); stream.end(buf) with the file's
//                bytes held in memory (the per-stream JS path, no file I/O)
//   mode compat: the same through the compat API: a 'request' listener,
//                res.writeHead(200, headers with content-length); res.end(buf)
// Prints "PORT <n>" when listening.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { loadImpl, parseArgs, serve } = require('../server_harness.js');

const opts = parseArgs(process.argv.slice(2), { fileSize: 1024, mode: 'file', keepAliveTimeout: 0 });
const impl = opts._[0];
const mod = loadImpl(impl, 'node:http2');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-h2file-'));
const file = path.join(dir, `f${opts.fileSize}`);
fs.writeFileSync(file, crypto.randomBytes(opts.fileSize));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

const headers = { 'content-type': 'application/octet-stream' };
// h2load runs up to 100 streams per connection (-m 100); node's default
// limit is 100 concurrent streams too, set explicitly on both.
// --keep-alive-timeout MS (sluice): callgrind_hello.sh raises it, as under
// callgrind a loop turn can outlast 5 s.
const server = impl === 'sluice' ?
  mod.createServer({ http2: { maxConcurrentStreams: 256 },
    ...(opts.keepAliveTimeout > 0 ? { keepAliveTimeout: opts.keepAliveTimeout } : {}) }) :
  mod.createServer({ settings: { maxConcurrentStreams: 256 } });

const body = fs.readFileSync(file);
const memHeaders = { ...headers, ':status': 200, 'content-length': opts.fileSize };
const compatHeaders = { ...headers, 'content-length': opts.fileSize };
if (opts.mode === 'compat') {
  server.on('request', (req, res) => {
    res.writeHead(200, compatHeaders);
    res.end(body);
  });
} else server.on('stream', opts.mode === 'file' ? (stream) => {
  stream.respondWithFile(file, headers);
} : opts.mode === 'memory' ? (stream) => {
  stream.respond(memHeaders);
  stream.end(body);
} : (stream) => {
  stream.respond({ ...headers, ':status': 200, 'content-length': opts.fileSize });
  fs.createReadStream(file).pipe(stream);
});

serve(server);
