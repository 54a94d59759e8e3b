'use strict';
// File responses over HTTP/1.1 with wrk: sluice res.respondWithFile (native
// pipe: async fs on the threadpool, no JS per chunk, buffers written by
// reference) vs node:http fs.createReadStream().pipe(res); files of 1 KiB,
// 64 KiB and 1 MiB. (HTTP/2 file cases with h2load belong in
// benchmark/http2/respond_with_file.js once stream.respondWithFile exists.)
// Run: node benchmark/run.js http/respond_with_file [--quick]

const SIZES = [
  { name: '1 KiB', bytes: 1024, connections: 100 },
  { name: '64 KiB', bytes: 64 * 1024, connections: 50 },
  { name: '1 MiB', bytes: 1024 * 1024, connections: 20 },
];

module.exports = {
  title: 'http/respond_with_file: file responses, sluice respondWithFile vs node:http createReadStream().pipe(res)',
  columns: ['rps', 'mbps', 'cpuPct', 'loadCpuPct', 'otherCpuPct', 'cpuUsPerReq', 'writesPerResp', 'gcMsPerSec', 'peakRss', 'ratioRps', 'ratioCpu'],
  cases: SIZES.map((s) => ({
    name: `${s.name} file wrk c${s.connections}`,
    server: { script: 'file_server.js', args: ['--file-size', s.bytes] },
    variants: [
      { label: 'sluice respondWithFile', impl: 'sluice', args: ['--mode', 'file'] },
      { label: 'sluice stream.pipe(res)', impl: 'sluice', args: ['--mode', 'stream'] },
      { label: 'node stream.pipe(res)', impl: 'node', args: ['--mode', 'stream'], baseline: true },
    ],
    load: { tool: 'wrk', threads: 1, connections: s.connections },
    check: { bodyLength: s.bytes },
  })),
};
