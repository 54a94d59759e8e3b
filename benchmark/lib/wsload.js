'use strict';
// benchmark/websocket/wsload.c, the native WebSocket load client: compiled
// with the system's cc on first use into a cache directory keyed by the
// source's hash (no build step, nothing committed but the source), and the
// parser of its RESULT line.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const SOURCE = path.join(__dirname, '..', 'websocket', 'wsload.c');
let built = null;

// Path of the compiled client (compiles it once per source version).
function wsloadBinary() {
  if (built) return built;
  const src = fs.readFileSync(SOURCE);
  const hash = crypto.createHash('sha256').update(src).digest('hex').slice(0, 16);
  const dir = path.join(os.tmpdir(), 'sluice-bench-wsload');
  fs.mkdirSync(dir, { recursive: true });
  const bin = path.join(dir, `wsload-${hash}`);
  if (!fs.existsSync(bin)) {
    const tmp = `${bin}.${process.pid}`;
    execFileSync('cc', ['-O2', '-Wall', '-Wextra', '-o', tmp, SOURCE], { stdio: ['ignore', 'ignore', 'inherit'] });
    fs.renameSync(tmp, bin);
  }
  built = bin;
  return bin;
}

// The command line of one run of `load` ({ tool: 'wsload', mode, ... }).
function wsloadArgs(load, host, port, seconds) {
  const s = String(seconds);
  if (load.mode === 'echo') {
    return ['echo', host, String(port), load.path, String(load.connections), String(load.size), s,
      ...(load.text ? ['text'] : [])];
  }
  if (load.mode === 'fanout') {
    return ['fanout', host, String(port), load.pubPath, load.subPath, String(load.subscribers), String(load.size), s,
      String(load.window || 8), ...(load.deflate ? ['deflate'] : [])];
  }
  if (load.mode === 'idle') return ['idle', host, String(port), load.path, String(load.connections), s];
  throw new Error(`wsload: unknown mode ${load.mode}`);
}

// RESULT mode=.. messages=N seconds=S bytes=B errors=E open=O [compressed=C]
function parseWsload(out) {
  const r = { requests: NaN, seconds: NaN, bytesRead: NaN, rps: NaN, errors: {}, non2xx: 0 };
  const m = /RESULT mode=(\w+) messages=(\d+) seconds=([\d.]+) bytes=(\d+) errors=(\d+) open=(\d+)/.exec(out);
  if (!m) return { ...r, ok: false };
  r.mode = m[1];
  r.requests = Number(m[2]);
  r.seconds = Number(m[3]);
  r.bytesRead = Number(m[4]);
  r.rps = r.seconds > 0 ? r.requests / r.seconds : NaN;
  if (Number(m[5])) r.errors = { connections: Number(m[5]) };
  r.open = Number(m[6]);
  // Data frames that came compressed (RSV1; fan-out with deflate).
  const cm = / compressed=(\d+)/.exec(out);
  r.compressed = cm ? Number(cm[1]) : 0;
  r.idle = r.mode === 'idle';
  r.ok = r.idle ? r.open > 0 : r.requests > 0;
  return r;
}

module.exports = { wsloadBinary, wsloadArgs, parseWsload };
