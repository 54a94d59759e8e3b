'use strict';

// Streamed compression (res.write) off the loop thread (issue 7): large
// writes compress on the libuv threadpool in order, one job at a time per
// response (src/core/compress/compress_stream.h). Real clients: node's http client
// with zlib, curl --compressed, raw sockets.

const net = require('node:net');
const http = require('node:http');
const zlib = require('node:zlib');
const crypto = require('node:crypto');
const common = require('../common');
const { decode, textChunk, waitFor, quietStats, loopLagWhileCompressing } = require('./helpers');
const { assert } = common;

const maybe = common.isSluice ? describe : describe.skip;

maybe(`compression: streamed writes off the loop [${common.implName}]`, function () {
  // Deadlines, not latency checks: compression jobs run on threadpool
  // workers at nice +19, which a loaded machine starves (every job of a
  // test once took over 20 s while other processes kept both CPUs busy).
  this.timeout(90000);
  const binding = common.libInternal('common/binding');
  afterEach(common.cleanup);

  // Mixed small (inline) and large (threadpool) writes, strings and
  // Buffers, with flushes between: what the client decodes is exactly
  // what was written, in order.
  const parts = [
    { data: textChunk('a', 100) },
    { data: Buffer.from(textChunk('b', 200 * 1024)) },
    { data: textChunk('c', 10) },
    { flush: true },
    { data: textChunk('d', 50 * 1024) },  // a string above the inline bound
    { data: Buffer.from(textChunk('e', 1024 * 1024)) },
    { flush: true },
    { data: Buffer.from(textChunk('f', 3000)) },
    { data: crypto.randomBytes(300 * 1024) },  // incompressible
    { data: textChunk('g', 40 * 1024) },
  ];
  const tail = textChunk('z', 70 * 1024);
  const expected = Buffer.concat([...parts.filter((p) => p.data).map((p) => Buffer.from(p.data)), Buffer.from(tail)]);

  function mixedHandler(req, res) {
    res.setHeader('Content-Type', 'text/plain');
    res.addTrailers({ 'x-check': 'done' });
    for (const p of parts) {
      if (p.flush) res.flush();
      else res.write(p.data);
    }
    res.end(tail);
  }

  it('large res.write() chunks round-trip byte-exact for each encoding, in order across small/large writes and flush(); trailers come last', async function () {
    const { port } = await common.startServer({ compression: true }, mixedHandler);
    for (const enc of ['gzip', 'deflate', 'br']) {
      const r = await common.httpRequest(port, { path: '/', headers: { 'accept-encoding': enc }, timeout: 60000 });
      assert.strictEqual(r.headers['content-encoding'], enc);
      assert.strictEqual(r.headers['transfer-encoding'], 'chunked');
      assert.ok(decode(enc, r.body).equals(expected), `${enc}: decoded body differs`);
      assert.strictEqual(r.trailers['x-check'], 'done', enc);
    }
    const st = binding.compressionStats();
    assert.strictEqual(st.streams, 0, JSON.stringify(st));
  });

  it('round-trips with curl --compressed', async function () {
    const { url } = await common.startServer({ compression: { encodings: ['gzip', 'deflate'] } }, mixedHandler);
    const r = await common.curl(['--compressed', '-s', '-o', '-', url], { timeout: 60000 });
    assert.strictEqual(r.code, 0, String(r.stderr));
    assert.ok(Buffer.from(r.stdout).equals(expected), 'curl: decoded body differs');
  });

  it('pipelined responses stay in order while one streams large compressed writes', async function () {
    const big = Buffer.from(textChunk('big', 600 * 1024));
    const { port } = await common.startServer({ compression: true }, (req, res) => {
      res.setHeader('Content-Type', 'text/plain');
      if (req.url.startsWith('/stream')) {
        // Large writes spread over a few ticks, then a small end.
        let i = 0;
        const step = () => {
          if (i === 3) { res.end('end-of-' + req.url); return; }
          res.write(big.subarray(i * 200 * 1024, (i + 1) * 200 * 1024));
          i++;
          setImmediate(step);
        };
        step();
        return;
      }
      res.end('plain ' + req.url + ' ' + textChunk(req.url, 2000));
    });
    const c = await common.rawConnect(port);
    const order = ['/stream1', '/a', '/stream2', '/b', '/c'];
    let raw = '';
    for (const p of order) raw += `GET ${p} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: ${p === '/stream2' ? 'br' : 'gzip'}\r\n\r\n`;
    c.socket.write(raw);
    const got = await new Promise((resolve, reject) => {
      let buf = Buffer.alloc(0);
      const onData = (d) => {
        buf = Buffer.concat([buf, d]);
        let res;
        try { res = common.parseResponses(buf); } catch (e) { reject(e); return; }
        if (res.responses.length === order.length) {
          c.socket.removeListener('data', onData);
          resolve(res.responses);
        }
      };
      c.socket.on('data', onData);
      setTimeout(() => reject(new Error('timeout')), 30000);
    });
    got.forEach((r, i) => {
      const body = decode(r.headers['content-encoding'], r.body);
      const p = order[i];
      if (p.startsWith('/stream')) {
        assert.ok(body.equals(Buffer.concat([big, Buffer.from('end-of-' + p)])), `response ${i} (${p})`);
      } else {
        assert.strictEqual(body.toString(), 'plain ' + p + ' ' + textChunk(p, 2000), `response ${i}`);
      }
    });
  });

  it('backpressure: a large write returns false and \'drain\' follows; a writer that waits for it gets everything through', async function () {
    // Above the stream's bound (1 MiB not yet compressed): every write
    // reports backpressure.
    const chunk = Buffer.from(textChunk('bp', 1536 * 1024));
    let falses = 0;
    let drains = 0;
    const { port } = await common.startServer({ compression: { encodings: ['gzip'] } }, (req, res) => {
      res.setHeader('Content-Type', 'text/plain');
      res.on('drain', () => { drains++; });
      let n = 0;
      const pump = () => {
        while (n < 6) {
          n++;
          if (!res.write(chunk)) {
            falses++;
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      pump();
    });
    const r = await common.httpRequest(port, { path: '/', headers: { 'accept-encoding': 'gzip' }, timeout: 60000 });
    const body = zlib.gunzipSync(r.body);
    assert.strictEqual(body.length, 6 * chunk.length);
    for (let i = 0; i < 6; i++) assert.ok(body.subarray(i * chunk.length, (i + 1) * chunk.length).equals(chunk), `chunk ${i}`);
    assert.ok(falses >= 5, `write() returned false ${falses} times`);
    assert.ok(drains >= falses, `${drains} drains for ${falses} falses`);
  });

  it('the loop stays responsive while 8 MiB are written in 1 MiB writes', async function () {
    const r = await loopLagWhileCompressing(async (port) => (await common.httpRequest(port, { path: '/', headers: { 'accept-encoding': 'gzip' }, timeout: 60000 })).body);
    assert.strictEqual(r.decoded, r.expected);
    assert.ok(r.maxLag < r.inlineMs / 2, `max loop lag ${r.maxLag} ms vs ${r.inlineMs.toFixed(0)} ms inline`);
  });

  it('a client reset mid-job frees everything (streams, compressors, jobs) once the jobs return', async function () {
    const chunk = Buffer.from(textChunk('rst', 2 * 1024 * 1024));
    const before = await quietStats();
    let started = 0;
    const { port } = await common.startServer({ compression: { level: 9 } }, (req, res) => {
      res.setHeader('Content-Type', 'text/plain');
      started++;
      res.write(chunk);
      res.write(chunk);  // queued behind the first job
      if (req.url === '/ended') res.end(chunk);  // end queued too; res may be dropped
    });
    for (let i = 0; i < 6; i++) {
      const s = net.connect(port, '127.0.0.1');
      await common.once(s, 'connect');
      const path = i % 2 ? '/ended' : '/open';
      s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: ${['gzip', 'br', 'deflate'][i % 3]}\r\n\r\n`);
      await common.sleep(10);
      s.resetAndDestroy();
    }
    assert.ok(await waitFor(() => started === 6), `${started} requests started`);
    const ok = await waitFor(() => {
      const st = binding.compressionStats();
      return st.streams === before.streams && st.jobs === before.jobs && st.compressors === before.compressors;
    }, 30000);
    assert.ok(ok, `leaked: ${JSON.stringify(binding.compressionStats())} vs ${JSON.stringify(before)}`);
    // And the server still serves compressed streams.
    const r = await new Promise((resolve, reject) => {
      http.get({ port, host: '127.0.0.1', path: '/ended', agent: false, headers: { 'accept-encoding': 'gzip' } }, (res) => {
        common.collect(res).then((b) => resolve(b), reject);
      }).on('error', reject);
    });
    assert.strictEqual(zlib.gunzipSync(r).length, 3 * chunk.length);
  });

  it('maxBrotliStreams: over the cap, a streamed response negotiates without br (gzip), and br again once one closes', async function () {
    const before = (await quietStats()).brotliStreams;
    const { port } = await common.startServer({ compression: { maxBrotliStreams: before + 2 } }, (req, res) => {
      res.setHeader('Content-Type', 'text/event-stream');
      res.write(`data: ${textChunk(req.url, 2000)}\n\n`);
      res.flush();
      if (req.url === '/end') res.end();
    });
    const open = [];
    const start = (path) => new Promise((resolve, reject) => {
      const req = http.get({ port, host: '127.0.0.1', path, agent: false, headers: { 'accept-encoding': 'br, gzip' } }, (res) => {
        const dec = res.headers['content-encoding'] === 'br' ? zlib.createBrotliDecompress() : zlib.createGunzip();
        res.pipe(dec);
        let text = '';
        dec.on('data', (d) => {
          text += d;
          if (text.endsWith('\n\n')) resolve({ req, enc: res.headers['content-encoding'], text });
        });
        dec.on('error', reject);
      });
      req.on('error', reject);
      open.push(req);
    });
    const a = await start('/a');
    const b = await start('/b');
    const c = await start('/c');
    assert.deepStrictEqual([a.enc, b.enc, c.enc], ['br', 'br', 'gzip']);
    assert.strictEqual(c.text, `data: ${textChunk('/c', 2000)}\n\n`);
    assert.strictEqual(binding.compressionStats().brotliStreams, before + 2);
    a.req.socket.resetAndDestroy();  // RST: the server sees the close at once
    assert.ok(await waitFor(() => binding.compressionStats().brotliStreams === before + 1), 'a br stream was freed');
    const d = await start('/d');
    assert.strictEqual(d.enc, 'br');
    for (const r of open) if (r.socket && !r.socket.destroyed) r.socket.resetAndDestroy();
    assert.ok(await waitFor(() => binding.compressionStats().brotliStreams === before));
    assert.throws(() => common.impl.createServer({ compression: { maxBrotliStreams: -1 } }), { code: 'ERR_INVALID_ARG_VALUE' });
  });

  it('workers compress at a lower priority when the process can restore it, and are restored after', async function () {
    const fs = require('node:fs');
    const info = binding.compressionInfo();
    const nices = () => fs.readdirSync('/proc/self/task').map((t) => {
      try {
        const st = fs.readFileSync(`/proc/self/task/${t}/stat`, 'utf8');
        return Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[16]);
      } catch { return null; }  // the thread exited
    }).filter((n) => n !== null);
    const base = Math.max(...nices());
    const big = Buffer.from(textChunk('nice', 6 * 1024 * 1024));
    let seen = base;
    let sampler = null;
    const { port } = await common.startServer({ compression: { encodings: ['gzip'], level: 9 } }, (req, res) => {
      res.setHeader('Content-Type', 'text/plain');
      sampler = setInterval(() => { seen = Math.max(seen, ...nices()); }, 2);
      res.write(big);
      res.end();
    });
    try {
      const r = await common.httpRequest(port, { path: '/', headers: { 'accept-encoding': 'gzip' }, timeout: 60000 });
      assert.strictEqual(zlib.gunzipSync(r.body).length, big.length);
    } finally {
      clearInterval(sampler);
    }
    await common.sleep(20);
    if (info.workerPriority.supported && info.workerPriority.enabled) {
      assert.strictEqual(seen, Math.min(19, base + info.workerPriority.niceIncrement), 'a worker ran at the lower priority');
      assert.strictEqual(info.maxJobs, 0);
    } else {
      assert.strictEqual(seen, base, 'no thread changed priority');
      assert.ok(info.maxJobs >= 1);
    }
    // A worker restores its priority after it returned the job's result,
    // which the response may beat: wait for it rather than sample once.
    await waitFor(() => nices().every((n) => n === base));
    assert.deepStrictEqual([...new Set(nices())], [base], 'every thread is back at its priority');
  });

  it('SLUICE_COMPRESS_JOBS=1: one job runs at a time, the others wait their turn, and every response is intact', async function () {
    const r = await common.runNodeScript(`
      const sluice = require('./');
      const binding = require('./test/common').libInternal('common/binding');
      const http = require('node:http');
      const zlib = require('node:zlib');
      const body = Buffer.alloc(3 << 20, 'gate check 0123456789 abcdefghij ');
      let maxRunning = 0, maxWaiting = 0;
      const t = setInterval(() => {
        const st = binding.compressionStats();
        maxRunning = Math.max(maxRunning, st.running);
        maxWaiting = Math.max(maxWaiting, st.waiting);
      }, 1);
      const srv = sluice.createServer({ compression: { encodings: ['gzip'], level: 9 } }, (req, res) => {
        res.setHeader('Content-Type', 'text/plain');
        if (req.url === '/stream') { res.write(body); res.end(); } else res.end(body);
      });
      srv.listen(0, '127.0.0.1', async () => {
        const get = (path) => new Promise((resolve, reject) => http.get({ port: srv.address().port, host: '127.0.0.1', path, agent: false,
          headers: { 'accept-encoding': 'gzip' } }, (res) => { const c = []; res.on('data', (d) => c.push(d)); res.on('end', () => resolve(Buffer.concat(c))); }).on('error', reject));
        const got = await Promise.all(['/a', '/stream', '/b', '/stream', '/c'].map(get));
        clearInterval(t);
        const ok = got.every((b) => zlib.gunzipSync(b).equals(body));
        console.log(JSON.stringify({ ok, maxRunning, maxWaiting, limit: binding.compressionInfo().maxJobs, end: binding.compressionStats() }));
        srv.close();
      });
    `, { env: { SLUICE_COMPRESS_JOBS: '1' }, timeout: 60000 });
    assert.strictEqual(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').pop());
    assert.ok(out.ok, 'bodies intact');
    assert.strictEqual(out.limit, 1);
    assert.strictEqual(out.maxRunning, 1);
    assert.ok(out.maxWaiting >= 1, JSON.stringify(out));
    assert.strictEqual(out.end.running + out.end.waiting + out.end.jobs + out.end.streams, 0, JSON.stringify(out.end));
  });
});
