'use strict';

// binding.constants: the JS <-> native wire protocol defined once in C++
// (src/binding/wire_protocol.h, src/core/common/result.h). These check the
// values are coherent (no two flags of one call share a bit, the status
// word round-trips) and that lib/ spells none of them itself.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { constants: C } = require('../../lib/common/binding');

const names = (prefix) => Object.keys(C).filter((k) => k.startsWith(prefix));
const isBit = (v) => Number.isInteger(v) && v > 0 && (v & (v - 1)) === 0;

function assertDistinctBits(keys) {
  let seen = 0;
  for (const k of keys) {
    assert.ok(isBit(C[k]), `${k} = ${C[k]} is one bit`);
    assert.equal(seen & C[k], 0, `${k} shares a bit with another flag of its call`);
    seen |= C[k];
  }
  return seen;
}

describe('wire protocol (binding.constants)', () => {
  it('is frozen, and reading a name it does not define throws', () => {
    assert.ok(Object.isFrozen(C));
    assert.throws(() => C.RESULT_NOT_A_THING, /binding\.constants has no RESULT_NOT_A_THING/);
    assert.throws(() => { C.RESULT_OK = 5; }, TypeError);
  });

  it('HTTP/1.1 head flags are distinct bits that survive the status word', () => {
    const all = assertDistinctBits([...names('HEAD_USER_'), 'HEAD_WHOLE_BODY', 'HEAD_END']);
    for (const status of [100, 200, 404, 999]) {
      const word = (status & C.STATUS_MASK) | (all << C.STATUS_FLAGS_SHIFT);
      assert.equal(word & C.STATUS_MASK, status);
      assert.equal(word >>> C.STATUS_FLAGS_SHIFT, all);
      assert.ok(word > 0 && word <= 0x7fffffff, 'fits a positive int32');
    }
    assert.ok(999 <= C.STATUS_MASK);
  });

  it('request flags stay below the version field; versions decode as major * 10 + minor', () => {
    const all = assertDistinctBits(names('REQUEST_').filter((k) => k !== 'REQUEST_VERSION_SHIFT'));
    assert.ok(all < (1 << C.REQUEST_VERSION_SHIFT));
    assert.equal(C.VERSION_1_1, 11);
    assert.equal(C.VERSION_2_0, 20);
  });

  it('HTTP/2 respond flags are distinct bits', () => {
    assertDistinctBits(names('H2_'));
  });

  it('errors are distinct negatives; the positive results are the documented ones', () => {
    const errors = names('RESULT_').filter((k) => C[k] < 0);
    assert.equal(new Set(errors.map((k) => C[k])).size, errors.length);
    assert.ok(errors.includes('RESULT_CLOSED') && errors.includes('RESULT_BAD_BODY'));
    assert.equal(C.RESULT_OK, 0);
    assert.ok(C.RESULT_WAIT_DRAIN > 0 && C.RESULT_NO_BODY > 0);
  });

  it('allocator answers and codings are distinct', () => {
    const alloc = names('ALLOC_').map((k) => C[k]);
    assert.equal(new Set(alloc).size, alloc.length);
    const codings = names('CODING_').map((k) => C[k]);
    assert.equal(new Set(codings).size, 3);
    assert.ok(codings.every((v) => v > 0), '0 is identity');
  });

  it('lib/ writes no constant of the protocol itself', () => {
    const dir = path.join(__dirname, '..', '..', 'lib');
    const banned = [
      [/0x3ff/i, 'the status mask'],
      [/(<<|>>>?)\s*\d/, 'a shift by a literal (flags, packing)'],
      [/[=<>!]==?\s*-\d+\b/, 'a comparison with a negative literal (a native result)'],
      [/\b(?:const|let)\s+(?:R|RF|F|RQ|ALLOC)_[A-Z_]+\s*=\s*-?\d/, 'a hand-written flag or result'],
    ];
    const hits = [];
    const files = fs.readdirSync(dir, { recursive: true }).filter((n) => n.endsWith('.js'));
    assert.ok(files.some((f) => f.includes(path.sep)), 'lib/ is read with its folders');
    for (const f of files) {
      const lines = fs.readFileSync(path.join(dir, f), 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (/^\s*\/\//.test(line)) return;
        for (const [re, what] of banned) {
          if (re.test(line) && !/===? -1\b|!== -1\b/.test(line)) hits.push(`lib/${f}:${i + 1}: ${what}: ${line.trim()}`);
        }
      });
    }
    assert.deepEqual(hits, []);
  });
});
