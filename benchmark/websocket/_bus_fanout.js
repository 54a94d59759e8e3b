'use strict';
// Pub/sub across processes: 1 publisher -> 1,000 subscribers spread over 2
// server processes (node's cluster, the kernel or the primary spreading
// the connections), per delivery:
//   sluice, 1 process (no bus)          the single-process baseline
//   sluice, 2 workers, machine bus      the default: Unix-socket mesh
//   sluice, 2 workers, Redis            RedisAdapter (ioredis)
//   socket.io, 2 workers, Redis         @socket.io/redis-adapter (what a
//                                       Node team uses today)
// The load: for sluice, benchmark/websocket/wsload.c (fanout mode, the C
// client of websocket/echo.js's fan-out rows: subscribers at /sub, one
// publisher at /pub keeping `window` messages in flight, a message done
// when every subscriber has it); for socket.io, and for every row with
// --load js, this process with socket.io-client / ws clients doing the
// same (a message lost on the way is waited for 2 s, then counted in
// `lost`). A JS client tops out far below sluice's rates: compare CPU per
// delivery, not deliveries/s, across loads. Server CPU is the
// sum over the server's processes (primary and workers, from /proc); Redis'
// own CPU is its own column. Redis rows need redis-server (Debian
// redis-server), started here on a free port; they are skipped without it.
//   node benchmark/websocket/_bus_fanout.js [--subs 1000] [--seconds 5]
//        [--size 64] [--window 8] [--runs 1] [--only sluice-cluster,...]

const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const WS = require('ws');

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? dflt : process.argv[i + 1];
};
const SUBS = Number(arg('subs', 1000));
const SECONDS = Number(arg('seconds', 5));
const SIZE = Number(arg('size', 64));
const WINDOW = Number(arg('window', 8));
const RUNS = Number(arg('runs', 1));
const ONLY = arg('only', null);
const LOAD = arg('load', 'wsload');

const VARIANTS = [
  { name: 'sluice-single', label: 'sluice, 1 process (no bus)' },
  { name: 'sluice-cluster', label: 'sluice, 2 workers, machine bus' },
  { name: 'sluice-redis', label: 'sluice, 2 workers, Redis', redis: true },
  { name: 'socketio-redis', label: 'socket.io, 2 workers, redis-adapter', redis: true, socketio: true },
].filter((v) => !ONLY || ONLY.split(',').includes(v.name));

const CLK_TCK = 100;
function cpuSeconds(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / CLK_TCK;
  } catch {
    return 0;
  }
}
const sumCpu = (pids) => pids.reduce((a, p) => a + cpuSeconds(p), 0);

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function startRedis() {
  const bin = spawnSync('sh', ['-c', 'command -v redis-server']).stdout.toString().trim();
  if (!bin) return null;
  const port = await freePort();
  const child = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  for (let i = 0; i < 250 && !/Ready to accept/.test(out); i++) await sleep(20);
  return { child, port };
}

