'use strict';

// [sluice-only] Native unit test of the HTTP/3 core (src/core/http3/:
// varints, Huffman, QPACK with the static table, the dynamic-table QPACK
// decoder, SETTINGS, the frame reader, the control / request stream rules
// and the shared request rules it runs), which has no QUIC, TLS, libuv or
// N-API: builds test/unit/native/http3_test.cc with the system C++
// compiler (-Wall -Wextra -Werror, ASan + UBSan) and runs it. RFC 9000,
// 7541 and 9204 vectors, every error path, every split of each stream
// input, encode → decode round trips.

const fs = require('node:fs');
const path = require('node:path');
const common = require('../common');
const { assert } = common;
const { runNativeUnit } = require('./native_unit');

const sources = ['varint', 'frames', 'huffman', 'qpack', 'qpack_decoder']
  .map((f) => `src/core/http3/${f}.cc`).concat('src/core/stream/request_rules.cc');

describe('HTTP/3 framing and QPACK (native unit)', function () {
  // Compiling with ASan + UBSan beside other builds on a loaded machine:
  // a bound, not a speed test.
  this.timeout(300000);

  it('decodes, encodes and enforces the stream rules as RFC 9114 and 9204 say', function () {
    const out = runNativeUnit({
      name: 'http3_test',
      sources: ['test/unit/native/http3_test.cc', ...sources],
    });
    assert.match(out, /http3: \d+ checks, ok/);
  });

  it('replays the fuzz corpus (test/fuzz/corpus/http3, crash inputs included) with the harness checks', function () {
    const corpus = path.join(common.ROOT, 'test/fuzz/corpus/http3');
    const files = fs.readdirSync(corpus).sort().map((f) => path.join(corpus, f));
    assert.ok(files.length >= 10, 'the seed corpus is there');
    const out = runNativeUnit({
      name: 'fuzz_http3_replay',
      sources: ['test/fuzz/fuzz_http3.cc', ...sources],
      cxxflags: ['-DSLUICE_FUZZ_REPLAY_MAIN'],
      args: files,
    });
    assert.match(out, new RegExp(`fuzz_http3 replay: ${files.length} inputs, ok`));
  });
});
