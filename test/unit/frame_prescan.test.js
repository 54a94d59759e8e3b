'use strict';

// Native unit test of the HTTP/2 frame prescan (src/core/http2/
// frame_prescan.*), which has no N-API and no nghttp2: builds
// test/unit/native/frame_prescan_test.cc with the system C++ compiler
// (-Wall -Wextra -Werror, ASan + UBSan) and runs it. It scans a frame
// stream whole, split at every one and every two positions and byte by
// byte, and checks what is fed, what is asked and when.

const common = require('../common');
const { assert } = common;
const { runNativeUnit } = require('./native_unit');

describe('frame prescan (native unit)', function () {
  this.timeout(120000);

  it('feeds, asks and drops the same whatever the read boundaries', function () {
    const out = runNativeUnit({
      name: 'frame_prescan_test',
      sources: ['test/unit/native/frame_prescan_test.cc', 'src/core/http2/frame_prescan.cc'],
    });
    assert.match(out, /frame_prescan: \d+ input bytes, 12 questions, ok/);
  });
});
