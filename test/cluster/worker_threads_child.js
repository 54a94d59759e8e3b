'use strict';
// Child process for test/cluster/worker_threads.test.js: N worker threads
// serve one port (reusePort) while the main thread sends requests, each on
// a new connection, from `concurrency` loops; every `restartMs` one worker
// (in turn) is stopped (server.close(), thread exit) and a new one started
// in its place, `restarts` times (test/cluster/load.js). Prints one JSON line:
// { ok, failed, errors: {code: n}, perRound: [{threadId: n}], restarts }.
//   node worker_threads_child.js <port> <workers> <restarts>

const path = require('node:path');
const { Worker } = require('node:worker_threads');
const { startLoad } = require('./load');

const port = Number(process.argv[2]);
const nWorkers = Number(process.argv[3] || 2);
const restarts = Number(process.argv[4] || 4);
const APP = path.join(__dirname, 'worker_threads_app.js');

function startWorker() {
  return new Promise((resolve, reject) => {
    const w = new Worker(APP, { workerData: { port } });
    w.once('error', reject);
    w.once('message', (m) => { if (m.listening) resolve(w); });
  });
}

function stopWorker(w) {
  return new Promise((resolve) => {
    w.once('exit', resolve);
    w.postMessage('stop');
  });
}

(async () => {
  const workers = [];
  for (let i = 0; i < nWorkers; i++) workers.push(await startWorker());
  const load = startLoad(port);
  let restarted = 0;
  for (let r = 0; r < restarts; r++) {
    await new Promise((resolve) => setTimeout(resolve, 400));
    const i = r % nWorkers;
    // Start the replacement first, then stop the old one: the port is
    // always served (a rolling restart).
    const fresh = await startWorker();
    await stopWorker(workers[i]);
    workers[i] = fresh;
    restarted++;
    load.nextRound();
  }
  await new Promise((resolve) => setTimeout(resolve, 400));
  const stats = await load.stop();
  for (const w of workers) await stopWorker(w);
  process.stdout.write(`${JSON.stringify({ ...stats, restarts: restarted })}\n`);
})().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
