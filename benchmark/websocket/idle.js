'use strict';
// WebSocket idle memory: 10,000 WebSockets opened (handshake done) and held
// open and silent for the run; the column is the server's peak RSS during
// the run over its RSS before it, per 10,000 sockets. One run on a fresh
// server, no warm-up (a warm-up would leave the heap grown, hiding the cost).
// Rows as websocket/echo.js.
// Run: node benchmark/run.js websocket/idle

const { variants } = require('./echo.js');

module.exports = {
  title: 'websocket: server memory for 10,000 idle WebSockets',
  columns: ['rssPer10k', 'cpuPct', 'otherCpuPct', 'ratioRss'],
  cases: [
    { name: 'idle 10k sockets', server: { script: 'ws_server.js', args: [] }, variants, check: { websocket: true },
      warmup: 0, runs: 1, duration: 3,
      load: { tool: 'wsload', mode: 'idle', path: '/echo', connections: 10000 } },
  ],
};
