'use strict';
// WebSocket fan-out of compressible messages (JSON-like text, 1 and 4 KiB)
// from 1 publisher to 1,000 subscribers that all offer permessage-deflate;
// per delivery (msg/s and CPU µs/msg count deliveries). Rows: sluice's
// publish with perMessageDeflate.sharedCompressor (deflated once per
// message, one compressed frame for every subscriber), sluice's publish
// without permessage-deflate (the baseline: the plain frame to all), ws on
// node:http with perMessageDeflate sending to each subscriber (a deflate
// per delivery), and uWebSockets.js's SHARED_COMPRESSOR where
// $SLUICE_BENCH_UWS points at a build. Load: benchmark/websocket/wsload.c
// (fanout ... deflate). bytes/resp is the payload bytes a subscriber
// read per delivery (compressed on the wire when negotiated).
// Run: node benchmark/run.js websocket/fanout_deflate [--quick]

const { uwsUnavailable } = require('../http/uws_server.js');

const variants = [
  { label: 'sluice publish, sharedCompressor', impl: 'sluice', args: ['--deflate', 'shared'] },
  { label: 'sluice publish, uncompressed', impl: 'sluice', baseline: true },
  { label: 'ws on node:http, perMessageDeflate per send', impl: 'node', args: ['--deflate', 'socket'] },
  { label: 'uWebSockets.js SHARED_COMPRESSOR', impl: 'uws', args: ['--deflate', 'shared'], optional: true,
    reference: true, unavailable: uwsUnavailable },
];

const server = { script: 'ws_server.js', args: [] };
const check = { websocket: true };

module.exports = {
  variants,
  title: 'websocket: fan-out of compressible messages to 1,000 deflate subscribers; shared compressor vs uncompressed publish',
  columns: ['msgs', 'cpuPct', 'loadCpuPct', 'otherCpuPct', 'cpuUsPerMsg', 'bytesPerResp', 'ratioRps', 'ratioCpu'],
  cases: [1024, 4096].map((size) => ({
    name: `fan-out ${size / 1024} KiB compressible to 1000 deflate subscribers (per delivery)`,
    server, variants, check,
    load: { tool: 'wsload', mode: 'fanout', pubPath: '/pub', subPath: '/sub', subscribers: 1000, size, window: 8, deflate: true },
  })),
};
