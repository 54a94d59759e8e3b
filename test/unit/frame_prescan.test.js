'use strict';

// Native unit test of the HTTP/2 frame prescan (src/core/http2/
// frame_prescan.*), which has no N-API and no nghttp2: builds
// test/unit/native/frame_prescan_test.cc with the system C++ compiler
// (-Wall -Wextra -Werror, ASan + UBSan) and runs it. It scans a frame
// stream whole, split at every one and every two positions and byte by
// byte, and checks what is fed, what is asked and when.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const common = require('../common');
const { assert } = common;

describe('frame prescan (native unit)', function () {
  this.timeout(120000);

  it('feeds, asks and drops the same whatever the read boundaries', function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-prescan-'));
    try {
      const exe = path.join(dir, 'frame_prescan_test');
      const cxx = process.env.CXX || 'g++';
      execFileSync(cxx, [
        '-std=c++17', '-O1', '-g', '-Wall', '-Wextra', '-Werror',
        '-fsanitize=address,undefined', '-fno-sanitize-recover=undefined',
        `-I${path.join(common.ROOT, 'src')}`,
        path.join(common.ROOT, 'test/unit/native/frame_prescan_test.cc'),
        path.join(common.ROOT, 'src/core/http2/frame_prescan.cc'),
        '-o', exe,
      ], { stdio: ['ignore', 'pipe', 'pipe'] });
      // LD_PRELOAD from an ASan run of the suite must not leak into it.
      const env = { ...process.env, LD_PRELOAD: '', ASAN_OPTIONS: 'detect_leaks=1' };
      const out = execFileSync(exe, { env, encoding: 'utf8' });
      assert.match(out, /frame_prescan: \d+ input bytes, 12 questions, ok/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
