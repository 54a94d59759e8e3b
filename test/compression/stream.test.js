'use strict';

// Streamed compression (res.write) off the loop thread (issue 7): large
// writes compress on the libuv threadpool in order, one job at a time per
// response (src/core/compress_stream.h). Real clients: node's http client
// with zlib, curl --compressed, raw sockets.

const net = require('node:net');
const http = require('node:http');
const zlib = require('node:zlib');
const crypto = require('node:crypto');
const common = require('../common');
const { assert } = common;

const maybe = common.isSluice ? describe : describe.skip;

function decode(enc, buf) {
  switch (enc) {
    case 'gzip': return zlib.gunzipSync(buf);
    case 'deflate': return zlib.inflateSync(buf);
    case 'br': return zlib.brotliDecompressSync(buf);
    case undefined: return buf;
    default: throw new Error(`unexpected content-encoding ${enc}`);
  }
}

// Compressible text where every chunk is distinct (order mistakes show).
function textChunk(tag, bytes) {
  let s = '';
  for (let i = 0; s.length < bytes; i++) s += `${tag}:${i} lorem ipsum dolor sit amet ${i * 7919 % 10007}\n`;
  return s.slice(0, bytes);
}

async function waitFor(fn, ms = 5000) {
  const deadline = Date.now() + ms;
  for (;;) {
    if (fn()) return true;
    if (Date.now() > deadline) return false;
    await common.sleep(20);
  }
}

maybe(`compression: streamed writes off the loop [${common.implName}]`, function () {
  const binding = require('../../lib/binding');
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
      const r = await common.httpRequest(port, { path: '/', headers: { 'accept-encoding': enc }, timeout: 15000 });
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
    const r = await common.curl(['--compressed', '-s', '-o', '-', url], { timeout: 15000 });
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
      setTimeout(() => reject(new Error('timeout')), 10000);
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
    const chunk = Buffer.from(textChunk('bp', 1024 * 1024));
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
    const r = await common.httpRequest(port, { path: '/', headers: { 'accept-encoding': 'gzip' }, timeout: 20000 });
    const body = zlib.gunzipSync(r.body);
    assert.strictEqual(body.length, 6 * chunk.length);
    for (let i = 0; i < 6; i++) assert.ok(body.subarray(i * chunk.length, (i + 1) * chunk.length).equals(chunk), `chunk ${i}`);
    assert.ok(falses >= 5, `write() returned false ${falses} times`);
    assert.ok(drains >= falses, `${drains} drains for ${falses} falses`);
  });

  it('the loop stays responsive while 8 MiB are written in 1 MiB writes', async function () {
    const chunk = Buffer.from(textChunk('lag', 1024 * 1024));
    // What compressing it all inline would block the loop for.
    const t0 = process.hrtime.bigint();
    binding.compressBuffer(1, 9, 4, Buffer.concat(Array(8).fill(chunk)));
    const inlineMs = Number(process.hrtime.bigint() - t0) / 1e6;
    let maxLag = 0;
    let lagTimer = null;
    const { port } = await common.startServer({ compression: { encodings: ['gzip'], level: 9 } }, (req, res) => {
      res.setHeader('Content-Type', 'text/plain');
      let last = Date.now();
      lagTimer = setInterval(() => {
        const now = Date.now();
        maxLag = Math.max(maxLag, now - last);
        last = now;
      }, 1);
      // All eight at once (ignoring backpressure on purpose): inline
      // compression would block for all of them in this one tick.
      for (let i = 0; i < 8; i++) res.write(chunk);
      res.end();
    });
    try {
      const r = await common.httpRequest(port, { path: '/', headers: { 'accept-encoding': 'gzip' }, timeout: 30000 });
      assert.strictEqual(zlib.gunzipSync(r.body).length, 8 * chunk.length);
    } finally {
      clearInterval(lagTimer);
    }
    assert.ok(maxLag < inlineMs / 2, `max loop lag ${maxLag} ms vs ${inlineMs.toFixed(0)} ms inline`);
  });

  it('a client reset mid-job frees everything (streams, compressors, jobs) once the jobs return', async function () {
    const chunk = Buffer.from(textChunk('rst', 2 * 1024 * 1024));
    const before = binding.compressionStats();
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
    }, 10000);
    assert.ok(ok, `leaked: ${JSON.stringify(binding.compressionStats())} vs ${JSON.stringify(before)}`);
    // And the server still serves compressed streams.
    const r = await new Promise((resolve, reject) => {
      http.get({ port, host: '127.0.0.1', path: '/ended', agent: false, headers: { 'accept-encoding': 'gzip' } }, (res) => {
        common.collect(res).then((b) => resolve(b), reject);
      }).on('error', reject);
    });
    assert.strictEqual(zlib.gunzipSync(r).length, 3 * chunk.length);
  });
});
