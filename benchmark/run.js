#!/usr/bin/env node
'use strict';
// Benchmark runner: sluice and its node built-in counterpart side by side.
//
//   node benchmark/run.js [options] [file|dir|filter ...]
//
// With no case named and no --all: the headline run (benchmark/lib/
// headline.js), a few rows from the suites below ending in one table.
// Each case file (benchmark/<area>/<name>.js, not *_server.js) exports
// { title, columns, cases: [...] }. For every case, every server variant is
// started in a child pinned to CPU 0 (taskset -c 0), checked for correct
// answers, warmed up, and driven by wrk / h2load pinned to CPU 1; each case
// runs N times (variants interleaved) and the table shows medians.
// See benchmark/README.md.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { REPO, snapshotSluice, gitDescribe, sluiceLoadProblem } = require('./lib/sluice_build.js');
const { killAll, installExitHandlers } = require('./lib/children.js');
const { hasTool, clockTicks, cpuCount } = require('./lib/host.js');
const { readProcStatus, resetPeakRss, snapshot } = require('./lib/proc_stats.js');
const { startServer, describeExit } = require('./lib/servers.js');
const { runLoad, h2loadShape } = require('./lib/load.js');
const { checkServer, startProbe } = require('./lib/clients.js');
const { median, fmtNum, fmtRate, fmtRatio, formatTable, indent } = require('./lib/format.js');
const { setTimeout: sleep } = require('node:timers/promises');
const chart = require('./chart.js');
const headline = require('./lib/headline.js');

const BENCH_DIR = __dirname;
const SERVER_CPU = 0;
const OTHER_LOAD_WARN = 15; // % of a core used by other processes before a run is flagged
const LOAD_CPU = 1;
const CHART_DIR = path.join(BENCH_DIR, '..', 'docs', 'img');

const USAGE = `usage: node benchmark/run.js [options] [file|dir|filter ...]

  (nothing)      the headline: hello, an upload, a static file on HTTP/1.1
                 and h2c, WebSocket echo and fan-out; sluice, node and the
                 peers found here; one table and a chart (~2.5 min on 2 cores)
  --all          every case of every suite (the old default; --list estimates 75 min)
  file|dir       run only these case files (e.g. http/hello, benchmark/http/hello.js, http)
  filter         any other word: run only cases whose "file case-name" contains it
  --quick        smoke run: each case once, short, little warm-up, reduced
                 grids (the headline in ~1 min)
  --full         run full parameter grids (server_upload: all 16 combinations)
  --runs N       runs per case (default 3, --quick 1)
  --duration S   seconds per run (default: the case's, 5 s for hello; --quick 2)
  --warmup S     warm-up seconds per server (default: the case's, 2; --quick 1; 0 = none)
  --servers L    comma-separated variant labels or impls to run (e.g. node)
  --markdown     also print the tables as Markdown
  --json FILE    write every measurement to FILE
  --chart        also draw an SVG bar chart per suite (req/s and CPU per
                 request, every server) into docs/img/bench-<suite>.svg (the
                 headline: docs/img/bench-headline.svg; without --chart its
                 chart goes to the system's temporary folder)
  --chart-from F draw the charts from a --json file F, without running
  --list         list the cases that would run, and exit
  --no-snapshot  load sluice from the working tree itself (default: from a
                 temporary copy of package.json, lib/ and the built addon,
                 so a rebuild during the run cannot break or mix servers)
  -h, --help     this text`;

function parseCli(argv) {
  const o = { all: false, quick: false, full: false, runs: null, duration: null, warmup: null, servers: null,
    markdown: false, json: null, chart: false, chartFrom: null, list: false, targets: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (a.includes('=')) return a.slice(a.indexOf('=') + 1);
      if (i + 1 >= argv.length) die(`${a} needs a value`);
      return argv[++i];
    };
    const name = a.split('=')[0];
    switch (name) {
      case '--quick': o.quick = true; break;
      case '--all': o.all = true; break;
      case '--full': o.full = true; break;
      case '--runs': o.runs = posInt(val(), a); break;
      case '--duration': o.duration = posNum(val(), a); break;
      case '--warmup': o.warmup = Number(val()); break;
      case '--servers': o.servers = val().split(',').map((s) => s.trim()).filter(Boolean); break;
      case '--markdown': o.markdown = true; break;
      case '--json': o.json = val(); break;
      case '--chart': o.chart = true; break;
      case '--chart-from': o.chartFrom = val(); break;
      case '--list': o.list = true; break;
      case '--no-snapshot': o.noSnapshot = true; break;
      case '-h': case '--help': console.log(USAGE); process.exit(0); break;
      default:
        if (a.startsWith('-')) die(`unknown option ${a}\n${USAGE}`);
        o.targets.push(a);
    }
  }
  if (o.duration !== null && o.duration > 600) die('--duration is capped at 600 s');
  return o;
}

function posInt(v, a) {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) die(`${a}: expected a positive integer`);
  return n;
}

function posNum(v, a) {
  const n = Number(v);
  if (!(n > 0)) die(`${a}: expected a positive number`);
  return n;
}

function die(msg) {
  console.error(msg);
  process.exit(2);
}

