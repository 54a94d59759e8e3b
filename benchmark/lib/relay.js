'use strict';
// The harness protocol (see server_harness.js) for a server that is not a
// node script of ours (nginx, h2o, Bun, Deno): a node wrapper picks a free
// port, starts the server as its child (so it inherits the CPU pin), waits
// until it accepts connections and prints "PORT <n> PID <pid>": the runner
// then measures that pid, not the wrapper. "stats" answers the child's RSS
// (no GC figures: they are node's); stdin's EOF, "exit" or SIGTERM stop
// it, and the child's exit ends the wrapper.

const fs = require('node:fs');
const net = require('node:net');
const { commands } = require('../server_harness.js');

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function waitForPort(port, ms, what) {
  const deadline = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const s = net.connect(port, '127.0.0.1', () => { s.destroy(); resolve(); });
      s.once('error', () => {
        s.destroy();
        if (Date.now() > deadline) reject(new Error(`${what} did not listen on ${port}`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

// Relay the protocol for `child` (already spawned) listening on `port`;
// `cleanup` runs once when the wrapper exits.
async function relay(child, port, what, { cleanup = () => {}, startMs = 10000 } = {}) {
  const stop = () => {
    try { child.kill('SIGTERM'); } catch {}
  };
  let cleaned = false;
  const clean = () => {
    if (cleaned) return;
    cleaned = true;
    cleanup();
  };
  child.on('exit', (code, signal) => {
    process.stderr.write(`${what} exited (${signal || code})\n`);
    clean();
    process.exit(1);
  });
  process.on('exit', () => {
    stop();
    clean();
  });
  process.on('SIGTERM', () => process.exit(0));
  await waitForPort(port, startMs, what);
  commands(() => {
    let rss = NaN;
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) rss = Number(m[1]) * 1024;
    } catch {}
    return { gcMs: 0, gcCount: 0, rss };
  }, () => process.exit(0));
  process.stdout.write(`PORT ${port} PID ${child.pid}\n`);
}

module.exports = { freePort, waitForPort, relay };
