'use strict';
// Shared helpers for the benchmark runner (benchmark/run.js): pinned child
// processes, /proc accounting, wrk / h2load output parsing, statistics and
// table printing. Runner side only; the server scripts use server_harness.js.

const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const http = require('node:http');
const net = require('node:net');

const HOST = '127.0.0.1'; // all benchmark traffic stays on loopback
const REPO = path.resolve(__dirname, '..');

// Where sluice is loaded from: $SLUICE_MODULE (another checkout, or the
// snapshot below), else this repository. Read at call time: the runner may
// point it at a snapshot after start-up, and the servers inherit it.
function sluicePath() {
  return path.resolve(process.env.SLUICE_MODULE || REPO);
}

// Copy the package as it is now (package.json, lib/, the built addon) to a
// temporary directory and point SLUICE_MODULE at it, so that a rebuild of
// the working tree during a long run cannot break or mix the servers.
// Returns { dir, addon } or throws; the copy is removed when the runner exits.
function snapshotSluice() {
  const src = REPO;
  const addon = process.env.SLUICE_ADDON || path.join(src, 'build', 'Release', 'sluice.node');
  if (!fs.existsSync(addon)) throw new Error(`no built addon at ${addon}`);
  const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'sluice-bench-'));
  process.on('exit', () => { try { fs.rmSync(dir, { recursive: true, force: true }); } catch {} });
  fs.copyFileSync(path.join(src, 'package.json'), path.join(dir, 'package.json'));
  fs.cpSync(path.join(src, 'lib'), path.join(dir, 'lib'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'build', 'Release'), { recursive: true });
  fs.copyFileSync(addon, path.join(dir, 'build', 'Release', 'sluice.node'));
  // lib/binding.js loads ../build/Release/sluice.node unless SLUICE_ADDON
  // names another file: then that file was copied, and the copy is used.
  if (process.env.SLUICE_ADDON) process.env.SLUICE_ADDON = path.join(dir, 'build', 'Release', 'sluice.node');
  process.env.SLUICE_MODULE = dir;
  sluiceLoadError = undefined;
  return { dir, addon, mtime: fs.statSync(addon).mtime };
}

