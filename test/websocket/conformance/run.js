'use strict';

// npm run test:ws-conformance [-- --full] [--target NAME ...] [--case PREFIX ...] [--quiet]
//
// Runs the WebSocket conformance cases against every echo server of
// servers.js that can run here, prints each case's result (--quiet: only
// those not OK) and a summary table; exits 1 when a case FAILED on any
// target, or when a sluice target has more NON-STRICT cases than ws on
// node:http (the reference).

const { build } = require('./cases');
const { runAll, summarize, OK, NON_STRICT, FAILED, INFO } = require('./runner');
const { TARGETS, start } = require('./servers');
const { closeSessions } = require('./client');

function table(rows) {
  const head = ['target', 'cases', OK, NON_STRICT, INFO, FAILED, 'skipped: why'];
  const lines = [head, ...rows.map((r) => (r.skip
    ? [r.name, '-', '-', '-', '-', '-', r.skip]
    : [r.name, r.results.length, r.sum.total[OK], r.sum.total[NON_STRICT], r.sum.total[INFO], r.sum.total[FAILED], '']))];
  const w = head.map((_, i) => Math.max(...lines.map((l) => String(l[i]).length)));
  return lines.map((l) => l.map((c, i) => String(c).padEnd(w[i])).join('  ').trimEnd()).join('\n');
}

function groupTable(rows) {
  const run = rows.filter((r) => !r.skip);
  if (!run.length) return '';
  const groups = Object.keys(run[0].sum.groups);
  const lines = [['group', ...run.map((r) => r.name)]];
  for (const g of groups) {
    lines.push([g, ...run.map((r) => {
      const s = r.sum.groups[g];
      return `${s[OK]} ok` + (s[NON_STRICT] ? ` ${s[NON_STRICT]} ns` : '') + (s[INFO] ? ` ${s[INFO]} info` : '') + (s[FAILED] ? ` ${s[FAILED]} FAILED` : '');
    })]);
  }
  const w = lines[0].map((_, i) => Math.max(...lines.map((l) => String(l[i]).length)));
  return lines.map((l) => l.map((c, i) => String(c).padEnd(w[i])).join('  ').trimEnd()).join('\n');
}

// Runs the cases on each target (in order); returns rows
// { name, reference, skip?, results?, sum? }.
async function runTargets({ full = false, targets = null, cases: prefixes = null, log = () => {}, quiet = false } = {}) {
  let cases = build({ full });
  if (prefixes) cases = cases.filter((k) => prefixes.some((p) => k.id === p || k.id.startsWith(`${p}.`)));
  const rows = [];
  for (const t of TARGETS) {
    if (targets && !targets.includes(t.name)) continue;
    const skip = t.missing && t.missing();
    if (skip) {
      rows.push({ name: t.name, skip });
      log(`\n## ${t.name}: skipped: ${skip}`);
      continue;
    }
    log(`\n## ${t.name}`);
    const srv = await start(t);
    let results;
    try {
      results = await runAll(srv.target, cases, {
        onResult: (r) => {
          if (!quiet || r.result !== OK) log(`${r.result.padEnd(13)} ${r.id.padEnd(9)} ${r.title}${r.reason ? ` -- ${r.reason}` : ''}`);
        },
      });
    } catch (e) {
      if (e.code !== 'NO_RFC8441') throw e;
      rows.push({ name: t.name, skip: e.message });
      log(`skipped: ${e.message}`);
      continue;
    } finally {
      closeSessions();
      await srv.close();
    }
    rows.push({ name: t.name, reference: t.reference, results, sum: summarize(results) });
  }
  return rows;
}

// Problems to report: FAILED cases anywhere, and sluice targets with more
// NON-STRICT results than the reference.
function problems(rows) {
  const out = [];
  const ref = rows.find((r) => r.name === 'ws/node:http' && !r.skip);
  for (const r of rows) {
    if (r.skip) continue;
    for (const x of r.results) if (x.result === FAILED) out.push(`${r.name} ${x.id} FAILED: ${x.reason}`);
    if (ref && r.name.startsWith('sluice/') && r.sum.total[NON_STRICT] > ref.sum.total[NON_STRICT]) {
      out.push(`${r.name}: ${r.sum.total[NON_STRICT]} NON-STRICT, more than ws on node:http (${ref.sum.total[NON_STRICT]})`);
    }
  }
  return out;
}

async function main() {
  const argv = process.argv.slice(2);
  const list = (flag) => {
    const v = [];
    argv.forEach((a, i) => { if (a === flag && argv[i + 1]) v.push(argv[i + 1]); });
    return v.length ? v : null;
  };
  const t0 = Date.now();
  const rows = await runTargets({
    full: argv.includes('--full'), targets: list('--target'), cases: list('--case'),
    quiet: argv.includes('--quiet'), log: (s) => console.log(s),
  });
  console.log(`\n# WebSocket conformance (${argv.includes('--full') ? 'full' : 'quick'} profile, ${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);
  console.log(table(rows));
  console.log(`\n${groupTable(rows)}`);
  const bad = problems(rows);
  if (bad.length) {
    console.log(`\n${bad.length} problem(s):\n${bad.join('\n')}`);
    process.exitCode = 1;
  }
}

if (require.main === module) {
  main().catch((e) => { console.error(e); process.exit(2); });
}

module.exports = { runTargets, problems, table, groupTable };
