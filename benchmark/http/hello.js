'use strict';
// Small responses: res.end('hello') (and 16 KiB / 256 KiB Buffer bodies),
// sluice vs node:http (and uWebSockets.js where installed, Bun.serve and
// Deno.serve: lib/peers.js), HTTP/1.1 with and without pipelining.
// Run: node benchmark/run.js http/hello [--quick]

const { uwsUnavailable } = require('./uws_server.js');
const { peerVariants } = require('../lib/peers.js');

const both = [
  { label: 'sluice', impl: 'sluice' },
  { label: 'node', impl: 'node', baseline: true },
];
// The hello cases also run uWebSockets.js as the reference (not a
// dependency: loaded from $SLUICE_BENCH_UWS, the row is skipped without
// failing the run when it is unset or does not load). The notes print
// sluice / uWebSockets.js.
const withUws = [
  ...both,
  { label: 'uWebSockets.js', impl: 'uws', script: 'uws_server.js', optional: true,
    reference: true, unavailable: uwsUnavailable },
  ...peerVariants('hello'),
];

const HELLO = 5; // bytes in 'hello'

module.exports = {
  title: 'http/hello: small responses, sluice vs node:http',
  columns: ['rps', 'mbps', 'cpuPct', 'loadCpuPct', 'otherCpuPct', 'cpuUsPerReq', 'writesPerResp', 'ratioRps', 'ratioCpu'],
  cases: [
    {
      name: 'hello wrk c100',
      server: { script: 'hello_server.js', args: [] },
      variants: withUws,
      load: { tool: 'wrk', threads: 1, connections: 100 },
      check: { bodyLength: HELLO, body: 'hello' },
    },
    {
      name: 'hello wrk c100 pipelined x16',
      server: { script: 'hello_server.js', args: [] },
      variants: withUws,
      load: { tool: 'wrk', threads: 1, connections: 100, script: 'pipeline.lua', scriptArgs: [16] },
      check: { bodyLength: HELLO, pipeline: 16 },
    },
    {
      name: 'hello h2load --h1 c10 m10',
      server: { script: 'hello_server.js', args: [] },
      variants: withUws,
      load: { tool: 'h2load', args: ['--h1', '-c', '10', '-m', '10'] },
      check: { bodyLength: HELLO, pipeline: 10 },
    },
    {
      name: '16 KiB body wrk c100',
      server: { script: 'hello_server.js', args: ['--body-size', 16384] },
      variants: both,
      load: { tool: 'wrk', threads: 1, connections: 100 },
      check: { bodyLength: 16384 },
    },
    {
      name: '256 KiB body wrk c100',
      server: { script: 'hello_server.js', args: ['--body-size', 262144] },
      variants: both,
      load: { tool: 'wrk', threads: 1, connections: 100 },
      check: { bodyLength: 262144 },
    },
  ],
};