function gitDescribe() {
  try {
    const head = execFileSync('git', ['-C', REPO, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['-C', REPO, 'status', '--porcelain', '--', 'lib', 'src', 'binding.gyp'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return dirty ? `${head} + uncommitted changes in lib/ or src/` : head;
  } catch {
    return 'unknown';
  }
}

// ---------------------------------------------------------------------------
// Child process bookkeeping: every child is tracked and killed when the runner
// exits, whatever the reason (normal end, exception, SIGINT, SIGTERM).
// Server children also get a stdin pipe and exit on its EOF, so even a runner
// killed with SIGKILL leaves nothing behind.

const children = new Set();

function track(child, { group = false } = {}) {
  child.killGroup = group; // detached child: kill its whole process group
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

function killChild(child, signal) {
  try {
    if (child.killGroup) process.kill(-child.pid, signal);
    else child.kill(signal);
  } catch { /* already gone */ }
}

function killAll(signal = 'SIGKILL') {
  for (const child of children) killChild(child, signal);
}

let handlersInstalled = false;
function installExitHandlers() {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', () => killAll('SIGKILL'));
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => {
      process.stderr.write(`\n${sig}: stopping benchmark, killing ${children.size} child process(es)\n`);
      killAll('SIGKILL');
      process.exit(sig === 'SIGINT' ? 130 : 143);
    });
  }
}

// ---------------------------------------------------------------------------
// Tools

const toolCache = new Map();
function hasTool(name) {
  if (!toolCache.has(name)) {
    let found = false;
    for (const dir of (process.env.PATH || '').split(':')) {
      if (!dir) continue;
      try {
        fs.accessSync(path.join(dir, name), fs.constants.X_OK);
        found = true;
        break;
      } catch { /* next */ }
    }
    toolCache.set(name, found);
  }
  return toolCache.get(name);
}

let clkTck;
function clockTicks() {
  if (clkTck === undefined) {
    try {
      clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    } catch {
      clkTck = 100;
    }
    if (!(clkTck > 0)) clkTck = 100;
  }
  return clkTck;
}

function cpuCount() {
  try {
    return require('node:os').availableParallelism();
  } catch {
    return require('node:os').cpus().length;
  }
}

// Does `require('/work/main')` load? Checked in a child so a crashing addon
// cannot take the runner down. Returns null when it loads, else the error.
let sluiceLoadError;
function sluiceLoadProblem({ fresh = false } = {}) {
  if (fresh) sluiceLoadError = undefined;
  if (sluiceLoadError === undefined) {
    try {
      execFileSync(process.execPath, ['-e', `
        const s = require(${JSON.stringify(sluicePath())});
        for (const f of ['createServer', 'createBufferPool', 'releaseBuffer'])
          if (typeof s[f] !== 'function') throw new Error('sluice.' + f + ' is not a function');
      `], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 20000, encoding: 'utf8' });
      sluiceLoadError = null;
    } catch (err) {
      const text = String(err.stderr || err.message || err);
      const lines = text.split('\n');
      const line = lines.find((l) => /^\s*\w*Error\b/.test(l)) || lines.find((l) => /error/i.test(l));
      sluiceLoadError = (line || lines[0] || 'unknown error').trim();
    }
  }
  return sluiceLoadError;
}

// ---------------------------------------------------------------------------
// /proc accounting

function readProcStat(pid) {
  // Fields after "(comm)": state is field 3; minflt 10, majflt 12, utime 14,
  // stime 15 (1-based, as in proc(5)).
  const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const utime = Number(rest[14 - 3]);
  const stime = Number(rest[15 - 3]);
  const minflt = Number(rest[10 - 3]);
  const majflt = Number(rest[12 - 3]);
  return { utime, stime, ticks: utime + stime, faults: minflt + majflt };
}

function readProcIo(pid) {
  try {
    const out = {};
    for (const line of fs.readFileSync(`/proc/${pid}/io`, 'utf8').split('\n')) {
      const m = /^(\w+):\s+(\d+)/.exec(line);
      if (m) out[m[1]] = Number(m[2]);
    }
    return out;
  } catch {
    return null; // not readable (permissions, or kernel without task io accounting)
  }
}

function readProcStatus(pid) {
  const out = {};
  for (const line of fs.readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')) {
    const m = /^(\w+):\s+(\d+)\s*kB/.exec(line);
    if (m) out[m[1]] = Number(m[2]) * 1024;
  }
  return out;
}

// Busy time of the whole machine (all CPUs), in clock ticks: user + nice +
// system from /proc/stat's "cpu" line (irq/softirq left out: with irq time
// accounting they belong to nobody in particular). Other sessions on the same
// machine may live in other PID namespaces, invisible to ps but not to this:
// busy time minus the server's and the load generator's own is "other" load.
function readMachineBusy() {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n').find((l) => l.startsWith('cpu '));
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    return f[0] + f[1] + f[2];
  } catch {
    return NaN;
  }
}

