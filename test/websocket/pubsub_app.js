'use strict';

// The app of test/websocket/bus.test.js, as a new user writes it: a
// sluice.WebSocketServer whose message handler subscribes and publishes.
//   node pubsub_app.js cluster <port> <workers>   node's cluster, default bus
//   node pubsub_app.js threads <port> <threads>   worker threads, reusePort, default bus
//   node pubsub_app.js redis <port> <redisPort>   one "host", RedisAdapter
// Client messages (text):
//   sub <topic>                 ws.subscribe, answers 'ok <pid>.<threadId>'
//   pub <topic> <text>          wss.publish
//   wspub <topic> <text>        ws.publish (skips the sender)
//   stream <topic> <n> <ms>     wss.publish of '<tag> 1' .. '<tag> n', one every ms
// stdout: 'READY' once listening (the primary: once every worker is);
// 'ERROR <code> <dropped>' for each 'error' event of the server.
// Ends when stdin closes.

const cluster = require('node:cluster');
const { Worker, isMainThread, parentPort, threadId } = require('node:worker_threads');
const sluice = require('../../lib');

const [mode, portArg, extra] = process.argv.slice(2);
const port = Number(portArg);

function serve(adapterOptions) {
  const server = sluice.createServer((req, res) => res.end('plain'));
  const wss = new sluice.WebSocketServer({ server, ...adapterOptions });
  wss.on('error', (err) => process.stdout.write(`ERROR ${err.code} ${err.dropped}\n`));
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      const text = data.toString();
      const [cmd, topic, ...rest] = text.split(' ');
      if (cmd === 'sub') {
        ws.subscribe(topic);
        ws.send(`ok ${process.pid}.${threadId}`);
      } else if (cmd === 'pub') {
        wss.publish(topic, rest.join(' '));
      } else if (cmd === 'wspub') {
        ws.publish(topic, rest.join(' '));
      } else if (cmd === 'stream') {
        const [n, ms, tag] = rest;
        let i = 0;
        const t = setInterval(() => {
          wss.publish(topic, `${tag} ${++i}`);
          if (i >= Number(n)) clearInterval(t);
        }, Number(ms));
      }
    });
  });
  server.listen({ port, host: '127.0.0.1', reusePort: mode === 'threads' ? true : undefined }, () => {
    if (cluster.isWorker) process.send('listening');
    else if (!isMainThread) parentPort.postMessage('listening');
    else process.stdout.write('READY\n');
  });
  return server;
}

if (mode === 'cluster') {
  if (cluster.isPrimary) {
    const n = Number(extra);
    let listening = 0;
    for (let i = 0; i < n; i++) {
      cluster.fork().on('message', (m) => {
        if (m === 'listening' && ++listening === n) process.stdout.write('READY\n');
      });
    }
    process.stdin.resume();
    process.stdin.on('end', () => {
      for (const w of Object.values(cluster.workers)) w.kill();
      process.exit(0);
    });
  } else {
    serve({});
    process.on('disconnect', () => process.exit(0));
  }
} else if (mode === 'threads') {
  if (isMainThread) {
    const n = Number(extra);
    let listening = 0;
    const workers = [];
    for (let i = 0; i < n; i++) {
      const w = new Worker(__filename, { argv: process.argv.slice(2) });
      workers.push(w);
      w.on('message', (m) => {
        if (m === 'listening' && ++listening === n) process.stdout.write('READY\n');
      });
    }
    process.stdin.resume();
    process.stdin.on('end', () => process.exit(0));
  } else {
    serve({});
  }
} else if (mode === 'redis') {
  const Redis = require('ioredis');
  const options = {
    port: Number(extra), host: '127.0.0.1', lazyConnect: false,
    retryStrategy: () => 50, maxRetriesPerRequest: 1,
  };
  const pubClient = new Redis(options);
  const subClient = new Redis(options);
  pubClient.on('error', () => {});
  subClient.on('error', () => {});
  let ready = 0;
  const onReady = () => {
    if (++ready !== 2) return;
    const server = serve({ pubsub: new sluice.pubsub.RedisAdapter({ pubClient, subClient }) });
    process.stdin.resume();
    process.stdin.on('end', () => {
      server.close();
      pubClient.disconnect();
      subClient.disconnect();
      process.exit(0);
    });
  };
  pubClient.once('ready', onReady);
  subClient.once('ready', onReady);
}