// ---------------------------------------------------------------------------
// Discovery

function isCaseFile(file) {
  const base = path.basename(file);
  return base.endsWith('.js') && !base.endsWith('_server.js') && !base.startsWith('_');
}

function discover() {
  const files = [];
  for (const ent of fs.readdirSync(BENCH_DIR, { withFileTypes: true })) {
    // lib/ holds the runner's own modules, not case files.
    if (!ent.isDirectory() || ent.name.startsWith('.') || ent.name === 'node_modules' || ent.name === 'lib') continue;
    const dir = path.join(BENCH_DIR, ent.name);
    for (const f of fs.readdirSync(dir).sort()) {
      if (isCaseFile(f)) files.push(path.join(dir, f));
    }
  }
  return files.sort();
}

function resolveTarget(t) {
  const candidates = [t, `${t}.js`, path.join(BENCH_DIR, t), path.join(BENCH_DIR, `${t}.js`)];
  for (const c of candidates) {
    let st;
    try { st = fs.statSync(c); } catch { continue; }
    if (st.isFile()) return [path.resolve(c)];
    if (st.isDirectory()) {
      return fs.readdirSync(c).filter(isCaseFile).sort().map((f) => path.resolve(c, f));
    }
  }
  return null;
}

function loadFile(file) {
  const mod = require(file);
  const spec = Array.isArray(mod) ? { cases: mod } : mod;
  if (!spec || !Array.isArray(spec.cases)) {
    throw new Error(`${file}: a case file must export { cases: [...] } or an array of cases`);
  }
  const group = path.relative(BENCH_DIR, file).replace(/\.js$/, '');
  return {
    file,
    group,
    dir: path.dirname(file),
    title: spec.title || group,
    columns: spec.columns || ['rps', 'cpuUsPerReq', 'writesPerResp', 'ratioRps', 'ratioCpu'],
    ratioCpuMetric: spec.ratioCpuMetric || 'cpuUsPerReq',
    cases: spec.cases,
  };
}

function selectCases(spec, filters, opts) {
  return spec.cases.filter((c) => {
    if (c.grid === 'full' && !opts.full) return false;
    if (opts.quick && c.quick === false && !opts.full) return false;
    const id = `${spec.group} ${c.name}`.toLowerCase();
    return filters.every((f) => id.includes(f.toLowerCase()));
  });
}

// ---------------------------------------------------------------------------
// Measuring

function settings(c, opts) {
  return {
    runs: opts.runs || (opts.quick ? 1 : (c.runs || 3)),
    // c.warmup 0: the case measures a fresh server (websocket/idle.js).
    // wrk and h2load take whole seconds
    duration: Math.max(1, Math.round(opts.duration || (opts.quick ? 2 : (c.duration || 5)))),
    warmup: Math.max(0, Math.round(opts.warmup ?? (c.warmup === 0 ? 0 : (opts.quick ? 1 : (c.warmup ?? 2))))),
  };
}

// The program a case needs on PATH (wsload is compiled with cc at run time;
// h3load is a node script run by the case's node).
function toolFor(load) {
  if (load.tool === 'h3load') return null;
  return load.tool === 'wsload' ? 'cc' : load.tool;
}

function log(msg) {
  process.stderr.write(`${msg}\n`);
}

