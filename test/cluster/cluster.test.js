'use strict';
// node's `cluster` module with an app that does nothing special: two
// workers call listen(port) on the same port and both take connections.
// node:http shares the primary's socket (round-robin); sluice binds one
// socket per worker with SO_REUSEPORT and the kernel spreads connections
// (lib/server/server.js listen, docs/deployment.md). Shared test: under
// SLUICE_TEST_IMPL=node it checks node's own behaviour.

const common = require('../common');
const { startLoad } = require('./load');
const { startCluster } = require('./cluster_child');

const { assert } = common;

// n requests, each on a new connection; resolves { pid: count }.
async function spread(port, n) {
  const counts = {};
  for (let i = 0; i < n; i++) {
    const r = await common.httpRequest(port, { path: '/', headers: { connection: 'close' } });
    assert.strictEqual(r.statusCode, 200);
    const pid = r.body.toString();
    counts[pid] = (counts[pid] || 0) + 1;
  }
  return counts;
}

describe('node cluster: workers listening on one port', function () {
  this.timeout(90000);
  afterEach(common.cleanup);

  it('both workers of a 2-worker cluster take connections (200 connections)', async function () {
    const port = await common.freePort();
    const c = await startCluster(port);
    try {
      const counts = await spread(port, 200);
      const pids = Object.keys(counts);
      assert.strictEqual(pids.length, 2, `connections went to ${JSON.stringify(counts)}`);
      for (const pid of pids) assert.ok(counts[pid] >= 20, `uneven: ${JSON.stringify(counts)}`);
      // eslint-disable-next-line no-console
      console.log(`      spread over 200 connections: ${Object.values(counts).join(' / ')}`);
      assert.strictEqual(c.stderr, '');
    } finally {
      await c.stop();
    }
  });

  it('rolling restart under continuous load: 3 restarts of both workers, 0 failed requests', async function () {
    const port = await common.freePort();
    const c = await startCluster(port);
    const load = startLoad(port);
    let stderr;
    try {
      for (let r = 1; r <= 3; r++) {
        await common.sleep(300);
        c.child.stdin.write('restart\n');
        await c.waitFor(new RegExp(`RESTARTED ${r}\n`), `rolling restart ${r}`);
        load.nextRound();
      }
      await common.sleep(300);
    } finally {
      await load.stop();
      stderr = c.stderr;
      await c.stop();
    }
    const { stats } = load;
    // eslint-disable-next-line no-console
    console.log(`      ${stats.ok} requests answered, ${stats.failed} failed, over 3 rolling restarts (6 worker replacements)`);
    assert.deepStrictEqual(stats.errors, {});
    assert.strictEqual(stats.failed, 0);
    assert.ok(stats.ok >= 100, `only ${stats.ok} requests`);
    // Every round was served by workers of that round (8 distinct workers in all).
    const all = new Set(stats.perRound.flatMap((r) => Object.keys(r)));
    assert.ok(all.size >= 6, `answers came from ${all.size} workers: ${JSON.stringify(stats.perRound)}`);
    assert.strictEqual(stderr, '');
  });
});
