'use strict';

// `import { name } from 'sluice'` works for every name the docs use: node
// finds a CommonJS module's named exports by scanning lib/index.js's
// module.exports literal, and a value it cannot read ends the scan.

const path = require('path');
const common = require('../common');
const { assert } = common;

(common.isNode ? describe.skip : describe)('ESM: every CommonJS export is a named export', function () {
  it('import * from lib/index.js has every key of require()', async () => {
    const file = path.join(common.ROOT, 'lib', 'index.js');
    const cjs = require(file);
    const esm = await import(file);
    const missing = Object.keys(cjs).filter((k) => !(k in esm));
    assert.deepStrictEqual(missing, []);
    assert.strictEqual(esm.openFileCacheStats, cjs.openFileCacheStats);
  });
});
