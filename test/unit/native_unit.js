'use strict';

// Builds and runs one native unit test program: src/core/ parts compiled
// with the system compiler beside a test main in test/unit/native/ (or a
// fuzz harness built with its replay main), -Wall -Wextra -Werror, ASan and
// UBSan on, in a temporary folder removed afterwards. Returns the
// program's stdout; a compile error or a failing check (non-zero exit)
// throws with the compiler's or the program's output.
//
// The core is N-API-free so it can be built alone like this: no node
// headers, no libuv, nothing of the addon's build.
//
// The program depends on its sources, the headers under src/,
// test/unit/native/ and test/fuzz/, the flags and the compiler, never on the running
// node: CI runs this suite under four Nodes, so a program built once is
// kept in the temp folder under a hash of all of those and run again by
// the next Node (SLUICE_NATIVE_UNIT_CACHE=0 turns the reuse off).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { execFileSync } = require('node:child_process');
const common = require('../common');

const SANITIZE = ['-O1', '-g', '-fsanitize=address,undefined', '-fno-sanitize-recover=undefined'];

// name: the program's name (and the temp folder's); sources: C++ files
// relative to the repository root; cObjects(dir): an optional function
// compiling C sources into objects in dir (given the sanitizer flags) and
// returning their paths; cxxflags: extra flags; args: the program's
// arguments.
function runNativeUnit({ name, sources, cObjects = null, cxxflags = [], args = [] }) {
  const cxx = process.env.CXX || 'g++';
  const flags = ['-std=c++17', '-Wall', '-Wextra', '-Werror', ...SANITIZE, ...cxxflags,
    `-I${path.join(common.ROOT, 'src')}`];
  const cached = cachePath(name, cxx, flags, sources, cObjects);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `sluice-${name}-`));
  try {
    let exe = cached;
    if (exe === null || !fs.existsSync(exe)) {
      exe = path.join(dir, name);
      const objects = cObjects === null ? [] : cObjects(dir, SANITIZE);
      execFileSync(cxx, [
        ...flags, ...sources.map((f) => path.join(common.ROOT, f)), ...objects, '-o', exe,
      ], { stdio: ['ignore', 'pipe', 'pipe'] });
      if (cached !== null) {
        // Into place by rename: a concurrent run never sees half a file.
        fs.mkdirSync(path.dirname(cached), { recursive: true });
        fs.copyFileSync(exe, `${cached}.${process.pid}`);
        fs.renameSync(`${cached}.${process.pid}`, cached);
      }
    }
    // LD_PRELOAD from an ASan run of the suite must not leak into it.
    const env = { ...process.env, LD_PRELOAD: '', ASAN_OPTIONS: 'detect_leaks=1' };
    return execFileSync(exe, args, { env, encoding: 'utf8' });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// Every header a program can include: src/, test/unit/native/, test/fuzz/.
function headers(dir, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) headers(p, out);
    else if (e.name.endsWith('.h')) out.push(p);
  }
  return out;
}

// Where the program for these inputs is kept, or null (reuse off).
function cachePath(name, cxx, flags, sources, cObjects) {
  if (process.env.SLUICE_NATIVE_UNIT_CACHE === '0') return null;
  const h = crypto.createHash('sha256');
  h.update(JSON.stringify([cxx, execFileSync(cxx, ['--version'], { encoding: 'utf8' }), flags,
    cObjects === null ? '' : cObjects.toString()]));
  const files = sources.map((f) => path.join(common.ROOT, f)).concat(
    headers(path.join(common.ROOT, 'src')).sort(),
    headers(path.join(common.ROOT, 'test/unit/native')).sort(),
    headers(path.join(common.ROOT, 'test/fuzz')).sort());
  for (const f of files) h.update(f).update(fs.readFileSync(f));
  return path.join(os.tmpdir(), 'sluice-native-unit', `${name}-${h.digest('hex').slice(0, 24)}`);
}

module.exports = { runNativeUnit };
