'use strict';
// hello_server.js <sluice|node> [--body-size N]
// Answers every request with res.end(body): the string 'hello' by default,
// or a Buffer of N bytes with --body-size N. Prints "PORT <n>" when listening.

const { loadImpl, parseArgs, serve } = require('../server_harness.js');

const opts = parseArgs(process.argv.slice(2), { bodySize: 0 });
const impl = opts._[0];
const http = loadImpl(impl);

const body = opts.bodySize > 0 ? Buffer.alloc(opts.bodySize, 'x') : 'hello';

const server = http.createServer((req, res) => {
  res.end(body);
});

serve(server);