// Reset VmHWM (peak RSS) of a process: "5" > /proc/PID/clear_refs (Linux 4.0+).
function resetPeakRss(pid) {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

function snapshot(pid) {
  const stat = readProcStat(pid);
  const io = readProcIo(pid);
  return {
    time: process.hrtime.bigint(),
    ticks: stat.ticks,
    faults: stat.faults,
    machineBusy: readMachineBusy(),
    syscw: io ? io.syscw : null,
    syscr: io ? io.syscr : null,
  };
}

// ---------------------------------------------------------------------------
// Pinned servers

class LineReader {
  constructor(stream) {
    this.buf = '';
    this.waiters = [];
    this.lines = [];
    stream.setEncoding('utf8');
    stream.on('data', (d) => {
      this.buf += d;
      let i;
      while ((i = this.buf.indexOf('\n')) !== -1) {
        const line = this.buf.slice(0, i);
        this.buf = this.buf.slice(i + 1);
        this.onLine(line);
      }
    });
  }

  onLine(line) {
    for (let i = 0; i < this.waiters.length; i++) {
      const w = this.waiters[i];
      if (w.test(line)) {
        this.waiters.splice(i, 1);
        clearTimeout(w.timer);
        w.resolve(line);
        return;
      }
    }
    this.lines.push(line);
    if (this.lines.length > 200) this.lines.shift();
  }

  // Resolve with the first line (already seen or future) matching re.
  // Once the stream's process is gone (failAll), a line that was not seen
  // will never come: reject at once with the reason instead of timing out.
  waitFor(re, timeoutMs, what) {
    const idx = this.lines.findIndex((l) => re.test(l));
    if (idx !== -1) return Promise.resolve(this.lines.splice(idx, 1)[0]);
    if (this.closed) return Promise.reject(this.closed);
    return new Promise((resolve, reject) => {
      const w = { test: (l) => re.test(l), resolve, reject };
      w.timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      this.waiters.push(w);
    });
  }

  failAll(err) {
    this.closed = err;
    for (const w of this.waiters.splice(0)) {
      clearTimeout(w.timer);
      w.reject(err);
    }
  }
}

// Start `node script args...` pinned to `cpu` with taskset; resolve once it
// prints "PORT <n>". The returned handle knows the pid (taskset execs node,
// so the pid is node's own), the port, and can query / stop the server.
async function startServer(script, args, { cpu = 0, env, startTimeoutMs = 20000 } = {}) {
  if (!hasTool('taskset')) throw new Error('taskset not found (util-linux): cannot pin the server');
  installExitHandlers();
  const child = track(spawn('taskset', ['-c', String(cpu), process.execPath, script, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  }));
  const handle = {
    child,
    pid: child.pid,
    port: null,
    exited: null, // { code, signal } once the process is gone
    stderr: '',
    out: new LineReader(child.stdout),
  };
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => {
    handle.stderr += d;
    if (handle.stderr.length > 20000) handle.stderr = handle.stderr.slice(-20000);
  });
  child.stdin.on('error', () => {}); // EPIPE if the server died
  child.on('exit', (code, signal) => {
    handle.exited = { code, signal };
    // The reason and what the server said last (a crash's message).
    const tail = handle.errorTail(6);
    handle.out.failAll(new Error(`server exited (${describeExit(handle.exited)})${tail ? `\n${indent(tail, '    ')}` : ''}`));
  });
  child.on('error', (err) => {
    handle.exited = { code: null, signal: null, error: err };
    handle.out.failAll(err);
  });

  handle.alive = () => !handle.exited;
  handle.stats = async (timeoutMs = 5000) => {
    child.stdin.write('stats\n');
    const line = await handle.out.waitFor(/^STATS /, timeoutMs, 'STATS from server');
    return JSON.parse(line.slice(6));
  };
  handle.stop = () => stopServer(handle);
  handle.errorTail = (n = 12) => {
    // The first error line (often the cause, e.g. "Error: Cannot find
    // module ...") and the last n lines of the server's stderr.
    const lines = handle.stderr.trim().split('\n').filter(Boolean);
    const first = lines.findIndex((l) => /Error|error:|Assertion|Aborted|Segmentation/.test(l));
    const tail = lines.slice(-n);
    if (first !== -1 && first < lines.length - n) tail.unshift(lines[first], '...');
    return tail.join('\n');
  };

  try {
    const line = await handle.out.waitFor(/^PORT \d+/, startTimeoutMs, `"PORT <n>" from ${path.basename(script)}`);
    handle.port = Number(line.split(' ')[1]);
  } catch (err) {
    await stopServer(handle);
    const tail = handle.errorTail();
    throw new Error(`${err.message}${tail ? `\n${indent(tail, '    ')}` : ''}`);
  }
  return handle;
}

function stopServer(handle) {
  const child = handle.child;
  if (handle.exited) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(() => { try { child.kill('SIGKILL'); } catch {} }, 2000);
    child.once('exit', () => { clearTimeout(t); resolve(); });
    try { child.stdin.end(); } catch {}
    try { child.kill('SIGTERM'); } catch {}
  });
}

