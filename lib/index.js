'use strict';

// sluice: a native HTTP/1.1 server for Node.js with node:http's API.

const binding = require('./common/binding');
const { Server } = require('./server/server');
const { SecureServer, createSecureServer, createSecureContext } = require('./tls/secure_server');
const { IncomingRequest } = require('./http/request');
const { ServerResponse } = require('./http/response');
const { createBufferPool, releaseBuffer, BufferPool } = require('./uploads/buffer_pool');
const { STATUS_CODES, METHODS } = require('http');
const fileCache = require('./files/open_file_cache');
const { serveStaticMiddleware, koaServeStatic } = require('./middleware/serve_static');
const { WebSocketServer, setServerFactory } = require('./websocket/websocket_server');
const { WebSocket } = require('./websocket/websocket');
const http3 = require('./http3/endpoint');
const { MachineAdapter } = require('./websocket/pubsub/machine_adapter');
const { RedisAdapter } = require('./websocket/pubsub/redis_adapter');

// WebSocketServer's pub/sub bus adapters (docs/websocket.md "The bus").
// A name, not an object literal, in module.exports: node's scan of it for
// ESM named exports stops at a value it cannot read.
const pubsub = Object.freeze({ MachineAdapter, RedisAdapter });

function createServer(options, requestListener) {
  return new Server(options, requestListener);
}

// A WebSocketServer given { port } makes its own server with this.
setServerFactory(createServer);

const versions = Object.freeze({
  sluice: require('../package.json').version,
  llhttp: binding.versions.llhttp,
  // The nghttp2 that runs: node's own copy (the addon links none;
  // test/build/nghttp2_linkage.test.js checks with dladdr).
  nghttp2: process.versions.nghttp2,
  node: process.versions.node,
  // The OpenSSL that runs: node's own (the addon links none;
  // test/tls/openssl_linkage.test.js checks with dladdr).
  openssl: process.versions.openssl,
});

// What this process can do: http3 is true where node's OpenSSL has the
// QUIC server API (Node >= 22.20, 24, 26); http3Reason says why not.
const features = Object.freeze({
  http3: http3.available,
  http3Reason: http3.reason,
});

// Every value below is a plain identifier: node's ESM loader finds a CommonJS
// module's named exports by scanning this literal (cjs-module-lexer), and
// its scan stops at the first value that is not one (a.b), leaving every
// later key out of `import { ... } from 'sluice'`.
const _counters = binding.counters;
const openFileCacheStats = fileCache.stats;
const { prometheusText, prometheusHandler, promClientCollector } = require('./observe/metrics');

module.exports = {
  features,
  prometheusText,
  prometheusHandler,
  promClientCollector,
  createServer,
  WebSocketServer,
  WebSocket,
  pubsub,
  Server,
  createSecureServer,
  createSecureContext,
  SecureServer,
  IncomingRequest,
  ServerResponse,
  createBufferPool,
  releaseBuffer,
  BufferPool,
  STATUS_CODES,
  METHODS,
  versions,
  // Static files as a middleware (docs/files.md).
  serveStatic: serveStaticMiddleware,
  koaServeStatic,
  // Debug counters of the native output path (tests, benchmarks).
  _counters,
  // The open-file cache's counters (docs/files.md).
  openFileCacheStats,
};