async function runCase(spec, c, opts) {
  const { runs, duration, warmup } = settings(c, opts);
  const tag = `[${spec.group}: ${c.name}]`;
  const result = { case: c.name, group: spec.group, params: c.params, runs, duration, warmup, variants: [], notes: [] };

  let variants = c.variants;
  if (opts.servers) {
    variants = variants.filter((v) => opts.servers.includes(v.label) || opts.servers.includes(v.impl));
  }
  const vres = variants.map((v) => ({ label: v.label, impl: v.impl, baseline: !!v.baseline,
    optional: !!v.optional, reference: !!v.reference, runs: [], skipped: null, failed: null }));
  result.variants = vres;

  // A variant may bring its own load (v.load: benchmark/http3 drives one
  // server with h3load and h2load); a missing tool skips the rows that
  // need it.
  for (let i = 0; i < variants.length; i++) {
    for (const tool of ['taskset', toolFor(variants[i].load || c.load)]) {
      if (tool && !hasTool(tool) && !vres[i].skipped) {
        const pkg = { taskset: 'util-linux', wrk: 'wrk', h2load: 'nghttp2-client', cc: 'gcc' }[tool] || tool;
        vres[i].skipped = `${tool} not found: skipped (sudo apt-get install -y ${pkg})`;
        log(`${tag} ${vres[i].label}: ${vres[i].skipped}`);
      }
    }
  }
  if (vres.every((r) => r.skipped)) return result;

  const live = [];
  try {
    for (let i = 0; i < variants.length; i++) {
      const v = variants[i];
      const r = vres[i];
      if (r.skipped) continue;
      if (v.requires && !hasTool(v.requires)) {
        // A reference server (files/reference_server.js) that is not installed.
        r.skipped = `${v.requires} not installed (apt-get install -y ${v.aptPackage || v.requires})`;
        log(`${tag} ${r.label}: ${r.skipped}`);
        continue;
      }
      // A reference loaded from a path the user gives (http/uws_server.js):
      // why it cannot run here, or null. An optional row that is skipped
      // does not fail the run.
      const unavailable = v.unavailable ? v.unavailable() : null;
      if (unavailable) {
        r.skipped = unavailable;
        log(`${tag} ${r.label}: ${r.skipped}`);
        continue;
      }
      if (v.impl === 'sluice') {
        const problem = sluiceLoadProblem();
        if (problem) {
          r.skipped = `sluice does not load: ${problem}`;
          log(`${tag} ${r.label}: ${r.skipped}`);
          continue;
        }
      }
      // A variant may bring its own server script (a reference server).
      const script = path.resolve(spec.dir, v.script || c.server.script);
      const args = [v.impl, ...(c.server.args || []), ...(v.args || [])].map(String);
      // c.node: another node binary for the server (HTTP/3 needs >= 22.20).
      r.serverCommand = `taskset -c ${SERVER_CPU} ${c.node || 'node'} ${path.relative(process.cwd(), script)} ${args.join(' ')}`;
      let h;
      try {
        h = await startServer(script, args, { cpu: SERVER_CPU, node: c.node });
      } catch (err) {
        r.failed = `server did not start: ${err.message}`;
        log(`${tag} ${r.label}: ${r.failed}`);
        continue;
      }
      try {
        await checkServer(h.port, c.check);
      } catch (err) {
        r.failed = `wrong response: ${err.message}${h.exited ? ` (server ${describeExit(h.exited)})` : ''}`;
        const tail = h.errorTail();
        if (tail) r.failed += `\n${indent(tail, '      ')}`;
        log(`${tag} ${r.label}: ${r.failed}`);
        await h.stop();
        continue;
      }
      live.push({ v, r, h, load: v.load || c.load });
    }

    // Warm-up, one server at a time. For h2load it also measures the rate
    // the runs' request counts are sized from (at least 1 s of it).
    for (const l of live) {
      const warmSeconds = l.load.tool === 'h2load' ? Math.max(1, warmup) : warmup;
      if (warmSeconds > 0) {
        const w = l.load.tool === 'h2load' ? await calibrate(c, spec, l, warmSeconds) :
          await runLoad(l.load, l.h.port, warmSeconds, spec.dir, LOAD_CPU);
        if (!l.h.alive()) markDead(l, tag, 'during warm-up');
        else if (w.failure) log(`${tag} ${l.r.label}: warm-up problem: ${w.failure}`);
      }
    }

    for (let run = 1; run <= runs; run++) {
      for (const l of live) {
        if (l.r.failed) continue;
        const m = await measure(c, spec, l, duration);
        if (m.failure) {
          l.r.failed = m.failure;
          log(`${tag} ${l.r.label}: run ${run}/${runs} FAILED: ${m.failure}`);
          continue;
        }
        l.r.runs.push(m);
        log(`${tag} ${l.r.label} run ${run}/${runs}: ${fmtNum(m.rps, 0)} req/s, ` +
            `server CPU ${fmtNum(m.cpuPct, 0)}% (load ${fmtNum(m.loadCpuPct, 0)}%), ` +
            `${fmtNum(m.cpuUsPerReq)} µs/req, other load ${fmtNum(m.otherCpuPct, 0)}%` +
            (m.writesPerResp !== null ? `, ${fmtNum(m.writesPerResp, 3)} writes/resp` : '') +
            `, GC ${fmtNum(m.gcMsPerSec, 1)} ms/s, ${fmtNum(m.faultsPerReq, 2)} page faults/req` +
            `, RSS ${fmtNum(m.rss / 1048576, 0)} MB` +
            (m.pool ? `, pool ${JSON.stringify(m.pool)}` : '') +
            (m.warnings.length ? `  [${m.warnings.join('; ')}]` : ''));
      }
    }
  } finally {
    await Promise.all(live.map((l) => l.h.stop()));
  }
  return result;
}

// h2load runs a request count (-n), not a duration (-D): at the end of -D
// h2load drops its connections with up to c x m streams in flight, and
// node:http2 in Node 20 crashes (SIGSEGV) when a client resets a stream
// whose respondWithFile pipe is still reading; the dead server then missed
// the next STATS request. With -n every stream completes on every server.
// The count is sized from the rate of the warm-up (calibrate) and of the
// previous run, so a run still lasts about `seconds`.
async function driveLoad(c, spec, l, seconds) {
  if (l.load.tool !== 'h2load' || !(l.rate > 0)) {
    return runLoad(l.load, l.h.port, seconds, spec.dir, LOAD_CPU);
  }
  const { connections, streams } = h2loadShape(l.load);
  const requests = Math.max(connections * streams, Math.round(l.rate * seconds));
  const load = await runLoad(l.load, l.h.port, seconds, spec.dir, LOAD_CPU, { requests });
  if (load.requests > 0 && load.seconds > 0) l.rate = load.requests / load.seconds;
  return load;
}

