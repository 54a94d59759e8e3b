'use strict';
// npm run soak -- [--minutes N] (default 2) [--seconds S] [--mixed]
//
// One sluice server in a child process (so its RSS and fd count can be read
// from /proc) under mixed load from this process, on loopback:
//   upload     POSTs of 1 KiB..4 MiB (Content-Length or chunked) checked by
//              sha256: the server (buffer pool on: requestBufferAllocator =
//              pool.alloc, chunks released with sluice.releaseBuffer)
//              answers the digest of what it received
//   pipeline   raw sockets writing 1..32 GETs at once, responses checked for
//              order and content
//   h2file     HTTP/2 (node:http2 client, same port) respondWithFile of a
//              1 MiB file, several streams per session, checked by sha256
//   h1file     HTTP/1.1 res.respondWithFile of the same file
//   abort      clients that send part of a body and then vanish
//   slowloris  connections trickling header bytes, cut by headersTimeout
// --mixed adds, beside that load, everything in test/soak/mixed.js (its
// header says what): HTTP/1.1 keep-alive and pipelined with static files,
// h2c and HTTP/2 over TLS, uploads by every idiom with a pool and without,
// respondWithFile and serveStatic of files changing underneath, gzip/br
// responses, clients aborting mid-head/body/response, slow readers, and
// WebSockets (echo, permessage-deflate, pub/sub, clients that vanish).
// Every ~10 s it prints requests served, bytes verified, errors by kind,
// the server's RSS and fd count. It fails (exit 1) on any corrupt body or
// out-of-order response (with --mixed, except a body damaged by an in-place
// file change in HTTP/1.1 sendfile's window, a documented hazard: printed
// as KNOWN sendfile-window and counted; mixed.js sendfileWindow), a server crash, RSS growth over 20% after the
// warm-up, an fd leak (fd count after the load back to its idle value; the
// open-file cache's descriptors and libuv's inotify descriptor, which
// outlive the load by design, are told apart by /proc/PID/fd's links), a
// request stalled for 60 s, a load loop still running 90 s after the load
// (named in a STALL line), or pool buffers still in use after the load.
//
// RSS: the warm-up is a quarter of the run (30 s..3 min): at this load the
// server's RSS steps up once, ~15 MB, after 1-2.5 min, together with V8's
// heap reservation (young-generation resizing). Growth is the highest RSS
// of the last three samples over the highest of the warm-up's last 30 s,
// minus what V8's heapTotal grew meanwhile; the JS heap is checked apart
// (heapUsed after a full GC, at the end of the warm-up and of the load).
const { fork } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const http = require('http');
const http2 = require('http2');
const net = require('net');
const os = require('os');
const path = require('path');

const FILE_SIZE = 1024 * 1024;

// ---------------------------------------------------------------------------
// Server (child process)

