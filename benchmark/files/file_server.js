'use strict';
// file_server.js <sluice|node> --file-size N --proto h2|h1
//                [--cache default|on|off] [--sendfile on|off]
//                [--mode file|static|express]
// --cache: sluice's openFileCache option: not given (default: static mounts
// and the middleware use the cache, respondWithFile does not), true, false.
// --sendfile off: sluice's `sendfile: false` (HTTP/1.1 file bodies read +
// writev instead of sendfile(2)).
// One file of N random bytes (written to a temp dir at startup, removed at
// exit), served at /f on every request:
//   sluice: stream.respondWithFile (h2c) / res.respondWithFile (HTTP/1.1),
//           with the open-file cache (`openFileCache: true`) when --cache on
//   node:   node:http2 stream.respondWithFile (h2c) /
//           node:http fs.createReadStream(path).pipe(res) (HTTP/1.1)
// --mode static: the directory holding f is served at / instead:
//   sluice: server.serveStatic('/', dir) (no JS per request); the request
//           handler is never reached
//   node:   the `serve-static` middleware (express.static) on node:http
//           (HTTP/1.1) or on the node:http2 compat API (h2c)
// --mode express: the same directory through an Express 5 app's static
// middleware, mounted at /:
//   sluice: sluice.serveStatic(dir) (a native lookup per request, the
//           answer sent as a respondWithFile body)
//   node:   express.static(dir) on node:http (HTTP/1.1 only: Express does
//           not run on the node:http2 compat API)
//   --set-headers on: both with serve-static's setHeaders option (one
//           field set per response), to show what the option costs
// Prints "PORT <n>" when listening.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { loadImpl, parseArgs, serve } = require('../server_harness.js');

const opts = parseArgs(process.argv.slice(2),
  { fileSize: 1024, proto: 'h2', cache: 'default', mode: 'file', setHeaders: 'off', sendfile: 'on' });
// sluice's options for --cache / --sendfile.
const fileOptions = {
  ...(opts.cache === 'default' ? {} : { openFileCache: opts.cache === 'on' }),
  ...(opts.sendfile === 'off' ? { sendfile: false } : {}),
};
const impl = opts._[0];
const h2 = opts.proto === 'h2';
const mod = loadImpl(impl, h2 ? 'node:http2' : 'node:http');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-files-'));
const file = path.join(dir, 'f');
fs.writeFileSync(file, crypto.randomBytes(opts.fileSize));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

const headers = { 'content-type': 'application/octet-stream' };
let server;
const fail = (res) => (err) => { res.statusCode = err ? err.status || 500 : 404; res.end(); };
if (opts.mode === 'express') {
  const express = require('express5');
  const app = express();
  const staticOpts = opts.setHeaders === 'on' ?
    { setHeaders(res, p, stat) { res.setHeader('X-Static-Size', String(stat.size)); } } : {};
  app.use(impl === 'sluice' ? mod.serveStatic(dir, staticOpts) : express.static(dir, staticOpts));
  server = impl === 'sluice' ?
    mod.createServer({ http2: { maxConcurrentStreams: 256 }, ...fileOptions }, app) :
    mod.createServer(app);
} else if (opts.mode === 'static' && impl === 'sluice') {
  server = mod.createServer({ http2: { maxConcurrentStreams: 256 }, ...fileOptions },
    (req, res) => { res.statusCode = 404; res.end(); });
  server.serveStatic('/', dir);
} else if (opts.mode === 'static') {
  const serveStatic = require('serve-static');
  const mw = serveStatic(dir, { fallthrough: false });
  server = h2 ?
    mod.createServer({ settings: { maxConcurrentStreams: 256 } }, (req, res) => mw(req, res, fail(res))) :
    mod.createServer((req, res) => mw(req, res, fail(res)));
} else if (impl === 'sluice') {
  server = mod.createServer({
    http2: { maxConcurrentStreams: 256 },
    ...fileOptions,
  }, (req, res) => res.respondWithFile(file, headers));
  server.on('stream', (stream) => stream.respondWithFile(file, headers));
} else if (h2) {
  server = mod.createServer({ settings: { maxConcurrentStreams: 256 } });
  server.on('stream', (stream) => stream.respondWithFile(file, headers));
} else {
  server = mod.createServer((req, res) => {
    res.writeHead(200, { ...headers, 'content-length': opts.fileSize });
    fs.createReadStream(file).pipe(res);
  });
}

serve(server);