// Warm an h2load server up with request-count runs for about `seconds`,
// growing the count from one request per stream to the measured rate;
// leaves the rate in l.rate. Returns the last run's result.
async function calibrate(c, spec, l, seconds) {
  const { connections, streams } = h2loadShape(l.load);
  const least = connections * streams;
  let requests = Math.max(least, 100);
  let spent = 0;
  let last;
  while (spent < seconds) {
    last = await runLoad(l.load, l.h.port, seconds, spec.dir, LOAD_CPU, { requests });
    if (last.failure || !(last.requests > 0) || !(last.seconds > 0)) return last;
    l.rate = last.requests / last.seconds;
    spent += last.seconds;
    requests = Math.max(least, Math.round(l.rate * Math.max(seconds - spent, 0.25)));
  }
  return last;
}

function markDead(l, tag, when) {
  const tail = l.h.errorTail();
  l.r.failed = `server died ${when} (${describeExit(l.h.exited)})${tail ? `\n${indent(tail, '      ')}` : ''}`;
  log(`${tag} ${l.r.label}: ${l.r.failed}`);
}

async function measure(c, spec, l, duration) {
  const { h } = l;
  let gc0 = null;
  try { gc0 = await h.stats(); } catch (err) { return { failure: `no stats before run: ${err.message}` }; }
  resetPeakRss(h.pid);
  let s0;
  let status0;
  try {
    s0 = snapshot(h.pid);
    status0 = readProcStatus(h.pid);
  } catch { return { failure: `server gone before run (${describeExit(h.exited)})` }; }

  // c.probe: a tiny request every few ms on its own connection while the
  // load runs; its latency shows how responsive the server's loop stays.
  const probe = c.probe ? startProbe(h.port, c.probe) : null;
  const load = await driveLoad(c, spec, l, duration);
  const probed = probe ? await probe.stop() : null;
  await sleep(150); // let the server finish what is in flight

  if (!h.alive()) {
    const tail = h.errorTail();
    return { failure: `server died during the run (${describeExit(h.exited)})${tail ? `\n${indent(tail, '      ')}` : ''}` };
  }
  let s1;
  let status;
  try {
    s1 = snapshot(h.pid);
    status = readProcStatus(h.pid);
  } catch {
    return { failure: `server gone right after the run (${describeExit(h.exited)})` };
  }
  let gc1 = null;
  try { gc1 = await h.stats(); } catch { /* reported as '-' */ }
  if (load.failure) return { failure: load.failure };

  const hz = clockTicks();
  const wall = Number(s1.time - s0.time) / 1e9;
  const cpuSec = (s1.ticks - s0.ticks) / hz;
  const n = load.requests;
  const seconds = load.seconds || duration;
  const warnings = [];
  const errs = Object.entries(load.errors || {}).filter(([, v]) => v > 0);
  if (errs.length) warnings.push(`errors: ${errs.map(([k, v]) => `${k} ${v}`).join(', ')}`);
  if (load.non2xx) warnings.push(`${load.non2xx} non-2xx responses`);
  // wsload idle: connections held open and silent; what counts is the
  // server's memory for them: peak RSS during the run (VmHWM, reset before
  // it) over the RSS before it, per 10,000 sockets.
  if (load.idle) {
    if (load.open !== c.load.connections) return { failure: `only ${load.open} of ${c.load.connections} WebSockets open` };
    return {
      requests: 0, seconds, rps: NaN, cpuSec, cpuPct: (cpuSec / wall) * 100, loadCpuPct: (load.cpuSec / seconds) * 100,
      otherCpuPct: Math.max(0, (((s1.machineBusy - s0.machineBusy) / hz - cpuSec - (load.cpuSec || 0)) / wall) * 100),
      rss: status.VmRSS || NaN, peakRss: status.VmHWM || NaN, rssBefore: status0.VmRSS || NaN,
      rssPer10k: ((status.VmHWM - status0.VmRSS) / load.open) * 10000,
      writesPerResp: null, faultsPerReq: NaN, gcMsPerSec: NaN, warnings, command: load.command,
    };
  }
  if (!(n > 0)) return { failure: `no completed requests (${warnings.join('; ') || 'load tool reported 0'})` };

  const m = {
    requests: n,
    seconds,
    rps: load.rps,
    bytesRead: load.bytesRead,
    mbps: Number.isFinite(load.bytesRead) ? load.bytesRead / seconds / 1e6 : NaN,
    cpuSec,
    cpuPct: (cpuSec / wall) * 100,
    loadCpuPct: (load.cpuSec / seconds) * 100,
    // CPU used on this machine by anything but the server and the load
    // generator during the run (other sessions' builds and tests, ...), as %
    // of one core. Large values mean a noisy run.
    otherCpuPct: Math.max(0, (((s1.machineBusy - s0.machineBusy) / hz - cpuSec - (load.cpuSec || 0)) / wall) * 100),
    cpuUsPerReq: (cpuSec * 1e6) / n,
    writesPerResp: s0.syscw !== null && s1.syscw !== null ? (s1.syscw - s0.syscw) / n : null,
    faultsPerReq: (s1.faults - s0.faults) / n,
    readsPerReq: s0.syscr !== null && s1.syscr !== null ? (s1.syscr - s0.syscr) / n : null,
    gcMs: gc0 && gc1 ? gc1.gcMs - gc0.gcMs : NaN,
    gcCount: gc0 && gc1 ? gc1.gcCount - gc0.gcCount : NaN,
    peakRss: status.VmHWM || NaN,
    rss: status.VmRSS || NaN,
    pool: gc1 && gc1.pool ? gc1.pool : undefined,
    warnings,
    command: load.command,
  };
  m.gcMsPerSec = m.gcMs / wall;
  // Servers that count body bytes (http/post_server.js): the share that
  // reached the handler as views of pool memory.
  if (gc0 && gc1 && Number.isFinite(gc1.bodyBytes) && gc1.bodyBytes > gc0.bodyBytes) {
    m.zeroCopyPct = (100 * (gc1.zeroCopyBytes - gc0.zeroCopyBytes)) / (gc1.bodyBytes - gc0.bodyBytes);
  }
  m.bytesPerResp = Number.isFinite(load.bytesRead) ? load.bytesRead / n : NaN;
  if (probed) {
    m.probeP99Ms = probed.p99;
    m.probeCount = probed.count;
    if (probed.errors) warnings.push(`${probed.errors} probe errors`);
  }
  if (m.otherCpuPct > OTHER_LOAD_WARN) warnings.push(`other load on the machine (${Math.round(m.otherCpuPct)}% of a core)`);
  if (c.uploadBytes) {
    const bytes = n * c.uploadBytes;
    m.uploadGBps = bytes / seconds / 1e9;
    m.cpuSecPerGB = cpuSec / (bytes / 1e9);
  }
  return m;
}

