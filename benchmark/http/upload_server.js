'use strict';
// upload_server.js <sluice|node> [--use-buffer-pool 0|1] [--delay -1|0|N]
//                  [--backpressure 0|1] [--buf-size N] [--max-buffers N]
//
// Receives uploads and answers 200 'ok' once the body is consumed; modelled on
// the server of Node PR #52176's benchmark/http/server_upload.js.
//  --use-buffer-pool 1  (sluice only) createServer({ requestBufferAllocator:
//                       pool.alloc }) with createBufferPool({ bufferSize:
//                       bufSize, maxBuffers }); every chunk goes back with
//                       sluice.releaseBuffer(chunk) after `delay`.
//  --delay -1           release at once; 0: setImmediate; N: setTimeout N ms.
//                       (Without a pool the same timer is scheduled holding
//                       the chunk, so both servers do the same work.)
//  --backpressure 0     consume 'data' events; 1: req.pipe() into a Writable
//                       whose write() releases the chunk and calls back after
//                       `delay`, so a slow consumer pushes back on the socket.
// Prints "PORT <n>" when listening; replies to "stats" with GC time, RSS and
// (with a pool) the pool's stats.

const { Writable } = require('node:stream');
const { loadImpl, parseArgs, serve } = require('../server_harness.js');

const opts = parseArgs(process.argv.slice(2), {
  useBufferPool: 0, delay: -1, backpressure: 0, bufSize: 64 * 1024, maxBuffers: 4096,
});
const impl = opts._[0];
const http = loadImpl(impl);

let pool = null;
const serverOptions = {};
if (opts.useBufferPool) {
  if (impl !== 'sluice') throw new Error('--use-buffer-pool 1 needs sluice');
  pool = http.createBufferPool({ bufferSize: opts.bufSize, maxBuffers: opts.maxBuffers });
  serverOptions.requestBufferAllocator = pool.alloc;
}
const release = pool ? http.releaseBuffer : () => {};

let received = 0; // body bytes seen, for the stats line

function later(fn) {
  if (opts.delay < 0) fn();
  else if (opts.delay === 0) setImmediate(fn);
  else setTimeout(fn, opts.delay);
}

function onRequest(req, res) {
  const done = () => res.end('ok');
  if (opts.backpressure) {
    const sink = new Writable({
      highWaterMark: opts.bufSize,
      write(chunk, encoding, callback) {
        received += chunk.length;
        later(() => {
          release(chunk);
          callback();
        });
      },
    });
    sink.on('finish', done);
    req.on('error', () => {});
    req.pipe(sink);
  } else {
    req.on('data', (chunk) => {
      received += chunk.length;
      if (opts.delay < 0) release(chunk);
      else later(() => release(chunk));
    });
    req.on('end', done);
    req.on('error', () => {});
  }
}

const server = http.createServer(serverOptions, onRequest);

serve(server, {
  onStats: () => ({ received, pool: pool ? pool.stats() : null }),
});