function runServer() {
  const sluice = require(path.join(__dirname, '..', '..'));
  const file = process.env.SOAK_FILE;
  const mixedMode = process.env.SOAK_MIXED === '1';
  // poison (mixed): released memory is overwritten, so a chunk used after
  // its release shows up as a wrong digest.
  const pool = sluice.createBufferPool({ bufferSize: 65536, maxBuffers: 512, poison: mixedMode });
  const counts = { upload: 0, pipeline: 0, h1file: 0, h2file: 0, aborted: 0 };
  let mixed = null;
  const server = sluice.createServer({
    requestBufferAllocator: pool.alloc,
    headersTimeout: 3000,
    requestTimeout: mixedMode ? 60000 : 30000,
    keepAliveTimeout: 60000,
    // Only requests that send Accept-Encoding get compressed: the base
    // load sends none.
    compression: mixedMode,
  }, (req, res) => {
    if (mixed && req.url !== '/up' && mixed.handle(req, res)) return;
    if (req.method === 'POST') {
      const h = crypto.createHash('sha256');
      let n = 0;
      req.on('data', (chunk) => {
        h.update(chunk);
        n += chunk.length;
        sluice.releaseBuffer(chunk);
      });
      req.on('aborted', () => { counts.aborted++; });
      req.on('error', () => {});
      req.on('end', () => {
        counts.upload++;
        res.setHeader('x-bytes', String(n));
        res.end(h.digest('hex'));
      });
      return;
    }
    if (req.url.startsWith('/p/')) {
      counts.pipeline++;
      const body = `pipelined ${req.url.slice(3)}`;
      res.setHeader('content-type', 'text/plain');
      res.end(body);
      return;
    }
    if (req.url === '/file') {
      counts.h1file++;
      res.respondWithFile(file);
      return;
    }
    res.statusCode = 404;
    res.end();
  });
  server.on('stream', (stream, headers) => {
    stream.on('error', () => {});
    if (mixed && mixed.handleStream(stream, headers)) return;
    if (headers[':path'] === '/file') {
      counts.h2file++;
      stream.respondWithFile(file, { 'content-type': 'application/octet-stream' });
    } else {
      stream.respond({ ':status': 404 });
      stream.end();
    }
  });
  if (mixedMode) mixed = require('./mixed').server(sluice, server, counts);
  server.listen(0, '127.0.0.1', () => {
    const port = server.address().port;
    if (!mixed) process.send({ type: 'listening', port });
    else mixed.listen((tlsPort) => process.send({ type: 'listening', port, tlsPort }));
  });
  process.on('message', (m) => {
    if (m.type === 'stats') {
      process.send({ type: 'stats', counts, pool: pool.stats(), mem: process.memoryUsage(), ...(mixed ? mixed.extraStats() : {}) });
    } else if (m.type === 'gc') {
      if (global.gc) global.gc();
      process.send({ type: 'gc' });
    } else if (m.type === 'stop') {
      if (mixed) mixed.close();
      server.close(() => process.exit(0));
      if (server.closeAllConnections) server.closeAllConnections();
      setTimeout(() => process.exit(0), 5000).unref();
    }
  });
  process.on('disconnect', () => process.exit(0));
}

// ---------------------------------------------------------------------------
// Load (this process)

function parseArgs() {
  const a = process.argv.slice(2);
  const get = (n) => { const i = a.indexOf(`--${n}`); return i >= 0 ? Number(a[i + 1]) : undefined; };
  const seconds = get('seconds');
  const minutes = get('minutes');
  return {
    durationMs: seconds !== undefined ? seconds * 1000 : (minutes !== undefined ? minutes : 2) * 60000,
    mixed: a.includes('--mixed'),
  };
}

