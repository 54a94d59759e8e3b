'use strict';

// [sluice-only] Native unit test of the request rules HTTP/2 and HTTP/3
// share (src/core/stream/request_rules.cc, pure C++): builds
// test/unit/native/request_rules_test.cc with the system C++ compiler
// (-Wall -Wextra -Werror, ASan + UBSan) and runs it. The same rules over
// the wire, both protocols: test/http3/request_rules.test.js.

const common = require('../common');
const { assert } = common;
const { runNativeUnit } = require('./native_unit');

describe('request rules (native unit)', function () {
  this.timeout(120000);

  it('refuses each malformed head and lets each valid one through', function () {
    const out = runNativeUnit({
      name: 'request_rules_test',
      sources: ['test/unit/native/request_rules_test.cc', 'src/core/stream/request_rules.cc'],
    });
    assert.match(out, /request_rules: \d+ checks, ok/);
  });
});
