'use strict';
// Server-side half of the benchmark protocol, shared by every *_server.js:
//  - `loadImpl(name)` returns sluice (this repository, or $SLUICE_MODULE) or
//    node's built-in module;
//  - `serve(server)` listens on 127.0.0.1:0 and prints "PORT <n>" on stdout;
//  - the runner writes "stats\n" on stdin and gets one line back:
//    "STATS {json}" with cumulative GC time (PerformanceObserver 'gc'),
//    GC count and memory usage;
//  - EOF on stdin (the runner went away, even by SIGKILL) or SIGTERM exits.

const path = require('node:path');
const { PerformanceObserver } = require('node:perf_hooks');

function loadImpl(name, builtin = 'node:http') {
  if (name === 'sluice') return require(path.resolve(process.env.SLUICE_MODULE || path.join(__dirname, '..')));
  if (name === 'node') return require(builtin);
  throw new Error(`unknown server implementation ${JSON.stringify(name)} (want sluice or node)`);
}

// Tiny argv parser: --name value / --name=value / --flag.
function parseArgs(argv, defaults = {}) {
  const out = { ...defaults, _: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) { out._.push(a); continue; }
    let [k, v] = a.slice(2).split('=', 2);
    if (v === undefined) {
      if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) v = argv[++i];
      else v = 'true';
    }
    k = k.replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    out[k] = typeof defaults[k] === 'number' ? Number(v) : v;
  }
  return out;
}

const gc = { ms: 0, count: 0 };

function startGcObserver() {
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gc.ms += e.duration;
      gc.count++;
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  return obs;
}

// The runner's commands on stdin, one a line: "stats" answers
// "STATS {json}" with stats(); "exit", EOF or a stdin error call exit().
function commands(stats, exit) {
  process.stdin.setEncoding('utf8');
  let buf = '';
  process.stdin.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) !== -1) {
      const cmd = buf.slice(0, i).trim();
      buf = buf.slice(i + 1);
      if (cmd === 'stats') process.stdout.write(`STATS ${JSON.stringify(stats())}\n`);
      else if (cmd === 'exit') exit();
    }
  });
  process.stdin.on('end', exit);
  process.stdin.on('error', exit);
}

function serve(server, { onStats } = {}) {
  const obs = startGcObserver();
  const exit = () => {
    try { obs.disconnect(); } catch {}
    process.exit(0);
  };
  process.on('SIGTERM', exit);
  commands(() => {
    const mem = process.memoryUsage();
    return {
      gcMs: gc.ms,
      gcCount: gc.count,
      rss: mem.rss,
      heapUsed: mem.heapUsed,
      external: mem.external,
      arrayBuffers: mem.arrayBuffers,
      ...(onStats ? onStats() : {}),
    };
  }, exit);

  server.on('error', (err) => {
    process.stderr.write(`server error: ${err.stack || err}\n`);
    process.exit(1);
  });
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`PORT ${server.address().port}\n`);
  });
}

module.exports = { loadImpl, parseArgs, serve, commands, gc };
