'use strict';

// The differential fuzzer inside `npm test`: a few thousand generated
// requests (test/differential/grammar.js) sent to sluice and to node:http
// in this process; any difference that docs/security.md does not list as
// deliberate fails, printing the case's seed and bytes. More cases run in
// .ci/run and with `npm run fuzz:diff -- --cases N [--seed S]`.

const common = require('../common');
const { Differential, describeCase } = require('./harness');
const { fuzz } = require('./run');
const { generate } = require('./grammar');
const { MATCHERS, docIds, explain } = require('./known_differences');
const { assert } = common;

// Fixed seeds: the same cases on every run (CI varies them).
const SEED = 1;
const CASES = Number(process.env.SLUICE_DIFF_CASES || 2500);

(common.isNode ? describe.skip : describe)('differential fuzzer: sluice vs node:http on generated HTTP/1.1 input', function () {
  this.timeout(120000);

  it('the deliberate differences it knows are exactly the table in docs/security.md', function () {
    assert.deepStrictEqual(Object.keys(MATCHERS).sort(), docIds().sort());
  });

  it('generates the same bytes for the same seed, different bytes for others', function () {
    assert.strictEqual(generate(12345), generate(12345));
    const distinct = new Set();
    for (let s = 0; s < 200; s++) distinct.add(generate(s));
    assert.ok(distinct.size > 190, `only ${distinct.size} distinct cases in 200`);
  });

  it('would fail a case where sluice dispatches what node refused', function () {
    const req = { method: 'GET', url: '/p2', version: '1.1', headers: ['Host', 'x'], body: '', ended: true, trailers: [] };
    // Even on input that matches a deliberate row, an extra request on
    // sluice's side is never explained.
    assert.strictEqual(explain('QUERY / HTTP/1.1\r\n\r\n', { requests: [] }, { requests: [req] }), null);
    assert.strictEqual(explain('GET / HTTP/1.1\r\n\r\n', { requests: [req] }, { requests: [{ ...req, url: '/other' }] }), null);
  });

  it('finds a real difference and explains it by its row (a QUERY request)', async function () {
    let seed = -1;
    for (let s = 1; s < 20000 && seed < 0; s++) {
      if (/^QUERY \S+ HTTP\/1\.1\r\nHost:[ \t]*h[ \t]*\r\n\r\n$/.test(generate(s))) seed = s;
    }
    assert.ok(seed >= 0, 'no QUERY case in the first 20000 seeds');
    const d = new Differential();
    await d.start();
    try {
      const v = await d.runCase(seed);
      assert.strictEqual(v.status, 'explained', describeCase(v));
      assert.strictEqual(v.explainedBy, 'query-method');
      assert.strictEqual(v.node.requests.length, 1);
    } finally {
      await d.stop();
    }
  });

  it(`${CASES} generated cases (seeds ${SEED}..${SEED + CASES - 1}): no unexplained difference`, async function () {
    const r = await fuzz({ cases: CASES, seed: SEED, concurrency: 48 });
    assert.strictEqual(r.ran, CASES);
    // Most cases must agree outright, or the grammar has drifted into
    // producing only garbage both refuse... or only what they disagree on.
    assert.ok(r.same > CASES * 0.9, `only ${r.same} of ${CASES} the same`);
    assert.ok(r.accepted > CASES * 0.4, `node dispatched a request in only ${r.accepted} of ${CASES}`);
    assert.ok(r.diffs.length === 0,
      `${r.diffs.length} unexplained differences:\n${r.diffs.slice(0, 5).map(describeCase).join('\n')}`);
  });
});
