'use strict';
// uws_server.js uws [--body-size N]
// The reference row of http/hello: uWebSockets.js answering every request
// with res.end(body), the same body as hello_server.js. uWebSockets.js is
// not a dependency of sluice: it is loaded from the module path in
// $SLUICE_BENCH_UWS (a directory or file that require() accepts, e.g.
// node_modules/@btc-vision/uwebsockets.js of a separate install); the
// case files skip the row when it is unset or does not load (see
// uwsUnavailable below and benchmark/README.md).
// Speaks the runner's harness protocol through a node:http-shaped shim
// (listen / address / on) handed to server_harness.js's serve().

const { execFileSync } = require('node:child_process');
const { parseArgs, serve } = require('../server_harness.js');

function loadUws() {
  const where = process.env.SLUICE_BENCH_UWS;
  if (!where) throw new Error('SLUICE_BENCH_UWS is not set');
  return require(where);
}

// Why the row cannot run here, or null: checked in a child so that a
// binary that does not load (no prebuilt binary for this Node, a newer
// glibc) costs the runner nothing.
let unavailable;
function uwsUnavailable() {
  if (unavailable === undefined) unavailable = probeUws();
  return unavailable;
}

function probeUws() {
  if (!process.env.SLUICE_BENCH_UWS) {
    return 'SLUICE_BENCH_UWS not set (path of an uWebSockets.js install, see benchmark/README.md)';
  }
  try {
    execFileSync(process.execPath, ['-e', `require(${JSON.stringify(__filename)}).loadUws().App`],
      { stdio: ['ignore', 'ignore', 'pipe'], timeout: 20000 });
    return null;
  } catch (err) {
    const text = String(err.stderr || err.message);
    // The loader's own reason (a missing glibc version, no binary for this
    // Node's ABI) rather than the package's generic message.
    const lines = text.split('\n');
    const line = lines.find((l) => /GLIBC|\.node/.test(l)) || lines.find((l) => /Error:/.test(l)) || lines[0];
    return `uWebSockets.js does not load: ${line.trim()}`;
  }
}

function main() {
  const opts = parseArgs(process.argv.slice(2), { bodySize: 0 });
  const uws = loadUws();
  const body = opts.bodySize > 0 ? Buffer.alloc(opts.bodySize, 'x') : 'hello';
  const app = uws.App();
  app.any('/*', (res) => {
    res.end(body);
  });
  let port = 0;
  serve({
    on() { return this; },  // uWS reports a failed listen through the token
    address() { return { port }; },
    listen(p, host, cb) {
      app.listen(host, p, (token) => {
        if (!token) {
          process.stderr.write(`server error: uWebSockets.js could not listen on ${host}\n`);
          process.exit(1);
        }
        port = uws.us_socket_local_port(token);
        cb();
      });
    },
  });
}

if (require.main === module) main();

module.exports = { loadUws, uwsUnavailable };
