'use strict';

// An Express app and a WebSocket chat on one port, on every core: node's
// cluster starts one worker per CPU (WORKERS overrides), each a sluice
// server on the same port (SO_REUSEPORT, docs/deployment.md). The chat is
// sluice's pub/sub: every socket subscribes to 'room', every message is
// published to it. wss.publish reaches the subscribers of every worker
// through sluice's pub/sub bus, with no code here (docs/websocket.md "The
// bus"); with WORKERS=1 everything is one process.
//
//   PORT=3000 node server.js      then open http://localhost:3000

const cluster = require('node:cluster');
const os = require('node:os');
const path = require('node:path');
const express = require('express');
const sluice = require('sluice');

const port = Number(process.env.PORT) || 3000;
const workers = Number(process.env.WORKERS) || os.availableParallelism();

if (cluster.isPrimary && workers > 1) {
  for (let i = 0; i < workers; i++) cluster.fork();
  // A worker that died (not one that was told to stop) is replaced.
  cluster.on('exit', (worker, code) => {
    if (!worker.exitedAfterDisconnect && code !== 0) cluster.fork();
  });
} else {
  const app = express();
  app.use(express.json());
  app.get('/api/health', (req, res) => res.json({ ok: true, pid: process.pid }));
  // The page and its script from the native file path (sendfile, caches).
  app.use(sluice.serveStatic(path.join(__dirname, 'public')));

  const server = sluice.createServer(app);
  const wss = new sluice.WebSocketServer({ server, path: '/chat', maxPayload: 16 * 1024 });
  wss.on('connection', (ws) => {
    ws.subscribe('room');
    ws.send(JSON.stringify({ system: `connected to worker ${process.pid}` }));
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      const text = String(data).slice(0, 1000);
      // Every subscriber of 'room', the sender included.
      wss.publish('room', JSON.stringify({ text, worker: process.pid }));
    });
  });

  server.listen(port, () => {
    console.log(`chat on http://localhost:${server.address().port} (worker ${process.pid})`);
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}
