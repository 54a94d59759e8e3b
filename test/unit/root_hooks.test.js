'use strict';

// mocha runs a hook written outside every describe() as a root hook: an
// afterEach(common.cleanup) there runs after every test of every file and
// closes the servers other files start once in before(). Test files keep
// their hooks inside their describe().

const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');

const TEST = path.resolve(__dirname, '..');

describe('test files: no root-level per-test hooks', function () {
  it('no *.test.js calls beforeEach / afterEach outside a describe', function () {
    const found = [];
    for (const f of fs.readdirSync(TEST, { recursive: true })) {
      if (!f.endsWith('.test.js') || f.startsWith('node-compat') || f.startsWith('package')) continue;
      const lines = fs.readFileSync(path.join(TEST, f), 'utf8').split('\n');
      lines.forEach((l, i) => {
        if (/^(beforeEach|afterEach)\(/.test(l)) found.push(`${f}:${i + 1}: ${l.trim()}`);
      });
    }
    assert.deepStrictEqual(found, []);
  });
});
