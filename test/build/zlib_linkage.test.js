'use strict';

// The addon links nothing for zlib or brotli: its calls resolve to the
// copies inside the node executable (the llhttp lesson: make sure what is
// compiled against and what runs agree). Checked two ways: dladdr on the
// functions the addon calls, and the bytes it produces against node's own
// zlib module at the same settings.

const zlib = require('node:zlib');
const common = require('../common');
const { assert } = common;

const maybe = common.isSluice ? describe : describe.skip;

maybe('compression linkage', function () {
  const binding = common.libInternal('common/binding');
  const { CODING } = common.libInternal('compress/compression');

  const text = Buffer.from(Array.from({ length: 4000 },
    (_, i) => `{"id":${i},"name":"n${i % 97}","ok":${i % 3 === 0}}`).join('\n'));

  it('zlib and brotli resolve into the node executable, at the versions node reports', function () {
    const info = binding.compressionInfo();
    assert.strictEqual(info.zlib.inExecutable, true, JSON.stringify(info));
    assert.strictEqual(info.brotli.inExecutable, true, JSON.stringify(info));
    assert.doesNotMatch(info.zlib.library, /libz\.so/);
    assert.doesNotMatch(info.brotli.library, /libbrotli/);
    // process.versions.zlib is zlibVersion() plus the commit of Chromium's
    // zlib node vendors: "1.3.1-e00f703" (Node 20, 22: zlibVersion()
    // "1.3.1"), "1.3.2.1-motley-285e94b" (Node 24, 26: "1.3.2.1-motley").
    // Only that trailing commit hash is dropped.
    assert.strictEqual(info.zlib.runtimeVersion, process.versions.zlib.replace(/-[0-9a-f]{7,40}$/, ''));
    assert.strictEqual(info.zlib.headerVersion, info.zlib.runtimeVersion,
      'compiled against the zlib.h of the node that runs');
    assert.strictEqual(info.brotli.runtimeVersion, process.versions.brotli);
  });

  it('produces the same bytes as node\'s zlib at the same level', function () {
    for (const level of [1, 6, 9]) {
      assert.ok(binding.compressBuffer(CODING.gzip, level, 4, text).equals(zlib.gzipSync(text, { level })), `gzip ${level}`);
      assert.ok(binding.compressBuffer(CODING.deflate, level, 4, text).equals(zlib.deflateSync(text, { level })), `deflate ${level}`);
    }
    for (const q of [1, 4, 11]) {
      const node = zlib.brotliCompressSync(text, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: q } });
      assert.ok(binding.compressBuffer(CODING.br, -1, q, text).equals(node), `br ${q}`);
    }
  });
});
