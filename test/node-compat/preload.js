'use strict';

// Preloaded (node -r) into each of node's own HTTP tests: http.createServer
// and http.Server make sluice servers; everything else (the http client,
// net, test/common) stays node's.

const http = require('http');
// SLUICE_ROOT: another checkout of sluice (before/after comparisons).
const sluice = require(process.env.SLUICE_ROOT || '../..');

http.createServer = function createServer(...args) {
  return sluice.createServer(...args);
};

// `new http.Server(...)` and `http.Server(...)`: a function returning an
// object makes `new` yield that object.
function Server(...args) {
  return sluice.createServer(...args);
}
Server.prototype = sluice.Server.prototype;
http.Server = Server;
