'use strict';

// createSecureServer({ http3: true, compression }) on HTTP/3: the same
// option, negotiation and native machinery as HTTP/2
// (src/core/http3/http3_compression.h): whole bodies through a CompressJob
// (inline below 32 KiB, else on the threadpool, content-length = the
// compressed size), streamed bodies through a CompressStream (flush()
// included), file bodies through the pipe's CompressTransform. Checked
// with the project's QUIC client (test/http3/quic_client.js): the frames
// as sent, decoded with node's zlib; and leak checks (compressionStats
// back to its baseline) after client resets, lost connections and a
// server closing its connections with jobs in flight.
// [sluice-only]: node has no HTTP/3 server.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');
const common = require('../common');
const { assert } = common;
const { h3, startH3Server } = require('./h3common');
const { headersFrame, h3Clients } = require('./quic_client');
const { decode, jsonBody, textChunk, waitFor, quietStats, h2App } = require('../compression/helpers');

const run = common.isSluice && h3 ? describe : describe.skip;

const H3_REQUEST_CANCELLED = 0x10c;

run('HTTP/3 response compression [sluice-only]', function () {
  // Deadlines, not latency checks: compression jobs run at nice +19 on
  // the threadpool, which a loaded machine starves.
  this.timeout(90000);
  const binding = common.libInternal('common/binding');
  const { connect } = h3Clients();

  const get = (c, port, p, headers = [], method = 'GET') =>
    common.withTimeout(c.request(method, p, headers, null, port), 30000, `${method} ${p}`);

  const { bodies, params, streamHandler, compatHandler } = h2App();

  // Two servers (the 'stream' API and the compat API); resolves
  // { core: { c, port }, compat: { c, port } } with a client on each.
  async function startBoth(options) {
    const core = await startH3Server(options);
    core.server.on('stream', streamHandler);
    const compat = await startH3Server(options, compatHandler);
    return {
      core: { c: await connect(core.port), port: core.port },
      compat: { c: await connect(compat.port), port: compat.port },
    };
  }

  it('whole and streamed bodies round-trip for br, gzip, deflate (stream and compat API)', async function () {
    const s = await startBoth({ compression: true });
    for (const api of ['core', 'compat']) {
      const { c, port } = s[api];
      for (const enc of ['gzip', 'deflate', 'br']) {
        for (const p of ['/mid', '/big', '/mid?buffer', '/big?buffer']) {
          const r = await get(c, port, p, ['accept-encoding', enc]);
          const what = `${api} ${enc} ${p}`;
          assert.strictEqual(r.status, 200, `${what}: ${JSON.stringify(r.reset || r.closed)}`);
          assert.strictEqual(r.headers['content-encoding'], enc, what);
          assert.strictEqual(r.headers.vary, 'Accept-Encoding', what);
          // A whole body: its compressed length, exactly the DATA bytes.
          assert.strictEqual(Number(r.headers['content-length']), r.body.length, what);
          const name = p.slice(1).split('?')[0];
          assert.ok(r.body.length < bodies[name].length / 2, `${what}: actually compressed`);
          assert.strictEqual(decode(enc, r.body).toString(), bodies[name], what);
        }
        // Streamed (write, then end later): no content-length.
        const r = await get(c, port, '/big?stream', ['accept-encoding', enc]);
        assert.strictEqual(r.headers['content-encoding'], enc);
        assert.strictEqual(r.headers['content-length'], undefined);
        assert.strictEqual(decode(enc, r.body).toString(), bodies.big, `${api} ${enc} stream`);
        // A user content-length stands for the body: the stream API
        // decides at respond() and streams (the length dropped); the
        // compat res.end(body) sends the compressed length instead.
        const l = await get(c, port, '/big?cl', ['accept-encoding', enc]);
        assert.strictEqual(l.headers['content-encoding'], enc);
        assert.strictEqual(l.headers['content-length'], api === 'core' ? undefined : String(l.body.length),
          `${api} ${enc} cl`);
        assert.strictEqual(decode(enc, l.body).toString(), bodies.big, `${api} ${enc} cl`);
      }
    }
  });

  it('negotiates Accept-Encoding as HTTP/1.1 and HTTP/2 do; none → plain', async function () {
    const s = await startBoth({ compression: true });
    const table = [
      ['gzip, deflate, br', 'br'],
      ['br;q=0.5, gzip', 'gzip'],
      ['gzip;q=0.8, deflate;q=0.9', 'deflate'],
      ['br;q=0, *', 'gzip'],
      ['gzip;q=0.5, identity', undefined],
      ['identity', undefined],
      [undefined, undefined],
    ];
    for (const api of ['core', 'compat']) {
      const { c, port } = s[api];
      for (const [ae, want] of table) {
        const r = await get(c, port, '/mid', ae === undefined ? [] : ['accept-encoding', ae]);
        assert.strictEqual(r.headers['content-encoding'], want, `${api} ${ae}`);
        assert.strictEqual(r.headers.vary, 'Accept-Encoding', `${api} ${ae}`);
        if (want === undefined && api === 'compat') assert.strictEqual(r.headers['content-length'], String(bodies.mid.length));
        assert.strictEqual(decode(want, r.body).toString(), bodies.mid, `${api} ${ae}`);
      }
    }
  });

  it('threshold, content type, 206, HEAD, 204, 304, content-encoding and compress:false are left alone', async function () {
    const s = await startBoth({ compression: true });
    const ae = ['accept-encoding', 'gzip, br'];
    for (const api of ['core', 'compat']) {
      const { c, port } = s[api];
      // Under the threshold (whole body; and by content-length): as it is, with vary.
      for (const p of ['/small', '/small?cl', '/small?buffer']) {
        const r = await get(c, port, p, ae);
        assert.strictEqual(r.headers['content-encoding'], undefined, `${api} ${p}`);
        assert.strictEqual(r.headers.vary, 'Accept-Encoding', `${api} ${p}`);
        assert.strictEqual(r.headers['content-length'], String(bodies.small.length), `${api} ${p}`);
        assert.strictEqual(r.body.toString(), bodies.small);
      }
      // Not compressible: no header added.
      let r = await get(c, port, '/mid?type=image/png', ae);
      assert.strictEqual(r.headers['content-encoding'], undefined);
      assert.strictEqual(r.headers.vary, undefined);
      assert.strictEqual(r.body.toString(), bodies.mid);
      // Partial content: its ranges are offsets into the identity body.
      r = await get(c, port, '/mid?status=206', ae);
      assert.strictEqual(r.status, 206);
      assert.strictEqual(r.headers['content-encoding'], undefined, `${api} 206`);
      assert.strictEqual(r.body.toString(), bodies.mid);
      // An existing content-encoding is left alone.
      r = await get(c, port, '/mid?ce=x-custom', ae);
      assert.strictEqual(r.headers['content-encoding'], 'x-custom');
      assert.strictEqual(r.body.toString(), bodies.mid);
      // Opt-out.
      r = await get(c, port, '/mid?optout', ae);
      assert.strictEqual(r.headers['content-encoding'], undefined, `${api} optout`);
      assert.strictEqual(r.body.toString(), bodies.mid);
      // HEAD, 204, 304: no body, no coding.
      r = await get(c, port, '/mid', ae, 'HEAD');
      assert.strictEqual(r.headers['content-encoding'], undefined, `${api} HEAD`);
      assert.strictEqual(r.frames.filter((f) => f.type === 0).length, 0, `${api} HEAD: no DATA`);
      for (const st of [204, 304]) {
        r = await get(c, port, `/mid?status=${st}`, ae);
        assert.strictEqual(r.status, st);
        assert.strictEqual(r.headers['content-encoding'], undefined, `${api} ${st}`);
        assert.strictEqual(r.frames.filter((f) => f.type === 0).length, 0, `${api} ${st}: no DATA`);
      }
    }
  });

  it('trailers follow a compressed body (stream waitForTrailers, compat addTrailers; inline, threadpool, streamed)', async function () {
    const core = await startH3Server({ compression: true });
    core.server.on('stream', (stream, headers) => {
      const { name, q } = params(headers[':path']);
      stream.on('wantTrailers', () => stream.sendTrailers({ 'x-sum': String(bodies[name].length) }));
      stream.respond({ 'content-type': 'application/json' }, { waitForTrailers: true });
      if (q.has('stream')) {
        stream.write(bodies[name].slice(0, 100));
        setImmediate(() => stream.end(bodies[name].slice(100)));
      } else {
        stream.end(bodies[name]);
      }
    });
    const compat = await startH3Server({ compression: true }, (req, res) => {
      const { name, q } = params(req.url);
      res.setHeader('Content-Type', 'application/json');
      res.addTrailers({ 'x-sum': String(bodies[name].length) });
      if (q.has('stream')) {
        res.write(bodies[name].slice(0, 100));
        setImmediate(() => res.end(bodies[name].slice(100)));
      } else {
        res.end(bodies[name]);
      }
    });
    for (const port of [core.port, compat.port]) {
      const c = await connect(port);
      for (const p of ['/mid', '/big', '/big?stream']) {
        const name = params(p).name;
        const r = await get(c, port, p, ['accept-encoding', 'gzip']);
        assert.strictEqual(r.headers['content-encoding'], 'gzip', p);
        assert.strictEqual(zlib.gunzipSync(r.body).toString(), bodies[name], p);
        assert.deepStrictEqual(r.trailers, { 'x-sum': String(bodies[name].length) }, p);
        // HEADERS, DATA..., HEADERS: the trailers after the last DATA.
        const types = r.frames.map((f) => f.type);
        assert.strictEqual(types[0], 0x1, p);
        assert.strictEqual(types[types.length - 1], 0x1, p);
        assert.ok(types.slice(1, -1).every((t) => t === 0x0), `${p}: ${types}`);
      }
    }
  });

  it('flush() sends each event before the next is written (compat res.flush, stream.flush; gzip, br, deflate)', async function () {
    // The server writes event i+1 only once the client has decoded event
    // i from what arrived so far: without a working flush the event sits
    // in the compressor and this times out.
    const events = 4;
    let next = null;
    const write = async (out) => {
      for (let i = 0; i < events; i++) {
        out.write(`data: event ${i} ${'x'.repeat(200)}\n\n`);
        out.flush();
        if (i < events - 1) await new Promise((resolve) => { next = resolve; });
      }
      out.end();
    };
    const compat = await startH3Server({ compression: true }, (req, res) => {
      res.setHeader('Content-Type', 'text/event-stream');
      write(res);
    });
    const core = await startH3Server({ compression: true });
    core.server.on('stream', (stream) => {
      stream.respond({ 'content-type': 'text/event-stream' });
      write(stream);
    });
    // Decodes a prefix of a compressed stream (what arrived so far).
    const partial = (enc, buf) => {
      try {
        if (enc === 'br') return zlib.brotliDecompressSync(buf, { finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH }).toString();
        const o = { finishFlush: zlib.constants.Z_SYNC_FLUSH };
        return (enc === 'gzip' ? zlib.gunzipSync(buf, o) : zlib.inflateSync(buf, o)).toString();
      } catch (e) {
        return '';
      }
    };
    for (const [port, enc] of [[compat.port, 'gzip'], [core.port, 'br'], [compat.port, 'deflate'], [core.port, 'gzip']]) {
      const c = await connect(port);
      const req = c.request('GET', '/events', ['accept-encoding', enc], null, port);
      const st = c.streams.get(req.id);
      for (let i = 0; i < events - 1; i++) {
        const ok = await waitFor(() => {
          const frames = require('./quic_client').parseFrames(Buffer.concat(st.chunks));
          const body = Buffer.concat(frames.filter((f) => f.type === 0).map((f) => f.payload));
          return partial(enc, body).includes(`data: event ${i} `);
        }, 10000);
        assert.ok(ok, `${enc}: event ${i} arrived decodable before the next was written`);
        next();
      }
      const r = await common.withTimeout(req, 10000, `events over ${enc}`);
      assert.strictEqual(r.headers['content-encoding'], enc);
      const lines = decode(enc, r.body).toString().split('\n\n').filter(Boolean);
      assert.strictEqual(lines.length, events);
      assert.ok(lines.every((l, i) => l.startsWith(`data: event ${i} `)));
    }
  });

  it('stream.write() past the compressor\'s bound reports backpressure and drains (8 x 1 MiB, gzip)', async function () {
    const chunk = textChunk('bp', 1024 * 1024);
    let sawFalse = false;
    const { server, port } = await startH3Server({ compression: { encodings: ['gzip'] } });
    server.on('stream', async (stream) => {
      stream.respond({ 'content-type': 'text/plain' });
      for (let i = 0; i < 8; i++) {
        if (!stream.write(chunk)) {
          sawFalse = true;
          await common.once(stream, 'drain', 30000, 'drain');
        }
      }
      stream.end();
    });
    const c = await connect(port);
    const r = await get(c, port, '/', ['accept-encoding', 'gzip']);
    assert.strictEqual(r.headers['content-encoding'], 'gzip');
    assert.strictEqual(zlib.gunzipSync(r.body).toString(), chunk.repeat(8));
    assert.ok(sawFalse, 'write() returned false at least once');
  });

  describe('files', function () {
    let dir;
    let text;
    before(function () {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-h3cz-'));
      const lines = [];
      for (let i = 0; lines.length < 14000; i++) {
        lines.push(`2026-12-02T15:${String(i % 60).padStart(2, '0')}:00Z GET /api/items/${i * 31 % 977} 200 ${i % 500}ms`);
      }
      text = Buffer.from(lines.join('\n'));
      fs.writeFileSync(path.join(dir, 'log.txt'), text);
      fs.writeFileSync(path.join(dir, 'tiny.txt'), 'tiny');
    });
    after(function () { fs.rmSync(dir, { recursive: true, force: true }); });

    async function startFiles(options) {
      const core = await startH3Server(options);
      core.server.on('stream', (stream, headers) => {
        stream.respondWithFile(path.join(dir, params(headers[':path']).name), { 'content-type': 'text/plain' });
      });
      const compat = await startH3Server(options, (req, res) => {
        res.respondWithFile(path.join(dir, params(req.url).name), { 'content-type': 'text/plain' });
      });
      return [core.port, compat.port];
    }

    it('respondWithFile bodies go through the native compressor intact (stream and compat, each encoding)', async function () {
      const ports = await startFiles({ compression: true });
      for (const port of ports) {
        const c = await connect(port);
        for (const enc of ['gzip', 'br', 'deflate']) {
          const r = await get(c, port, '/log.txt', ['accept-encoding', enc]);
          assert.strictEqual(r.status, 200, JSON.stringify(r.reset || r.closed));
          assert.strictEqual(r.headers['content-encoding'], enc, enc);
          assert.strictEqual(r.headers['content-length'], undefined);
          assert.strictEqual(r.headers.vary, 'Accept-Encoding');
          assert.ok(r.body.length < text.length / 3);
          assert.strictEqual(common.sha256(decode(enc, r.body)), common.sha256(text), enc);
        }
        // Below the threshold, HEAD, not accepted: the file as it is, with its length.
        let r = await get(c, port, '/tiny.txt', ['accept-encoding', 'gzip']);
        assert.strictEqual(r.headers['content-encoding'], undefined);
        assert.strictEqual(r.body.toString(), 'tiny');
        r = await get(c, port, '/log.txt', ['accept-encoding', 'gzip'], 'HEAD');
        assert.strictEqual(r.headers['content-encoding'], undefined);
        assert.strictEqual(Number(r.headers['content-length']), text.length);
        r = await get(c, port, '/log.txt');
        assert.strictEqual(r.headers['content-encoding'], undefined);
        assert.strictEqual(Number(r.headers['content-length']), text.length);
        assert.ok(r.body.equals(text));
      }
    });

    it('a client reset or a lost connection mid-file-compression frees transforms and sources', async function () {
      const before = await quietStats();
      const ports = await startFiles({ compression: { encodings: ['gzip'], level: 9 } });
      let cutInFlight = 0;
      for (let i = 0; i < 6; i++) {
        const port = ports[i % 2];
        const c = await connect(port);
        const req = c.raw(headersFrame([':method', 'GET', ':scheme', 'https', ':authority', 'localhost',
          ':path', '/log.txt', 'accept-encoding', 'gzip']), { noFin: true });
        const st = c.streams.get(req.id);
        await waitFor(() => st.chunks.length > 0, 10000);
        if (binding.compressionStats().transforms > before.transforms) cutInFlight++;
        if (i < 3) c.native.reset(req.id, H3_REQUEST_CANCELLED);
        else c.close();
      }
      // At least one cut met a transform at work (how many depends on the
      // machine's speed and load; the leak check below is the point).
      assert.ok(cutInFlight >= 1, `a compressing file body was cut ${cutInFlight} of 6 times`);
      const ok = await waitFor(() => {
        const s = binding.compressionStats();
        return s.transforms === before.transforms && s.compressors === before.compressors &&
          binding.NativeFile.stats().sources === 0;
      }, 30000);
      assert.ok(ok, `leaked: ${JSON.stringify(binding.compressionStats())} ${JSON.stringify(binding.NativeFile.stats())}`);
      const c = await connect(ports[0]);
      const r = await get(c, ports[0], '/log.txt', ['accept-encoding', 'gzip']);
      assert.ok(zlib.gunzipSync(r.body).equals(text));
    });
  });

  it('a client reset, a lost connection or closeAllConnections() with jobs in flight frees jobs and compressors', async function () {
    const huge = jsonBody(4 * 1024 * 1024);
    const before = await quietStats();
    let started = 0;
    const pump = (out) => {
      const t = setInterval(() => {
        if (out.destroyed || out.writableEnded) { clearInterval(t); return; }
        out.write(huge.slice(0, 100000));
      }, 5);
      out.on('close', () => clearInterval(t));
    };
    const opts = { compression: { level: 9 } };
    const core = await startH3Server(opts);
    core.server.on('stream', (stream, headers) => {
      started++;
      stream.on('error', () => {});
      stream.respond({ 'content-type': 'application/json' });
      if (headers[':path'] === '/stream') pump(stream);
      else stream.end(huge);
    });
    const compat = await startH3Server(opts, (req, res) => {
      started++;
      res.setHeader('Content-Type', 'application/json');
      if (req.url === '/stream') {
        res.write(huge.slice(0, 100000));
        pump(res);
      } else {
        res.end(huge);
      }
    });
    // While work was alive at the moment of the cut.
    let cutInFlight = 0;
    for (let i = 0; i < 12; i++) {
      const { server, port } = i % 2 ? compat : core;
      const c = await connect(port);
      const want = started + 1;
      const req = c.raw(headersFrame([':method', 'GET', ':scheme', 'https', ':authority', 'localhost',
        ':path', i % 4 < 2 ? '/huge' : '/stream', 'accept-encoding', ['gzip', 'br'][(i >> 2) % 2]]), { noFin: true });
      await waitFor(() => started >= want, 10000);
      if (i % 4 >= 2) await common.sleep(30);  // a streamed body under way
      const s = binding.compressionStats();
      if (s.jobs > before.jobs || s.streams > before.streams) cutInFlight++;
      if (i < 4) c.native.reset(req.id, H3_REQUEST_CANCELLED);
      else if (i < 8) c.close();
      else server.closeAllConnections();
    }
    // As above: at least one cut met work in flight, however fast the machine.
    assert.ok(cutInFlight >= 1, `compression work was alive at ${cutInFlight} of 12 cuts`);
    const ok = await waitFor(() => {
      const s = binding.compressionStats();
      return s.jobs === before.jobs && s.compressors === before.compressors && s.streams === before.streams;
    }, 30000);
    assert.ok(ok, `leaked: ${JSON.stringify(binding.compressionStats())} vs ${JSON.stringify(before)}`);
    for (const { port } of [core, compat]) {
      const c = await connect(port);
      const r = await get(c, port, '/huge', ['accept-encoding', 'gzip']);
      assert.strictEqual(zlib.gunzipSync(r.body).toString(), huge);
    }
  });
});
