'use strict';
// WebSocket servers: echo (100 connections, 16 B and 16 KiB messages, binary
// and text frames, one in flight per connection) and fan-out (1 publisher, 1,000
// subscribers, 8 messages in flight; counts deliveries: the msg/s and
// CPU µs/msg columns are per delivery). Idle memory is websocket/idle.js. Load from
// benchmark/websocket/wsload.c (C, epoll), compiled with cc at run time.
// Rows: sluice.WebSocketServer, ws on node:http (the baseline), ws on
// sluice's 'upgrade' socket, uWebSockets.js where $SLUICE_BENCH_UWS
// points at a build (see benchmark/README.md), Bun.serve and Deno.serve
// (lib/peers.js).
// Run: node benchmark/run.js websocket/echo [--quick]

const { uwsUnavailable } = require('../http/uws_server.js');
const { peerVariants } = require('../lib/peers.js');

function sluiceWsMissing() {
  try {
    const s = require(require('node:path').resolve(process.env.SLUICE_MODULE || `${__dirname}/../..`));
    return typeof s.WebSocketServer === 'function' ? null : 'this sluice has no WebSocketServer';
  } catch (e) {
    return null;  // the runner reports a sluice that does not load
  }
}

const variants = [
  { label: 'sluice WebSocketServer', impl: 'sluice', unavailable: sluiceWsMissing },
  { label: 'sluice WebSocketServer, pool messages', impl: 'sluice-pool', unavailable: sluiceWsMissing },
  { label: 'ws on node:http', impl: 'node', baseline: true },
  { label: 'ws on sluice upgrade', impl: 'ws-sluice' },
  { label: 'uWebSockets.js', impl: 'uws', optional: true, reference: true, unavailable: uwsUnavailable },
  ...peerVariants('ws'),
];

const server = { script: 'ws_server.js', args: [] };
const check = { websocket: true };

module.exports = {
  variants,
  title: 'websocket: echo, fan-out and idle memory; sluice vs ws on node:http vs uWebSockets.js',
  columns: ['msgs', 'cpuPct', 'loadCpuPct', 'otherCpuPct', 'cpuUsPerMsg', 'ratioRps', 'ratioCpu'],
  cases: [
    ...[16, 16384].flatMap((size) => [false, true].map((text) => ({
      name: `echo ${size === 16 ? '16 B' : '16 KiB'}${text ? ' text' : ''} c100`, server, variants, check,
      load: { tool: 'wsload', mode: 'echo', path: '/echo', connections: 100, size, text },
    }))),
    { name: 'fan-out 16 B to 1000 subscribers (per delivery)', server, variants, check,
      load: { tool: 'wsload', mode: 'fanout', pubPath: '/pub', subPath: '/sub', subscribers: 1000, size: 16, window: 8 } },
  ],
};
