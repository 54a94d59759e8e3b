'use strict';
// compressed_server.js <sluice|node> --body json|file|precompressed|stream
//     [--encoding gzip|br] [--level 6] [--quality 4] [--node pipe|sync]
// GET / answers a compressed body with the coding given (clients send
// Accept-Encoding for it; node's variants only check that the header
// names it, so they are if anything favoured); GET /tiny answers 'ok'
// uncompressed (the probe).
//   json: a 64 KiB JSON Buffer with res.end(body)
//     sluice: createServer({ compression }) (threadpool: above 32 KiB)
//     node --node pipe: zlib.createGzip() / createBrotliCompress() piped
//     node --node sync: res.end(zlib.gzipSync(body)) / brotliCompressSync
//   file: a 1 MiB text file
//     sluice: res.respondWithFile (compression transform in the native pipe)
//     node pipe: fs.createReadStream(path).pipe(gzip).pipe(res)
//     node sync: fs.readFile + gzipSync
//   stream: the same 1 MiB text (in memory) written with res.write() in
//     64 KiB chunks, waiting for 'drain' when write() returns false
//     sluice: the native streaming compressor (threadpool above 32 KiB)
//     node: zlib.createGzip() / createBrotliCompress() piped to res, the
//     same writes into it
//   precompressed: the same file served from path.gz / path.br
//     sluice: respondWithFile(path, headers, { precompressed: true })
//     node: stat + fs.createReadStream(path + '.gz').pipe(res)
// --proto h2: HTTP/2 (h2c, prior knowledge), the 'stream' API, json only:
//     sluice: stream.respond(headers); stream.end(body) with the
//             compression option (whole body: threadpool above 32 KiB)
//     node:http2 --node pipe: zlib.createGzip() piped into the stream
//     node:http2 --node sync: stream.end(zlib.gzipSync(body))
// Prints "PORT <n>" when listening.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');
const { loadImpl, parseArgs, serve } = require('../server_harness.js');

const opts = parseArgs(process.argv.slice(2), { body: 'json', encoding: 'gzip', level: 6, quality: 4, node: 'pipe', proto: 'h1' });
const impl = opts._[0];
const http = loadImpl(impl, opts.proto === 'h2' ? 'node:http2' : 'node:http');
const enc = opts.encoding;

// Deterministic bodies, the same for every server.
function jsonBody(bytes) {
  const items = [];
  let n = 2;
  for (let i = 0; n < bytes - 200; i++) {
    const s = JSON.stringify({ id: i, name: `user-${i * 7919 % 10007}`, email: `u${i}@example.com`,
      active: i % 3 !== 0, score: (i * 37) % 1000 / 10, tags: ['alpha', 'beta', 'gamma', 'delta'].slice(0, i % 4 + 1) });
    items.push(s);
    n += s.length + 1;
  }
  return Buffer.from('[' + items.join(',') + ']');
}
function textFile() {
  const file = path.join(os.tmpdir(), 'sluice-bench-1mib.txt');
  if (!fs.existsSync(file) || fs.statSync(file).size !== 1 << 20) {
    const lines = [];
    let n = 0;
    for (let i = 0; n < (1 << 20); i++) {
      const l = `2026-12-02T15:${String(i % 60).padStart(2, '0')}:${String(i * 7 % 60).padStart(2, '0')}Z ` +
        `${['GET', 'POST', 'PUT'][i % 3]} /api/v1/items/${i * 31 % 977} ${[200, 200, 304, 404][i % 4]} ${i * 13 % 500}ms\n`;
      lines.push(l);
      n += l.length;
    }
    const tmp = `${file}.${process.pid}`;
    fs.writeFileSync(tmp, Buffer.from(lines.join('')).subarray(0, 1 << 20));
    fs.renameSync(tmp, file);
  }
  for (const [ext, fn] of [['.gz', (b) => zlib.gzipSync(b, { level: 9 })], ['.br', (b) => zlib.brotliCompressSync(b)]]) {
    if (!fs.existsSync(file + ext) || fs.statSync(file + ext).mtimeMs < fs.statSync(file).mtimeMs) {
      const tmp = `${file}${ext}.${process.pid}`;
      fs.writeFileSync(tmp, fn(fs.readFileSync(file)));
      fs.renameSync(tmp, file + ext);
    }
  }
  return file;
}

