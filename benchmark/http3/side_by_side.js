'use strict';
// node benchmark/http3/side_by_side.js [--rounds 2] [--duration 5]
//     [--addon label=path ...] [--only '1 KiB file'] [--no-bun]
//
// sluice HTTP/3, sluice HTTP/2 over TLS and Bun's HTTP/3 in one run with
// one client: benchmark/lib/h3load.js (sluice's QUIC client for h3,
// node:http2 for h2) on CPU 1, each server alone on CPU 0 (taskset), for
// a 1 KiB file, a 1 MiB file and 1 MiB uploads. Server CPU is its
// utime + stime from /proc/<pid>/stat over the load run, per request.
// Every row runs --rounds times, the rows of a round interleaved, and the
// medians are printed with the load average before and after (the machine
// this was written on is shared: only rows of one run compare).
//
// --addon label=path (repeatable): the sluice rows once per addon build
// (SLUICE_ADDON for the server; before/after a change). Default: the
// tree's own build. The client always uses the first one.
// Needs a node with OpenSSL >= 3.5 (HTTP/3): this one or
// $SLUICE_BENCH_H3_NODE. Bun comes from benchmark/lib/peers.js.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, execFileSync } = require('node:child_process');
const { readProcStat } = require('../lib/proc_stats');
const { peerUnavailable, peerCommand } = require('../lib/peers');

const argv = process.argv.slice(2);
const opts = { rounds: 2, duration: 5, addons: [], only: null, bun: true };
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--rounds') opts.rounds = Number(argv[++i]);
  else if (a === '--duration') opts.duration = Number(argv[++i]);
  else if (a === '--addon') {
    const [label, file] = argv[++i].split('=');
    opts.addons.push({ label, file: path.resolve(file) });
  } else if (a === '--only') opts.only = argv[++i];
  else if (a === '--no-bun') opts.bun = false;
  else throw new Error(`side_by_side: unknown option ${a}`);
}
if (opts.addons.length === 0) opts.addons.push({ label: 'tree', file: null });

const NODE = [process.execPath, process.env.SLUICE_BENCH_H3_NODE].find((bin) => {
  if (!bin) return false;
  const v = execFileSync(bin, ['-p', 'process.versions.openssl'], { encoding: 'utf8' }).trim();
  const [maj, min] = v.split('.').map(Number);
  return maj > 3 || (maj === 3 && min >= 5);
});
if (!NODE) {
  process.stderr.write('side_by_side: HTTP/3 needs node >= 22.20 (OpenSSL 3.5): set SLUICE_BENCH_H3_NODE\n');
  process.exit(2);
}
const H3LOAD = path.join(__dirname, '..', 'lib', 'h3load.js');
const MiB = 1024 * 1024;
const CASES = [
  { name: '1 KiB file', mode: 'file', fileSize: 1024, c: 4, m: 16, load: { expectLength: 1024 } },
  { name: '1 MiB file', mode: 'file', fileSize: MiB, c: 4, m: 4, load: { expectLength: MiB } },
  { name: '1 MiB upload', mode: 'upload', fileSize: 0, c: 4, m: 4, load: { method: 'POST', bodySize: MiB, expectLength: 2 } },
].filter((c) => !opts.only || c.name === opts.only);

const bunWhy = opts.bun ? peerUnavailable('bun') : '--no-bun';
const ROWS = [];
for (const a of opts.addons) {
  ROWS.push({ label: `sluice h3 (${a.label})`, server: 'sluice', addon: a.file, proto: 'h3' });
  ROWS.push({ label: `sluice h2+TLS (${a.label})`, server: 'sluice', addon: a.file, proto: 'h2' });
}
if (!bunWhy) ROWS.push({ label: 'Bun h3', server: 'bun', proto: 'h3' });

