'use strict';

// The WebSocket conformance cases (test/websocket/conformance/, grouped as
// the Autobahn test suite groups them) against an echo server on each way
// in: ws on node:http (the reference, which also proves the cases), ws on
// sluice's 'upgrade' socket, and sluice.WebSocketServer on HTTP/1.1, TLS,
// and HTTP/2 extended CONNECT (RFC 8441, over TLS and h2c). A target that
// cannot run here is skipped with the reason. Every target must have 0
// FAILED cases; a sluice.WebSocketServer target no more NON-STRICT ones
// than ws on node:http. The large-message cases (16 MiB, 4 MiB in small
// fragments, compression bomb) run on sluice/http1 only, to keep this file
// near a minute (they take most of a target's time);
// `npm run test:ws-conformance` runs every case everywhere, the reference
// included, and prints each result.

const common = require('../common');
const { assert } = common;
const { build } = require('./conformance/cases');
const { runAll, summarize, OK, NON_STRICT, FAILED, INFO } = require('./conformance/runner');
const { TARGETS, start } = require('./conformance/servers');
const { closeSessions } = require('./conformance/client');
const { table } = require('./conformance/run');

const ALL_CASES = ['sluice/http1'];
const rows = [];
let reference = null;

describe('WebSocket conformance (RFC 6455, RFC 7692)', function () {
  this.timeout(240000);
  const cases = build({ full: false });

  after(() => {
    if (rows.length) console.log(`\n    WebSocket conformance summary (${cases.length} cases per target; big ones only on ${ALL_CASES.join(', ')}):\n${
      table(rows).split('\n').map((l) => `      ${l}`).join('\n')}\n`);
  });

  for (const t of TARGETS) {
    if (t.name === 'ws/node:https') continue;  // the CLI runs it; TLS is covered by sluice/tls
    const sluiceSide = !t.reference;
    it(`${t.name}: 0 FAILED${t.name.startsWith('sluice/') ? ', NON-STRICT no more than ws on node:http' : ''}${sluiceSide ? ' [sluice-only]' : ''}`, async function () {
      if (sluiceSide && common.isNode) this.skip();
      const why = t.missing && t.missing();
      if (why) {
        rows.push({ name: t.name, skip: why });
        console.log(`      skipped: ${why}`);
        this.skip();
      }
      const set = ALL_CASES.includes(t.name) ? cases : cases.filter((k) => !k.big);
      const srv = await start(t);
      let results;
      try {
        results = await runAll(srv.target, set);
      } catch (e) {
        // sluice.WebSocketServer advertises RFC 8441: its h2 targets run.
        if (e.code !== 'NO_RFC8441' || sluiceSide) throw e;
        rows.push({ name: t.name, skip: e.message });
        console.log(`      skipped: ${e.message}`);
        this.skip();
      } finally {
        closeSessions();
        await srv.close();
      }
      const sum = summarize(results);
      rows.push({ name: t.name, results, sum });
      if (t.reference) reference = { sum, ids: new Set(set.map((k) => k.id)), results };
      const failed = results.filter((r) => r.result === FAILED);
      assert.deepStrictEqual(failed.map((r) => `${r.id} ${r.title}: ${r.reason}`), []);
      assert.strictEqual(sum.total[OK] + sum.total[NON_STRICT] + sum.total[INFO], set.length);
      if (t.name.startsWith('sluice/') && reference) {
        // Compare on the same cases.
        const ns = results.filter((r) => r.result === NON_STRICT).length;
        const refNs = reference.results.filter((r) => r.result === NON_STRICT && set.some((k) => k.id === r.id)).length;
        assert.ok(ns <= refNs, `${ns} NON-STRICT cases on ${t.name}, ws on node:http has ${refNs}:\n${
          results.filter((r) => r.result === NON_STRICT).map((r) => `${r.id}: ${r.reason}`).join('\n')}`);
      }
    });
  }
});
