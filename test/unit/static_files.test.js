'use strict';

// Native unit test of serveStatic's pure parts (src/core/files/
// static_path.*, static_headers.*, content_types.*): builds
// test/unit/native/static_files_test.cc with the system C++ compiler
// (-Wall -Wextra -Werror, ASan + UBSan) and runs it: the traversal table
// at the path level, the conditional / range table at the decision level.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const common = require('../common');
const { assert } = common;

describe('serveStatic paths and decisions (native unit)', function () {
  // Compiling four files with ASan + UBSan took 30 s on a quiet machine and
  // over 120 s beside an ASan build of the addon: a bound, not a speed test.
  this.timeout(300000);

  it('decodes, normalises, refuses and decides as documented', function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-static-'));
    try {
      const exe = path.join(dir, 'static_files_test');
      const cxx = process.env.CXX || 'g++';
      const src = (f) => path.join(common.ROOT, f);
      execFileSync(cxx, [
        '-std=c++17', '-O1', '-g', '-Wall', '-Wextra', '-Werror',
        '-fsanitize=address,undefined', '-fno-sanitize-recover=undefined',
        `-I${src('src')}`,
        src('test/unit/native/static_files_test.cc'),
        src('src/core/files/static_path.cc'),
        src('src/core/files/static_headers.cc'),
        src('src/core/files/content_types.cc'),
        src('src/core/compress/accept_encoding.cc'),
        '-o', exe,
      ], { stdio: ['ignore', 'pipe', 'pipe'] });
      const env = { ...process.env, LD_PRELOAD: '', ASAN_OPTIONS: 'detect_leaks=1' };
      const out = execFileSync(exe, { env, encoding: 'utf8' });
      assert.match(out, /static_files: \d+ checks, ok/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
