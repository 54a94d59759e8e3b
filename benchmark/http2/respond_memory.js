'use strict';
// HTTP/2 responses from memory with h2load (h2c prior knowledge):
// `stream.respond(headers); stream.end(buf)` on the stream API, sluice vs
// node:http2 — the per-stream JS path with no file I/O (1 KiB, 16 KiB).
// Run: node benchmark/run.js http2/respond_memory [--quick]

const SIZES = [
  { name: '1 KiB', bytes: 1024, quick: true },
  { name: '16 KiB', bytes: 16 * 1024, quick: false },
];

const cases = SIZES.map((s) => ({
  name: `${s.name} in-memory h2load c10 m100`,
  quick: s.quick,
  server: { script: 'file_server.js', args: ['--file-size', s.bytes, '--mode', 'memory'] },
  variants: [
    { label: 'sluice respond+end', impl: 'sluice' },
    { label: 'node:http2 respond+end', impl: 'node', baseline: true },
  ],
  load: { tool: 'h2load', args: ['-c', '10', '-m', '100'] },
  check: { http2: true, bodyLength: s.bytes },
}));

module.exports = {
  title: 'http2/respond_memory: HTTP/2 in-memory responses (respond + end(buf)), sluice vs node:http2',
  columns: ['rps', 'cpuPct', 'loadCpuPct', 'otherCpuPct', 'cpuUsPerReq', 'gcMsPerSec', 'ratioRps', 'ratioCpu'],
  cases,
};