function describeExit(e) {
  if (!e) return 'running';
  if (e.error) return e.error.message;
  return e.signal ? `killed by ${e.signal}` : `exit code ${e.code}`;
}

// ---------------------------------------------------------------------------
// Load generators (pinned to another core, bounded in time)

// Run `cmd args` pinned to `cpu` under a tiny sh wrapper whose `times`
// builtin reports the command's user+sys CPU time on stderr. The wrapper is
// the leader of its own process group, which is killed as a whole on timeout
// or when the runner exits.
const TIMES_WRAPPER = '"$@"; rc=$?; echo __TIMES__ >&2; times >&2; exit $rc';

function runPinned(cmd, args, { cpu = 1, timeoutMs }) {
  installExitHandlers();
  return new Promise((resolve) => {
    const child = track(spawn('taskset', ['-c', String(cpu), 'sh', '-c', TIMES_WRAPPER, 'sh', cmd, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    }), { group: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => {
      timedOut = true;
      killChild(child, 'SIGKILL');
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ code: null, error: err, stdout, stderr, timedOut });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      let cpuSec = NaN;
      const i = stderr.lastIndexOf('__TIMES__\n');
      if (i !== -1) {
        const lines = stderr.slice(i + 10).trim().split('\n');
        stderr = stderr.slice(0, i);
        const m = /^(\d+)m([\d.]+)s (\d+)m([\d.]+)s/.exec(lines[1] || '');
        if (m) cpuSec = Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4]);
      }
      resolve({ code, signal, stdout, stderr, timedOut, cpuSec });
    });
  });
}

const UNITS = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3, TB: 1024 ** 4 };
function parseSize(text) { // wrk's "12.34MB" (binary multiples)
  const m = /^([\d.]+)\s*([KMGT]?B)$/i.exec(text.trim());
  return m ? Number(m[1]) * UNITS[m[2].toUpperCase()] : NaN;
}

function parseDuration(text) { // wrk's "2.00s", "1.00m", "500.00ms"
  const m = /^([\d.]+)\s*(us|ms|s|m|h)$/.exec(text.trim());
  if (!m) return NaN;
  return Number(m[1]) * { us: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 }[m[2]];
}

function parseWrk(out) {
  const r = { requests: NaN, seconds: NaN, bytesRead: NaN, rps: NaN, errors: {}, non2xx: 0 };
  let m = /(\d+) requests in ([\d.]+\w+), ([\d.]+\w+) read/.exec(out);
  if (m) {
    r.requests = Number(m[1]);
    r.seconds = parseDuration(m[2]);
    r.bytesRead = parseSize(m[3]);
  }
  m = /Requests\/sec:\s*([\d.]+)/.exec(out);
  if (m) r.rps = Number(m[1]);
  m = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  if (m) r.errors = { connect: +m[1], read: +m[2], write: +m[3], timeout: +m[4] };
  m = /Non-2xx or 3xx responses: (\d+)/.exec(out);
  if (m) r.non2xx = Number(m[1]);
  r.ok = Number.isFinite(r.requests) && Number.isFinite(r.rps);
  return r;
}

function parseH2load(out) {
  const r = { requests: NaN, seconds: NaN, bytesRead: NaN, rps: NaN, errors: {}, non2xx: 0 };
  let m = /finished in ([\d.]+)(ms|s|us), ([\d.]+) req\/s/.exec(out);
  if (m) {
    r.seconds = Number(m[1]) * { us: 1e-6, ms: 1e-3, s: 1 }[m[2]];
    r.rps = Number(m[3]);
  }
  m = /requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/.exec(out);
  if (m) {
    r.requests = Number(m[3]);
    r.succeeded = Number(m[4]);
    r.errors = { failed: +m[5], errored: +m[6], timeout: +m[7] };
  }
  m = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
  if (m) r.non2xx = Number(m[3]) + Number(m[4]);
  m = /traffic: [\d.]+\w* \((\d+)\) total/.exec(out);
  if (m) r.bytesRead = Number(m[1]);
  r.ok = Number.isFinite(r.requests) && Number.isFinite(r.rps);
  return r;
}