const stats = {
  served: { upload: 0, pipeline: 0, h2file: 0, h1file: 0, abort: 0, slowloris: 0 },
  verified: 0,
  errors: {},
  corrupt: [],
  known: [],      // (mixed) bodies damaged in the sendfile window: counted, not failed
  resets: {},     // (mixed) responses that ended short with a reset: accepted
  mutations: {},  // (mixed) changes made to the served files
};
function error(kind, err) {
  const k = `${kind}:${(err && (err.code || err.message)) || err}`;
  stats.errors[k] = (stats.errors[k] || 0) + 1;
}
function corrupt(kind, what) {
  stats.corrupt.push(`${kind}: ${what}`);
  console.log(`CORRUPT ${kind}: ${what}`);
}
// (mixed) A body damaged by an in-place file change in HTTP/1.1 sendfile's
// window (docs/files.md "sendfile" item 6; mixed.js sendfileWindow says
// exactly what qualifies): printed and counted, not a failure.
function known(kind, what) {
  stats.known.push(`${kind}: ${what}`);
  console.log(`KNOWN sendfile-window ${kind}: ${what}`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const rand = (n) => Math.floor(Math.random() * n);

// The server's descriptors that outlive the load by design: the open-file
// cache's (files under the served directory) and libuv's inotify one.
function fdTable(pid, staticDir) {
  const t = { total: 0, cache: 0, inotify: 0, other: {} };
  let list = [];
  try { list = fs.readdirSync(`/proc/${pid}/fd`); } catch (_) { return t; }
  for (const fd of list) {
    let l = '?';
    try { l = fs.readlinkSync(`/proc/${pid}/fd/${fd}`); } catch (_) { continue; }
    t.total++;
    if (staticDir && l.startsWith(staticDir)) t.cache++;
    else if (l === 'anon_inode:inotify') t.inotify++;
    else { const k = l.replace(/\[\d+\]$/, '').replace(/^\/.*\//, 'file:'); t.other[k] = (t.other[k] || 0) + 1; }
  }
  return t;
}

function procStats(pid) {
  let rss = 0;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    rss = m ? Number(m[1]) * 1024 : 0;
  } catch (_) { /* gone */ }
  let fds = -1;
  try { fds = fs.readdirSync(`/proc/${pid}/fd`).length; } catch (_) { /* gone */ }
  return { rss, fds };
}

async function uploadLoop(port, agent, random, until) {
  while (Date.now() < until()) {
    const size = rand(4) === 0 ? 1 + rand(4 * 1024 * 1024) : 1 + rand(256 * 1024);
    const off = rand(random.length - size);
    const body = random.subarray(off, off + size);
    const expect = crypto.createHash('sha256').update(body).digest('hex');
    const chunked = rand(3) === 0;
    try {
      const got = await new Promise((resolve, reject) => {
        const req = http.request({
          port, host: '127.0.0.1', method: 'POST', path: '/up', agent,
          headers: chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': size },
        }, (res) => {
          const parts = [];
          res.on('data', (c) => parts.push(c));
          res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(parts).toString(), n: res.headers['x-bytes'] }));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.setTimeout(30000, () => req.destroy(new Error('timeout')));
        // Several writes at random cut points.
        let p = 0;
        while (p < size) {
          const n = Math.min(size - p, 1 + rand(256 * 1024));
          req.write(body.subarray(p, p + n));
          p += n;
        }
        req.end();
      });
      if (got.status !== 200 || got.body !== expect) {
        corrupt('upload', `status ${got.status} size ${size} server saw ${got.n} bytes, digest ${got.body.slice(0, 16)} != ${expect.slice(0, 16)}`);
      } else {
        stats.served.upload++;
        stats.verified += size;
      }
    } catch (e) {
      error('upload', e);
      await sleep(50);
    }
  }
}

// Raw pipelined GETs: N requests in one write, N responses read in order.
async function pipelineLoop(port, until) {
  while (Date.now() < until()) {
    const sock = net.connect(port, '127.0.0.1');
    sock.setNoDelay(true);
    let buf = Buffer.alloc(0);
    let waiter = null;
    let closed = false;
    sock.on('data', (d) => { buf = Buffer.concat([buf, d]); if (waiter) waiter(); });
    sock.on('error', () => {});
    sock.on('close', () => { closed = true; if (waiter) waiter(); });
    const more = () => new Promise((r) => { waiter = () => { waiter = null; r(); }; });
    let seq = 0;
    try {
      await new Promise((resolve, reject) => { sock.once('connect', resolve); sock.once('error', reject); });
      for (let batch = 0; batch < 20 && Date.now() < until(); batch++) {
        const n = 1 + rand(32);
        let out = '';
        const ids = [];
        for (let i = 0; i < n; i++) {
          const id = `${process.pid}-${seq++}`;
          ids.push(id);
          out += `GET /p/${id} HTTP/1.1\r\nHost: x\r\n\r\n`;
        }
        sock.write(out);
        for (const id of ids) {
          let headEnd;
          while ((headEnd = buf.indexOf('\r\n\r\n')) < 0) {
            if (closed) throw Object.assign(new Error('closed mid-pipeline'), { code: 'EPIPELINECLOSED' });
            await more();
          }
          const head = buf.subarray(0, headEnd).toString('latin1');
          const m = /\r\ncontent-length: *(\d+)/i.exec(head);
          if (!/^HTTP\/1\.1 200 /.test(head) || !m) {
            corrupt('pipeline', `bad head for ${id}: ${JSON.stringify(head.slice(0, 80))}`);
            throw new Error('bad head');
          }
          const len = Number(m[1]);
          while (buf.length < headEnd + 4 + len) {
            if (closed) throw Object.assign(new Error('closed mid-body'), { code: 'EPIPELINECLOSED' });
            await more();
          }
          const body = buf.subarray(headEnd + 4, headEnd + 4 + len).toString('latin1');
          buf = buf.subarray(headEnd + 4 + len);
          if (body !== `pipelined ${id}`) {
            corrupt('pipeline', `expected ${id}, got ${JSON.stringify(body)}`);
            throw new Error('order');
          }
          stats.served.pipeline++;
          stats.verified += len;
        }
      }
    } catch (e) {
      if (e.message !== 'order' && e.message !== 'bad head') error('pipeline', e);
    }
    sock.destroy();
  }
}

async function h2Loop(port, fileHash, until) {
  while (Date.now() < until()) {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', (e) => error('h2session', e));
    try {
      for (let round = 0; round < 10 && Date.now() < until(); round++) {
        const n = 1 + rand(8);
        await Promise.all(Array.from({ length: n }, () => new Promise((resolve) => {
          const req = session.request({ ':path': '/file' });
          const h = crypto.createHash('sha256');
          let len = 0;
          // Sometimes reset the stream halfway.
          const resetAt = rand(6) === 0 ? rand(FILE_SIZE) : -1;
          req.on('data', (c) => {
            h.update(c);
            len += c.length;
            if (resetAt >= 0 && len >= resetAt && !req.destroyed) {
              req.close(http2.constants.NGHTTP2_CANCEL);
              stats.served.abort++;
            }
          });
          req.on('end', () => {
            if (resetAt >= 0 && len < FILE_SIZE) return resolve();
            const d = h.digest('hex');
            if (len !== FILE_SIZE || d !== fileHash) corrupt('h2file', `len ${len} digest ${d.slice(0, 16)}`);
            else { stats.served.h2file++; stats.verified += len; }
            resolve();
          });
          req.on('close', resolve);
          req.on('error', (e) => { if (resetAt < 0) error('h2file', e); resolve(); });
          req.setTimeout(30000, () => req.close(http2.constants.NGHTTP2_CANCEL));
          req.end();
        })));
      }
    } catch (e) {
      error('h2', e);
    }
    await new Promise((r) => session.close(r));
  }
}

async function h1FileLoop(port, agent, fileHash, until) {
  while (Date.now() < until()) {
    try {
      const r = await new Promise((resolve, reject) => {
        const req = http.get({ port, host: '127.0.0.1', path: '/file', agent }, (res) => {
          const h = crypto.createHash('sha256');
          let len = 0;
          res.on('data', (c) => { h.update(c); len += c.length; });
          res.on('end', () => resolve({ len, d: h.digest('hex') }));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.setTimeout(30000, () => req.destroy(new Error('timeout')));
      });
      if (r.len !== FILE_SIZE || r.d !== fileHash) corrupt('h1file', `len ${r.len}`);
      else { stats.served.h1file++; stats.verified += r.len; }
    } catch (e) {
      error('h1file', e);
      await sleep(50);
    }
  }
}

// Clients that send part of a body and vanish (FIN or RST).
async function abortLoop(port, random, until) {
  while (Date.now() < until()) {
    await new Promise((resolve) => {
      const sock = net.connect(port, '127.0.0.1');
      sock.on('error', () => {});
      sock.on('close', resolve);
      sock.on('connect', () => {
        const total = 65536 + rand(2 * 1024 * 1024);
        const sent = rand(total);
        sock.write(`POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: ${total}\r\n\r\n`);
        sock.write(random.subarray(0, sent), () => {
          setTimeout(() => {
            stats.served.abort++;
            if (rand(2)) sock.resetAndDestroy(); else sock.destroy();
          }, rand(20));
        });
      });
    });
  }
}

// Slowloris: connections that trickle header bytes until the server's
// headersTimeout cuts them (then they reconnect).
async function slowlorisLoop(port, until, sockets) {
  const line = 'GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ' + 'a'.repeat(10000);
  while (Date.now() < until()) {
    await new Promise((resolve) => {
      const sock = net.connect(port, '127.0.0.1');
      sockets.add(sock);
      let i = 0;
      let timer = null;
      sock.on('error', () => {});
      sock.on('data', () => {});
      sock.on('close', () => {
        clearInterval(timer);
        sockets.delete(sock);
        if (i > 0) stats.served.slowloris++;
        resolve();
      });
      sock.on('connect', () => {
        timer = setInterval(() => {
          if (Date.now() >= until()) { sock.destroy(); return; }
          if (i < line.length) sock.write(line[i++]);
        }, 300);
      });
    });
  }
}

function fmtMB(n) { return (n / 1048576).toFixed(1); }
function pct(x) { return `${x < 0 ? '' : '+'}${(100 * x).toFixed(1)}%`; }

async function main() {
  const { durationMs, mixed } = parseArgs();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-soak-'));
  const file = path.join(dir, 'file.bin');
  const fileData = crypto.randomBytes(FILE_SIZE);
  fs.writeFileSync(file, fileData);
  const fileHash = crypto.createHash('sha256').update(fileData).digest('hex');
  const random = crypto.randomBytes(5 * 1024 * 1024);
  const fx = mixed ? require('./mixed').fixtures(dir) : null;
  const staticDir = fx ? path.join(dir, 'static') : null;

  const child = fork(__filename, ['--server'], {
    env: { ...process.env, SOAK_FILE: file, ...(mixed ? { SOAK_MIXED: '1', SOAK_DIR: dir } : {}) },
    execArgv: ['--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let crashed = null;
  let stopping = false;
  child.on('exit', (code, signal) => {
    if (!stopping || code !== 0) crashed = crashed || `server exited: code ${code} signal ${signal}`;
    if (!stopping) console.log(`CRASH: ${crashed}`);
  });
  // Replies come in order per type; a waiter that gave up still takes its
  // (late) reply, so the next one gets its own.
  const replies = { listening: [], stats: [], gc: [] };
  child.on('message', (m) => { const r = replies[m.type] && replies[m.type].shift(); if (r) r(m); });
  const ask = (type) => new Promise((resolve) => {
    replies[type].push(resolve);
    try { child.send({ type }); } catch (_) { resolve(null); }
  });
  const { port, tlsPort } = await new Promise((resolve) => { replies.listening.push(resolve); });

  const idle0 = procStats(child.pid);
  const idleFds0 = fdTable(child.pid, staticDir);
  let rssWarm = null;
  console.log(`soak: ${durationMs / 1000} s against pid ${child.pid} port ${port}; idle rss ${fmtMB(idle0.rss)} MB, ${idle0.fds} fds`);
  const start = Date.now();
  const end = start + durationMs;
  const until = () => (crashed ? 0 : end);
  // Warm-up: a quarter of the run, 30 s to 3 min. Until then V8 sizes its
  // young generation and the allocator its arenas (the server's RSS steps
  // up once, by ~15 MB, after 1-2.5 min at this load; see docs in the
  // header), so growth is measured from there.
  const warmupMs = Math.min(180000, Math.max(30000, durationMs * 0.25));
  const samples = [];

  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const slow = new Set();
  const labelled = (label, p) => Object.assign(p, { label });
  const loops = [
    ...Array.from({ length: 3 }, () => labelled('upload', uploadLoop(port, agent, random, until))),
    ...Array.from({ length: 2 }, () => labelled('pipeline', pipelineLoop(port, until))),
    ...Array.from({ length: 2 }, () => labelled('h2file', h2Loop(port, fileHash, until))),
    labelled('h1file', h1FileLoop(port, agent, fileHash, until)),
    labelled('abort', abortLoop(port, random, until)),
    ...Array.from({ length: 20 }, () => labelled('slowloris', slowlorisLoop(port, until, slow))),
  ];
  if (mixed) {
    loops.push(...require('./mixed').loops({
      stats, error, corrupt, known, rand, sleep, until, port, tlsPort, fx, random, fileHash,
    }));
  }

  let baseline = null;
  let mem = null;  // the server's process.memoryUsage() at the last tick
  const ticker = setInterval(async () => {
    const t = Date.now() - start;
    const ps = procStats(child.pid);
    if (!crashed) {
      const st = await Promise.race([ask('stats'), sleep(2000).then(() => null)]);
      if (st) mem = st.mem;
    }
    samples.push({ t, ...ps, mem });
    if (!baseline && t >= warmupMs) {
      // The highest RSS of the last 30 s of the warm-up, and the JS heap
      // then, after a full GC.
      const recent = samples.filter((x) => x.t >= warmupMs - 30000).map((x) => x.rss);
      baseline = { rss: Math.max(...recent), heapTotal: mem ? mem.heapTotal : 0 };
      rssWarm = baseline.rss;
      await ask('gc');
      const st = await ask('stats');
      if (st) baseline.heapUsed = st.mem.heapUsed;
    }
    const s = stats.served;
    const errs = Object.entries(stats.errors).map(([k, v]) => `${k}=${v}`).join(' ') || 'none';
    const servedLine = mixed
      ? `${Object.values(s).reduce((a, b) => a + b, 0)} (resets accepted ${Object.values(stats.resets).reduce((a, b) => a + b, 0)})`
      : `upload=${s.upload} pipeline=${s.pipeline} h2file=${s.h2file} h1file=${s.h1file} abort=${s.abort} slowloris-cut=${s.slowloris}`;
    console.log(`[${(t / 1000).toFixed(0).padStart(4)} s] served ${servedLine} | verified ${fmtMB(stats.verified)} MB | ` +
      `corrupt ${stats.corrupt.length}${mixed ? ` (known sendfile-window ${stats.known.length})` : ''} | errors ${errs} | server rss ${fmtMB(ps.rss)} MB fds ${ps.fds}` +
      (mem ? ` (js heap ${fmtMB(mem.heapUsed)}/${fmtMB(mem.heapTotal)} MB, external ${fmtMB(mem.external)} MB)` : ''));
  }, 10000);

  // Every request has its own 60 s stall timeout, so the loops end within
  // about that of the load's end; one still running 90 s after it waits on
  // something no timeout covers: a stall of the load generator, reported
  // by name instead of hanging the run (CI).
  const running = new Set(loops);
  for (const p of loops) p.then(() => running.delete(p), () => running.delete(p));
  const loopGraceMs = 90000;
  const loopsDone = await Promise.race([
    Promise.all(loops).then(() => true),
    sleep(Math.max(0, durationMs + loopGraceMs - (Date.now() - start))).then(() => false),
  ]);
  const stalledLoops = loopsDone ? [] : [...running].map((p) => p.label || '?');
  if (stalledLoops.length) console.log(`STALL: loops still running ${loopGraceMs / 1000} s after the load: ${stalledLoops.join(', ')}`);
  clearInterval(ticker);
  agent.destroy();
  for (const s of slow) s.destroy();

  const failures = [];
  if (crashed) failures.push(crashed);
  if (stalledLoops.length) failures.push(`load generator stalled: ${stalledLoops.join(', ')} still running ${loopGraceMs / 1000} s after the load`);
  let final = null;
  let serverStats = null;
  if (!crashed) {
    // Let the server close what the clients left, then compare with idle.
    const deadline = Date.now() + 15000;
    for (;;) {
      await sleep(250);
      final = procStats(child.pid);
      if (final.fds <= idle0.fds || Date.now() > deadline) break;
    }
    await ask('gc');
    serverStats = await ask('stats');
    // Chunks an upload handler dropped unreleased go back to the pool from
    // a FinalizationRegistry callback, which V8 runs in a task after the
    // collection, not inside gc(): buffers still in use are counted as a
    // leak only if more collections, turns apart, do not bring them back.
    const inUseAfterGc = serverStats.pool.inUse;
    for (let i = 0; i < 5 && serverStats.pool.inUse > 0; i++) {
      await sleep(200);
      await ask('gc');
      serverStats = await ask('stats');
    }
    if (inUseAfterGc > 0) console.log(`soak: pool: ${inUseAfterGc} buffers in use right after the first GC, ${serverStats.pool.inUse} after more`);
    final = procStats(child.pid);
    if (mixed) {
      // Descriptors the open-file cache and inotify keep are not leaks.
      const ft = fdTable(child.pid, staticDir);
      const other = ft.total - ft.cache - ft.inotify;
      const other0 = idleFds0.total - idleFds0.cache - idleFds0.inotify;
      console.log(`soak: fds idle ${idleFds0.total} -> ${ft.total} (open-file cache ${ft.cache}, inotify ${ft.inotify}; ` +
        `others ${other0} -> ${other}: ${JSON.stringify(ft.other)})`);
      if (other > other0) failures.push(`fd leak: ${other} descriptors after the load besides the cache's, ${other0} idle: ${JSON.stringify(ft.other)}`);
    } else if (final.fds > idle0.fds) failures.push(`fd leak: ${final.fds} fds after the load, ${idle0.fds} idle`);
    if (serverStats.pool.inUse > 0) failures.push(`buffer pool: ${serverStats.pool.inUse} buffers still in use`);
    // RSS under load at the end (the highest of the last three samples, so
    // one lucky low sample does not hide growth) vs after the warm-up.
    // Growth of V8's heap reservation (heapTotal: young-generation resizing,
    // not a leak) is taken out; a JS leak shows as post-GC heapUsed growth,
    // checked on its own.
    const last = samples.slice(-3);
    const endRss = last.length ? Math.max(...last.map((x) => x.rss)) : final.rss;
    const endHeapTotal = last.length && last[last.length - 1].mem ? last[last.length - 1].mem.heapTotal : 0;
    let growth = null;
    if (baseline) {
      const v8 = Math.max(0, endHeapTotal - baseline.heapTotal);
      growth = { raw: endRss / baseline.rss - 1, adjusted: (endRss - v8) / baseline.rss - 1, v8 };
      if (growth.adjusted > 0.2) {
        failures.push(`rss grew ${(100 * growth.adjusted).toFixed(1)}% after warm-up without V8 heap growth ` +
          `(${fmtMB(baseline.rss)} -> ${fmtMB(endRss)} MB, V8 heap +${fmtMB(v8)} MB)`);
      }
      const heapEnd = serverStats.mem.heapUsed;
      if (baseline.heapUsed && heapEnd > Math.max(baseline.heapUsed * 1.2, baseline.heapUsed + 4 * 1048576)) {
        failures.push(`JS heap after GC grew ${fmtMB(baseline.heapUsed)} -> ${fmtMB(heapEnd)} MB`);
      }
      console.log(`soak: rss after warm-up (${(warmupMs / 1000).toFixed(0)} s) ${fmtMB(baseline.rss)} MB, at the end ${fmtMB(endRss)} MB ` +
        `(${pct(growth.raw)}; V8 heap reservation +${fmtMB(v8)} MB; without it ${pct(growth.adjusted)}); ` +
        `JS heap after GC ${baseline.heapUsed ? fmtMB(baseline.heapUsed) : '-'} -> ${fmtMB(heapEnd)} MB`);
    }
    console.log(`soak: idle after the load: rss ${fmtMB(final.rss)} MB; fds idle ${idle0.fds} -> ${final.fds}; ` +
      `pool ${JSON.stringify(serverStats.pool)}; server counts ${JSON.stringify(serverStats.counts)}`);
  }
  if (stats.corrupt.length) failures.push(`${stats.corrupt.length} corrupt bodies / out-of-order responses`);
  const s = stats.served;
  const total = mixed ? Object.values(s).reduce((a, b) => a + b, 0) : s.upload + s.pipeline + s.h2file + s.h1file;
  console.log(`soak: ${total} requests verified (${fmtMB(stats.verified)} MB) in ${((Date.now() - start) / 1000).toFixed(0)} s: ` +
    `${JSON.stringify(s)}; errors ${JSON.stringify(stats.errors)}`);
  if (mixed) {
    const timeouts = Object.entries(stats.errors).filter(([k]) => /ETIMEOUT|timeout/.test(k));
    if (timeouts.length) failures.push(`stalled requests: ${JSON.stringify(Object.fromEntries(timeouts))}`);
    console.log(`soak: totals: ${total} verified, ${fmtMB(stats.verified)} MB; resets accepted ${JSON.stringify(stats.resets)}; ` +
      `file changes ${JSON.stringify(stats.mutations)}; server rss start ${fmtMB(idle0.rss)} MB, after warm-up ${rssWarm ? fmtMB(rssWarm) : '-'} MB, ` +
      `end ${final ? fmtMB(final.rss) : '-'} MB; fds idle start ${idle0.fds}, end ${final ? final.fds : '-'}; ` +
      `errors ${Object.values(stats.errors).reduce((a, b) => a + b, 0)} ${JSON.stringify(stats.errors)}; ` +
      `corrupt ${stats.corrupt.length}`);
    console.log(`known sendfile-window bodies: ${stats.known.length} (docs/files.md sendfile item 6)`);
  }
  stopping = true;
  if (!crashed) {
    child.send({ type: 'stop' });
    await new Promise((r) => { if (child.exitCode !== null) r(); else child.on('exit', r); });
  }
  fs.rmSync(dir, { recursive: true, force: true });
  if (failures.length) {
    console.log(`soak: FAIL\n  ${failures.join('\n  ')}`);
    process.exit(1);
  }
  console.log('soak: PASS');
  process.exit(0);
}

if (process.argv.includes('--server')) runServer();
else main().catch((e) => { console.error(e); process.exit(1); });
