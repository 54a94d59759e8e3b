'use strict';
// Static files, sluice against node and against the servers people put in
// front of Node: one file of 1 KiB, 64 KiB or 1 MiB at /f, over h2c
// (h2load, prior knowledge) and HTTP/1.1 (wrk), side by side in one run:
//   sluice respondWithFile            the native file pipe, no cache
//   sluice respondWithFile + cache    the same with `openFileCache: true`
//                                     (fd + stat cached; files <= 64 KiB
//                                     answered from memory)
//   sluice serveStatic                `server.serveStatic('/', dir)` with
//                                     default options (the open-file cache
//                                     on, HTTP/1.1 bodies by sendfile):
//                                     answered in the core, no JS per
//                                     request; also with `openFileCache:
//                                     false` and with `sendfile: false`
//   sluice serveStatic middleware     `sluice.serveStatic(dir)` in an
//     (Express)                       Express 5 app, default options: a
//                                     native lookup per request after
//                                     Express's routing
//   node:http2 respondWithFile /      node's own (the ratio baseline)
//   node:http createReadStream().pipe(res)
//   node serve-static                 the `serve-static` middleware
//                                     (express.static) on node:http / the
//                                     node:http2 compat API
//   node express.static (Express)     the same Express 5 app with
//                                     express.static on node:http
//                                     (HTTP/1.1 only)
//   ... + setHeaders (Express)        the two Express rows with
//                                     serve-static's setHeaders option
//                                     (one field per response)
//   nginx                             nginx-light, one process,
//                                     open_file_cache on, sendfile on
//   h2o                               one thread (skipped when not
//                                     installed: apt-get install -y h2o)
//   Bun.serve / Deno.serve            HTTP/1.1 only: new Response(
//                                     Bun.file(path)) / the opened
//                                     file's stream (lib/peers.js)
// Configurations: benchmark/files/reference_server.js. Every server is
// pinned to CPU 0 and the load generator to CPU 1 (taskset).
// Run: node benchmark/run.js files/static_files [--quick]

const { peerVariants } = require('../lib/peers.js');

const SIZES = [
  { name: '1 KiB', bytes: 1024 },
  { name: '64 KiB', bytes: 64 * 1024 },
  { name: '1 MiB', bytes: 1024 * 1024 },
];

function variants(proto) {
  return [
    { label: 'sluice respondWithFile', impl: 'sluice', args: ['--cache', 'off'] },
    { label: 'sluice respondWithFile + openFileCache', impl: 'sluice', args: ['--cache', 'on'] },
    { label: 'sluice serveStatic (default options)', impl: 'sluice', args: ['--mode', 'static'] },
    { label: 'sluice serveStatic openFileCache: false', impl: 'sluice', args: ['--mode', 'static', '--cache', 'off'] },
    ...(proto === 'h2' ? [] :
      [{ label: 'sluice serveStatic sendfile: false', impl: 'sluice', args: ['--mode', 'static', '--sendfile', 'off'] }]),
    { label: 'sluice serveStatic middleware (Express)', impl: 'sluice', args: ['--mode', 'express'] },
    { label: 'sluice serveStatic middleware + setHeaders (Express)', impl: 'sluice',
      args: ['--mode', 'express', '--set-headers', 'on'] },
    proto === 'h2' ?
      { label: 'node:http2 respondWithFile', impl: 'node', baseline: true } :
      { label: 'node:http createReadStream().pipe(res)', impl: 'node', baseline: true },
    { label: 'node serve-static', impl: 'node', args: ['--mode', 'static'] },
    ...(proto === 'h2' ? [] :
      [{ label: 'node express.static (Express)', impl: 'node', args: ['--mode', 'express'] },
        { label: 'node express.static + setHeaders (Express)', impl: 'node',
          args: ['--mode', 'express', '--set-headers', 'on'] }]),
    { label: 'nginx', impl: 'nginx', script: 'reference_server.js', requires: 'nginx', aptPackage: 'nginx-light' },
    { label: 'h2o', impl: 'h2o', script: 'reference_server.js', requires: 'h2o' },
    ...(proto === 'h2' ? [] : peerVariants('file')),
  ];
}

const cases = [];
for (const s of SIZES) {
  const big = s.bytes >= 1024 * 1024;
  cases.push({
    name: `h2c ${s.name} file h2load c10 m${big ? 10 : 100}`,
    quick: !big,
    duration: big ? 8 : 5,
    server: { script: 'file_server.js', args: ['--file-size', s.bytes, '--proto', 'h2'] },
    variants: variants('h2'),
    load: { tool: 'h2load', args: ['-c', '10', '-m', big ? '10' : '100'], path: '/f' },
    check: { http2: true, bodyLength: s.bytes, path: '/f' },
  });
}
for (const s of SIZES) {
  const big = s.bytes >= 1024 * 1024;
  cases.push({
    name: `HTTP/1.1 ${s.name} file wrk c${big ? 20 : 100}`,
    quick: !big,
    server: { script: 'file_server.js', args: ['--file-size', s.bytes, '--proto', 'h1'] },
    variants: variants('h1'),
    load: { tool: 'wrk', threads: 1, connections: big ? 20 : 100, path: '/f' },
    check: { bodyLength: s.bytes, path: '/f' },
  });
}

module.exports = {
  title: 'files/static_files: one static file over h2c and HTTP/1.1 — sluice (respondWithFile with and without the open-file cache, serveStatic), node (respondWithFile / pipe, serve-static), nginx, h2o',
  columns: ['rps', 'mbps', 'cpuPct', 'loadCpuPct', 'otherCpuPct', 'cpuUsPerReq', 'gcMsPerSec', 'peakRss', 'ratioRps', 'ratioCpu'],
  cases,
};
