'use strict';

// server.emit('connection', stream) with a stream sluice did not accept: a
// generic Duplex (stream.duplexPair(), a PassThrough pair, a stream from a
// proxy or a test harness) or a net.Socket accepted by another server and
// handed over, possibly with bytes already read and unshift()ed. sluice's
// own path parses natively from a socket descriptor it reads itself; such
// a stream has none (or has bytes the descriptor no longer holds), so it is
// served by node's own HTTP/1.1 server machinery, as node serves it: one
// node:http Server per sluice server (made on first use, never listening)
// whose events and listener counts are the sluice server's. Requests on
// this path are node's IncomingMessage / ServerResponse (sluice's own
// additions to req / res, response compression and static mounts do not
// apply); connections accepted by sluice never come here, so its native
// path costs nothing more.

const http = require('http');
const { EventEmitter } = require('events');

// node's Server, taken when sluice loads: a harness that replaces
// http.Server / http.createServer by sluice's afterwards (node's own tests
// run that way, test/node-compat/preload.js) must not make this recurse.
const NodeServer = http.Server;

const kInner = Symbol('sluice.foreignServer');

// Server properties node reads from its server at each connection or
// request: copied from the sluice server before each foreign connection,
// so a later assignment applies from the next one, as near node's live
// reads as a copy gets.
const liveProps = [
  'maxHeaderSize', 'insecureHTTPParser', 'headersTimeout', 'requestTimeout',
  'keepAliveTimeout', 'maxHeadersCount', 'maxRequestsPerSocket', 'timeout',
  'httpAllowHalfOpen', 'joinDuplicateHeaders', 'requireHostHeader',
  'rejectNonStandardBodyWrites',
];

// The node:http server serving `server`'s foreign connections. Events it
// emits (other than its own 'connection') are the sluice server's, and so
// are its listener counts, which node consults ('checkContinue', 'upgrade',
// 'connect', …): an app's listeners behave as on its node:http server.
function innerServer(server, options) {
  let inner = server[kInner];
  if (inner !== undefined) return inner;
  inner = new NodeServer(options);
  const ownEmit = EventEmitter.prototype.emit;
  const ownCount = EventEmitter.prototype.listenerCount;
  inner.emit = function emit(event, ...args) {
    if (event === 'connection') return ownEmit.call(this, event, ...args);
    return server.emit(event, ...args);
  };
  inner.listenerCount = function listenerCount(event, ...args) {
    if (event === 'connection') return ownCount.call(this, event, ...args);
    return server.listenerCount(event, ...args);
  };
  server[kInner] = inner;
  return inner;
}

// Serves `stream` (not one of sluice's sockets) on `server`; options: the
// options the server was made with (node:http's own are honoured).
function serveForeign(server, stream, options) {
  const inner = innerServer(server, options);
  for (const name of liveProps) {
    const v = server[name];
    if (v !== undefined) inner[name] = v;
  }
  inner.emit('connection', stream);
  // As node: the socket's server is the one it was handed to (node's
  // connection listener set it to the inner one; its later uses, the
  // 'clientError' and 'timeout' emits, land on the same listeners).
  stream.server = server;
}

module.exports = { serveForeign };