async function startServer(variant, port, redisPort) {
  const child = spawn(process.execPath, [path.join(__dirname, 'bus_server.js'), variant, String(port), String(redisPort || 0)],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  for (let i = 0; i < 500 && !/PIDS [\d ]+\n/.test(out); i++) await sleep(20);
  const m = /PIDS ([\d ]+)\n/.exec(out);
  if (!m) throw new Error(`${variant} did not start`);
  return { child, pids: m[1].trim().split(' ').map(Number) };
}

// A subscriber or the publisher: { send(text), onMessage(fn), close() }.
function connect(v, port, role) {
  return new Promise((resolve, reject) => {
    if (v.socketio) {
      const { io } = require('socket.io-client');
      const s = io(`http://127.0.0.1:${port}`, { transports: ['websocket'], query: { role }, reconnection: false, forceNew: true });
      s.once('connect', () => resolve({
        send: (t) => s.emit('m', t), onMessage: (fn) => s.on('m', fn), close: () => s.close(),
      }));
      s.once('connect_error', reject);
    } else {
      const c = new WS(`ws://127.0.0.1:${port}/${role}`, { perMessageDeflate: false });
      c.once('open', () => resolve({
        send: (t) => c.send(t), onMessage: (fn) => c.on('message', (d) => fn(d.toString())), close: () => c.terminate(),
      }));
      c.once('error', reject);
    }
  });
}

// wsload fanout against the server: -> { deliveries, seconds }.
function runWsload(port) {
  const { wsloadBinary, wsloadArgs, parseWsload } = require('../lib/wsload.js');
  const args = wsloadArgs({ mode: 'fanout', pubPath: '/pub', subPath: '/sub', subscribers: SUBS, size: SIZE, window: WINDOW },
    '127.0.0.1', port, SECONDS);
  return new Promise((resolve, reject) => {
    const child = spawn(wsloadBinary(), args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.on('exit', () => {
      const r = parseWsload(out);
      if (!r.ok) reject(new Error(`wsload: ${out}`));
      else resolve({ deliveries: r.requests, seconds: r.seconds });
    });
  });
}

async function measure(v, redis) {
  const port = await freePort();
  const srv = await startServer(v.name, port, redis && redis.port);
  const subs = [];
  try {
    if (!v.socketio && LOAD === 'wsload') {
      const cpu0 = sumCpu(srv.pids);
      const redisCpu0 = redis ? cpuSeconds(redis.child.pid) : 0;
      const r = await runWsload(port);
      const cpu = sumCpu(srv.pids) - cpu0;
      const redisCpu = redis ? cpuSeconds(redis.child.pid) - redisCpu0 : 0;
      return {
        label: v.label, rate: r.deliveries / r.seconds, cpuUs: cpu * 1e6 / r.deliveries, cpuPct: cpu / r.seconds * 100,
        redisUs: redis ? redisCpu * 1e6 / r.deliveries : null, stalls: 0, perCpuSecond: r.deliveries / cpu,
      };
    }
    for (let i = 0; i < SUBS; i += 50) {
      const batch = [];
      for (let j = i; j < Math.min(SUBS, i + 50); j++) batch.push(connect(v, port, 'sub'));
      subs.push(...await Promise.all(batch));
    }
    const pub = await connect(v, port, 'pub');
    const pad = 'x'.repeat(SIZE);
    const counts = new Map();
    let deliveries = 0;
    let completed = 0;
    let published = 0;
    let probes = 0;
    let onDone = null;
    for (const s of subs) {
      s.onMessage((text) => {
        const seq = parseInt(text, 10);
        if (seq < 0) { probes++; return; }
        deliveries++;
        const n = (counts.get(seq) || 0) + 1;
        if (n === SUBS) {
          counts.delete(seq);
          completed++;
          if (onDone) onDone();
        } else {
          counts.set(seq, n);
        }
      });
    }
    // Every subscriber reachable (the bus' subscriptions settled).
    for (let i = 0; probes < SUBS && i < 400; i++) {
      probes = 0;
      pub.send(`-1 ${pad}`);
      await sleep(50);
    }
    if (probes < SUBS) throw new Error(`${v.name}: only ${probes}/${SUBS} subscribers reachable`);
    await sleep(200);
    let stalls = 0;
    let lastProgress = Date.now();
    const cpu0 = sumCpu(srv.pids);
    const redisCpu0 = redis ? cpuSeconds(redis.child.pid) : 0;
    const d0 = deliveries;
    const t0 = process.hrtime.bigint();
    const end = Date.now() + SECONDS * 1000;
    await new Promise((resolve) => {
      const pump = () => {
        if (Date.now() >= end) {
          onDone = null;
          clearInterval(watchdog);
          resolve();
          return;
        }
        while (published - completed < WINDOW) pub.send(`${++published} ${pad}`);
      };
      onDone = () => { lastProgress = Date.now(); pump(); };
      const watchdog = setInterval(() => {
        if (Date.now() >= end) { pump(); return; }
        if (Date.now() - lastProgress > 2000) {
          stalls += published - completed;
          completed = published;
          counts.clear();
          lastProgress = Date.now();
          pump();
        }
      }, 100);
      pump();
    });
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpu = sumCpu(srv.pids) - cpu0;
    const redisCpu = redis ? cpuSeconds(redis.child.pid) - redisCpu0 : 0;
    const n = deliveries - d0;
    return {
      label: v.label, rate: n / secs, cpuUs: cpu * 1e6 / n, cpuPct: cpu / secs * 100,
      redisUs: redis ? redisCpu * 1e6 / n : null, stalls, perCpuSecond: n / cpu,
    };
  } finally {
    for (const s of subs) s.close();
    srv.child.kill();
    await new Promise((r) => srv.child.once('exit', r));
  }
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

(async () => {
  let redis = null;
  if (VARIANTS.some((v) => v.redis)) redis = await startRedis();
  // Rounds interleave the variants (a drifting machine load then touches
  // every row alike); each row is the median of its rounds.
  const runs = new Map(VARIANTS.map((v) => [v, []]));
  try {
    for (let r = 0; r < RUNS; r++) {
      for (const v of VARIANTS) {
        if (v.redis && !redis) continue;
        runs.get(v).push(await measure(v, v.redis ? redis : null));
      }
    }
  } finally {
    if (redis) redis.child.kill();
  }
  const rows = VARIANTS.map((v) => {
    const rs = runs.get(v);
    if (rs.length === 0) return { label: v.label, skipped: 'redis-server not installed' };
    const pick = (k) => median(rs.map((x) => x[k]));
    return { label: v.label, rate: pick('rate'), cpuUs: pick('cpuUs'), cpuPct: pick('cpuPct'),
      redisUs: rs[0].redisUs === null ? null : pick('redisUs'), stalls: rs.reduce((a, x) => a + x.stalls, 0),
      perCpuSecond: pick('perCpuSecond') };
  });
  const base = rows.find((r) => r.cpuUs !== undefined);
  console.log(`pub/sub fan-out: 1 publisher -> ${SUBS} subscribers, ${SIZE}-byte messages, window ${WINDOW}, ${SECONDS} s x ${RUNS} (median); load: ${LOAD === 'wsload' ? 'wsload (sluice rows), socket.io-client (socket.io)' : 'JS clients'}`);
  console.log('variant                                   deliveries/s  server CPU µs/delivery  x single  server CPU%  Redis µs/delivery  deliveries/CPU-s  lost');
  for (const r of rows) {
    if (r.skipped) {
      console.log(`${r.label.padEnd(41)} skipped: ${r.skipped}`);
      continue;
    }
    console.log(`${r.label.padEnd(41)} ${Math.round(r.rate).toString().padStart(12)}  ${r.cpuUs.toFixed(2).padStart(22)}  ${(r.cpuUs / base.cpuUs).toFixed(2).padStart(8)}  ${r.cpuPct.toFixed(0).padStart(11)}  ${(r.redisUs === null ? '-' : r.redisUs.toFixed(2)).padStart(17)}  ${Math.round(r.perCpuSecond).toString().padStart(16)}  ${r.stalls}`);
  }
})().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
