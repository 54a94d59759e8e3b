'use strict';
// Child for test/cluster/*.test.js: an app run unchanged under node's
// `cluster` (primary + N workers) and under PM2's cluster mode. Each worker
// answers every request with its pid. Plain code as a user writes it: the
// workers call listen(port) and nothing else; sluice picks SO_REUSEPORT by
// itself in a cluster worker.
//
//   node cluster_app.js <port> <workers>    primary: forks, prints "READY";
//                                           "restart" on stdin: rolling restart
//   (PM2 runs the file as the worker itself, with PORT in the environment)
//
// SLUICE_TEST_IMPL=node serves with node:http instead (the same test then
// checks node's own cluster behaviour). SLUICE_TEST_H3_KEY and
// SLUICE_TEST_H3_CERT (PEM files): the workers serve
// createSecureServer({ key, cert, http3: true }) instead, TCP and UDP on
// the port (docs/deployment.md's recipe with HTTP/3).

const cluster = require('node:cluster');
const fs = require('node:fs');
const path = require('node:path');

const impl = process.env.SLUICE_TEST_IMPL === 'node' ?
  require('node:http') : require(path.resolve(__dirname, '..', '..'));
const port = Number(process.argv[2] || process.env.PORT);
const workers = Number(process.argv[3] || 2);

if (cluster.isPrimary && !process.env.pm_id) {
  let listening = 0;
  cluster.on('listening', () => {
    if (++listening === workers) process.stdout.write('READY\n');
  });
  cluster.on('exit', (w, code, signal) => {
    if (!w.exitedAfterDisconnect) process.stderr.write(`worker ${w.process.pid} died (${code ?? signal})\n`);
  });
  for (let i = 0; i < workers; i++) cluster.fork();
  // "restart\n" on stdin: a rolling restart, one worker at a time: fork a
  // replacement, once it listens disconnect the old one (it drains and
  // exits), then the next; prints "RESTARTED <n>" when all were replaced.
  let restarts = 0;
  let input = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', async (d) => {
    input += d;
    while (input.includes('\n')) {
      const line = input.slice(0, input.indexOf('\n'));
      input = input.slice(input.indexOf('\n') + 1);
      if (line !== 'restart') continue;
      for (const old of Object.values(cluster.workers)) {
        const fresh = cluster.fork();
        await new Promise((resolve) => fresh.once('listening', resolve));
        const gone = new Promise((resolve) => old.once('exit', resolve));
        old.disconnect();
        await gone;
      }
      process.stdout.write(`RESTARTED ${++restarts}\n`);
    }
  });
  const stop = () => {
    for (const w of Object.values(cluster.workers)) w.kill();
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.on('SIGTERM', stop);
  process.stdin.on('end', stop);
  process.stdin.resume();
} else {
  const handler = (req, res) => {
    res.setHeader('content-type', 'text/plain');
    res.end(String(process.pid));
  };
  const h3 = process.env.SLUICE_TEST_H3_KEY;
  const server = h3 ? impl.createSecureServer({
    key: fs.readFileSync(h3), cert: fs.readFileSync(process.env.SLUICE_TEST_H3_CERT), http3: true,
  }, handler) : impl.createServer(handler);
  server.on('error', (err) => {
    process.stderr.write(`worker ${process.pid}: ${err.stack}\n`);
    process.exit(1);
  });
  server.listen(port, '127.0.0.1');
  process.on('SIGINT', () => server.close(() => process.exit(0)));
}
