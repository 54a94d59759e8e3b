'use strict';
// A sluice server in a worker thread (test/cluster/worker_threads.test.js
// and the example in docs/deployment.md): every worker listens on the same
// port with reusePort; the addon is loaded per thread. Answers each
// request with the worker's threadId. The parent posts 'stop': the server
// closes (draining what it accepted) and the thread ends.

const { parentPort, workerData, threadId } = require('node:worker_threads');
const path = require('node:path');
const sluice = require(path.resolve(__dirname, '..', '..'));

const server = sluice.createServer((req, res) => {
  res.setHeader('content-type', 'text/plain');
  res.end(String(threadId));
});
server.on('error', (err) => { throw err; });
server.listen({ port: workerData.port, host: '127.0.0.1', reusePort: true }, () => {
  parentPort.postMessage({ listening: server.address().port });
});
parentPort.on('message', (msg) => {
  if (msg === 'stop') server.close(() => parentPort.close());
});
