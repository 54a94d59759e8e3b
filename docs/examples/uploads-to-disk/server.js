'use strict';

// Uploads read into a bounded buffer pool and streamed to disk with no
// copy in JS: body chunks are views of pool memory, fs writes them, and
// each chunk goes back to the pool in its write callback (pipeline with a
// plain Writable: docs/uploads.md, "Who releases what"). The pool bounds
// the memory: when every buffer is out, the connections with bodies stop
// reading (TCP backpressure) until disk writes give buffers back.
//
//   PORT=3000 UPLOAD_DIR=/tmp/uploads node server.js
//   curl -T big.iso http://localhost:3000/upload

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pipeline } = require('node:stream/promises');
const sluice = require('sluice');

const port = Number(process.env.PORT) || 3000;
const dir = process.env.UPLOAD_DIR || fs.mkdtempSync(path.join(os.tmpdir(), 'uploads-'));
fs.mkdirSync(dir, { recursive: true });

// 64 KiB x 256: at most 16 MiB of upload buffers, whatever the load.
const pool = sluice.createBufferPool({ bufferSize: 64 * 1024, maxBuffers: 256 });

const server = sluice.createServer({
  requestBufferAllocator: pool.alloc,
  maxRequestBodySize: 1024 ** 3,        // larger bodies: 413
}, async (req, res) => {
  if (req.url === '/stats') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(pool.stats()));
    return;
  }
  const isUpload = req.url === '/upload' || req.url.startsWith('/upload/');
  if (!isUpload || (req.method !== 'PUT' && req.method !== 'POST')) {
    res.statusCode = 404;
    res.end('PUT /upload with a body\n');
    return;
  }
  const name = crypto.randomUUID();
  const file = path.join(dir, name);
  const hash = crypto.createHash('sha256');
  let bytes = 0;
  // Runs synchronously on each chunk before fs gets it (and before it can
  // be released): no copy.
  req.on('data', (chunk) => { hash.update(chunk); bytes += chunk.length; });
  try {
    await pipeline(req, fs.createWriteStream(file));
  } catch (err) {
    fs.rm(file, { force: true }, () => {});
    if (!res.headersSent && !res.destroyed) {
      res.statusCode = 500;
      res.end(`upload failed: ${err.code || err.message}\n`);
    }
    return;
  }
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ name, bytes, sha256: hash.digest('hex') }));
});

server.listen(port, () => console.log(`uploads on http://localhost:${server.address().port} into ${dir}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
