'use strict';

// Native unit test of the HTTP/1.1 parser (src/core/http1/http1_parser.*),
// which knows no connection, loop or N-API: builds
// test/unit/native/http1_parser_test.cc with the system compilers
// (-Wall -Wextra -Werror, ASan + UBSan) against Debian's llhttp sources in
// strict mode, as the addon is built, and runs it. Every request shape is
// parsed whole (checked against what node answers) and split at every
// position and byte by byte, in fresh buffers and in embedder memory: the
// parser must report the same.

const path = require('node:path');
const { execFileSync } = require('node:child_process');
const common = require('../common');
const { assert } = common;
const { runNativeUnit } = require('./native_unit');

const LLHTTP_SRC = '/usr/share/llhttp';
const LLHTTP_INCLUDE = '/usr/share/include/llhttp';

describe('HTTP/1.1 parser (native unit)', function () {
  this.timeout(180000);

  it('reports the same requests, bodies and refusals whatever the read boundaries', function () {
    const llhttp = ['-DLLHTTP_STRICT_MODE=1', `-I${LLHTTP_INCLUDE}`];
    const out = runNativeUnit({
      name: 'http1_parser_test',
      sources: ['test/unit/native/http1_parser_test.cc', 'src/core/http1/http1_parser.cc',
        'src/core/http1/line_fold_scanner.cc'],
      cxxflags: llhttp,
      // Debian's llhttp sources, built as the addon builds them.
      cObjects: (dir, sanitize) => ['api', 'http', 'llhttp'].map((f) => {
        const o = path.join(dir, `llhttp_${f}.o`);
        execFileSync(process.env.CC || 'gcc', ['-std=c11', ...sanitize, ...llhttp, '-c',
          path.join(LLHTTP_SRC, `${f}.c`), '-o', o], { stdio: ['ignore', 'pipe', 'pipe'] });
        return o;
      }),
    });
    assert.match(out, /http1_parser: 21 cases, \d+ parses, ok/);
  });
});
