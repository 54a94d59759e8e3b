'use strict';

// Native unit test of the HTTP/2 session's provoked-reset budget
// (src/core/http2/reset_budget.h, pure C++): builds
// test/unit/native/reset_budget_test.cc with the system C++ compiler
// (-Wall -Wextra -Werror, ASan + UBSan) and runs it.

const common = require('../common');
const { assert } = common;
const { runNativeUnit } = require('./native_unit');

describe('reset budget (native unit)', function () {
  this.timeout(120000);

  it('a burst, a steady refill capped at the burst, no refill from a clock going back', function () {
    const out = runNativeUnit({
      name: 'reset_budget_test',
      sources: ['test/unit/native/reset_budget_test.cc'],
    });
    assert.match(out, /reset_budget: ok/);
  });
});
