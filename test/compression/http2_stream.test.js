'use strict';

// HTTP/2 streamed compression off the loop (issue 7): stream.write() and
// compat res.write() with compression go through the stream's
// CompressStream (src/core/compress/compress_stream.h): small writes inline, large
// ones on the threadpool in order, backpressure on the pending input, the
// end (and trailers) after the queued jobs. Node's http2 client + zlib.

const http2 = require('node:http2');
const zlib = require('node:zlib');
const crypto = require('node:crypto');
const common = require('../common');
const { decode, textChunk, waitFor, quietStats, loopLagWhileCompressing } = require('./helpers');
const h2 = require('../http2/h2common');
const { assert } = common;

const maybe = common.isSluice ? describe : describe.skip;

maybe(`compression over HTTP/2: streamed writes off the loop [${common.implName}]`, function () {
  // Deadlines, not latency checks: compression jobs run on threadpool
  // workers at nice +19, which a loaded machine starves (every job of a
  // test once took over 20 s while other processes kept both CPUs busy).
  this.timeout(90000);
  const binding = common.libInternal('common/binding');
  afterEach(common.cleanup);

  // Small (inline) and large (threadpool) writes, strings and Buffers,
  // flushes between.
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

  function coreMixed(stream) {
    stream.respond({ 'content-type': 'text/plain' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'x-check': 'done' }));
    for (const p of parts) {
      if (p.flush) stream.flush();
      else stream.write(p.data);
    }
    stream.end(tail);
  }

  function compatMixed(req, res) {
    res.setHeader('Content-Type', 'text/plain');
    res.addTrailers({ 'x-check': 'done' });
    for (const p of parts) {
      if (p.flush) res.flush();
      else res.write(p.data);
    }
    res.end(tail);
  }

  async function startBoth(options, core, compat) {
    const a = await common.startServer(options);
    a.server.on('stream', core);
    const b = await common.startServer(options, compat);
    return { core: h2.connect(a.port), compat: h2.connect(b.port) };
  }

  it('large writes round-trip byte-exact for each encoding, in order across small/large writes and flush(); trailers come last (core and compat)', async function () {
    const s = await startBoth({ compression: true }, coreMixed, compatMixed);
    for (const api of ['core', 'compat']) {
      const rs = await Promise.all(['gzip', 'deflate', 'br'].map((enc) =>
        h2.request(s[api], { 'accept-encoding': enc }, { timeout: 60000 }).then((r) => ({ enc, r }))));
      for (const { enc, r } of rs) {
        assert.strictEqual(r.headers['content-encoding'], enc, `${api} ${enc}`);
        assert.ok(decode(enc, r.body).equals(expected), `${api} ${enc}: decoded body differs`);
        assert.strictEqual(r.trailers && r.trailers['x-check'], 'done', `${api} ${enc} trailers`);
      }
    }
    assert.ok(await waitFor(() => binding.compressionStats().streams === 0),
      JSON.stringify(binding.compressionStats()));
  });

  it('large string writes (multi-byte UTF-8, handed to the queue or the compressor without another copy) round-trip, plain and compressed', async function () {
    const strs = ['é€😀'.repeat(2000), 'ascii '.repeat(10000), 'ß'.repeat(30000), 'x'.repeat(4095)];
    const expectedStr = strs.join('') + 'end-€';
    const { server, port } = await common.startServer({ compression: { encodings: ['br'] } });
    server.on('stream', (stream) => {
      stream.respond({ 'content-type': 'text/plain; charset=utf-8' });
      for (const t of strs) stream.write(t);
      stream.end('end-€');
    });
    const s = h2.connect(port);
    for (const enc of ['identity', 'br']) {
      const r = await h2.request(s, { 'accept-encoding': enc }, { timeout: 60000 });
      const body = enc === 'br' ? zlib.brotliDecompressSync(r.body) : r.body;
      assert.strictEqual(r.headers['content-encoding'], enc === 'br' ? 'br' : undefined);
      assert.strictEqual(body.toString('utf8'), expectedStr, enc);
    }
  });

  it('flush() after a queued large write: everything written so far decodes before the end (core and compat)', async function () {
    const big = Buffer.from(textChunk('q', 600 * 1024));
    const marker = 'MARKER-after-the-big-write';
    const enders = [];
    const core = (stream, headers) => {
      if (headers[':path'] === '/finish') {
        enders.splice(0).forEach((f) => f());
        stream.respond();
        stream.end('ok');
        return;
      }
      stream.respond({ 'content-type': 'text/plain' });
      stream.write(big);  // on the threadpool
      stream.write(marker);  // queued behind it
      stream.flush();
      enders.push(() => stream.end('tail'));
    };
    const compat = (req, res) => {
      if (req.url === '/finish') {
        enders.splice(0).forEach((f) => f());
        res.end('ok');
        return;
      }
      res.setHeader('Content-Type', 'text/plain');
      res.write(big);
      res.write(marker);
      res.flush();
      enders.push(() => res.end('tail'));
    };
    const s = await startBoth({ compression: { encodings: ['gzip'] } }, core, compat);
    for (const api of ['core', 'compat']) {
      const req = s[api].request({ ':path': '/sse', 'accept-encoding': 'gzip' });
      const gunzip = zlib.createGunzip();
      const chunks = [];
      gunzip.on('data', (d) => chunks.push(d));
      req.pipe(gunzip);
      // Decodable up to the marker while the response is still open.
      const ok = await waitFor(() => Buffer.concat(chunks).length === big.length + marker.length, 30000);
      const sofar = Buffer.concat(chunks);
      assert.ok(ok, `${api}: decoded ${sofar.length} of ${big.length + marker.length} before the end`);
      assert.ok(sofar.equals(Buffer.concat([big, Buffer.from(marker)])), `${api}: order`);
      const ended = common.once(gunzip, 'end', 5000);
      await h2.request(s[api], { ':path': '/finish' });
      await ended;
      assert.strictEqual(Buffer.concat(chunks).toString('latin1').slice(-4), 'tail');
    }
  });

  it('backpressure: compat res.write() of 1 MiB returns false until \'drain\'; a writer that waits gets everything through', async function () {
    // Compresses ~1000:1: the DATA queue stays small, so only the
    // compressor's pending input can hold these writes back.
    const chunk = Buffer.alloc(1024 * 1024, 'backpressure ');
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
    const r = await h2.request(h2.connect(port), { 'accept-encoding': 'gzip' }, { timeout: 60000 });
    const body = zlib.gunzipSync(r.body);
    assert.strictEqual(body.length, 6 * chunk.length);
    for (let i = 0; i < 6; i++) assert.ok(body.subarray(i * chunk.length, (i + 1) * chunk.length).equals(chunk), `chunk ${i}`);
    assert.ok(falses >= 5, `write() returned false ${falses} times`);
    assert.ok(drains >= falses, `${drains} drains for ${falses} falses`);
  });

  it('backpressure: core stream.write() of 2 MiB holds its callback until the job is done; 4 such writes arrive intact', async function () {
    // Compresses ~1000:1 (the DATA queue never fills): only the
    // compressor's pending input holds the callbacks.
    const chunk = Buffer.alloc(2 * 1024 * 1024, 'held callback ');
    const heldAtImmediate = [];
    const { server, port } = await common.startServer({ compression: { encodings: ['gzip'] } });
    server.on('stream', (stream) => {
      stream.respond({ 'content-type': 'text/plain' });
      let n = 0;
      const next = () => {
        if (n === 4) {
          stream.end();
          return;
        }
        n++;
        stream.write(chunk, next);
        // Compressed inline, the callback would have run by now.
        setImmediate(() => heldAtImmediate.push(stream.writableLength));
      };
      next();
    });
    const r = await h2.request(h2.connect(port), { 'accept-encoding': 'gzip' }, { timeout: 60000 });
    const body = zlib.gunzipSync(r.body);
    assert.strictEqual(body.length, 4 * chunk.length);
    for (let i = 0; i < 4; i++) assert.ok(body.subarray(i * chunk.length, (i + 1) * chunk.length).equals(chunk), `chunk ${i}`);
    assert.strictEqual(heldAtImmediate.length, 4);
    assert.ok(heldAtImmediate.filter((n) => n >= chunk.length).length >= 3,
      `write callbacks held: ${heldAtImmediate.join()}`);
  });

  it('the loop stays responsive while 8 MiB are written in 1 MiB writes (compat res)', async function () {
    const r = await loopLagWhileCompressing(async (port) => (await h2.request(h2.connect(port), { 'accept-encoding': 'gzip' }, { timeout: 60000 })).body);
    assert.strictEqual(r.decoded, r.expected);
    assert.ok(r.maxLag < r.inlineMs / 2, `max loop lag ${r.maxLag} ms vs ${r.inlineMs.toFixed(0)} ms inline`);
  });

  it('a reset or session destroy mid-job frees everything (streams, compressors, jobs); the server still serves', async function () {
    const chunk = Buffer.from(textChunk('rst', 2 * 1024 * 1024));
    const before = await quietStats();
    let started = 0;
    const core = (stream, headers) => {
      started++;
      stream.respond({ 'content-type': 'text/plain' });
      stream.write(chunk);
      stream.write(chunk);  // queued behind the first job
      if (headers[':path'] === '/ended') stream.end(chunk);  // the end is queued too
    };
    const compat = (req, res) => {
      started++;
      res.setHeader('Content-Type', 'text/plain');
      res.write(chunk);
      res.write(chunk);
      if (req.url === '/ended') res.end(chunk);
    };
    const a = await common.startServer({ compression: { level: 9 } });
    a.server.on('stream', core);
    const b = await common.startServer({ compression: { level: 9 } }, compat);
    for (let i = 0; i < 8; i++) {
      const session = h2.connect(i % 2 ? a.port : b.port);
      const req = session.request({ ':path': i % 4 < 2 ? '/ended' : '/open', 'accept-encoding': ['gzip', 'br', 'deflate'][i % 3] });
      req.on('error', () => {});
      await common.once(req, 'response', 5000);
      if (i % 3 === 0) session.destroy();
      else req.close(http2.constants.NGHTTP2_CANCEL);
    }
    assert.ok(await waitFor(() => started === 8), `${started} requests started`);
    const ok = await waitFor(() => {
      const st = binding.compressionStats();
      return st.streams === before.streams && st.jobs === before.jobs && st.compressors === before.compressors;
    }, 30000);
    assert.ok(ok, `leaked: ${JSON.stringify(binding.compressionStats())} vs ${JSON.stringify(before)}`);
    for (const port of [a.port, b.port]) {
      const r = await h2.request(h2.connect(port), { ':path': '/ended', 'accept-encoding': 'gzip' }, { timeout: 60000 });
      assert.strictEqual(zlib.gunzipSync(r.body).length, 3 * chunk.length);
    }
  });
});
