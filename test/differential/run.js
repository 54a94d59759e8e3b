#!/usr/bin/env node
'use strict';

// npm run fuzz:diff -- [--cases N] [--seed S] [--concurrency C] [--verbose]
//                      [--max-report K]
// Runs N cases (seeds S, S+1, ..., S+N-1) against sluice and node:http and
// prints a summary; exits 1 on any unexplained difference (each printed
// with its seed and bytes). Explained differences (docs/security.md,
// "Deliberate differences") are counted by row.

const { Differential, describeCase } = require('./harness');

function parseArgs(argv) {
  const opts = { cases: 2000, seed: 1, concurrency: 24, verbose: false, maxReport: 20 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      const v = Number(argv[++i]);
      if (!Number.isSafeInteger(v) || v < 0) throw new Error(`${a} wants a non-negative integer`);
      return v;
    };
    if (a === '--cases') opts.cases = val();
    else if (a === '--seed') opts.seed = val();
    else if (a === '--concurrency') opts.concurrency = Math.max(1, val());
    else if (a === '--max-report') opts.maxReport = val();
    else if (a === '--verbose') opts.verbose = true;
    else throw new Error(`unknown argument ${a}`);
  }
  return opts;
}

// Runs the cases; returns { ran, same, explained: { id: n }, diffs: [verdict] }.
async function fuzz({ cases, seed, concurrency, verbose = false, onProgress }) {
  const d = new Differential();
  await d.start();
  // accepted: cases where node dispatched at least one request (the
  // grammar must not drift into input both refuse outright).
  const result = { ran: 0, same: 0, accepted: 0, explained: {}, diffs: [] };
  let next = 0;
  const worker = async () => {
    while (next < cases) {
      const s = (seed + next++) >>> 0;
      const v = await d.runCase(s);
      result.ran++;
      if (v.node.requests.length > 0) result.accepted++;
      if (v.status === 'same') result.same++;
      else if (v.status === 'explained') result.explained[v.explainedBy] = (result.explained[v.explainedBy] || 0) + 1;
      else result.diffs.push(v);
      if (verbose) console.log(describeCase({ ...v, kind: v.kind || 'same' }));
      if (onProgress && result.ran % 10000 === 0) onProgress(result);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    await d.stop();
  }
  return result;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const t0 = Date.now();
  const r = await fuzz({ ...opts, onProgress: (p) => console.error(`  ${p.ran} cases, ${p.diffs.length} unexplained`) });
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  console.log(`differential fuzz: node ${process.version} (llhttp ${process.versions.llhttp}), seeds ${opts.seed}..${opts.seed + opts.cases - 1}`);
  console.log(`  ${r.ran} cases in ${secs} s: ${r.same} same, ${Object.values(r.explained).reduce((a, b) => a + b, 0)} explained, ${r.diffs.length} unexplained; node dispatched a request in ${r.accepted}`);
  for (const [id, n] of Object.entries(r.explained).sort()) console.log(`  explained by ${id}: ${n}`);
  for (const v of r.diffs.slice(0, opts.maxReport)) console.log(describeCase(v));
  if (r.diffs.length > opts.maxReport) console.log(`  ... and ${r.diffs.length - opts.maxReport} more`);
  process.exitCode = r.diffs.length ? 1 : 0;
}

module.exports = { fuzz };

if (require.main === module) {
  main().catch((e) => {
    console.error(e);
    process.exitCode = 2;
  });
}
