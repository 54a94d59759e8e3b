'use strict';
// peer_server.js <bun|deno> --mode hello|upload|file|ws [--body-size N]
//                [--file-size N] [other case args, ignored]
// The Bun.serve / Deno.serve rows (benchmark/lib/peers.js finds or
// installs the runtime): this node wrapper picks the port, writes the
// file of --mode file (N random bytes at /f, as files/file_server.js
// serves), starts lib/peer_app.js under the runtime as its child (it
// inherits the CPU pin) and relays the harness protocol (lib/relay.js), so
// the runner measures the runtime's process.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { spawn } = require('node:child_process');
const { parseArgs } = require('../server_harness.js');
const { freePort, relay } = require('../lib/relay.js');
const { peerCommand } = require('../lib/peers.js');

async function main() {
  const opts = parseArgs(process.argv.slice(2), { bodySize: 0, fileSize: 1024 });
  const name = opts._[0];
  const port = await freePort();
  const args = ['--mode', opts.mode, '--port', String(port), '--body-size', String(opts.bodySize)];
  let dir = null;
  if (opts.mode === 'file') {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), `sluice-bench-${name}-`));
    fs.writeFileSync(path.join(dir, 'f'), crypto.randomBytes(opts.fileSize));
    args.push('--file', path.join(dir, 'f'));
  }
  const [bin, ...argv] = peerCommand(name, path.join(__dirname, '..', 'lib', 'peer_app.js'), args);
  // The runtime's stdout is not the protocol's: its banners go to stderr.
  const child = spawn(bin, argv, {
    stdio: ['ignore', process.stderr, 'inherit'],
    env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
  });
  await relay(child, port, name, {
    cleanup: () => { if (dir) fs.rmSync(dir, { recursive: true, force: true }); },
    startMs: 30000,
  });
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
