'use strict';

// A worker_threads Worker terminated while its sluice server still has work
// in flight. The addon's environment cleanup hook (src/binding/addon.cc)
// closes servers, connections and file sources without calling JS and waits
// for every libuv callback of ours (close callbacks, fs reads, threadpool
// jobs) before node finalizes the objects, closes the loop and, when only
// the worker loaded it, unloads sluice.node. Before that hook these crashed:
// close callbacks ran in the unloaded addon (SIGSEGV), and a compression or
// file job in flight aborted node in uv_loop_close().
//
// Each scenario runs in a child process (worker_teardown_child.js) a few
// times in a row, so that a crash fails the test instead of killing mocha.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const common = require('../common');
const { assert } = common;

const describeSluice = common.isNode ? describe.skip : describe;
const CHILD = path.join(__dirname, 'worker_teardown_child.js');

describeSluice('worker teardown', function () {
  let dir;
  let big;

  before(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-teardown-'));
    big = path.join(dir, 'big.bin');
    // Large enough that a response is still streaming when the worker ends.
    fs.writeFileSync(big, Buffer.alloc(32 * 1024 * 1024, 'x'));
  });

  after(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  afterEach(common.cleanup);

  async function run(scenario, { iterations = 5, env = {} } = {}) {
    const args = [CHILD, scenario, String(iterations), big];
    const src = `process.argv.splice(1, Infinity, ...${JSON.stringify(args)});
                 require(${JSON.stringify(CHILD)});`;
    const r = await common.runNodeScript(src, { timeout: 40000, env });
    assert.strictEqual(r.signal, null, `child died with ${r.signal}: ${r.stderr.slice(-2000)}`);
    assert.strictEqual(r.code, 0, r.stderr.slice(-2000));
    assert.strictEqual(r.stdout.trim(), `ok ${iterations}`);
  }

  for (const [name, scenario] of [
    ['open HTTP/1.1 and HTTP/2 connections', 'open-connections'],
    ['an HTTP/1.1 file response mid-transfer', 'file-h1'],
    ['an HTTP/2 file response mid-transfer', 'file-h2'],
    ['a 1 MiB body compressing on the threadpool (terminate())', 'compress'],
    ['a 1 MiB body compressing on the threadpool (process.exit() in the worker)', 'compress-exit'],
    ['streamed res.write() compression jobs in flight, HTTP/1.1 (process.exit())', 'stream-exit'],
    ['streamed res.write() compression jobs in flight, HTTP/2 compat (process.exit())', 'stream-exit-h2'],
    ['an HTTP/1.1 file response whose open job is in flight (process.exit())', 'file-open-exit'],
    ['an HTTP/2 file response whose open job is in flight (process.exit())', 'file-open-exit-h2'],
    ['an HTTP/1.1 FIFO response waiting for its writer (poll handle open)', 'fifo-h1'],
    ['an HTTP/2 FIFO response waiting for its writer (poll handle open)', 'fifo-h2'],
    ['the open-file cache holding watches and descriptors, a cached file mid-transfer', 'file-cached'],
  ]) {
    it(`only the worker loads the addon: ${name}`, async function () {
      this.timeout(45000);
      await run(scenario);
    });
  }

  it('the main thread loads the addon too: open connections and a compression job', async function () {
    this.timeout(45000);
    // The addon stays mapped; the environment's objects must still not be
    // touched or called after teardown, and the loop must close cleanly.
    await run('open-connections', { env: { SLUICE_TEARDOWN_MAIN_LOADS: '1' } });
    await run('compress', { env: { SLUICE_TEARDOWN_MAIN_LOADS: '1' } });
  });
});
