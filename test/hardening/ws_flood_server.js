'use strict';

// A WebSocket server in a process of its own, so that its RSS is its own:
// the subject of ws_control_flood.test.js (and of the by-hand 1,000,000
// ping measurement, `node ws_control_flood.test.js`'s FLOOD_PINGS).
//
//   node ws_flood_server.js <impl> <transport> [wsOptionsJSON]
//
// impl: sluice (sluice.WebSocketServer on sluice's server) or ws (ws's
// WebSocketServer on node:http / node:https); transport: h1, tls (HTTP/1.1
// Upgrade over TLS) or h2 (RFC 8441 extended CONNECT on h2c, sluice only:
// ws has no HTTP/2). Talks to its parent over IPC: sends { port } once
// listening, then { event: 'close', code } and { event: 'error', code }
// for each WebSocket (which echoes the messages it gets); answers { rss: true } with { rss }
// (bytes) and { exit: true } by closing everything and exiting.

const fs = require('node:fs');

const [impl, transport, json] = process.argv.slice(2);
const wsOptions = json ? JSON.parse(json) : {};

// The test's certificate (tls_common.js fixtures), as files.
function tlsOptions() {
  return { key: fs.readFileSync(process.env.TLS_KEY), cert: fs.readFileSync(process.env.TLS_CERT) };
}

let server;
let wss;
if (impl === 'ws') {
  const WS = require('ws');
  server = transport === 'tls' ? require('node:https').createServer(tlsOptions()) :
    require('node:http').createServer();
  wss = new WS.WebSocketServer({ server, ...wsOptions });
} else {
  const sluice = require('../..');
  server = transport === 'tls' ? sluice.createSecureServer(tlsOptions()) : sluice.createServer();
  wss = new sluice.WebSocketServer({ server, ...wsOptions });
}

const sockets = new Set();
wss.on('connection', (ws) => {
  sockets.add(ws);
  ws.on('error', (err) => process.send({ event: 'error', code: err.code }));
  ws.on('message', (m, isBinary) => ws.send(m, { binary: isBinary }));
  ws.on('close', (code) => {
    sockets.delete(ws);
    process.send({ event: 'close', code });
  });
});

process.on('message', (m) => {
  if (m.rss) process.send({ rss: process.memoryUsage().rss });
  if (m.buffered) {
    let sum = 0;
    for (const ws of sockets) sum += ws.bufferedAmount;
    process.send({ buffered: sum });
  }
  if (m.exit) {
    for (const ws of sockets) ws.terminate();
    wss.close();
    server.close(() => process.exit(0));
    if (server.closeAllConnections) server.closeAllConnections();
    setTimeout(() => process.exit(0), 2000).unref();
  }
});

server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
