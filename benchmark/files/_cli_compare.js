#!/usr/bin/env node
'use strict';
// `npx sluice` against the two static servers people run from npx, `serve`
// and `http-server` (devDependencies, for this comparison only), each as
// its CLI starts it with default options on one folder: the server pinned
// to CPU 0, wrk pinned to CPU 1, runs interleaved; req/s and server CPU
// per request (from /proc/PID/stat). The leading '_' keeps run.js from
// taking this file for a case file. docs/cli.md has a run.
//
//   node benchmark/files/_cli_compare.js [--runs N] [--duration S]

const fs = require('node:fs');
const os = require('node:os');
const net = require('node:net');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { runLoad } = require('../lib/load.js');
const { snapshot, readProcStatus } = require('../lib/proc_stats.js');
const { clockTicks } = require('../lib/host.js');
const { killAll, track, installExitHandlers } = require('../lib/children.js');
const { median, fmtNum, formatTable } = require('../lib/format.js');

const REPO = path.resolve(__dirname, '..', '..');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const RUNS = arg('--runs', 3);
const DURATION = arg('--duration', 5);

const SERVERS = [
  { label: 'npx sluice', argv: (dir, port) => [path.join(REPO, 'lib', 'cli', 'sluice.js'), dir, '-p', port] },
  { label: 'serve 14', argv: (dir, port) => [require.resolve('serve/build/main.js'), dir, '-l', port, '-L', '-n'] },
  { label: 'http-server 14', argv: (dir, port) => [path.join(path.dirname(require.resolve('http-server/package.json')),
    'bin', 'http-server'), dir, '-p', port, '-a', '127.0.0.1', '-s'] },
];
const FILES = [
  { name: '1 KiB file', file: 'f1k.html', bytes: 1024 },
  { name: '64 KiB file', file: 'f64k.js', bytes: 64 * 1024 },
  { name: '1 MiB file', file: 'f1m.bin', bytes: 1024 * 1024 },
];

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitPort(port, child) {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}`);
    const ok = await new Promise((r) => {
      const s = net.connect(port, '127.0.0.1');
      s.on('connect', () => { s.destroy(); r(true); });
      s.on('error', () => r(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('did not listen in 10 s');
}

async function main() {
  installExitHandlers();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-cli-bench-'));
  for (const f of FILES) fs.writeFileSync(path.join(dir, f.file), Buffer.alloc(f.bytes, 'a'));
  const live = [];
  for (const s of SERVERS) {
    const port = await freePort();
    const child = track(spawn('taskset', ['-c', '0', process.execPath, ...s.argv(dir, String(port))],
      { stdio: ['ignore', 'ignore', 'inherit'] }));
    await waitPort(port, child);
    live.push({ ...s, port, pid: child.pid, rss: 0, results: new Map() });
  }
  const hz = clockTicks();
  for (const f of FILES) {
    const load = { tool: 'wrk', threads: 1, connections: f.bytes >= 1 << 20 ? 10 : 50, path: `/${f.file}` };
    for (const s of live) await runLoad(load, s.port, 1, __dirname, 1);  // warm-up
    for (let run = 0; run < RUNS; run++) {
      for (const s of live) {
        const a = snapshot(s.pid);
        const r = await runLoad(load, s.port, DURATION, __dirname, 1);
        const b = snapshot(s.pid);
        if (r.failure || r.non2xx) throw new Error(`${s.label} ${f.name}: ${r.failure || `${r.non2xx} non-2xx`}`);
        const cpuUs = ((b.ticks - a.ticks) / hz) * 1e6 / r.requests;
        const other = ((b.machineBusy - a.machineBusy) / hz - (b.ticks - a.ticks) / hz - (r.cpuSec || 0)) /
          (Number(b.time - a.time) / 1e9) * 100;
        if (!s.results.has(f.name)) s.results.set(f.name, []);
        s.results.get(f.name).push({ rps: r.rps, cpuUs, other });
        s.rss = Math.max(s.rss, readProcStatus(s.pid).VmRSS || 0);
        process.stderr.write(`${f.name} ${s.label} run ${run + 1}/${RUNS}: ${fmtNum(r.rps, 0)} req/s, ` +
          `${fmtNum(cpuUs, 1)} µs/req, other load ${fmtNum(other, 0)}%\n`);
      }
    }
  }
  const rows = [];
  for (const f of FILES) {
    const base = live[0].results.get(f.name);
    for (const s of live) {
      const m = s.results.get(f.name);
      const rps = median(m.map((x) => x.rps));
      const cpu = median(m.map((x) => x.cpuUs));
      rows.push([s === live[0] ? f.name : '', s.label, fmtNum(rps, 0), fmtNum(cpu, 1),
        s === live[0] ? '' : `${fmtNum(median(base.map((x) => x.rps)) / rps, 1)}x`,
        s === live[0] ? '' : `${fmtNum(cpu / median(base.map((x) => x.cpuUs)), 2)}x`,
        fmtNum(Math.max(...m.map((x) => x.other)), 0)]);
    }
  }
  console.log(`# ${new Date().toISOString()}, node ${process.version}, ${os.cpus().length} CPUs; ` +
    `wrk -t1 (c50, c10 for 1 MiB), ${RUNS} x ${DURATION} s, medians`);
  console.log(formatTable(['file', 'server', 'req/s', 'CPU µs/req', 'sluice req/s ×', 'CPU vs sluice',
    'other load % (max)'], rows, { markdown: process.argv.includes('--markdown') }));
  console.log(`peak RSS MB: ${live.map((s) => `${s.label} ${fmtNum(s.rss / 1048576, 0)}`).join(', ')}`);
  fs.rmSync(dir, { recursive: true, force: true });
}

main().then(() => killAll('SIGKILL'), (err) => {
  console.error(err.stack || err);
  killAll('SIGKILL');
  process.exit(1);
});
