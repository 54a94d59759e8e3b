'use strict';
// Benchmark servers: child processes pinned to a CPU that print "PORT <n>"
// once listening, answer "stats" on stdin, and exit when stdin closes.

const { spawn } = require('node:child_process');
const path = require('node:path');
const { hasTool } = require('./host.js');
const { track, installExitHandlers } = require('./children.js');
const { indent } = require('./format.js');

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
// `node`: another node binary to run it (default: the runner's own).
async function startServer(script, args, { cpu = 0, env, startTimeoutMs = 20000, node } = {}) {
  if (!hasTool('taskset')) throw new Error('taskset not found (util-linux): cannot pin the server');
  installExitHandlers();
  const child = track(spawn('taskset', ['-c', String(cpu), node || process.execPath, script, ...args], {
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
    // "PORT <n> PID <pid>": a wrapper (files/reference_server.js) started
    // the real server; its CPU and memory are what the runner measures.
    const pid = /\bPID (\d+)/.exec(line);
    if (pid) handle.pid = Number(pid[1]);
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

module.exports = { startServer, stopServer, describeExit };