function startServer(row, kase) {
  const serverArgs = ['--mode', kase.mode, '--file-size', String(kase.fileSize)];
  const cmd = row.server === 'bun'
    ? peerCommand('bun', path.join(__dirname, 'bun_h3_server.js'), serverArgs)
    : [NODE, path.join(__dirname, 'h3_server.js'), 'sluice', ...serverArgs];
  const env = { ...process.env };
  if (row.addon) env.SLUICE_ADDON = row.addon;
  const child = spawn('taskset', ['-c', '0', ...cmd], { env, stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /PORT (\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.on('exit', (code) => reject(new Error(`${row.label}: server exited (${code})`)));
  });
}

function runLoad(row, kase, port) {
  const l = kase.load;
  const args = [H3LOAD, '--proto', row.proto, '--port', String(port), '-c', String(kase.c), '-m', String(kase.m),
    '--duration', String(opts.duration), '--expect-length', String(l.expectLength)];
  if (l.method) args.push('--method', l.method, '--body-size', String(l.bodySize));
  const env = { ...process.env };
  if (opts.addons[0].file) env.SLUICE_ADDON = opts.addons[0].file;
  return new Promise((resolve) => {
    const child = spawn('taskset', ['-c', '1', NODE, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    child.on('exit', () => {
      const m = /RESULT requests=(\d+) seconds=([\d.]+) bytes=(\d+) errors=(\d+) bad=(\d+)/.exec(out);
      resolve(m ? { requests: +m[1], seconds: +m[2], errors: +m[4], bad: +m[5] } : { failed: (err || out).trim().slice(-300) });
    });
  });
}

async function measure(row, kase) {
  const { child, port } = await startServer(row, kase);
  try {
    const before = readProcStat(child.pid).ticks;
    const r = await runLoad(row, kase, port);
    const ticks = readProcStat(child.pid).ticks - before;
    if (r.failed || r.requests === 0) return { failed: r.failed || 'no requests' };
    const hz = 100;  // USER_HZ
    return { rps: r.requests / r.seconds, cpuUs: (ticks / hz) * 1e6 / r.requests, errors: r.errors + r.bad };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)));
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main() {
  const load0 = os.loadavg();
  const started = new Date().toISOString();
  const results = new Map();  // case|row -> [{rps,cpuUs}]
  for (let round = 0; round < opts.rounds; round++) {
    for (const kase of CASES) {
      for (const row of ROWS) {
        const r = await measure(row, kase);
        const key = `${kase.name}|${row.label}`;
        if (!results.has(key)) results.set(key, []);
        results.get(key).push(r);
        process.stderr.write(`round ${round + 1} ${kase.name} ${row.label}: ${r.failed ? `FAILED ${r.failed}` :
          `${r.rps.toFixed(0)} req/s, ${r.cpuUs.toFixed(1)} µs/req`}\n`);
      }
    }
  }
  const load1 = os.loadavg();
  console.log(`started ${started}, ${opts.rounds} rounds of ${opts.duration} s per row; node ${execFileSync(NODE, ['-v']).toString().trim()}` +
    `; load average ${load0.map((x) => x.toFixed(1)).join(' ')} before, ${load1.map((x) => x.toFixed(1)).join(' ')} after` +
    `${bunWhy ? `; Bun skipped: ${bunWhy}` : ''}`);
  console.log('| case | row | req/s (median; runs) | server CPU µs/req (median; runs) |');
  console.log('| --- | --- | ---: | ---: |');
  for (const kase of CASES) {
    for (const row of ROWS) {
      const rs = results.get(`${kase.name}|${row.label}`).filter((r) => !r.failed);
      if (rs.length === 0) {
        console.log(`| ${kase.name} | ${row.label} | failed | |`);
        continue;
      }
      const fmt = (xs, d) => `${median(xs).toFixed(d)} (${xs.map((x) => x.toFixed(d)).join(', ')})`;
      console.log(`| ${kase.name} | ${row.label} | ${fmt(rs.map((r) => r.rps), 0)} | ${fmt(rs.map((r) => r.cpuUs), 1)} |`);
    }
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exitCode = 1;
});
