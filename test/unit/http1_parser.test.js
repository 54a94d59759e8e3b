'use strict';

// Native unit test of the HTTP/1.1 parser (src/core/http1/http1_parser.*),
// which knows no connection, loop or N-API: builds
// test/unit/native/http1_parser_test.cc with the system compilers
// (-Wall -Wextra -Werror, ASan + UBSan) against Debian's llhttp sources in
// strict mode, as the addon is built, and runs it. Every request shape is
// parsed whole (checked against what node answers) and split at every
// position and byte by byte, in fresh buffers and in embedder memory: the
// parser must report the same.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const common = require('../common');
const { assert } = common;

const LLHTTP_SRC = '/usr/share/llhttp';
const LLHTTP_INCLUDE = '/usr/share/include/llhttp';

describe('HTTP/1.1 parser (native unit)', function () {
  this.timeout(180000);

  it('reports the same requests, bodies and refusals whatever the read boundaries', function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-http1-parser-'));
    try {
      const san = ['-O1', '-g', '-fsanitize=address,undefined', '-fno-sanitize-recover=undefined',
        '-DLLHTTP_STRICT_MODE=1', `-I${LLHTTP_INCLUDE}`];
      const objs = ['api', 'http', 'llhttp'].map((f) => {
        const o = path.join(dir, `llhttp_${f}.o`);
        execFileSync(process.env.CC || 'gcc', ['-std=c11', ...san, '-c', path.join(LLHTTP_SRC, `${f}.c`), '-o', o],
          { stdio: ['ignore', 'pipe', 'pipe'] });
        return o;
      });
      const exe = path.join(dir, 'http1_parser_test');
      execFileSync(process.env.CXX || 'g++', [
        '-std=c++17', '-Wall', '-Wextra', '-Werror', ...san,
        `-I${path.join(common.ROOT, 'src')}`,
        path.join(common.ROOT, 'test/unit/native/http1_parser_test.cc'),
        path.join(common.ROOT, 'src/core/http1/http1_parser.cc'),
        path.join(common.ROOT, 'src/core/http1/line_fold_scanner.cc'),
        ...objs, '-o', exe,
      ], { stdio: ['ignore', 'pipe', 'pipe'] });
      // LD_PRELOAD from an ASan run of the suite must not leak into it.
      const env = { ...process.env, LD_PRELOAD: '', ASAN_OPTIONS: 'detect_leaks=1' };
      const out = execFileSync(exe, { env, encoding: 'utf8' });
      assert.match(out, /http1_parser: 21 cases, \d+ parses, ok/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
