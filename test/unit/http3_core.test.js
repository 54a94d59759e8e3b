'use strict';

// [sluice-only] Native unit test of the HTTP/3 core (src/core/http3/:
// varints, Huffman, QPACK with the static table, the dynamic-table QPACK
// decoder, SETTINGS, the frame reader, the control / request stream rules
// and the request message rules), which has no QUIC, TLS, libuv or
// N-API: builds test/unit/native/http3_test.cc with the system C++
// compiler (-Wall -Wextra -Werror, ASan + UBSan) and runs it. RFC 9000,
// 7541 and 9204 vectors, every error path, every split of each stream
// input, encode → decode round trips.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const common = require('../common');
const { assert } = common;

const sources = ['varint', 'frames', 'huffman', 'qpack', 'qpack_decoder', 'message']
  .map((f) => `src/core/http3/${f}.cc`);

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
        ...sources.map(src),
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

  it('replays the fuzz corpus (test/fuzz/corpus/http3, crash inputs included) with the harness checks', function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-http3-replay-'));
    try {
      const exe = path.join(dir, 'fuzz_http3_replay');
      const cxx = process.env.CXX || 'g++';
      const src = (f) => path.join(common.ROOT, f);
      execFileSync(cxx, [
        '-std=c++17', '-O1', '-g', '-Wall', '-Wextra', '-Werror', '-DSLUICE_FUZZ_REPLAY_MAIN',
        '-fsanitize=address,undefined', '-fno-sanitize-recover=undefined',
        `-I${src('src')}`,
        src('test/fuzz/fuzz_http3.cc'),
        ...sources.map(src),
        '-o', exe,
      ], { stdio: ['ignore', 'pipe', 'pipe'] });
      const corpus = src('test/fuzz/corpus/http3');
      const files = fs.readdirSync(corpus).sort().map((f) => path.join(corpus, f));
      assert.ok(files.length >= 10, 'the seed corpus is there');
      const env = { ...process.env, LD_PRELOAD: '', ASAN_OPTIONS: 'detect_leaks=1' };
      const out = execFileSync(exe, files, { env, encoding: 'utf8' });
      assert.match(out, new RegExp(`fuzz_http3 replay: ${files.length} inputs, ok`));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
