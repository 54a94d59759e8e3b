'use strict';
// 1 MiB POST uploads, modelled on Node PR #52176's benchmark/http/
// server_upload.js: useBufferPool 0/1 (sluice only), delay -1/0/1/5 ms before
// a chunk is released, backpressure 0 ('data' events) / 1 (pipe into a
// Writable), bufSize 64 KiB, connections 50 / 200; sluice with and without
// its buffer pool vs node:http (and, where the body is read at once without
// backpressure, Bun.serve and Deno.serve: lib/peers.js). Load: wrk +
// upload.lua.
// Run: node benchmark/run.js http/server_upload [--quick] [--full]
//
// By default a subset of the grid runs (marked `quick` / default below);
// --full runs all 2 x 4 x 2 combinations.

const UPLOAD = 1024 * 1024;
const BUF_SIZE = 64 * 1024;
const MAX_BUFFERS = 4096;
const { peerVariants } = require('../lib/peers.js');

const DEFAULT = new Set([
  // connections, delay, backpressure
  '50,-1,0', '50,-1,1', '50,1,0', '200,-1,0',
]);
const QUICK = new Set(['50,-1,0', '50,-1,1', '200,-1,0']);

function serverArgs({ delay, backpressure }) {
  return ['--delay', delay, '--backpressure', backpressure, '--buf-size', BUF_SIZE,
    '--max-buffers', MAX_BUFFERS];
}

const cases = [];
for (const connections of [50, 200]) {
  for (const delay of [-1, 0, 1, 5]) {
    for (const backpressure of [0, 1]) {
      const key = `${connections},${delay},${backpressure}`;
      cases.push({
        name: `c${connections} delay=${delay} bp=${backpressure}`,
        params: { connections, delay, backpressure, bufSize: BUF_SIZE, upload: UPLOAD },
        grid: DEFAULT.has(key) ? 'default' : 'full',
        quick: QUICK.has(key),
        duration: 10,
        warmup: 2,
        uploadBytes: UPLOAD,
        server: { script: 'upload_server.js', args: serverArgs({ delay, backpressure }) },
        variants: [
          { label: 'sluice pool', impl: 'sluice', args: ['--use-buffer-pool', 1] },
          { label: 'sluice', impl: 'sluice', args: ['--use-buffer-pool', 0] },
          { label: 'node', impl: 'node', args: ['--use-buffer-pool', 0], baseline: true },
          ...(delay === -1 && !backpressure ? peerVariants('upload') : []),
        ],
        load: {
          tool: 'wrk', threads: 1, connections, path: '/upload', timeout: 20,
          script: 'upload.lua', scriptArgs: ['', UPLOAD],
        },
        check: { method: 'POST', path: '/upload', bodySize: UPLOAD, body: 'ok' },
      });
    }
  }
}

module.exports = {
  title: 'http/server_upload: 1 MiB POST uploads, sluice (pool on/off) vs node:http',
  columns: ['rps', 'gbps', 'cpuPct', 'loadCpuPct', 'otherCpuPct', 'cpuSecPerGB', 'gcMsPerSec', 'faultsPerReq', 'peakRss', 'ratioRps', 'ratioCpu'],
  ratioCpuMetric: 'cpuSecPerGB',
  cases,
};