// ---------------------------------------------------------------------------
// Tables

const COLUMNS = {
  rps: { header: 'req/s median (min–max)', get: (r) => fmtRate(r.runs.map((m) => m.rps)) },
  mbps: { header: 'MB/s', get: (r) => fmtNum(med(r, 'mbps'), 1) },
  gbps: { header: 'GB/s', get: (r) => fmtNum(med(r, 'uploadGBps'), 2) },
  cpuPct: { header: 'srv CPU %', get: (r) => fmtNum(med(r, 'cpuPct'), 0) },
  loadCpuPct: { header: 'load CPU %', get: (r) => fmtNum(med(r, 'loadCpuPct'), 0) },
  otherCpuPct: { header: 'other CPU %', get: (r) => fmtNum(med(r, 'otherCpuPct'), 0) },
  cpuUsPerReq: { header: 'CPU µs/req', get: (r) => fmtNum(med(r, 'cpuUsPerReq'), 2) },
  writesPerResp: { header: 'writes/resp', get: (r) => fmtNum(med(r, 'writesPerResp'), 3) },
  cpuSecPerGB: { header: 'CPU s/GB', get: (r) => fmtNum(med(r, 'cpuSecPerGB'), 3) },
  gcMsPerSec: { header: 'GC ms/s', get: (r) => fmtNum(med(r, 'gcMsPerSec'), 1) },
  zeroCopyPct: { header: 'zero-copy %', get: (r) => fmtNum(med(r, 'zeroCopyPct'), 1) },
  faultsPerReq: { header: 'page faults/req', get: (r) => fmtNum(med(r, 'faultsPerReq'), 1) },
  peakRss: { header: 'peak RSS MB', get: (r) => fmtNum(med(r, 'peakRss') / 1048576, 0) },
  bytesPerResp: { header: 'bytes/resp', get: (r) => fmtNum(med(r, 'bytesPerResp'), 0) },
  probeP99: { header: 'tiny req p99 ms', get: (r) => fmtNum(med(r, 'probeP99Ms'), 2) },
  // WebSocket cases (benchmark/websocket): a message is a request.
  msgs: { header: 'msg/s median (min–max)', get: (r) => fmtRate(r.runs.map((m) => m.rps)) },
  cpuUsPerMsg: { header: 'CPU µs/msg', get: (r) => fmtNum(med(r, 'cpuUsPerReq'), 2) },
  rssPer10k: { header: 'RSS MB per 10k idle', get: (r) => fmtNum(med(r, 'rssPer10k') / 1048576, 1) },
  ratioRss: { header: 'RSS ratio', get: (r, base) => ratio(r, base, 'rssPer10k') },
  ratioRps: { header: 'req/s ratio', get: (r, base) => ratio(r, base, 'rps') },
  ratioCpu: { header: 'CPU ratio', get: (r, base, spec) => ratio(r, base, spec.ratioCpuMetric) },
};

function med(r, key) {
  return median(r.runs.map((m) => m[key]));
}

function ratio(r, base, key) {
  if (!base || r === base) return '';
  return fmtRatio(med(r, key) / med(base, key));
}

