'use strict';
// bus_server.js <variant> <port> [redisPort]: the servers of
// benchmark/websocket/_bus_fanout.js. Endpoints: /sub subscribes to topic
// 'fan', /pub publishes every message it gets to 'fan' (socket.io: query
// role=sub joins room 'fan', role=pub's 'm' events go to the room).
//   sluice-single   one process, no bus (pubsub: false)
//   sluice-cluster  node's cluster, 2 workers, the default machine bus
//   sluice-redis    node's cluster, 2 workers, RedisAdapter (ioredis)
//   socketio-redis  node's cluster, 2 workers, socket.io (websocket
//                   transport only) with @socket.io/redis-adapter
// Workers share the port (sluice: SO_REUSEPORT; node: the primary's
// round-robin). Prints 'PIDS <pid>...' once every worker listens.

const cluster = require('node:cluster');

const [variant, portArg, redisArg] = process.argv.slice(2);
const port = Number(portArg);
const WORKERS = variant === 'sluice-single' ? 0 : 2;

function redisPair() {
  const Redis = require('ioredis');
  const pub = new Redis({ port: Number(redisArg), host: '127.0.0.1' });
  return { pub, sub: pub.duplicate() };
}

function whenReady(a, b, fn) {
  let n = 0;
  const one = () => { if (++n === 2) fn(); };
  a.once('ready', one);
  b.once('ready', one);
}

function sluiceWorker(pubsub) {
  const sluice = require('../../lib');
  const server = sluice.createServer((req, res) => res.end());
  const wss = new sluice.WebSocketServer({ server, pubsub });
  wss.on('error', () => {});
  wss.on('connection', (ws, req) => {
    ws.on('error', () => {});
    if (req.url === '/sub') ws.subscribe('fan');
    else ws.on('message', (m, isBinary) => wss.publish('fan', m, { binary: isBinary }));
  });
  server.listen(port, '127.0.0.1', () => ready());
}

function socketioWorker() {
  const http = require('node:http');
  const { Server } = require('socket.io');
  const { createAdapter } = require('@socket.io/redis-adapter');
  const { pub, sub } = redisPair();
  whenReady(pub, sub, () => {
    const server = http.createServer();
    const io = new Server(server, { transports: ['websocket'], adapter: createAdapter(pub, sub) });
    io.on('connection', (socket) => {
      if (socket.handshake.query.role === 'sub') socket.join('fan');
      else socket.on('m', (d) => io.to('fan').emit('m', d));
    });
    server.listen(port, '127.0.0.1', () => ready());
  });
}

function ready() {
  if (cluster.isWorker) process.send('listening');
  else process.stdout.write(`PIDS ${process.pid}\n`);
}

if (WORKERS > 0 && cluster.isPrimary) {
  let n = 0;
  for (let i = 0; i < WORKERS; i++) {
    cluster.fork().on('message', (m) => {
      if (m === 'listening' && ++n === WORKERS) {
        process.stdout.write(`PIDS ${process.pid} ${Object.values(cluster.workers).map((w) => w.process.pid).join(' ')}\n`);
      }
    });
  }
} else if (variant === 'sluice-single') {
  sluiceWorker(false);
} else if (variant === 'sluice-cluster') {
  sluiceWorker(undefined);
} else if (variant === 'sluice-redis') {
  // Listening once both clients are ready: the load publishes as soon as
  // its subscribers are connected.
  const sluice = require('../../lib');
  const { pub, sub } = redisPair();
  whenReady(pub, sub, () => sluiceWorker(new sluice.pubsub.RedisAdapter({ pubClient: pub, subClient: sub })));
} else if (variant === 'socketio-redis') {
  socketioWorker();
} else {
  throw new Error(`unknown variant ${variant}`);
}
