'use strict';

// [sluice-only] Native unit test of the HTTP/3 core (src/core/http3/:
// varints, Huffman, QPACK with the static table, SETTINGS, the frame reader
// and the control / request stream rules), which has no QUIC, TLS, libuv
// or N-API: builds test/unit/native/http3_test.cc with the system C++
// compiler (-Wall -Wextra -Werror, ASan + UBSan) and runs it. RFC 9000,
// 7541 and 9204 vectors, every error path, every split of each stream
// input, encode → decode round trips.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const common = require('../common');
const { assert } = common;

describe('HTTP/3 framing and QPACK (native unit)', function () {
  // Compiling with ASan + UBSan beside other builds on a loaded machine:
  // a bound, not a speed test.
  this.timeout(300000);

  it('decodes, encodes and enforces the stream rules as RFC 9114 and 9204 say', function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-http3-'));
    try {
      const exe = path.join(dir, 'http3_test');
      const cxx = process.env.CXX || 'g++';
      const src = (f) => path.join(common.ROOT, f);
      execFileSync(cxx, [
        '-std=c++17', '-O1', '-g', '-Wall', '-Wextra', '-Werror',
        '-fsanitize=address,undefined', '-fno-sanitize-recover=undefined',
        `-I${src('src')}`,
        src('test/unit/native/http3_test.cc'),
        src('src/core/http3/varint.cc'),
        src('src/core/http3/frames.cc'),
        src('src/core/http3/huffman.cc'),
        src('src/core/http3/qpack.cc'),
        '-o', exe,
      ], { stdio: ['ignore', 'pipe', 'pipe'] });
      // LD_PRELOAD from an ASan run of the suite must not leak into it.
      const env = { ...process.env, LD_PRELOAD: '', ASAN_OPTIONS: 'detect_leaks=1' };
      const out = execFileSync(exe, { env, encoding: 'utf8' });
      assert.match(out, /http3: \d+ checks, ok/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
