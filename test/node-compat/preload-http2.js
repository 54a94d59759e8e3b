'use strict';

// Preloaded (node -r) into each of node's own HTTP/2 tests (run.js
// --http2): http2.createServer and http2.createSecureServer make sluice
// servers; everything else (the http2 client, net, tls, test/common) stays
// node's.

const http2 = require('http2');
// SLUICE_ROOT: another checkout of sluice (before/after comparisons).
const sluice = require(process.env.SLUICE_ROOT || '../..');

http2.createServer = function createServer(...args) {
  return sluice.createServer(...args);
};

http2.createSecureServer = function createSecureServer(...args) {
  return sluice.createSecureServer(...args);
};
