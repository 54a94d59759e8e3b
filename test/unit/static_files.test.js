'use strict';

// Native unit test of serveStatic's pure parts (src/core/files/
// static_path.*, static_headers.*, content_types.*): builds
// test/unit/native/static_files_test.cc with the system C++ compiler
// (-Wall -Wextra -Werror, ASan + UBSan) and runs it: the traversal table
// at the path level, the conditional / range table at the decision level.

const common = require('../common');
const { assert } = common;
const { runNativeUnit } = require('./native_unit');

describe('serveStatic paths and decisions (native unit)', function () {
  // Compiling four files with ASan + UBSan took 30 s on a quiet machine and
  // over 120 s beside an ASan build of the addon: a bound, not a speed test.
  this.timeout(300000);

  it('decodes, normalises, refuses and decides as documented', function () {
    const out = runNativeUnit({
      name: 'static_files_test',
      sources: ['test/unit/native/static_files_test.cc', 'src/core/files/static_path.cc',
        'src/core/files/static_headers.cc', 'src/core/files/content_types.cc',
        'src/core/compress/accept_encoding.cc'],
    });
    assert.match(out, /static_files: \d+ checks, ok/);
  });
});
