'use strict';
// The tiny app test/package/pack_install.test.js runs inside a fresh project
// that installed sluice from its `npm pack` tarball: `require('sluice')`
// resolves to node_modules/sluice there, never to this repository.
//   POST /upload  body read through a buffer pool (requestBufferAllocator),
//                 every chunk released; answers "<bytes> <sha256>".
//   GET /pool     pool.stats() as JSON (the test checks the pool was used
//                 and every buffer came back).
//   GET /file     res.respondWithFile() of the file named by argv[2]
//                 (HTTP/1.1, and HTTP/2 through the compat res).
// Prints "PORT <n> <path of the sluice module> <path of the addon loaded>"
// when listening (the addon as the process's shared-object list names it:
// prebuilds/... or build/Release/...).

const crypto = require('node:crypto');
const sluice = require('sluice');

const file = process.argv[2];
const pool = sluice.createBufferPool({ bufferSize: 16384, maxBuffers: 64 });

const server = sluice.createServer({ requestBufferAllocator: pool.alloc }, (req, res) => {
  if (req.method === 'POST' && req.url === '/upload') {
    const hash = crypto.createHash('sha256');
    let bytes = 0;
    req.on('data', (chunk) => {
      hash.update(chunk);
      bytes += chunk.length;
      sluice.releaseBuffer(chunk);
    });
    req.on('end', () => {
      res.setHeader('content-type', 'text/plain');
      res.end(`${bytes} ${hash.digest('hex')}`);
    });
    return;
  }
  if (req.url === '/file') {
    res.respondWithFile(file, { 'content-type': 'application/octet-stream' });
    return;
  }
  if (req.url === '/pool') {
    // The head of this very request was read into a pool buffer, held
    // until its read has been parsed: take the stats after that.
    setImmediate(() => res.end(JSON.stringify(pool.stats())));
    return;
  }
  res.statusCode = 404;
  res.end();
});

server.listen(0, '127.0.0.1', () => {
  const addon = process.report.getReport().sharedObjects.find((f) => /sluice[^/]*\.node$/.test(f));
  process.stdout.write(`PORT ${server.address().port} ${require.resolve('sluice')} ${addon}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