function buildTable(spec, results) {
  const headers = ['case', 'server', ...spec.columns.map((k) => COLUMNS[k].header)];
  const rows = [];
  // Notes are grouped by text, so that one cause (a tool missing, sluice not
  // building, a crash) is told once with the rows it hit.
  const notes = new Map(); // text -> [who]
  const note = (who, text) => {
    if (!notes.has(text)) notes.set(text, []);
    if (who && !notes.get(text).includes(who)) notes.get(text).push(who);
  };
  for (const res of results) {
    const base = res.variants.find((v) => v.baseline && v.runs.length);
    for (const v of res.variants) {
      const who = `${res.case} / ${v.label}`;
      if (!v.runs.length) {
        rows.push([res.case, v.label, v.skipped ? 'skipped (see notes)' : 'FAILED (see notes)',
          ...spec.columns.slice(1).map(() => '')]);
        const sameForAll = res.variants.every((o) => o.skipped === v.skipped);
        if (v.skipped) note(sameForAll ? null : v.label, v.skipped);
        else note(who, v.failed || 'no result');
        continue;
      }
      rows.push([res.case, v.label, ...spec.columns.map((k) => COLUMNS[k].get(v, base, spec))]);
      if (v.failed) note(who, `a later run failed (earlier runs shown): ${v.failed}`);
      const warns = [...new Set(v.runs.flatMap((m) => m.warnings).filter((w) => !w.startsWith('other load')))];
      const noisy = v.runs.filter((m) => m.otherCpuPct > OTHER_LOAD_WARN);
      if (noisy.length) {
        warns.push(`${noisy.length}/${v.runs.length} run(s) shared the machine with other load ` +
          `(up to ${Math.round(Math.max(...noisy.map((m) => m.otherCpuPct)))}% of a core)`);
      }
      if (warns.length) note(who, warns.join('; '));
    }
  }
  // The reference rows (variant.reference): sluice against each, per case.
  for (const res of results) {
    const sluice = res.variants.find((v) => v.impl === 'sluice' && v.runs.length);
    if (!sluice) continue;
    for (const ref of res.variants.filter((v) => v.reference && v.runs.length)) {
      note(null, `${res.case}: sluice / ${ref.label}: req/s ${ratio(sluice, ref, 'rps')}, ` +
        `CPU per request ${ratio(sluice, ref, spec.ratioCpuMetric)}`);
    }
  }
  const lines = [...notes].map(([text, whos]) => {
    const [first, ...rest] = text.split('\n');
    const head = whos.length ? `${whos.join(', ')}: ${first}` : first;
    return [head, ...rest.map((l) => `  ${l}`)].join('\n');
  });
  return { headers, rows, notes: lines };
}

