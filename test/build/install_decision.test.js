'use strict';

// [sluice-only] The install script's decision (src/install.js): prebuilt
// binary, source build, or one sentence that stops the install. The
// platform and libc are faked: through decide()'s facts, and for the
// script as a whole by a preload that changes process.platform and the
// glibc version the process report gives. The real install is tested by
// test/package/pack_install.test.js.

const assert = require('node:assert');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const common = require('../common');
const { decide, currentFacts, versionAtLeast } = require('../../src/install');

const INSTALL = path.join(__dirname, '..', '..', 'src', 'install.js');
const both = ['linux-x64', 'linux-arm64'];

function oneSentence(text) {
  const t = text.trim();
  assert.ok(!t.includes('\n'), `more than one line: ${t}`);
  assert.match(t, /^sluice does not support .+\.$/);
  // Sentences end with ". " + capital; file names and versions have dots too.
  assert.doesNotMatch(t, /\. [A-Z]/, `more than one sentence: ${t}`);
  assert.doesNotMatch(t, /error:|gyp|make|g\+\+|\.cc/i, 'compiler output reached the user');
}

(common.isSluice ? describe : describe.skip)('install script: prebuild, source or a clear stop [sluice-only]', function () {
  this.timeout(60000);

  it('uses the prebuild on glibc Linux x64 and arm64 at or above the 2.28 baseline', function () {
    for (const arch of ['x64', 'arm64']) {
      for (const glibc of ['2.28', '2.31', '2.36', '2.41']) {
        assert.strictEqual(decide({ platform: 'linux', arch, glibc, buildFromSource: false, prebuilds: both }).action,
          'prebuild', `${arch} ${glibc}`);
      }
    }
  });

  it('builds from source on glibc older than 2.28, on other arches, without a prebuild, and when asked', function () {
    assert.strictEqual(decide({ platform: 'linux', arch: 'x64', glibc: '2.27', prebuilds: both }).action, 'source');
    assert.strictEqual(decide({ platform: 'linux', arch: 'x64', glibc: '2.17', prebuilds: both }).action, 'source');
    for (const arch of ['ppc64', 's390x', 'arm', 'riscv64']) {
      assert.strictEqual(decide({ platform: 'linux', arch, glibc: '2.36', prebuilds: both }).action, 'source', arch);
    }
    assert.strictEqual(decide({ platform: 'linux', arch: 'arm64', glibc: '2.36', prebuilds: ['linux-x64'] }).action, 'source');
    assert.strictEqual(decide({ platform: 'linux', arch: 'x64', glibc: '2.36', prebuilds: [] }).action, 'source');
    const asked = decide({ platform: 'linux', arch: 'x64', glibc: '2.36', buildFromSource: true, prebuilds: both });
    assert.strictEqual(asked.action, 'source');
    // npm install in the git checkout compiles the tree, not stale prebuilds.
    assert.strictEqual(decide({ platform: 'linux', arch: 'x64', glibc: '2.36', prebuilds: both, checkout: true }).action, 'source');
  });

  it('stops with one sentence on macOS, Windows and the BSDs, even with --build-from-source', function () {
    for (const [platform, name] of [['darwin', 'macOS'], ['win32', 'Windows'], ['freebsd', 'FreeBSD']]) {
      for (const buildFromSource of [false, true]) {
        const d = decide({ platform, arch: 'x64', glibc: null, buildFromSource, prebuilds: both });
        assert.strictEqual(d.action, 'stop');
        assert.match(d.reason, new RegExp(`does not support ${name} yet`));
        assert.match(d.reason, /planned/);
        oneSentence(d.reason);
      }
    }
  });

  it('stops with one sentence on musl (Alpine); --build-from-source tries the source build there', function () {
    for (const arch of ['x64', 'arm64']) {
      const d = decide({ platform: 'linux', arch, glibc: null, buildFromSource: false, prebuilds: both });
      assert.strictEqual(d.action, 'stop');
      assert.match(d.reason, /musl libc \(Alpine\)/);
      assert.match(d.reason, new RegExp(`linux-${arch}-musl prebuilds are planned`));
      oneSentence(d.reason);
      assert.strictEqual(decide({ platform: 'linux', arch, glibc: null, buildFromSource: true, prebuilds: both }).action, 'source');
    }
  });

  it('reads --build-from-source from npm\'s environment and the facts of this process', function () {
    assert.strictEqual(currentFacts({ npm_config_build_from_source: 'true' }).buildFromSource, true);
    assert.strictEqual(currentFacts({ npm_config_build_from_source: 'sluice' }).buildFromSource, true);
    assert.strictEqual(currentFacts({ npm_config_build_from_source: 'false' }).buildFromSource, false);
    assert.strictEqual(currentFacts({}).buildFromSource, false);
    const f = currentFacts({});
    assert.strictEqual(f.platform, process.platform);
    assert.strictEqual(f.arch, process.arch);
    assert.strictEqual(f.glibc, process.report.getReport().header.glibcVersionRuntime);
    assert.ok(versionAtLeast('2.36', '2.28') && versionAtLeast('2.28', '2.28') && !versionAtLeast('2.27', '2.28'));
    assert.ok(versionAtLeast('2.100', '2.28'));
  });

  describe('the script as npm runs it, on a faked platform', function () {
    let dir;
    before(function () {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-install-'));
      // A tripwire in place of node-gyp: npm's node-gyp shim runs
      // $npm_config_node_gyp, and PATH holds only this folder and node.
      fs.writeFileSync(path.join(dir, 'node-gyp'), `#!/bin/sh\ntouch "${dir}/node-gyp-ran"\nexit 1\n`, { mode: 0o755 });
      for (const tool of ['g++', 'gcc', 'cc', 'c++', 'make']) {
        fs.writeFileSync(path.join(dir, tool), `#!/bin/sh\ntouch "${dir}/compiler-ran"\nexit 1\n`, { mode: 0o755 });
      }
      fs.writeFileSync(path.join(dir, 'fake.js'), `
        const p = process.env.FAKE_PLATFORM;
        if (p) Object.defineProperty(process, 'platform', { value: p });
        if ('FAKE_GLIBC' in process.env) {
          const real = process.report.getReport.bind(process.report);
          process.report.getReport = () => {
            const r = real();
            if (process.env.FAKE_GLIBC) r.header.glibcVersionRuntime = process.env.FAKE_GLIBC;
            else delete r.header.glibcVersionRuntime;
            return r;
          };
        }
      `);
    });
    after(function () { fs.rmSync(dir, { recursive: true, force: true }); });

    function runInstall(env) {
      return spawnSync(process.execPath, ['-r', path.join(dir, 'fake.js'), INSTALL], {
        encoding: 'utf8',
        env: { PATH: `${dir}:${path.dirname(process.execPath)}:/usr/bin:/bin`, npm_config_node_gyp: path.join(dir, 'node-gyp'), ...env },
      });
    }

    for (const [platform, name] of [['darwin', 'macOS'], ['win32', 'Windows']]) {
      it(`${name}: exit 1, one sentence, nothing compiled`, function () {
        const r = runInstall({ FAKE_PLATFORM: platform, npm_config_build_from_source: 'true' });
        assert.strictEqual(r.status, 1, r.stderr);
        assert.strictEqual(r.stdout, '');
        oneSentence(r.stderr);
        assert.match(r.stderr, new RegExp(name));
        assert.ok(!fs.existsSync(path.join(dir, 'node-gyp-ran')) && !fs.existsSync(path.join(dir, 'compiler-ran')));
      });
    }

    it('musl: exit 1, one sentence, nothing compiled', function () {
      const r = runInstall({ FAKE_GLIBC: '' });
      assert.strictEqual(r.status, 1, r.stderr);
      oneSentence(r.stderr);
      assert.match(r.stderr, /musl/);
      assert.ok(!fs.existsSync(path.join(dir, 'node-gyp-ran')) && !fs.existsSync(path.join(dir, 'compiler-ran')));
    });
  });
});
