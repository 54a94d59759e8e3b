'use strict';
// Load generators (wrk, h2load) pinned to another core, bounded in time,
// and the parsers of their output.

const { spawn } = require('node:child_process');
const path = require('node:path');
const { HOST } = require('./host.js');
const { track, killChild, installExitHandlers } = require('./children.js');
const { wsloadBinary, wsloadArgs, parseWsload } = require('./wsload.js');

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

const H3LOAD = path.join(__dirname, 'h3load.js');

// h3load: RESULT requests=N seconds=S bytes=B errors=E bad=K
function parseH3load(out) {
  const r = { requests: NaN, seconds: NaN, bytesRead: NaN, rps: NaN, errors: {}, non2xx: 0 };
  const m = /RESULT requests=(\d+) seconds=([\d.]+) bytes=(\d+) errors=(\d+) bad=(\d+)/.exec(out);
  if (!m) return { ...r, ok: false };
  r.requests = Number(m[1]);
  r.seconds = Number(m[2]);
  r.bytesRead = Number(m[3]);
  r.rps = r.seconds > 0 ? r.requests / r.seconds : NaN;
  if (Number(m[4])) r.errors = { failed: Number(m[4]) };
  r.non2xx = Number(m[5]);
  // Wrong answers are no result (runLoad reports the tool's output).
  r.ok = r.requests > 0 && Number(m[4]) === 0 && Number(m[5]) === 0;
  return r;
}

// Build the command line for one load run: `seconds` long, or for h2load
// `requests` requests (-n) when given (see h2loadShape / run.js: why).
function loadCommand(load, port, seconds, caseDir, requests) {
  // load.tls: the server speaks TLS (https URL; wrk and h2load negotiate
  // it, h2load by ALPN: h2, or http/1.1 with --h1).
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
  if (load.tool === 'wsload') {
    return { cmd: wsloadBinary(), args: wsloadArgs(load, HOST, port, seconds), parse: parseWsload };
  }
  if (load.tool === 'h3load') {
    // benchmark/lib/h3load.js, run by load.node (HTTP/3 needs a node
    // whose OpenSSL has QUIC); --proto h3 or h2 (node:http2 over TLS).
    const args = [H3LOAD, '--proto', load.proto, '--host', HOST, '--port', String(port),
      '--path', load.path || '/', '--method', load.method || 'GET', '--body-size', String(load.bodySize || 0),
      '--expect-length', String(load.expectLength ?? -1), '-c', String(load.connections),
      '-m', String(load.streams), '--duration', String(seconds)];
    return { cmd: load.node || process.execPath, args, parse: parseH3load };
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
  // wsload opens all its connections (10,000 for idle) before the timed part.
  const limit = requests ? seconds * 4 + 20 : seconds + (load.tool === 'wsload' ? 90 : 20);
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

module.exports = { runPinned, runLoad, h2loadShape, loadCommand, parseWrk, parseH2load, parseWsload, parseH3load, parseSize };
