'use strict';
// node test/soak/tiny_chunks.js [--seconds 10] [--mode cl|chunked]
//                               [--servers sluice,sluice-pool,node] [--conns 1]
//
// Pathological chunking: one upload whose body arrives one byte per TCP
// segment (TCP_NODELAY, each write waits for the previous one's callback,
// so the kernel sends every byte on its own) for `seconds`. mode cl: a
// Content-Length body, one body byte per write; mode chunked: a chunked
// body, one whole 1-byte chunk ("1\r\nx\r\n") per write.
//
// Each server runs in a child process pinned to CPU 0 (the client to CPU 1
// when taskset exists), with --expose-gc. Reported per server: RSS when
// listening (after a warm-up upload), at the end of the upload, and after
// the upload ended, two full GCs and a second of quiet; the growth that
// stays (after GC - before); 'data' events and bytes the handler saw.
// The handler counts bytes and releases each chunk (pool variant).
const { fork, execFileSync } = require('node:child_process');
const net = require('node:net');
const path = require('node:path');

function runServer(kind) {
  const sluice = require(path.join(__dirname, '..', '..'));
  const http = kind === 'node' ? require('node:http') : sluice;
  const options = {};
  if (kind === 'sluice-pool') {
    const pool = sluice.createBufferPool({ bufferSize: 65536, maxBuffers: 64 });
    options.requestBufferAllocator = pool.alloc;
  }
  const release = kind === 'sluice-pool' ? sluice.releaseBuffer : () => {};
  let events = 0;
  let bytes = 0;
  const server = http.createServer(options, (req, res) => {
    req.on('data', (chunk) => {
      events++;
      bytes += chunk.length;
      release(chunk);
    });
    req.on('end', () => res.end(JSON.stringify({ events, bytes })));
  });
  server.keepAliveTimeout = 1000;
  server.requestTimeout = 0;
  server.headersTimeout = 60000;
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('message', (m) => {
    if (m === 'mem') {
      process.send({ rss: process.memoryUsage().rss, events, bytes });
    } else if (m === 'gc') {
      global.gc();
      setTimeout(() => {
        global.gc();
        setTimeout(() => { const m = process.memoryUsage(); process.send({ rss: m.rss, heapTotal: m.heapTotal, external: m.external, events, bytes }); }, 1000);
      }, 100);
    }
  });
  process.on('disconnect', () => process.exit(0));
}

function ask(child, msg) {
  return new Promise((resolve) => {
    child.once('message', resolve);
    child.send(msg);
  });
}

// One upload, one byte (or one 1-byte chunk) per write, for `ms`.
function upload(port, mode, ms) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    sock.setNoDelay(true);
    let writes = 0;
    let answer = '';
    const chunk = mode === 'chunked' ? Buffer.from('1\r\nx\r\n') : Buffer.from('x');
    sock.on('error', reject);
    sock.on('data', (d) => { answer += d; });
    sock.on('end', () => resolve({ writes, answer }));
    sock.on('connect', () => {
      const head = mode === 'chunked'
        ? 'POST /u HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n'
        : 'POST /u HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 1000000000\r\n\r\n';
      const t0 = Date.now();
      sock.write(head);
      const next = () => {
        if (Date.now() - t0 >= ms) {
          // Finish the request so the server answers.
          if (mode === 'chunked') sock.end('0\r\n\r\n');
          else sock.destroy();
          if (mode !== 'chunked') resolve({ writes, answer: '(aborted)' });
          return;
        }
        writes++;
        sock.write(chunk, next);
      };
      next();
    });
  });
}

async function measure(kind, opts) {
  const child = fork(__filename, ['--server', kind], {
    execArgv: ['--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try { execFileSync('taskset', ['-pc', '0', String(child.pid)], { stdio: 'ignore' }); } catch {}
  const { port } = await new Promise((r) => child.once('message', r));
  await Promise.all(Array.from({ length: opts.conns }, () => upload(port, opts.mode, opts.warmup * 1000)));  // warm-up
  const before = await ask(child, 'gc');
  const t0 = Date.now();
  const res = await Promise.all(Array.from({ length: opts.conns }, () => upload(port, opts.mode, opts.seconds * 1000)));
  const end = await ask(child, 'mem');
  const after = await ask(child, 'gc');
  child.kill();
  const writes = res.reduce((a, r) => a + r.writes, 0);
  return {
    kind, writes, seconds: (Date.now() - t0) / 1000,
    events: after.events - before.events, bytes: after.bytes - before.bytes,
    rssBefore: before.rss, rssEnd: end.rss, rssAfterGc: after.rss, heapBefore: before.heapTotal, heapAfter: after.heapTotal,
  };
}

async function main() {
  const a = process.argv.slice(2);
  const get = (n, d) => { const i = a.indexOf(`--${n}`); return i >= 0 ? a[i + 1] : d; };
  const opts = {
    seconds: Number(get('seconds', 10)),
    mode: get('mode', 'cl'),
    conns: Number(get('conns', 1)),
    warmup: Number(get("warmup", 2)),
  };
  try { execFileSync('taskset', ['-pc', '1', String(process.pid)], { stdio: 'ignore' }); } catch {}
  const servers = get('servers', 'sluice,sluice-pool,node').split(',');
  const MiB = 1024 * 1024;
  console.log(`# ${opts.seconds} s upload, ${opts.conns} connection(s), mode ${opts.mode}`);
  console.log('server       writes   data events  bytes     RSS before  at end   after GC  growth kept  (V8 heapTotal growth)');
  for (const kind of servers) {
    const r = await measure(kind, opts);
    const f = (n) => `${(n / MiB).toFixed(1)} MiB`.padStart(9);
    console.log(`${kind.padEnd(12)} ${String(r.writes).padStart(8)} ${String(r.events).padStart(10)} ${String(r.bytes).padStart(9)}  ` +
                `${f(r.rssBefore)} ${f(r.rssEnd)} ${f(r.rssAfterGc)} ${f(r.rssAfterGc - r.rssBefore)}  (${f(r.heapAfter - r.heapBefore)})`);
  }
}

if (process.argv[2] === '--server') runServer(process.argv[3]);
else main().catch((e) => { console.error(e); process.exit(1); });
