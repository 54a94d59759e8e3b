'use strict';

// Which nghttp2 runs: node's own copy, on every supported Node. The addon
// links no libnghttp2 (only Debian's nghttp2.h is compiled against), so
// its calls bind at load time to the copy inside the node executable, or
// to the shared libnghttp2 a distribution's node links itself (node then
// says so in process.config). Checked with dladdr, against the process's
// memory map, and against the versions node and sluice report.

const fs = require('node:fs');
const common = require('../common');
const { assert } = common;

const maybe = common.isSluice ? describe : describe.skip;

function versionNum(v) {
  const [a, b, c] = v.split('-')[0].split('.').map(Number);
  return a * 1e6 + b * 1e3 + c;
}

maybe('nghttp2 linkage', function () {
  const binding = common.libInternal('common/binding');
  const sluice = require('../..');
  const shared = process.config.variables.node_shared_nghttp2 === true ||
    process.config.variables.node_shared_nghttp2 === 'true';

  it("nghttp2's functions resolve into node's own copy (dladdr)", function () {
    const info = binding.nghttp2Info;
    if (shared) {
      assert.strictEqual(info.inExecutable, false, JSON.stringify(info));
      assert.match(info.library, /libnghttp2\.so/);
    } else {
      assert.strictEqual(info.inExecutable, true, JSON.stringify(info));
      assert.doesNotMatch(info.library, /libnghttp2/);
    }
  });

  it('no second nghttp2 is mapped into the process', function () {
    const maps = fs.readFileSync('/proc/self/maps', 'utf8');
    const libs = new Set(maps.split('\n').filter((l) => /libnghttp2/.test(l)).map((l) => l.split(/\s+/).pop()));
    assert.strictEqual(libs.size, shared ? 1 : 0, [...libs].join(', '));
  });

  it("sluice.versions.nghttp2 is node's, at least the nghttp2.h compiled against", function () {
    assert.strictEqual(sluice.versions.nghttp2, process.versions.nghttp2);
    const { headerVersion } = binding.nghttp2Info;
    assert.ok(versionNum(process.versions.nghttp2) >= versionNum(headerVersion),
      `node's nghttp2 ${process.versions.nghttp2} is older than the header ${headerVersion}`);
  });
});
