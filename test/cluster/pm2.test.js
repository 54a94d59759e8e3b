'use strict';
// PM2's cluster mode (`pm2 start app.js -i 2`, which runs node's cluster
// module) with the same unchanged app as cluster.test.js: both workers take
// connections on the one port. PM2 runs as a real daemon with its own
// PM2_HOME in a temporary directory. Shared test: under
// SLUICE_TEST_IMPL=node the app serves with node:http.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFile } = require('node:child_process');
const common = require('../common');

const { assert } = common;
const PM2 = path.join(common.ROOT, 'node_modules', 'pm2', 'bin', 'pm2');

function pm2(args, env) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [PM2, ...args], { env, timeout: 60000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`pm2 ${args.join(' ')}: ${err.message}\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

describe('PM2 cluster mode (pm2 start app.js -i 2)', function () {
  this.timeout(120000);
  afterEach(common.cleanup);

  it('serves from both workers on one port', async function () {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-pm2-'));
    const port = await common.freePort();
    const env = common.nodeChildEnv({ PM2_HOME: home, PORT: String(port) });
    try {
      await pm2(['start', path.join(__dirname, 'cluster_app.js'), '-i', '2', '--name', 'sluice-pm2-test',
        '--no-autorestart'], env);
      // Phase 1: wait until both instances answer. PM2 starts them one
      // after the other, and with SO_REUSEPORT the first takes every
      // connection until the second has bound: counting from the first
      // answer measured PM2's start-up lag, not the spread (185 / 15 once).
      const seen = new Set();
      const deadline = Date.now() + 30000;
      while (seen.size < 2 && Date.now() < deadline) {
        const r = await common.httpRequest(port, { headers: { connection: 'close' } }).catch(() => null);
        if (!r) { await common.sleep(100); continue; }
        assert.strictEqual(r.statusCode, 200);
        seen.add(r.body.toString());
        if (seen.size < 2) await common.sleep(20);
      }
      assert.strictEqual(seen.size, 2, `only ${[...seen]} answered within 30 s`);
      // Phase 2: the spread of 200 new connections over the two workers.
      const counts = {};
      const n = 200;
      for (let i = 0; i < n; i++) {
        const r = await common.httpRequest(port, { headers: { connection: 'close' } });
        assert.strictEqual(r.statusCode, 200);
        const pid = r.body.toString();
        counts[pid] = (counts[pid] || 0) + 1;
      }
      const list = JSON.parse(await pm2(['jlist'], env));
      const pids = list.filter((p) => p.name === 'sluice-pm2-test').map((p) => String(p.pid));
      assert.strictEqual(pids.length, 2, JSON.stringify(list.map((p) => [p.name, p.pid, p.pm2_env && p.pm2_env.status])));
      assert.deepStrictEqual(Object.keys(counts).sort(), pids.sort(), `answers came from ${JSON.stringify(counts)}`);
      for (const pid of pids) assert.ok(counts[pid] >= 20, `uneven: ${JSON.stringify(counts)}`);
      // eslint-disable-next-line no-console
      console.log(`      spread over ${n} connections: ${Object.values(counts).join(' / ')}`);
    } finally {
      await pm2(['kill'], env).catch(() => {});
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});