// Build the command line for one load run: `seconds` long, or for h2load
// `requests` requests (-n) when given (see h2loadShape / run.js: why).
// load.tls: the server speaks TLS (https URL; wrk and h2load negotiate it,
// h2load by ALPN: h2, or http/1.1 with --h1).
function loadCommand(load, port, seconds, caseDir, requests) {
  const url = `${load.tls ? 'https' : 'http'}://${HOST}:${port}${load.path || '/'}`;
  if (load.tool === 'wrk') {
    const args = ['-t', String(load.threads || 1), '-c', String(load.connections),
      '-d', `${seconds}s`, '--timeout', `${load.timeout || 10}s`];
    if (load.script) args.push('-s', path.resolve(caseDir, load.script));
    for (const h of load.headers || []) args.push('-H', h);
    args.push(url);
    if (load.scriptArgs && load.scriptArgs.length) args.push('--', ...load.scriptArgs.map(String));
    return { cmd: 'wrk', args, parse: parseWrk };
  }
  if (load.tool === 'h2load') {
    const args = [...(load.args || []), ...(load.headers || []).flatMap((h) => ['-H', h]),
      '-t', String(load.threads || 1), ...(requests ? ['-n', String(requests)] : ['-D', String(seconds)]), url];
    return { cmd: 'h2load', args, parse: parseH2load };
  }
  throw new Error(`unknown load tool ${load.tool}`);
}

// h2load's connections (-c) and streams per connection (-m): a count run
// needs at least c x m requests to fill every stream once.
function h2loadShape(load) {
  const a = load.args || [];
  const num = (flag) => {
    const i = a.indexOf(flag);
    return i !== -1 && Number(a[i + 1]) > 0 ? Number(a[i + 1]) : 1;
  };
  return { connections: num('-c'), streams: num('-m') };
}

// `requests` (h2load only): run that many requests instead of `seconds`;
// the run may then take longer than `seconds` (a rate estimate can be off),
// so the time limit is generous.
async function runLoad(load, port, seconds, caseDir, cpu = 1, { requests } = {}) {
  const { cmd, args, parse } = loadCommand(load, port, seconds, caseDir, requests);
  const limit = requests ? seconds * 4 + 20 : seconds + 20;
  const res = await runPinned(cmd, args, { cpu, timeoutMs: limit * 1000 });
  const parsed = parse(res.stdout);
  parsed.command = `taskset -c ${cpu} ${cmd} ${args.join(' ')}`;
  parsed.cpuSec = res.cpuSec;
  if (res.timedOut) parsed.failure = `${cmd} did not finish within ${limit} s (killed)`;
  else if (res.error) parsed.failure = `${cmd}: ${res.error.message}`;
  else if (!parsed.ok) {
    const text = (res.stderr + res.stdout).trim().split('\n').slice(-6).join(' | ');
    parsed.failure = `${cmd} exited ${res.code}${res.signal ? ` (${res.signal})` : ''}; output: ${text}`;
  }
  parsed.raw = res.stdout;
  return parsed;
}

// ---------------------------------------------------------------------------
// Response checks (run once per server before measuring, so that a server
// answering garbage never gets a number next to its name).

