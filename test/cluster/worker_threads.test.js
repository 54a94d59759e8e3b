'use strict';
// worker_threads: N threads, each with its own sluice server on one port
// (reusePort), the addon loaded per thread; threads are replaced one at a
// time under continuous load (each start loads the addon in a fresh
// environment, each stop tears one down with the server draining) and no
// request fails. sluice-only (node:http's reusePort needs Node 22.12).

const path = require('node:path');
const common = require('../common');

const { assert, sluiceOnly } = common;

describe('worker_threads: one port, a server per thread (reusePort)', function () {
  this.timeout(90000);
  afterEach(common.cleanup);

  sluiceOnly('2 threads, 8 thread replacements under load: every thread serves, 0 failed requests', async function () {
    const port = await common.freePort();
    const child = path.join(__dirname, 'worker_threads_child.js');
    const r = await common.runNodeScript(
      `process.argv.push('worker_threads_child', ${JSON.stringify(String(port))}, '2', '8'); require(${JSON.stringify(child)});`,
      { timeout: 80000 });
    assert.strictEqual(r.code, 0, `child exited ${r.code ?? r.signal}: ${r.stderr}`);
    const stats = JSON.parse(r.stdout);
    // eslint-disable-next-line no-console
    console.log(`      ${stats.ok} requests answered, ${stats.failed} failed, ${stats.restarts} thread replacements`);
    assert.deepStrictEqual(stats.errors, {});
    assert.strictEqual(stats.failed, 0);
    assert.strictEqual(stats.restarts, 8);
    // Both threads of every round took connections (thread ids grow by one
    // per start: 10 threads in all).
    const all = new Set(stats.perRound.flatMap((round) => Object.keys(round)));
    assert.ok(all.size >= 9, `answers came from ${all.size} threads: ${JSON.stringify(stats.perRound)}`);
    for (const round of stats.perRound) assert.ok(Object.keys(round).length >= 2, JSON.stringify(stats.perRound));
  });
});
