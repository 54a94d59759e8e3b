'use strict';
// ws_server.js <sluice|sluice-pool|node|ws-sluice|uws> [--deflate shared|socket]
// The WebSocket servers of benchmark/websocket/echo.js, one endpoint each:
//   /echo  every message is sent back (binary as binary)
//   /sub   the socket subscribes to topic 'fan'
//   /pub   every message is published to 'fan' (all subscribers, not the sender)
// Rows:
//   sluice     sluice.WebSocketServer on sluice.createServer; /pub uses the
//              native pub/sub (ws.publish: framed once, written natively)
//   node       ws's WebSocketServer on node:http; /pub loops over the
//              subscribers with send() (what ws users write)
//   sluice-pool  sluice with a requestBufferAllocator (a buffer pool):
//              messages are views of pool memory, released after the echo
//              (the send copies pool memory into the queue)
//   ws-sluice  the same ws code on sluice's 'upgrade' socket
//   uws        uWebSockets.js ($SLUICE_BENCH_UWS), ws.subscribe / app.publish
// No permessage-deflate anywhere (ws's and uWS's server default), unless
// --deflate: `shared` is sluice's perMessageDeflate.sharedCompressor (a
// published message deflated once for every deflate subscriber) or uWS's
// SHARED_COMPRESSOR; `socket` is ws's perMessageDeflate (every send
// deflated on its own connection). zlib's default level, threshold 1024
// (websocket/fanout_deflate.js).

const { parseArgs, serve, loadImpl } = require('../server_harness.js');

function attach(wss, native, release) {
  const subs = new Set();
  wss.on('connection', (ws, req) => {
    ws.on('error', () => {});
    if (req.url === '/echo') {
      ws.on('message', release ? (m, isBinary) => {
        ws.send(m, { binary: isBinary });
        release(m);
      } : (m, isBinary) => ws.send(m, { binary: isBinary }));
    } else if (req.url === '/sub') {
      if (native) ws.subscribe('fan');
      else {
        subs.add(ws);
        ws.on('close', () => subs.delete(ws));
      }
    } else if (req.url === '/pub') {
      ws.on('message', native ?
        (m, isBinary) => ws.publish('fan', m, { binary: isBinary }) :
        (m, isBinary) => { for (const s of subs) s.send(m, { binary: isBinary }); });
    } else {
      ws.close(1008, 'unknown path');
    }
  });
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  const impl = opts._[0];
  if (impl === 'uws') return serveUws(opts.deflate);
  let perMessageDeflate = false;
  if (opts.deflate === 'shared') perMessageDeflate = { sharedCompressor: true, threshold: 1024 };
  else if (opts.deflate === 'socket') perMessageDeflate = { threshold: 1024 };
  else if (opts.deflate) throw new Error(`unknown --deflate ${opts.deflate}`);
  let serverOptions = {};
  if (impl === 'sluice-pool') {
    const sluice = loadImpl('sluice');
    serverOptions = { requestBufferAllocator: sluice.createBufferPool({ bufferSize: 64 * 1024, maxBuffers: 256 }).alloc };
  }
  const server = (impl === 'node' ? loadImpl('node') : loadImpl('sluice')).createServer(serverOptions, (req, res) => res.end('ok'));
  if (impl === 'sluice' || impl === 'sluice-pool') {
    const { WebSocketServer, releaseBuffer } = loadImpl('sluice');
    if (typeof WebSocketServer !== 'function') throw new Error('this sluice has no WebSocketServer');
    attach(new WebSocketServer({ server, perMessageDeflate, maxPayload: 1 << 20 }), true,
      impl === 'sluice-pool' ? releaseBuffer : null);
  } else if (impl === 'node' || impl === 'ws-sluice') {
    const { WebSocketServer } = require('ws');
    attach(new WebSocketServer({ server, perMessageDeflate, maxPayload: 1 << 20 }), false);
  } else {
    throw new Error(`unknown server ${impl}`);
  }
  serve(server);
}

function serveUws(deflate) {
  const { loadUws } = require('../http/uws_server.js');
  const uws = loadUws();
  const app = uws.App();
  const compression = deflate === 'shared' ? uws.SHARED_COMPRESSOR : uws.DISABLED;
  const common = { compression, maxPayloadLength: 1 << 20, idleTimeout: 0, maxBackpressure: 16 << 20 };
  app.ws('/echo', { ...common, message: (ws, m, isBinary) => { ws.send(m, isBinary); } });
  app.ws('/sub', { ...common, open: (ws) => { ws.subscribe('fan'); } });
  app.ws('/pub', { ...common, message: (ws, m, isBinary) => { app.publish('fan', m, isBinary, compression !== uws.DISABLED); } });
  app.any('/*', (res) => res.end('ok'));
  let port = 0;
  serve({
    on() { return this; },
    address() { return { port }; },
    listen(p, host, cb) {
      app.listen(host, p, (token) => {
        if (!token) {
          process.stderr.write(`server error: uWebSockets.js could not listen on ${host}\n`);
          process.exit(1);
        }
        port = uws.us_socket_local_port(token);
        cb();
      });
    },
  });
}

main();
