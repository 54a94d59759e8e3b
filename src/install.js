#!/usr/bin/env node
'use strict';
// The package's install script (npm runs it after unpacking sluice). It
// decides between three outcomes, in this order:
//   stop     a platform the sources cannot build on yet (macOS, Windows, the
//            BSDs) or musl libc without --build-from-source: ONE sentence
//            naming the platform and what is planned, exit 1, no compiler
//            run (docs/install.md has the table).
//   prebuild the package carries a binary for this platform-arch-libc
//            (prebuilds/linux-x64/, prebuilds/linux-arm64/; built by
//            src/prebuild.sh with llhttp compiled in) and it loads
//            here: nothing is compiled, nothing else is needed.
//   source   everything else on Linux (another arch, glibc older than the
//            prebuilds' 2.28 baseline, a prebuild that does not load) and
//            `npm install --build-from-source`: src/check_deps.js, then
//            node-gyp rebuild, as `npm run build` does.
// decide() is pure (its facts are passed in) so that
// test/package/install_decision.test.js can fake the platform and libc.

const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const ROOT = path.join(__dirname, '..');
// The oldest glibc the prebuilt binaries load on (test/build/glibc_baseline
// checks their versioned symbols against it); node's own official Linux
// binaries have the same floor.
const GLIBC_BASELINE = '2.28';
const PREBUILD_ARCHES = ['x64', 'arm64'];

const PLATFORM_NAMES = {
  darwin: 'macOS', win32: 'Windows', freebsd: 'FreeBSD', openbsd: 'OpenBSD',
  netbsd: 'NetBSD', sunos: 'illumos/Solaris', aix: 'AIX', android: 'Android',
};

function versionAtLeast(v, min) {
  const a = String(v).split('.').map(Number);
  const b = String(min).split('.').map(Number);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] || 0;
    const y = b[i] || 0;
    if (x !== y) return x > y;
  }
  return true;
}

// facts: { platform, arch, glibc (runtime version string, or null when the
// libc is not glibc), buildFromSource (bool), prebuilds (the folder names
// under prebuilds/, e.g. ['linux-x64']), checkout (bool: a git checkout) }.
// Returns { action: 'stop' | 'prebuild' | 'source', reason }.
function decide(facts) {
  const { platform, arch, glibc, buildFromSource } = facts;
  const prebuilds = facts.prebuilds || [];
  if (platform !== 'linux') {
    const name = PLATFORM_NAMES[platform] || platform;
    return {
      action: 'stop',
      reason: `sluice does not support ${name} yet: its server core uses Linux kernel interfaces ` +
        '(openat2, accept4, /proc/self/fd, SO_REUSEPORT load balancing), and a port over libuv\'s ' +
        'portable equivalents is planned (docs/install.md).',
    };
  }
  if (!glibc && !buildFromSource) {
    return {
      action: 'stop',
      reason: `sluice does not support musl libc (Alpine) yet: its prebuilt binaries need glibc ${GLIBC_BASELINE}+, ` +
        `and linux-${arch}-musl prebuilds are planned (docs/install.md; ` +
        '`npm install --build-from-source` tries an untested source build).',
    };
  }
  if (buildFromSource) return { action: 'source', reason: 'build from source requested' };
  if (facts.checkout) {
    return { action: 'source', reason: 'a git checkout builds its own addon (npm run build:prebuilds makes the prebuilds)' };
  }
  if (!PREBUILD_ARCHES.includes(arch) || !prebuilds.includes(`linux-${arch}`)) {
    return { action: 'source', reason: `no prebuilt binary for linux-${arch}` };
  }
  if (!versionAtLeast(glibc, GLIBC_BASELINE)) {
    return { action: 'source', reason: `glibc ${glibc} is older than the prebuilt binaries' ${GLIBC_BASELINE}` };
  }
  return { action: 'prebuild', reason: `prebuilt binary for linux-${arch} (glibc ${glibc})` };
}

// The running process's facts (the install script runs under the node that
// will load the addon).
function currentFacts(env = process.env) {
  let glibc = null;
  if (process.platform === 'linux' && process.report) {
    // The report's header names the glibc node runs on; it is absent on
    // musl. Network details are not needed.
    process.report.excludeNetwork = true;
    glibc = process.report.getReport().header.glibcVersionRuntime || null;
  }
  let prebuilds = [];
  try { prebuilds = fs.readdirSync(path.join(ROOT, 'prebuilds')); } catch {}
  // npm passes `--build-from-source` to scripts as npm_config_build_from_source
  // ("true", or a package name as prebuild-install allows).
  const fromSource = env.npm_config_build_from_source;
  return {
    platform: process.platform,
    arch: process.arch,
    glibc,
    buildFromSource: fromSource === 'true' || fromSource === 'sluice',
    prebuilds,
    // `npm install` in the repository itself (the tarball has no .git): the
    // developer's tree compiles what it holds rather than loading
    // prebuilds/ left from an earlier npm run build:prebuilds.
    checkout: fs.existsSync(path.join(ROOT, '.git')),
  };
}

// Loads the prebuilt binary here, in the install script's own process
// (the node npm runs the script with is the node that will load it). Not
// in a child: a loader that emulates another architecture (qemu-user, as
// npm run test:arm64 runs) cannot exec that node again, and what fails to
// load fails with a thrown dlopen error (missing symbol version, wrong
// ELF class), not a crash. Returns null or the error text.
function prebuildLoadProblem() {
  try {
    // node-gyp-build reads PREBUILDS_ONLY when it loads: look at
    // prebuilds/ only, whatever else is in the folder.
    process.env.PREBUILDS_ONLY = '1';
    const file = require('node-gyp-build').resolve(ROOT);
    const b = require(file);
    if (typeof b.constants !== 'object') return `${file} is not the sluice addon`;
    return null;
  } catch (err) {
    return String(err.message || err).trim().split('\n').slice(0, 2).join(' ');
  } finally {
    delete process.env.PREBUILDS_ONLY;
  }
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: ROOT, stdio: 'inherit', shell: process.platform === 'win32' });
  if (r.error) {
    console.error(`sluice: could not run ${cmd}: ${r.error.message}`);
    return 1;
  }
  return r.status === null ? 1 : r.status;
}

function buildFromSource() {
  const deps = run(process.execPath, [path.join(__dirname, 'check_deps.js')]);
  if (deps !== 0) return deps;
  // npm puts its own node-gyp first on a script's PATH.
  return run('node-gyp', ['rebuild']);
}

function main() {
  const facts = currentFacts();
  let d = decide(facts);
  if (d.action === 'stop') {
    console.error(d.reason);
    return 1;
  }
  if (d.action === 'prebuild') {
    const problem = prebuildLoadProblem();
    if (!problem) {
      console.log(`sluice: using the ${d.reason}; nothing to compile`);
      return 0;
    }
    d = { action: 'source', reason: `the prebuilt binary does not load here (${problem})` };
  }
  console.log(`sluice: building the addon from source: ${d.reason}`);
  return buildFromSource();
}

module.exports = { decide, currentFacts, versionAtLeast, GLIBC_BASELINE };

if (require.main === module) process.exitCode = main();