// tls: over TLS, any certificate accepted (the servers make their own).
function httpRequest(port, { method = 'GET', path: p = '/', body, timeoutMs = 10000, tls = false }) {
  return new Promise((resolve, reject) => {
    const req = (tls ? require('node:https') : http).request({
      host: HOST, port, method, path: p, agent: false, rejectUnauthorized: false,
      headers: body ? { 'content-length': body.length } : {},
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no response within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

// Send `depth` GETs in one write on a raw socket and parse `depth` responses.
function pipelinedCheck(port, depth, expectBodyLength, timeoutMs = 10000) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, HOST);
    let buf = Buffer.alloc(0);
    let got = 0;
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`pipelined check: ${got}/${depth} responses within ${timeoutMs} ms`));
    }, timeoutMs);
    const fail = (msg) => { clearTimeout(timer); sock.destroy(); reject(new Error(`pipelined check: ${msg}`)); };
    sock.on('connect', () => {
      sock.write(`GET / HTTP/1.1\r\nHost: ${HOST}:${port}\r\n\r\n`.repeat(depth));
    });
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end === -1) return;
        const head = buf.subarray(0, end).toString('latin1');
        const status = /^HTTP\/1\.1 (\d{3})/.exec(head);
        if (!status) return fail(`bad status line in response ${got + 1}: ${JSON.stringify(head.slice(0, 60))}`);
        if (status[1] !== '200') return fail(`response ${got + 1} has status ${status[1]}`);
        const cl = /\r\ncontent-length:\s*(\d+)/i.exec(head);
        if (!cl) return fail(`response ${got + 1} has no Content-Length (chunked not expected here)`);
        const len = Number(cl[1]);
        if (buf.length < end + 4 + len) return;
        if (expectBodyLength !== undefined && len !== expectBodyLength) {
          return fail(`response ${got + 1} body is ${len} bytes, expected ${expectBodyLength}`);
        }
        buf = buf.subarray(end + 4 + len);
        if (++got === depth) {
          clearTimeout(timer);
          sock.destroy();
          if (buf.length) return reject(new Error(`pipelined check: ${buf.length} extra bytes after ${depth} responses`));
          return resolve(got);
        }
      }
    });
    sock.on('error', (err) => fail(err.message));
    sock.on('close', () => { if (got < depth) fail(`connection closed after ${got}/${depth} responses`); });
  });
}

// One GET over HTTP/2 (h2c prior knowledge) with node's client, for
// servers that speak only HTTP/2 (check.http2).
function http2Get(port, p = '/', timeoutMs = 10000, tls = false) {
  return new Promise((resolve, reject) => {
    const session = require('node:http2').connect(`${tls ? 'https' : 'http'}://${HOST}:${port}`,
      { rejectUnauthorized: false });
    const t = setTimeout(() => {
      session.destroy();
      reject(new Error(`no HTTP/2 response within ${timeoutMs} ms`));
    }, timeoutMs);
    session.on('error', (e) => { clearTimeout(t); reject(e); });
    const req = session.request({ ':path': p });
    const chunks = [];
    let status;
    req.on('response', (h) => { status = h[':status']; });
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      clearTimeout(t);
      session.close();
      resolve({ status, body: Buffer.concat(chunks) });
    });
    req.on('error', (e) => { clearTimeout(t); session.destroy(); reject(e); });
  });
}

async function checkServer(port, check) {
  if (!check) return;
  const body = check.bodySize ? Buffer.alloc(check.bodySize, 'x') : undefined;
  const res = check.http2 ? await http2Get(port, check.path, 10000, check.tls) :
    await httpRequest(port, { method: check.method, path: check.path, body, tls: check.tls });
  if (res.status !== (check.status || 200)) {
    throw new Error(`${check.method || 'GET'} ${check.path || '/'} answered ${res.status}, expected ${check.status || 200}`);
  }
  if (check.bodyLength !== undefined && res.body.length !== check.bodyLength) {
    throw new Error(`response body is ${res.body.length} bytes, expected ${check.bodyLength}`);
  }
  if (check.body !== undefined && res.body.toString() !== check.body) {
    throw new Error(`response body ${JSON.stringify(res.body.toString().slice(0, 40))}, expected ${JSON.stringify(check.body)}`);
  }
  if (check.pipeline) await pipelinedCheck(port, check.pipeline, check.bodyLength);
}

// ---------------------------------------------------------------------------
// Statistics and formatting

