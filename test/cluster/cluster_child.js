'use strict';
// The cluster app (cluster_app.js) run as a child process for the cluster
// tests; resolves once every worker listens. `env`: more environment for
// the child (SLUICE_TEST_H3_KEY/CERT: the workers serve TLS + HTTP/3).
// c.waitFor(re, what) waits for a stdout line matching re; c.stop() ends
// the cluster and resolves once the primary exited.

const path = require('node:path');
const { spawn } = require('node:child_process');
const common = require('../common');

async function startCluster(port, workers = 2, env = {}) {
  const child = spawn(process.execPath, [path.join(__dirname, 'cluster_app.js'), String(port), String(workers)], {
    env: { ...common.nodeChildEnv(), ...env }, stdio: ['pipe', 'pipe', 'pipe'],
  });
  const c = { child, stderr: '', out: '' };
  child.stderr.on('data', (d) => { c.stderr += d; });
  const waiters = [];
  child.stdout.on('data', (d) => {
    c.out += d;
    for (const w of waiters.splice(0)) {
      if (w.re.test(c.out)) w.resolve(); else waiters.push(w);
    }
  });
  c.waitFor = (re, what, ms = 30000) => common.withTimeout(new Promise((resolve, reject) => {
    if (re.test(c.out)) return resolve();
    waiters.push({ re, resolve });
    child.once('exit', (code) => reject(new Error(`cluster exited ${code}: ${c.stderr}`)));
  }), ms, what);
  c.stop = async () => {
    child.stdin.end();
    await new Promise((resolve) => { if (child.exitCode !== null) resolve(); else child.once('exit', resolve); });
  };
  try {
    await c.waitFor(/READY\n/, 'every worker listening');
  } catch (err) {
    child.kill();
    throw err;
  }
  return c;
}

module.exports = { startCluster };
