'use strict';

// Which OpenSSL runs: node's own, on every supported Node. The addon links
// no libssl/libcrypto (it compiles against the openssl/ headers in node's
// include directory), so SSL_new binds at load time to the copy inside
// the node executable (official and nodesource builds export it), or to
// the shared libssl a distribution's node links itself (node then says
// node_shared_openssl). Checked with dladdr, the process's memory map,
// and the version node reports against the headers compiled against.

const fs = require('node:fs');
const common = require('../common');
const { assert } = common;

const maybe = common.isSluice ? describe : describe.skip;

maybe('OpenSSL linkage', function () {
  const binding = common.libInternal('common/binding');
  const sluice = require('../..');
  const v = process.config.variables.node_shared_openssl;
  const shared = v === true || v === 'true';

  it("SSL_new resolves into node's own OpenSSL (dladdr)", function () {
    const info = binding.opensslInfo;
    if (shared) {
      assert.strictEqual(info.inExecutable, false, JSON.stringify(info));
      assert.match(info.library, /libssl\.so/);
    } else {
      assert.strictEqual(info.inExecutable, true, JSON.stringify(info));
      assert.doesNotMatch(info.library, /libssl|libcrypto/);
    }
  });

  it('no second OpenSSL is mapped into the process', function () {
    const maps = fs.readFileSync('/proc/self/maps', 'utf8');
    const libs = new Set(maps.split('\n').filter((l) => /libssl|libcrypto/.test(l)).map((l) => l.split(/\s+/).pop()));
    assert.strictEqual(libs.size, shared ? 2 : 0, [...libs].join(', '));
  });

  it("the OpenSSL that runs is node's, of the series the headers came from", function () {
    const { runtimeVersion, headerVersion } = binding.opensslInfo;
    assert.strictEqual(sluice.versions.openssl, process.versions.openssl);
    // "OpenSSL 3.0.15+quic 3 Sep 2024" / process.versions.openssl "3.0.15+quic"
    assert.ok(runtimeVersion.includes(process.versions.openssl.split('+')[0]), `${runtimeVersion} vs ${process.versions.openssl}`);
    const series = (s) => s.match(/(\d+)\.(\d+)/).slice(1, 3).join('.');
    assert.strictEqual(series(headerVersion), series(process.versions.openssl), headerVersion);
  });
});