function median(values) {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return NaN;
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

function min(values) {
  const v = values.filter((x) => Number.isFinite(x));
  return v.length ? Math.min(...v) : NaN;
}

function max(values) {
  const v = values.filter((x) => Number.isFinite(x));
  return v.length ? Math.max(...v) : NaN;
}

function fmtNum(x, digits) {
  if (!Number.isFinite(x)) return '-';
  if (digits === undefined) {
    const a = Math.abs(x);
    digits = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
  }
  return x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function fmtRate(values) {
  const m = median(values);
  if (!Number.isFinite(m)) return '-';
  const n = values.filter(Number.isFinite).length;
  if (n < 2) return fmtNum(m, 0);
  return `${fmtNum(m, 0)} (${fmtNum(min(values), 0)}–${fmtNum(max(values), 0)})`;
}

function fmtRatio(x) {
  return Number.isFinite(x) ? `${x.toFixed(2)}x` : '-';
}

function indent(text, pad) {
  return text.split('\n').map((l) => pad + l).join('\n');
}

// Print rows (arrays of strings) under headers, aligned; numbers right-aligned.
function formatTable(headers, rows, { markdown = false } = {}) {
  const widths = headers.map((h, i) => Math.max(strlen(h), ...rows.map((r) => strlen(r[i] ?? ''))));
  const right = headers.map((_, i) => rows.some((r) => /^[\d,.–()x\s-]+$/.test(r[i] || '') && /\d/.test(r[i] || '')));
  const pad = (s, i) => {
    s = String(s ?? '');
    const fill = ' '.repeat(widths[i] - strlen(s));
    return right[i] ? fill + s : s + fill;
  };
  const lines = [];
  if (markdown) {
    lines.push(`| ${headers.map(pad).join(' | ')} |`);
    lines.push(`| ${widths.map((w, i) => (right[i] ? '-'.repeat(w - 1) + ':' : '-'.repeat(w))).join(' | ')} |`);
    for (const r of rows) lines.push(`| ${r.map(pad).join(' | ')} |`);
  } else {
    lines.push(headers.map(pad).join('  '));
    lines.push(widths.map((w) => '-'.repeat(w)).join('  '));
    for (const r of rows) lines.push(r.map(pad).join('  '));
  }
  return lines.join('\n');
}

function strlen(s) {
  return [...String(s)].length;
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

// A tiny GET (`probe.path`) every `probe.intervalMs` (default 10) on one
// keep-alive connection, one at a time, until stop(); resolves
// { count, errors, p50, p99 } in ms.
function startProbe(port, probe) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const lat = [];
  let errors = 0;
  let stopped = false;
  const one = () => new Promise((resolve) => {
    const t0 = process.hrtime.bigint();
    const req = http.get({ host: HOST, port, path: probe.path, agent, headers: probe.headers || {} }, (res) => {
      res.resume();
      res.on('end', () => { lat.push(Number(process.hrtime.bigint() - t0) / 1e6); resolve(); });
    });
    req.setTimeout(10000, () => req.destroy(new Error('probe timeout')));
    req.on('error', () => { errors++; resolve(); });
  });
  const loop = (async () => {
    while (!stopped) {
      await one();
      await sleep(probe.intervalMs || 10);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      agent.destroy();
      const sorted = lat.slice().sort((a, b) => a - b);
      const q = (p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : NaN);
      return { count: sorted.length, errors, p50: q(0.5), p99: q(0.99) };
    },
  };
}

module.exports = {
  startProbe,
  HOST,
  REPO,
  sluicePath,
  snapshotSluice,
  gitDescribe,
  hasTool,
  clockTicks,
  cpuCount,
  sluiceLoadProblem,
  readProcStat,
  readProcIo,
  readProcStatus,
  readMachineBusy,
  resetPeakRss,
  snapshot,
  startServer,
  stopServer,
  describeExit,
  runPinned,
  runLoad,
  h2loadShape,
  loadCommand,
  parseWrk,
  parseH2load,
  parseSize,
  checkServer,
  pipelinedCheck,
  httpRequest,
  median,
  min,
  max,
  fmtNum,
  fmtRate,
  fmtRatio,
  formatTable,
  indent,
  sleep,
  installExitHandlers,
  killAll,
};
