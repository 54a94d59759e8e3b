'use strict';
// HTTP/2 file responses with h2load (h2c prior knowledge): sluice
// stream.respondWithFile vs node:http2 stream.respondWithFile vs node:http2
// fs.createReadStream().pipe(stream); files of 1 KiB, 64 KiB and 1 MiB,
// h2load -c 10 -m 100 and -c 1 -m 200 (the shape of node's own benchmark).
// HTTP/1.1 file responses (wrk) are in benchmark/http/respond_with_file.js.
// Run: node benchmark/run.js http2/respond_with_file [--quick]

const SIZES = [
  { name: '1 KiB', bytes: 1024 },
  { name: '64 KiB', bytes: 64 * 1024 },
  { name: '1 MiB', bytes: 1024 * 1024 },
];
const SHAPES = [
  { name: 'c10 m100', args: ['-c', '10', '-m', '100'], quick: true },
  { name: 'c1 m200', args: ['-c', '1', '-m', '200'], quick: false },
];

const cases = [{
  name: '1 MiB file h2load c10 m10',
  quick: true,
  server: { script: 'file_server.js', args: ['--file-size', 1024 * 1024] },
  variants: [
    { label: 'sluice respondWithFile', impl: 'sluice', args: ['--mode', 'file'] },
    { label: 'node:http2 respondWithFile', impl: 'node', args: ['--mode', 'file'], baseline: true },
    { label: 'node:http2 stream.pipe', impl: 'node', args: ['--mode', 'stream'] },
  ],
  load: { tool: 'h2load', args: ['-c', '10', '-m', '10'] },
  check: { http2: true, bodyLength: 1024 * 1024 },
}];
for (const shape of SHAPES) {
  for (const s of SIZES) {
    cases.push({
      name: `${s.name} file h2load ${shape.name}`,
      // 1 MiB x 1000 streams in flight takes seconds per stream: a 2 s
      // quick run completes none of them.
      quick: shape.quick && s.bytes < 1024 * 1024,
      duration: s.bytes >= 1024 * 1024 ? 10 : 5,
      server: { script: 'file_server.js', args: ['--file-size', s.bytes] },
      variants: [
        { label: 'sluice respondWithFile', impl: 'sluice', args: ['--mode', 'file'] },
        { label: 'node:http2 respondWithFile', impl: 'node', args: ['--mode', 'file'], baseline: true },
        { label: 'node:http2 stream.pipe', impl: 'node', args: ['--mode', 'stream'] },
      ],
      load: { tool: 'h2load', args: shape.args },
      check: { http2: true, bodyLength: s.bytes },
    });
  }
}

module.exports = {
  title: 'http2/respond_with_file: HTTP/2 file responses, sluice vs node:http2 (respondWithFile, createReadStream().pipe)',
  columns: ['rps', 'mbps', 'cpuPct', 'loadCpuPct', 'otherCpuPct', 'cpuUsPerReq', 'gcMsPerSec', 'peakRss', 'ratioRps', 'ratioCpu'],
  cases,
};
