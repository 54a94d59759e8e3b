'use strict';
// hello_server.js <sluice|node> [--body-size N] [--keep-alive-timeout MS]
//   [--access-log PATH]
// Answers every request with res.end(body): the string 'hello' by default,
// or a Buffer of N bytes with --body-size N. Prints "PORT <n>" when listening.
// --keep-alive-timeout: the server's keepAliveTimeout (default: the
// server's own); callgrind_hello.sh raises it, as under callgrind a loop
// turn can outlast 5 s. --access-log: sluice's native access log
// (combined) to PATH.

const { loadImpl, parseArgs, serve } = require('../server_harness.js');

const opts = parseArgs(process.argv.slice(2), { bodySize: 0, keepAliveTimeout: 0, accessLog: '' });
const impl = opts._[0];
const http = loadImpl(impl);

const body = opts.bodySize > 0 ? Buffer.alloc(opts.bodySize, 'x') : 'hello';

const options = {};
if (opts.keepAliveTimeout > 0) options.keepAliveTimeout = opts.keepAliveTimeout;
if (opts.accessLog !== '') options.accessLog = opts.accessLog;
const server = http.createServer(options, (req, res) => {
  res.end(body);
});
if (opts.keepAliveTimeout > 0) server.keepAliveTimeout = opts.keepAliveTimeout;

serve(server);
