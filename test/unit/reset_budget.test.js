'use strict';

// Native unit test of the HTTP/2 session's provoked-reset budget
// (src/core/http2/reset_budget.h, pure C++): builds
// test/unit/native/reset_budget_test.cc with the system C++ compiler
// (-Wall -Wextra -Werror, ASan + UBSan) and runs it.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const common = require('../common');
const { assert } = common;

describe('reset budget (native unit)', function () {
  this.timeout(120000);

  it('a burst, a steady refill capped at the burst, no refill from a clock going back', function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-reset-budget-'));
    try {
      const exe = path.join(dir, 'reset_budget_test');
      const cxx = process.env.CXX || 'g++';
      execFileSync(cxx, [
        '-std=c++17', '-O1', '-g', '-Wall', '-Wextra', '-Werror',
        '-fsanitize=address,undefined', '-fno-sanitize-recover=undefined',
        `-I${path.join(common.ROOT, 'src')}`,
        path.join(common.ROOT, 'test/unit/native/reset_budget_test.cc'),
        '-o', exe,
      ], { stdio: ['ignore', 'pipe', 'pipe'] });
      // LD_PRELOAD from an ASan run of the suite must not leak into it.
      const env = { ...process.env, LD_PRELOAD: '', ASAN_OPTIONS: 'detect_leaks=1' };
      const out = execFileSync(exe, { env, encoding: 'utf8' });
      assert.match(out, /reset_budget: ok/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
