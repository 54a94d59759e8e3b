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

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const common = require('../common');

const SANITIZE = ['-O1', '-g', '-fsanitize=address,undefined', '-fno-sanitize-recover=undefined'];

// name: the program's name (and the temp folder's); sources: C++ files
// relative to the repository root; cObjects(dir): an optional function
// compiling C sources into objects in dir (given the sanitizer flags) and
// returning their paths; cxxflags: extra flags; args: the program's
// arguments.
function runNativeUnit({ name, sources, cObjects = null, cxxflags = [], args = [] }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `sluice-${name}-`));
  try {
    const exe = path.join(dir, name);
    const objects = cObjects === null ? [] : cObjects(dir, SANITIZE);
    execFileSync(process.env.CXX || 'g++', [
      '-std=c++17', '-Wall', '-Wextra', '-Werror', ...SANITIZE, ...cxxflags,
      `-I${path.join(common.ROOT, 'src')}`,
      ...sources.map((f) => path.join(common.ROOT, f)),
      ...objects, '-o', exe,
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    // LD_PRELOAD from an ASan run of the suite must not leak into it.
    const env = { ...process.env, LD_PRELOAD: '', ASAN_OPTIONS: 'detect_leaks=1' };
    return execFileSync(exe, args, { env, encoding: 'utf8' });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

module.exports = { runNativeUnit };
