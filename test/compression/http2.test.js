'use strict';

// createServer({ compression }) over HTTP/2 (issue 7): the 'stream' API,
// the compat request/response API and file bodies, against node's http2
// client + zlib, and curl --http2-prior-knowledge.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');
const crypto = require('node:crypto');
const common = require('../common');
const { decode, jsonBody, waitFor, quietStats, h2App } = require('./helpers');
const h2 = require('../http2/h2common');
const { assert } = common;

const maybe = common.isSluice ? describe : describe.skip;

maybe(`compression over HTTP/2 [${common.implName}]`, function () {
  // Deadlines, not latency checks: compression jobs run on threadpool
  // workers at nice +19, which a loaded machine starves (every job of a
  // test once took over 20 s while other processes kept both CPUs busy).
  this.timeout(90000);
  const binding = common.libInternal('common/binding');
  afterEach(common.cleanup);

  const { bodies, params, streamHandler, compatHandler } = h2App();

  async function startBoth(options) {
    const core = await common.startServer(options);
    core.server.on('stream', streamHandler);
    const compat = await common.startServer(options, compatHandler);
    return { core: h2.connect(core.port), compat: h2.connect(compat.port) };
  }

  it('round-trips whole and streamed bodies byte-exact for br, gzip, deflate (core and compat API)', async function () {
    const s = await startBoth({ compression: true });
    for (const api of ['core', 'compat']) {
      for (const enc of ['gzip', 'deflate', 'br']) {
        for (const p of ['/mid', '/big', '/mid?buffer', '/big?buffer']) {
          const r = await h2.request(s[api], { ':path': p, 'accept-encoding': enc });
          const what = `${api} ${enc} ${p}`;
          assert.strictEqual(r.headers[':status'], 200, what);
          assert.strictEqual(r.headers['content-encoding'], enc, what);
          assert.strictEqual(r.headers.vary, 'Accept-Encoding', what);
          // A whole body: its compressed length.
          assert.strictEqual(Number(r.headers['content-length']), r.body.length, what);
          const name = p.slice(1).split('?')[0];
          assert.ok(r.body.length < bodies[name].length / 2, 'actually compressed');
          assert.strictEqual(decode(enc, r.body).toString(), bodies[name], what);
        }
        // Streamed (write, then end later): no content-length.
        const r = await h2.request(s[api], { ':path': '/big?stream', 'accept-encoding': enc });
        assert.strictEqual(r.headers['content-encoding'], enc);
        assert.strictEqual(r.headers['content-length'], undefined);
        assert.strictEqual(decode(enc, r.body).toString(), bodies.big, `${api} ${enc} stream`);
        // A user content-length stands for the body: decided at respond,
        // compressed as a stream, the length dropped.
        const c = await h2.request(s[api], { ':path': '/big?cl', 'accept-encoding': enc });
        assert.strictEqual(c.headers['content-encoding'], enc);
        if (api === 'core') assert.strictEqual(c.headers['content-length'], undefined);
        assert.strictEqual(decode(enc, c.body).toString(), bodies.big, `${api} ${enc} cl`);
      }
    }
  });

  it('negotiates Accept-Encoding q-values as HTTP/1.1 does', async function () {
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
      for (const [ae, want] of table) {
        const h = { ':path': '/mid' };
        if (ae !== undefined) h['accept-encoding'] = ae;
        const r = await h2.request(s[api], h);
        assert.strictEqual(r.headers['content-encoding'], want, `${api} ${ae}`);
        assert.strictEqual(r.headers.vary, 'Accept-Encoding', `${api} ${ae}`);
        assert.strictEqual(decode(want, r.body).toString(), bodies.mid);
      }
    }
  });

  it('threshold and content-type filter; vary merges; HEAD, 204, 304, content-encoding, no-transform untouched; compress:false opts out', async function () {
    const s = await startBoth({ compression: true });
    const ae = { 'accept-encoding': 'gzip, br' };
    for (const api of ['core', 'compat']) {
      // Under the threshold (whole body; and by content-length): as it is, with vary.
      for (const p of ['/small', '/small?cl', '/small?buffer']) {
        const r = await h2.request(s[api], { ':path': p, ...ae });
        assert.strictEqual(r.headers['content-encoding'], undefined, `${api} ${p}`);
        assert.strictEqual(r.headers.vary, 'Accept-Encoding', `${api} ${p}`);
        assert.strictEqual(r.body.toString(), bodies.small);
      }
      // Not compressible: no header added.
      let r = await h2.request(s[api], { ':path': '/mid?type=image/png', ...ae });
      assert.strictEqual(r.headers['content-encoding'], undefined);
      assert.strictEqual(r.headers.vary, undefined);
      assert.strictEqual(r.body.toString(), bodies.mid);
      r = await h2.request(s[api], { ':path': '/mid?type=text/html', ...ae });
      assert.strictEqual(r.headers['content-encoding'], 'br');
      // An existing content-encoding is left alone.
      r = await h2.request(s[api], { ':path': '/mid?ce=x-custom', ...ae });
      assert.strictEqual(r.headers['content-encoding'], 'x-custom');
      assert.strictEqual(r.body.toString(), bodies.mid);
      // Opt-out.
      r = await h2.request(s[api], { ':path': '/mid?optout', ...ae });
      assert.strictEqual(r.headers['content-encoding'], undefined, `${api} optout`);
      assert.strictEqual(r.body.toString(), bodies.mid);
      // HEAD, 204, 304: no body, no coding.
      r = await h2.request(s[api], { ':path': '/mid', ':method': 'HEAD', ...ae });
      assert.strictEqual(r.headers['content-encoding'], undefined, `${api} HEAD`);
      assert.strictEqual(r.body.length, 0);
      for (const st of [204, 304]) {
        r = await h2.request(s[api], { ':path': `/mid?status=${st}`, ...ae });
        assert.strictEqual(r.headers[':status'], st);
        assert.strictEqual(r.headers['content-encoding'], undefined, `${api} ${st}`);
        assert.strictEqual(r.body.length, 0);
      }
    }
    // Core: vary merged with the handler's; cache-control no-transform.
    const { server, port } = await common.startServer({ compression: true });
    server.on('stream', (stream, headers) => {
      const h = { 'content-type': 'text/plain', vary: 'Origin' };
      if (headers[':path'] === '/nt') h['cache-control'] = 'no-transform';
      stream.respond(h);
      stream.end(bodies.mid);
    });
    const c = h2.connect(port);
    let r = await h2.request(c, { ':path': '/', ...ae });
    assert.strictEqual(r.headers.vary, 'Origin, Accept-Encoding');
    assert.strictEqual(r.headers['content-encoding'], 'br');
    r = await h2.request(c, { ':path': '/nt', ...ae });
    assert.strictEqual(r.headers['content-encoding'], undefined);
    assert.strictEqual(r.body.toString(), bodies.mid);
  });

  it('trailers follow a compressed whole body (core waitForTrailers, compat addTrailers; inline and threadpool)', async function () {
    const core = await common.startServer({ compression: true });
    core.server.on('stream', (stream, headers) => {
      const name = headers[':path'].slice(1);
      stream.on('wantTrailers', () => stream.sendTrailers({ 'x-sum': String(bodies[name].length) }));
      stream.respond({ 'content-type': 'application/json' }, { waitForTrailers: true });
      stream.end(bodies[name]);
    });
    const compat = await common.startServer({ compression: true }, (req, res) => {
      const name = req.url.slice(1);
      res.setHeader('Content-Type', 'application/json');
      res.addTrailers({ 'x-sum': String(bodies[name].length) });
      res.end(bodies[name]);
    });
    for (const port of [core.port, compat.port]) {
      const s = h2.connect(port);
      for (const name of ['mid', 'big']) {
        const r = await h2.request(s, { ':path': `/${name}`, 'accept-encoding': 'gzip' });
        assert.strictEqual(r.headers['content-encoding'], 'gzip');
        assert.strictEqual(zlib.gunzipSync(r.body).toString(), bodies[name]);
        assert.strictEqual(r.trailers && r.trailers['x-sum'], String(bodies[name].length), name);
      }
    }
  });

  it('a streamed body with flush() delivers each event before the next is written (compat res.flush, stream.flush)', async function () {
    // The server writes event i+1 only when the client asks for it, which
    // it does once it has decoded event i: without a working flush the
    // event sits in the compressor and this never finishes.
    const waiting = new Map();  // path → resolve of the next event
    const events = 5;
    const write = async (out) => {
      for (let i = 0; i < events; i++) {
        out.write(`data: event ${i} ${'x'.repeat(200)}\n\n`);
        out.flush();
        if (i < events - 1) await new Promise((resolve) => waiting.set(out._key, resolve));
      }
      out.end();
    };
    const { server: sc, port: pc } = await common.startServer({ compression: true }, (req, res) => {
      if (req.url === '/next') {
        waiting.get('compat')();
        res.end('ok');
        return;
      }
      res.setHeader('Content-Type', 'text/event-stream');
      res._key = 'compat';
      write(res);
    });
    const { server: ss, port: ps } = await common.startServer({ compression: true });
    ss.on('stream', (stream, headers) => {
      if (headers[':path'] === '/next') {
        waiting.get('core')();
        stream.respond({ 'content-type': 'text/plain' }, { endStream: true });
        return;
      }
      stream.respond({ 'content-type': 'text/event-stream' });
      stream._key = 'core';
      write(stream);
    });
    void sc;
    for (const [port, enc] of [[pc, 'gzip'], [ps, 'br'], [pc, 'deflate'], [ps, 'gzip']]) {
      const session = h2.connect(port);
      const got = await common.withTimeout(new Promise((resolve, reject) => {
        const req = session.request({ ':path': '/events', 'accept-encoding': enc });
        let text = '';
        let seen = 0;
        req.on('response', (h) => {
          if (h['content-encoding'] !== enc) reject(new Error(`content-encoding ${h['content-encoding']}`));
          const dec = enc === 'br' ? zlib.createBrotliDecompress() : enc === 'gzip' ? zlib.createGunzip() : zlib.createInflate();
          req.pipe(dec);
          dec.on('data', (d) => {
            text += d;
            const n = (text.match(/\n\n/g) || []).length;
            while (seen < n) {
              seen++;
              if (seen < events) session.request({ ':path': '/next' }).resume();
            }
          });
          dec.on('end', () => resolve(text));
          dec.on('error', reject);
        });
        req.on('error', reject);
      }), 5000, `events over ${enc}`);
      const lines = got.split('\n\n').filter(Boolean);
      assert.strictEqual(lines.length, events);
      assert.ok(lines.every((l, i) => l.startsWith(`data: event ${i} `)));
    }
  });

  describe('files', function () {
    let dir;
    let text;
    before(function () {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-h2cz-'));
      const lines = [];
      for (let i = 0; lines.length < 14000; i++) {
        lines.push(`2026-12-02T15:${String(i % 60).padStart(2, '0')}:00Z GET /api/items/${i * 31 % 977} 200 ${i % 500}ms`);
      }
      text = Buffer.from(lines.join('\n'));
      fs.writeFileSync(path.join(dir, 'log.txt'), text);
      fs.writeFileSync(path.join(dir, 'tiny.txt'), 'tiny');
      fs.writeFileSync(path.join(dir, 'pre.js'), text);
      fs.writeFileSync(path.join(dir, 'pre.js.br'), zlib.brotliCompressSync(text));
      fs.writeFileSync(path.join(dir, 'pre.js.gz'), zlib.gzipSync(text));
    });
    after(function () { fs.rmSync(dir, { recursive: true, force: true }); });

    function typeOf(name) {
      return name.endsWith('.js') ? 'application/javascript' : 'text/plain';
    }

    async function startFiles(options) {
      const core = await common.startServer(options);
      core.server.on('stream', (stream, headers) => {
        const { name, q } = params(headers[':path']);
        stream.respondWithFile(path.join(dir, name), { 'content-type': typeOf(name) },
          { precompressed: q.has('pre') });
      });
      const compat = await common.startServer(options, (req, res) => {
        const { name, q } = params(req.url);
        res.respondWithFile(path.join(dir, name), { 'content-type': typeOf(name) },
          { precompressed: q.has('pre') });
      });
      return { core: h2.connect(core.port), compat: h2.connect(compat.port), ports: [core.port, compat.port] };
    }

    it('respondWithFile bodies go through the native compressor intact (core and compat, each encoding)', async function () {
      const s = await startFiles({ compression: true });
      for (const api of ['core', 'compat']) {
        for (const enc of ['gzip', 'br', 'deflate']) {
          const r = await h2.request(s[api], { ':path': '/log.txt', 'accept-encoding': enc });
          assert.strictEqual(r.headers['content-encoding'], enc, `${api} ${enc}`);
          assert.strictEqual(r.headers['content-length'], undefined);
          assert.strictEqual(r.headers.vary, 'Accept-Encoding');
          assert.ok(r.body.length < text.length / 3);
          assert.strictEqual(common.sha256(decode(enc, r.body)), common.sha256(text), `${api} ${enc}`);
        }
        // Below the threshold, HEAD, not accepted: the file as it is, with its length.
        let r = await h2.request(s[api], { ':path': '/tiny.txt', 'accept-encoding': 'gzip' });
        assert.strictEqual(r.headers['content-encoding'], undefined);
        assert.strictEqual(r.body.toString(), 'tiny');
        r = await h2.request(s[api], { ':path': '/log.txt', ':method': 'HEAD', 'accept-encoding': 'gzip' });
        assert.strictEqual(r.headers['content-encoding'], undefined);
        assert.strictEqual(Number(r.headers['content-length']), text.length);
        r = await h2.request(s[api], { ':path': '/log.txt' });
        assert.strictEqual(r.headers['content-encoding'], undefined);
        assert.strictEqual(Number(r.headers['content-length']), text.length);
        assert.ok(r.body.equals(text));
      }
    });

    it('precompressed: true serves path.br / path.gz with the sibling\'s content-length (core and compat)', async function () {
      const s = await startFiles();  // works without the compression option
      const pre = (n) => fs.readFileSync(path.join(dir, n));
      for (const api of ['core', 'compat']) {
        let r = await h2.request(s[api], { ':path': '/pre.js?pre', 'accept-encoding': 'gzip, br' });
        assert.strictEqual(r.headers['content-encoding'], 'br', api);
        assert.strictEqual(Number(r.headers['content-length']), pre('pre.js.br').length);
        assert.strictEqual(r.headers['content-type'], 'application/javascript');
        assert.strictEqual(r.headers.vary, 'Accept-Encoding');
        assert.ok(zlib.brotliDecompressSync(r.body).equals(text));
        r = await h2.request(s[api], { ':path': '/pre.js?pre', 'accept-encoding': 'gzip' });
        assert.strictEqual(r.headers['content-encoding'], 'gzip');
        assert.strictEqual(Number(r.headers['content-length']), pre('pre.js.gz').length);
        assert.ok(zlib.gunzipSync(r.body).equals(text));
        r = await h2.request(s[api], { ':path': '/pre.js?pre' });
        assert.strictEqual(r.headers['content-encoding'], undefined);
        assert.strictEqual(Number(r.headers['content-length']), text.length);
        assert.ok(r.body.equals(text));
      }
    });

    it('curl --http2-prior-knowledge --compressed decodes a compressed file and a whole body', async function () {
      const s = await startFiles({ compression: true });
      const c = await common.curl(['--http2-prior-knowledge', '--compressed', '-D', '-', '-o', '-',
        `http://127.0.0.1:${s.ports[0]}/log.txt`]);
      assert.strictEqual(c.code, 0, c.stderr);
      const out = c.stdout;
      const i = out.indexOf('\r\n\r\n');
      assert.match(out.subarray(0, i).toString(), /^HTTP\/2 200/);
      assert.match(out.subarray(0, i).toString(), /content-encoding: (br|gzip|deflate)/);
      assert.strictEqual(common.sha256(out.subarray(i + 4)), common.sha256(text));
      // A whole body from the 'stream' API (threadpool size), br when curl has it.
      const { server, port } = await common.startServer({ compression: true });
      server.on('stream', (stream) => {
        stream.respond({ 'content-type': 'application/json' });
        stream.end(bodies.big);
      });
      const w = await common.curl(['--http2-prior-knowledge', '--compressed', '-D', '-', '-o', '-',
        `http://127.0.0.1:${port}/`]);
      const wo = w.stdout;
      const j = wo.indexOf('\r\n\r\n');
      assert.match(wo.subarray(0, j).toString(), /content-encoding: (br|gzip|deflate)/);
      assert.strictEqual(wo.subarray(j + 4).toString(), bodies.big);
    });

    it('a client reset or session destroy mid-file-compression frees transforms and sources', async function () {
      const before = await quietStats();
      const s = await startFiles({ compression: { encodings: ['gzip'], level: 9 } });
      for (let i = 0; i < 8; i++) {
        const session = h2.connect(s.ports[i % 2]);
        const req = session.request({ ':path': '/log.txt', 'accept-encoding': 'gzip' });
        req.on('error', () => {});
        await common.once(req, 'response');
        await common.sleep(i * 2);
        if (i % 4 < 2) req.close(0x8); else session.destroy();
      }
      const ok = await waitFor(() => {
        const st = binding.compressionStats();
        return st.transforms === before.transforms && st.compressors === before.compressors &&
          binding.NativeFile.stats().sources === 0;
      }, 30000);
      assert.ok(ok, `leaked: ${JSON.stringify(binding.compressionStats())} ${JSON.stringify(binding.NativeFile.stats())}`);
      const r = await h2.request(s.core, { ':path': '/log.txt', 'accept-encoding': 'gzip' });
      assert.ok(zlib.gunzipSync(r.body).equals(text));
    });
  });

  it('a client reset or session destroy mid-compression frees jobs and compressors; the server keeps serving', async function () {
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
    const core = await common.startServer({ compression: true });
    core.server.on('stream', (stream, headers) => {
      started++;
      stream.respond({ 'content-type': 'application/json' });
      if (headers[':path'] === '/stream') pump(stream);
      else stream.end(huge);
    });
    const compat = await common.startServer({ compression: true }, (req, res) => {
      started++;
      res.setHeader('Content-Type', 'application/json');
      if (req.url === '/stream') {
        res.write(huge.slice(0, 100000));
        pump(res);
      } else {
        res.end(huge);
      }
    });
    for (let i = 0; i < 16; i++) {
      const port = i % 2 ? compat.port : core.port;
      const session = h2.connect(port);
      const req = session.request({ ':path': i % 4 < 2 ? '/huge' : '/stream', 'accept-encoding': ['gzip', 'br'][(i >> 1) % 2] });
      req.on('error', () => {});
      await common.sleep(i % 4 < 2 ? 2 + i : 30);
      if (i < 8) req.close(0x8); else session.destroy();
    }
    await waitFor(() => started === 16);
    const ok = await waitFor(() => {
      const st = binding.compressionStats();
      return st.jobs === before.jobs && st.compressors === before.compressors;
    }, 30000);
    assert.ok(ok, `leaked: ${JSON.stringify(binding.compressionStats())} vs ${JSON.stringify(before)}`);
    for (const port of [core.port, compat.port]) {
      const r = await h2.request(h2.connect(port), { ':path': '/huge', 'accept-encoding': 'gzip' });
      assert.strictEqual(zlib.gunzipSync(r.body).toString(), huge);
    }
  });
});
