'use strict';
// The headline run (`npm run bench` with no case named): the few rows that
// tell the story, taken from the suites' own cases, each with sluice, the
// node counterpart a user would otherwise run, and the peers found on this
// machine (nginx, h2o, uWebSockets.js; a peer that is missing is skipped
// without failing the run). `--all` runs every suite as before.

// row: the headline's name for the case; file / case: where it comes from;
// servers: [label in the suite, short label, role] where role is 'sluice',
// 'node' (the baseline the ratios are against) or 'peer' (optional).
const ROWS = [
  { row: 'hello, HTTP/1.1 (wrk c100)', file: 'http/hello', case: 'hello wrk c100',
    servers: [['sluice', 'sluice', 'sluice'], ['node', 'node:http', 'node'],
      ['uWebSockets.js', 'uWebSockets.js', 'peer']] },
  { row: '1 MiB upload, HTTP/1.1', file: 'http/post', case: 'HTTP/1.1 1 MiB upload',
    servers: [['sluice pool', 'sluice (buffer pool)', 'sluice'], ['node:http', 'node:http', 'node']] },
  { row: '64 KiB static file, HTTP/1.1 (wrk c100)', file: 'files/static_files', case: 'HTTP/1.1 64 KiB file wrk c100',
    servers: [['sluice serveStatic (default options)', 'sluice serveStatic', 'sluice'],
      ['node serve-static', 'node serve-static', 'node'], ['nginx', 'nginx', 'peer'], ['h2o', 'h2o', 'peer']] },
  { row: '64 KiB static file, h2c (h2load c10 m100)', file: 'files/static_files', case: 'h2c 64 KiB file h2load c10 m100',
    servers: [['sluice serveStatic (default options)', 'sluice serveStatic', 'sluice'],
      ['node:http2 respondWithFile', 'node:http2 respondWithFile', 'node'], ['nginx', 'nginx', 'peer'], ['h2o', 'h2o', 'peer']] },
  { row: 'WebSocket echo, 16 B (c100)', file: 'websocket/echo', case: 'echo 16 B c100',
    servers: [['sluice WebSocketServer', 'sluice WebSocketServer', 'sluice'], ['ws on node:http', 'ws on node:http', 'node'],
      ['uWebSockets.js', 'uWebSockets.js', 'peer']] },
  { row: 'WebSocket fan-out to 1000 (per delivery)', file: 'websocket/echo', case: 'fan-out 16 B to 1000 subscribers (per delivery)',
    servers: [['sluice WebSocketServer', 'sluice WebSocketServer', 'sluice'], ['ws on node:http', 'ws on node:http', 'node'],
      ['uWebSockets.js', 'uWebSockets.js', 'peer']] },
];

// Runs, seconds per run and warm-up seconds of the headline and of
// --quick (measured on the shared 2-core VM: docs/benchmarks.md).
const SETTINGS = {
  normal: { runs: 2, duration: 4, warmup: 1 },
  quick: { runs: 1, duration: 1, warmup: 0 },
};

// The headline plan: [{ spec, cases }] as run.js builds it, one entry per
// row (its case renamed to the row, its variants cut to the row's servers
// and relabelled). loadFile(group) -> the suite's spec.
function headlinePlan(loadFile) {
  const plan = [];
  for (const r of ROWS) {
    const spec = loadFile(r.file);
    const c = spec.cases.find((x) => x.name === r.case);
    if (!c) throw new Error(`headline: ${r.file} has no case "${r.case}"`);
    const variants = [];
    for (const [label, short, role] of r.servers) {
      const v = c.variants.find((x) => x.label === label);
      if (!v) throw new Error(`headline: ${r.file} / ${r.case} has no server "${label}"`);
      variants.push({ ...v, label: short, baseline: role === 'node', reference: false, optional: role === 'peer' });
    }
    plan.push({ spec, cases: [{ ...c, name: r.row, variants, runs: undefined, duration: undefined, warmup: undefined }] });
  }
  return plan;
}

module.exports = { ROWS, SETTINGS, headlinePlan };
