'use strict';

// sluice servers in node's `cluster` workers (and PM2's cluster mode, which
// is node's cluster). node's net servers in a worker ask the primary for
// the listening socket (the primary accepts and hands out connections, or
// shares the socket); a sluice listener is native and cannot take part in
// that protocol, so a worker binds its own socket with SO_REUSEPORT and the
// kernel spreads connections across the workers' sockets
// (docs/deployment.md: measured spread, and what differs from node).

const cluster = require('cluster');

// listen()'s reusePort when the caller did not say: on in a cluster worker
// listening on a fixed port, unless `exclusive: true` (node's option for
// "do not share with the other workers"). Port 0 keeps its own random port
// per worker (node's primary hands all workers one port; the kernel cannot).
function defaultReusePort(port, exclusive) {
  return cluster.isWorker && port !== 0 && !exclusive;
}

// Tell the primary that this worker listens, as a net server in a worker
// does, so that cluster.on('listening', (worker, address)) and
// worker.on('listening') fire unchanged (PM2 and process managers watch
// them). This is node's own worker → primary message (cmd NODE_CLUSTER,
// act 'listening'; node 20-26): `process.send` routes a message whose cmd
// starts with NODE_ to the primary's cluster code, not to user 'message'
// listeners.
function announceListening(address) {
  if (!cluster.isWorker || typeof process.send !== 'function') return;
  const pipe = typeof address === 'string';  // a Unix socket's path (net's type -1)
  process.send({
    cmd: 'NODE_CLUSTER',
    act: 'listening',
    addressType: pipe ? -1 : address.family === 'IPv6' ? 6 : 4,
    address: pipe ? address : address.address,
    port: pipe ? -1 : address.port,
    fd: -1,
  });
}

// worker.disconnect() in the primary closes a worker's net servers and lets
// their connections finish, which is how a rolling restart drains a
// worker; node's cluster code knows only its own handles, so a sluice
// server listening in a worker closes itself when the worker disconnects
// (the same drain: server.close()). Returns a function that undoes it.
function closeOnDisconnect(server) {
  if (!cluster.isWorker || !cluster.worker) return () => {};
  const close = () => { if (server.listening) server.close(); };
  cluster.worker.once('disconnect', close);
  return () => cluster.worker.removeListener('disconnect', close);
}

module.exports = { defaultReusePort, announceListening, closeOnDisconnect };