function machineInfo() {
  const cpus = os.cpus();
  let tools = [];
  try { tools.push(execFileSync('wrk', ['-v'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).split('\n')[0]); } catch (e) {
    const first = String(e.stdout || '').split('\n')[0];
    if (first) tools.push(first.replace(/\s+Copyright.*/, ''));
  }
  try { tools.push(execFileSync('h2load', ['--version'], { encoding: 'utf8' }).trim().split('\n')[0]); } catch {}
  tools = tools.map((t) => t.replace(/\s+Copyright.*/, '').replace(/\s+\[.*\]/, ''));
  return {
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    cpus: cpuCount(),
    model: cpus[0] ? cpus[0].model.trim() : 'unknown',
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    clkTck: clockTicks(),
    tools,
  };
}

// Make sure sluice loads (retrying briefly: the addon may be mid-rebuild),
// then run the servers from a snapshot of it. Returns a line for the header.
async function prepareSluice(plan, opts) {
  const wanted = plan.some((p) => p.cases.some((c) => c.variants.some((v) => v.impl === 'sluice' &&
    (!opts.servers || opts.servers.includes(v.label) || opts.servers.includes(v.impl)))));
  if (!wanted) return null;
  if (process.env.SLUICE_MODULE) return `sluice from SLUICE_MODULE=${process.env.SLUICE_MODULE}`;
  const git = gitDescribe();
  // A missing sluice.node usually means node-gyp is rebuilding it right now:
  // wait up to a minute for it. Any other load error is retried once.
  const started = Date.now();
  for (let attempt = 1; sluiceLoadProblem({ fresh: true }); attempt++) {
    const problem = sluiceLoadProblem();
    const rebuilding = /Cannot find module .*\.node'/.test(problem);
    if (rebuilding ? Date.now() - started > 60000 : attempt > 1) break;
    log(`sluice does not load (${problem}); ${rebuilding ? 'the addon may be rebuilding, ' : ''}retrying in 5 s`);
    await sleep(5000);
  }
  if (sluiceLoadProblem()) return `sluice: ${REPO} at ${git}`;
  if (opts.noSnapshot) return `sluice: ${REPO} at ${git} (live working tree, no snapshot)`;
  try {
    const snap = snapshotSluice();
    const problem = sluiceLoadProblem({ fresh: true });
    if (problem) throw new Error(problem);
    return `sluice: ${REPO} at ${git}, addon built ${snap.mtime.toISOString().replace(/\.\d+Z$/, 'Z')} ` +
      `(servers run a snapshot copy: ${snap.dir})`;
  } catch (err) {
    delete process.env.SLUICE_MODULE;
    sluiceLoadProblem({ fresh: true });
    return `sluice: ${REPO} at ${git} (snapshot failed: ${err.message}; using the live tree)`;
  }
}

// ---------------------------------------------------------------------------

async function main() {
  const opts = parseCli(process.argv.slice(2));
  if (opts.chartFrom) {
    const all = JSON.parse(fs.readFileSync(opts.chartFrom, 'utf8'));
    for (const f of chart.writeCharts(all, CHART_DIR)) log(`wrote ${path.relative(process.cwd(), f)}`);
    return;
  }
  installExitHandlers();

  const isHeadline = !opts.all && !opts.targets.length;
  let plan;
  if (isHeadline) {
    const hs = headline.SETTINGS[opts.quick ? 'quick' : 'normal'];
    if (opts.runs === null) opts.runs = hs.runs;
    if (opts.duration === null) opts.duration = hs.duration;
    if (opts.warmup === null) opts.warmup = hs.warmup;
    plan = headline.headlinePlan((group) => loadFile(path.join(BENCH_DIR, `${group}.js`)));
  } else {
    let files = [];
    const filters = [];
    for (const t of opts.targets) {
      const r = resolveTarget(t);
      if (r) files.push(...r);
      else filters.push(t);
    }
    if (!files.length) files = discover();
    files = [...new Set(files)];

    const specs = files.map(loadFile);
    plan = specs.map((s) => ({ spec: s, cases: selectCases(s, filters, opts) })).filter((p) => p.cases.length);
    if (!plan.length) die(`no benchmark case matches ${JSON.stringify(opts.targets)}`);
  }

  if (opts.list) {
    for (const p of plan) {
      console.log(`${p.spec.group}`);
      for (const c of p.cases) {
        const s = settings(c, opts);
        console.log(`  ${c.name}  [${c.variants.map((v) => v.label).join(', ')}]  ${s.runs} x ${s.duration} s`);
      }
    }
    const p = new Progress(plan, opts);
    console.log(`estimated: ${fmtClock(p.cases.reduce((sum, x) => sum + x.est, 0))} (every server found)`);
    return;
  }

  const info = machineInfo();
  if (info.cpus < 2) log(`warning: ${info.cpus} CPU(s) visible; server (CPU ${SERVER_CPU}) and load (CPU ${LOAD_CPU}) cannot be separated`);
  const sluiceLine = await prepareSluice(plan, opts);
  const sluiceProblem = sluiceLoadProblem();
  console.log(`# sluice benchmarks  ${info.date}`);
  console.log(`# ${info.cpus} CPUs (${info.model}), ${info.kernel}, node ${info.node}, ${info.tools.join(', ')}`);
  console.log(`# server pinned to CPU ${SERVER_CPU}, load generator to CPU ${LOAD_CPU}; CPU from /proc/PID/stat (CLK_TCK ${info.clkTck}), writes from /proc/PID/io syscw`);
  console.log(`# mode: ${isHeadline ? 'headline, ' : ''}${opts.quick ? 'quick' : 'normal'}${opts.full ? ' + full grid' : ''}; medians over runs; ratios are sluice / node`);
  if (sluiceLine) console.log(`# ${sluiceLine}`);
  if (sluiceProblem) console.log(`# sluice does not load (${sluiceProblem}): its rows are skipped`);
  for (const t of ['taskset', 'wrk', 'h2load']) if (!hasTool(t)) console.log(`# ${t} not found: cases that need it are skipped`);

  const all = { machine: info, options: opts, groups: [] };
  const progress = new Progress(plan, opts);
  const headlineRows = [];
  for (const { spec, cases } of plan) {
    const results = [];
    const s = settings(cases[0], opts);
    if (!isHeadline) log(`\n== ${spec.title} (${cases.length} case(s), ${s.runs} run(s) x ${s.duration} s) ==`);
    for (const c of cases) {
      progress.next(spec, c);
      results.push(await runCase(spec, c, opts));
    }
    all.groups.push({ group: spec.group, title: spec.title, cpuMetric: spec.ratioCpuMetric, results });
    if (isHeadline) {
      headlineRows.push({ spec, results });
      continue;
    }
    const t = buildTable(spec, results);
    console.log(`\n## ${spec.title}`);
    const runsDesc = [...new Set(results.map((r) => `${r.runs} run(s) x ${r.duration} s, warm-up ${r.warmup} s`))].join('; ');
    console.log(`# ${runsDesc}\n`);
    console.log(formatTable(t.headers, t.rows));
    if (opts.markdown) {
      console.log('');
      console.log(formatTable(t.headers, t.rows, { markdown: true }));
    }
    if (t.notes.length) {
      console.log('\nnotes:');
      for (const n of t.notes) console.log(`  ${n}`);
    }
  }
  log(`\nfinished in ${fmtClock(progress.elapsed())}`);
  if (opts.json) {
    fs.writeFileSync(opts.json, JSON.stringify(all, null, 2));
    log(`\nwrote ${opts.json}`);
  }
  if (isHeadline) {
    printHeadline(headlineRows, opts);
    const group = { group: 'headline', title: 'sluice: the headline rows (npm run bench)',
      results: headlineRows.flatMap((h) => h.results) };
    const dir = opts.chart ? CHART_DIR : fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-'));
    const file = chart.chartFile(dir, group.group);
    fs.writeFileSync(file, chart.renderSuite(group, all.machine, 'cpuUsPerReq'));
    console.log(`\nchart: ${file}`);
  } else if (opts.chart) {
    for (const f of chart.writeCharts(all, CHART_DIR)) console.log(`chart: ${path.relative(process.cwd(), f)}`);
  }
  // A table with a hole is not a result: every row that has no numbers, or
  // lost a later run, fails the whole run (exit status 1), named once more
  // at the very end where it cannot scroll by unseen.
  const holes = missingRows(all.groups);
  if (holes.length) {
    log(`\nbench FAILED: ${holes.length} row(s) without a complete result:`);
    for (const h of holes) log(`  ${h}`);
    process.exitCode = 1;
  }
}

// The headline's one table: every row's servers with req/s (msg/s for
// WebSockets), server CPU per request and the ratios against node's row.
function printHeadline(rows, opts) {
  const headers = ['', 'server', 'req/s or msg/s', 'CPU µs/req', 'req/s vs node', 'CPU vs node'];
  const table = [];
  const notes = [];
  const noisy = [];
  let runs = 0;
  for (const { spec, results } of rows) {
    for (const res of results) {
      const base = res.variants.find((v) => v.baseline && v.runs.length);
      res.variants.forEach((v, i) => {
        const first = i === 0 ? res.case : '';
        if (!v.runs.length) {
          table.push([first, v.label, v.optional && v.skipped ? 'not found here' : 'FAILED (see notes)', '', '', '']);
          return;
        }
        table.push([first, v.label, fmtRate(v.runs.map((m) => m.rps)), fmtNum(med(v, 'cpuUsPerReq'), 2),
          ratio(v, base, 'rps'), ratio(v, base, 'cpuUsPerReq')]);
      });
      for (const n of buildTable(spec, [res]).notes) {
        // Other load is summed up once below; a missing peer is told once.
        if (/shared the machine with other load/.test(n)) continue;
        if (!notes.includes(n)) notes.push(n);
      }
      for (const v of res.variants) {
        runs += v.runs.length;
        noisy.push(...v.runs.filter((m) => m.otherCpuPct > OTHER_LOAD_WARN).map((m) => m.otherCpuPct));
      }
    }
  }
  if (noisy.length) {
    notes.push(`${noisy.length} of ${runs} runs shared the machine with other load (up to ` +
      `${Math.round(Math.max(...noisy))}% of a core): compare the ratios, not the absolute numbers`);
  }
  const s = settings({}, opts);
  console.log(`\n## sluice: the headline (${s.runs} run(s) x ${s.duration} s per server, warm-up ${s.warmup} s; ` +
    'server on CPU 0, load on CPU 1)\n');
  console.log(formatTable(headers, table));
  if (opts.markdown) {
    console.log('');
    console.log(formatTable(headers, table, { markdown: true }));
  }
  if (notes.length) {
    console.log('\nnotes:');
    for (const n of notes) console.log(`  ${n}`);
  }
  console.log('\nEvery suite, every server: npm run bench -- --all (or a suite: npm run bench -- http/hello).');
}

function fmtClock(ms) {
  const t = Math.round(ms / 1000);
  return `${Math.floor(t / 60)}:${String(t % 60).padStart(2, '0')}`;
}

// "case i of N, elapsed, about how long is left" on stderr before each
// case. A case's estimate: per server, its warm-up, runs x duration and
// a second and a half for starting, checking and stopping it; once cases
// have run, what is left is scaled by how far the finished ones were off.
class Progress {
  constructor(plan, opts) {
    this.opts = opts;
    this.cases = plan.flatMap((p) => p.cases.map((c) => ({ spec: p.spec, c, est: this.estimate(c) })));
    this.i = 0;
    this.t0 = Date.now();
    this.done = 0;  // estimated ms of the cases finished
  }

  estimate(c) {
    const { runs, duration, warmup } = settings(c, this.opts);
    let variants = c.variants;
    if (this.opts.servers) {
      variants = variants.filter((v) => this.opts.servers.includes(v.label) || this.opts.servers.includes(v.impl));
    }
    const h2 = (v) => (v.load || c.load).tool === 'h2load';
    return variants.reduce((sum, v) => sum + (h2(v) ? Math.max(1, warmup) : warmup) + runs * duration + 1.5, 0) * 1000;
  }

  elapsed() {
    return Date.now() - this.t0;
  }

  next(spec, c) {
    if (this.i > 0) this.done += this.cases[this.i - 1].est;
    const left = this.cases.slice(this.i).reduce((sum, x) => sum + x.est, 0);
    const scale = this.done > 0 ? this.elapsed() / this.done : 1;
    this.i++;
    log(`[case ${this.i} of ${this.cases.length}] ${spec.group}: ${c.name}  ` +
      `(elapsed ${fmtClock(this.elapsed())}, about ${fmtClock(left * scale)} left)`);
  }
}

// "group / case / server: why" for every variant that was skipped, failed
// before its first run, or failed a later run.
function missingRows(groups) {
  const out = [];
  for (const g of groups) {
    for (const res of g.results) {
      for (const v of res.variants) {
        if (v.optional && v.skipped) continue;
        const why = v.skipped || v.failed || (v.runs.length ? null : 'no result');
        if (why) out.push(`${g.group} / ${res.case} / ${v.label}: ${why.split('\n')[0]}`);
      }
    }
  }
  return out;
}

main().then(() => {
  killAll('SIGKILL');
}, (err) => {
  console.error(err && err.stack ? err.stack : err);
  killAll('SIGKILL');
  process.exit(1);
});
