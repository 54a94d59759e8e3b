#!/usr/bin/env node
'use strict';

// Runs one example of this folder against this checkout:
//
//   node docs/examples/run.js express-chat      (or: npm run example -- express-chat)
//
// The examples say require('sluice'), as an application would. In a
// checkout there is no node_modules/sluice, so this makes one — a link to
// the checkout in the temporary folder — and starts the example with it
// (and the checkout's node_modules, for express and fastify) on NODE_PATH.
// In a project of your own, `npm install` the example's dependencies and
// run `node server.js`.

const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');

const ROOT = path.resolve(__dirname, '..', '..');
const names = fs.readdirSync(__dirname).filter((n) => fs.existsSync(path.join(__dirname, n, 'server.js')));

const name = process.argv[2];
if (!names.includes(name)) {
  process.stderr.write(`usage: node docs/examples/run.js <example> [args]\nexamples: ${names.join(', ')}\n`);
  process.exit(2);
}

const linkDir = path.join(os.tmpdir(), `sluice-examples-${process.getuid ? process.getuid() : 'user'}`);
const link = path.join(linkDir, 'node_modules', 'sluice');
fs.mkdirSync(path.dirname(link), { recursive: true });
let current = null;
try { current = fs.readlinkSync(link); } catch { /* none yet */ }
if (current !== ROOT) {
  fs.rmSync(link, { force: true });
  fs.symlinkSync(ROOT, link);
}

const env = { ...process.env, NODE_PATH: [path.dirname(link), path.join(ROOT, 'node_modules'), process.env.NODE_PATH]
  .filter(Boolean).join(path.delimiter) };
const child = spawn(process.execPath, [path.join(__dirname, name, 'server.js'), ...process.argv.slice(3)],
  { stdio: 'inherit', env });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(signal ? 1 : code));