const json = jsonBody(64 * 1024);
const file = opts.body === 'json' ? null : textFile();
const streamChunks = [];
if (opts.body === 'stream') {
  const data = fs.readFileSync(file);
  for (let i = 0; i < data.length; i += 64 * 1024) streamChunks.push(data.subarray(i, i + 64 * 1024));
}
// Writes streamChunks to `w` honouring backpressure, then calls done().
function writeChunks(w, done) {
  let i = 0;
  const next = () => {
    while (i < streamChunks.length) {
      if (!w.write(streamChunks[i++])) { w.once('drain', next); return; }
    }
    done();
  };
  next();
}
const zopts = enc === 'br' ?
  { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: opts.quality } } : { level: opts.level };
const type = opts.body === 'json' ? 'application/json' : 'text/plain; charset=utf-8';

let server;
if (opts.proto === 'h2') {
  const cfg = { encodings: [enc], level: opts.level, brotliQuality: opts.quality, threshold: 1024 };
  // h2load -m streams per connection: the same limit on both.
  server = impl === 'sluice' ?
    http.createServer({ compression: cfg, http2: { maxConcurrentStreams: 256 } }) :
    http.createServer({ settings: { maxConcurrentStreams: 256 } });
  const stream = () => (enc === 'br' ? zlib.createBrotliCompress(zopts) : zlib.createGzip(zopts));
  const sync = (b) => (enc === 'br' ? zlib.brotliCompressSync(b, zopts) : zlib.gzipSync(b, zopts));
  server.on('stream', impl === 'sluice' ? (s) => {
    s.respond({ 'content-type': type });
    s.end(json);
  } : (s, headers) => {
    if (!String(headers['accept-encoding'] || '').includes(enc)) {
      s.respond({ 'content-type': type, vary: 'Accept-Encoding' });
      s.end(json);
      return;
    }
    s.respond({ 'content-type': type, vary: 'Accept-Encoding', 'content-encoding': enc });
    if (opts.node === 'sync') { s.end(sync(json)); return; }
    const z = stream();
    z.pipe(s);
    z.end(json);
  });
} else if (impl === 'sluice') {
  server = http.createServer({
    compression: { encodings: [enc], level: opts.level, brotliQuality: opts.quality, threshold: 1024 },
  }, (req, res) => {
    if (req.url === '/tiny') { res.end('ok'); return; }
    if (opts.body === 'json') {
      res.setHeader('Content-Type', type);
      res.end(json);
    } else if (opts.body === 'stream') {
      res.setHeader('Content-Type', type);
      writeChunks(res, () => res.end());
    } else {
      res.respondWithFile(file, { 'content-type': type }, { precompressed: opts.body === 'precompressed' });
    }
  });
} else {
  const stream = () => (enc === 'br' ? zlib.createBrotliCompress(zopts) : zlib.createGzip(zopts));
  const sync = (b) => (enc === 'br' ? zlib.brotliCompressSync(b, zopts) : zlib.gzipSync(b, zopts));
  server = http.createServer((req, res) => {
    if (req.url === '/tiny') { res.end('ok'); return; }
    res.setHeader('Content-Type', type);
    res.setHeader('Vary', 'Accept-Encoding');
    // The least negotiation that keeps the identity check honest.
    if (!String(req.headers['accept-encoding'] || '').includes(enc)) {
      if (opts.body === 'json') res.end(json);
      else if (opts.body === 'stream') writeChunks(res, () => res.end());
      else fs.createReadStream(file).pipe(res);
      return;
    }
    if (opts.body === 'precompressed') {
      const p = file + (enc === 'br' ? '.br' : '.gz');
      fs.stat(p, (err, st) => {
        if (err) { res.statusCode = 500; res.end(); return; }
        res.setHeader('Content-Encoding', enc);
        res.setHeader('Content-Length', st.size);
        fs.createReadStream(p).pipe(res);
      });
      return;
    }
    res.setHeader('Content-Encoding', enc);
    if (opts.node === 'sync') {
      if (opts.body === 'json') { res.end(sync(json)); return; }
      fs.readFile(file, (err, data) => res.end(sync(data)));
      return;
    }
    const z = stream();
    z.pipe(res);
    if (opts.body === 'stream') { writeChunks(z, () => z.end()); return; }
    if (opts.body === 'json') z.end(json);
    else fs.createReadStream(file).pipe(z);
  });
}

serve(server);
