'use strict';

// createServer({ compression }) on HTTP/1.1 (issue 7), against real
// clients: node's http client + zlib, curl --compressed, raw sockets.

const net = require('node:net');
const http = require('node:http');
const zlib = require('node:zlib');
const crypto = require('node:crypto');
const common = require('../common');
const { decode, jsonBody, waitFor, quietStats } = require('./helpers');
const { assert } = common;

const maybe = common.isSluice ? describe : describe.skip;

maybe(`compression [${common.implName}]`, function () {
  // Deadlines, not latency checks: compression jobs run on threadpool
  // workers at nice +19, which a loaded machine starves (every job of a
  // test once took over 20 s while other processes kept both CPUs busy).
  this.timeout(90000);
  const binding = common.libInternal('common/binding');
  const { negotiate, CODING } = common.libInternal('compress/compression');
  afterEach(common.cleanup);

  const bodies = {
    small: jsonBody(600),          // under the default threshold
    mid: jsonBody(8 * 1024),       // compressed inline
    big: jsonBody(300 * 1024),     // compressed on the threadpool
    bin: crypto.randomBytes(100 * 1024),
  };

  function handler(req, res) {
    const u = new URL(req.url, 'http://x');
    const name = u.pathname.slice(1);
    if (u.searchParams.has('type')) res.setHeader('Content-Type', u.searchParams.get('type'));
    else res.setHeader('Content-Type', 'application/json; charset=utf-8');
    if (u.searchParams.has('status')) res.statusCode = Number(u.searchParams.get('status'));
    if (u.searchParams.has('optout')) res.compress = false;
    if (u.searchParams.has('ce')) res.setHeader('Content-Encoding', u.searchParams.get('ce'));
    if (u.searchParams.has('vary')) res.setHeader('Vary', u.searchParams.get('vary'));
    const body = bodies[name] || '';
    if (u.searchParams.has('buffer')) res.end(Buffer.from(body));
    else res.end(body);
  }

  it('round-trips whole bodies byte-exact for each encoding (node client + zlib), inline and threadpool', async function () {
    const { port } = await common.startServer({ compression: true }, handler);
    for (const enc of ['gzip', 'deflate', 'br']) {
      for (const name of ['mid', 'big']) {
        for (const q of ['', '?buffer']) {
          const r = await common.httpRequest(port, { path: `/${name}${q}`, headers: { 'accept-encoding': enc } });
          assert.strictEqual(r.statusCode, 200);
          assert.strictEqual(r.headers['content-encoding'], enc, `${enc} ${name}${q}`);
          assert.strictEqual(r.headers.vary, 'Accept-Encoding');
          assert.strictEqual(Number(r.headers['content-length']), r.body.length);
          assert.ok(r.body.length < bodies[name].length / 2, 'actually compressed');
          assert.strictEqual(decode(enc, r.body).toString(), bodies[name], `${enc} ${name}${q}`);
        }
      }
    }
  });

  it('round-trips with curl --compressed', async function () {
    const { url } = await common.startServer({ compression: true }, handler);
    for (const name of ['mid', 'big']) {
      const r = await common.curl(['--compressed', '-D', '-', `${url}/${name}`]);
      assert.strictEqual(r.code, 0, r.stderr);
      const out = r.stdout.toString();
      const i = out.indexOf('\r\n\r\n');
      assert.match(out.slice(0, i), /content-encoding: (br|gzip|deflate)/i);
      assert.strictEqual(out.slice(i + 4), bodies[name]);
    }
    // curl offers gzip/deflate (and br when built with it): each one alone.
    for (const enc of ['gzip', 'deflate']) {
      const r = await common.curl(['-H', `Accept-Encoding: ${enc}`, '--compressed', '-D', '-', `${url}/big?buffer`]);
      const out = r.stdout.toString();
      const i = out.indexOf('\r\n\r\n');
      assert.match(out.slice(0, i), new RegExp(`content-encoding: ${enc}`, 'i'));
      assert.strictEqual(out.slice(i + 4), bodies.big);
    }
  });

  it('negotiates Accept-Encoding with q-values, server preference breaking ties', async function () {
    const all = [CODING.br, CODING.gzip, CODING.deflate];
    const table = [
      // [Accept-Encoding, expected coding or 'identity']
      ['gzip', 'gzip'],
      ['gzip, deflate, br', 'br'],
      ['deflate, gzip', 'gzip'],
      ['br;q=0.5, gzip', 'gzip'],
      ['br;q=1.0, gzip;q=1', 'br'],
      ['gzip;q=0.8, deflate;q=0.9', 'deflate'],
      ['GZIP', 'gzip'],
      ['x-gzip', 'gzip'],
      ['*', 'br'],
      ['*;q=0.5, gzip', 'gzip'],
      ['*, br;q=0', 'gzip'],
      ['br;q=0, gzip;q=0, deflate;q=0', 'identity'],
      ['identity', 'identity'],
      ['identity;q=0', 'identity'],        // nothing acceptable: sent as is, no 406
      ['identity;q=0, *;q=0', 'identity'],
      ['gzip;q=0.5', 'gzip'],              // implicit identity gets the lowest q
      ['gzip;q=0.5, identity', 'identity'],
      ['gzip;q=0.5, identity;q=0.5', 'gzip'],
      ['compress, zstd', 'identity'],
      ['', 'identity'],
      ['gzip;q=abc, deflate', 'deflate'],
      [' gzip ; q=0.3 , br ; q=0.2 ', 'gzip'],
    ];
    const names = { 0: 'identity', [CODING.br]: 'br', [CODING.gzip]: 'gzip', [CODING.deflate]: 'deflate' };
    for (const [ae, want] of table) {
      assert.strictEqual(names[negotiate(ae, all)], want, JSON.stringify(ae));
    }
    // Through the server, with a different preference order.
    const { port } = await common.startServer({ compression: { encodings: ['gzip', 'br'] } }, handler);
    const cases = [['gzip, br', 'gzip'], ['br', 'br'], ['deflate', undefined], ['*', 'gzip'],
      ['identity;q=0', undefined], [undefined, undefined]];
    for (const [ae, want] of cases) {
      const headers = ae === undefined ? {} : { 'accept-encoding': ae };
      const r = await common.httpRequest(port, { path: '/mid', headers });
      assert.strictEqual(r.statusCode, 200);
      assert.strictEqual(r.headers['content-encoding'], want, String(ae));
      assert.strictEqual(r.headers.vary, 'Accept-Encoding');
      assert.strictEqual(decode(want, r.body).toString(), bodies.mid);
    }
  });

  it('respects the threshold and the content-type filter; Vary is added', async function () {
    const { port } = await common.startServer({ compression: { threshold: 2048 } }, handler);
    const ae = { 'accept-encoding': 'gzip' };
    let r = await common.httpRequest(port, { path: '/small', headers: ae });
    assert.strictEqual(r.headers['content-encoding'], undefined);
    assert.strictEqual(r.headers.vary, 'Accept-Encoding', 'varies even below the threshold');
    assert.strictEqual(r.body.toString(), bodies.small);
    for (const type of ['text/html', 'text/plain; charset=utf-8', 'application/javascript',
      'image/svg+xml', 'application/vnd.api+json', 'application/wasm', 'application/xml']) {
      r = await common.httpRequest(port, { path: `/mid?type=${encodeURIComponent(type)}`, headers: ae });
      assert.strictEqual(r.headers['content-encoding'], 'gzip', type);
    }
    for (const type of ['image/png', 'application/octet-stream', 'video/mp4', 'application/zip']) {
      r = await common.httpRequest(port, { path: `/bin?type=${encodeURIComponent(type)}`, headers: ae });
      assert.strictEqual(r.headers['content-encoding'], undefined, type);
      assert.strictEqual(r.headers.vary, undefined, type);
      assert.ok(r.body.equals(bodies.bin));
    }
    // res.compress = false, an existing Content-Encoding, an existing Vary.
    r = await common.httpRequest(port, { path: '/mid?optout', headers: ae });
    assert.strictEqual(r.headers['content-encoding'], undefined);
    assert.strictEqual(r.body.toString(), bodies.mid);
    r = await common.httpRequest(port, { path: '/mid?ce=x-custom', headers: ae });
    assert.strictEqual(r.headers['content-encoding'], 'x-custom');
    assert.strictEqual(r.body.toString(), bodies.mid);
    r = await common.httpRequest(port, { path: '/mid?vary=Origin', headers: ae });
    assert.strictEqual(r.headers.vary, 'Origin, Accept-Encoding');
    // A custom filter.
    const s2 = await common.startServer({ compression: { filter: (req) => req.url !== '/mid' } }, handler);
    r = await common.httpRequest(s2.port, { path: '/mid', headers: ae });
    assert.strictEqual(r.headers['content-encoding'], undefined);
    r = await common.httpRequest(s2.port, { path: '/big?type=application/octet-stream', headers: ae });
    assert.strictEqual(r.headers['content-encoding'], 'gzip');
  });

  it('leaves HEAD, 204 and 304 untouched; off by default', async function () {
    const { port } = await common.startServer({ compression: true }, handler);
    const ae = { 'accept-encoding': 'gzip, br' };
    let r = await common.httpRequest(port, { method: 'HEAD', path: '/mid', headers: ae });
    assert.strictEqual(r.headers['content-encoding'], undefined);
    assert.strictEqual(r.headers.vary, undefined);
    assert.strictEqual(r.body.length, 0);
    for (const status of [204, 304]) {
      r = await common.httpRequest(port, { path: `/mid?status=${status}`, headers: ae });
      assert.strictEqual(r.statusCode, status);
      assert.strictEqual(r.headers['content-encoding'], undefined);
      assert.strictEqual(r.headers.vary, undefined);
      assert.strictEqual(r.body.length, 0);
    }
    const off = await common.startServer(handler);
    r = await common.httpRequest(off.port, { path: '/mid', headers: ae });
    assert.strictEqual(r.headers['content-encoding'], undefined);
    assert.strictEqual(r.body.toString(), bodies.mid);
  });

  it('leaves partial responses (206, Content-Range) uncompressed, whole bodies and respondWithFile ranges', async function () {
    const fs = require('node:fs');
    const os = require('node:os');
    const path = require('node:path');
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-206-')), 'f.txt');
    fs.writeFileSync(file, bodies.mid);
    const { port } = await common.startServer({ compression: { threshold: 0 } }, (req, res) => {
      res.setHeader('Content-Type', 'text/plain');
      if (req.url === '/file') {
        res.statusCode = 206;
        res.setHeader('Content-Range', `bytes 100-1099/${bodies.mid.length}`);
        res.respondWithFile(file, {}, { offset: 100, length: 1000 });
        return;
      }
      res.statusCode = 206;
      res.setHeader('Content-Range', `bytes 0-1999/${bodies.mid.length}`);
      res.end(bodies.mid.slice(0, 2000));
    });
    const ae = { 'accept-encoding': 'gzip, br' };
    let r = await common.httpRequest(port, { path: '/', headers: ae });
    assert.strictEqual(r.statusCode, 206);
    assert.strictEqual(r.headers['content-encoding'], undefined);
    assert.strictEqual(r.body.toString(), bodies.mid.slice(0, 2000));
    r = await common.httpRequest(port, { path: '/file', headers: ae });
    assert.strictEqual(r.statusCode, 206);
    assert.strictEqual(r.headers['content-encoding'], undefined);
    assert.strictEqual(r.body.toString(), bodies.mid.slice(100, 1100));
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });

  it('keeps pipelined responses in order while big bodies compress on the threadpool', async function () {
    const { port } = await common.startServer({ compression: true }, handler);
    const c = await common.rawConnect(port);
    const order = ['big', 'mid', 'big', 'small', 'big?buffer', 'mid', 'big'];
    let req = '';
    for (const p of order) req += `GET /${p} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n`;
    c.socket.write(req);
    const want = order.map((p) => bodies[p.split('?')[0]]);
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
      assert.strictEqual(decode(r.headers['content-encoding'], r.body).toString(), want[i], `response ${i}`);
    });
  });

  it('keeps the loop serving while a large body compresses', async function () {
    const huge = jsonBody(8 * 1024 * 1024);
    const { port } = await common.startServer({ compression: { encodings: ['gzip'], level: 9 } }, (req, res) => {
      res.setHeader('Content-Type', 'application/json');
      res.end(req.url === '/huge' ? huge : 'tiny');
    });
    const bigP = common.httpRequest(port, { path: '/huge', headers: { 'accept-encoding': 'gzip' }, timeout: 60000 });
    await common.sleep(5);
    let tinyDone = 0;
    let bigDone = false;
    bigP.then(() => { bigDone = true; });
    while (!bigDone && tinyDone < 50) {
      const r = await common.httpRequest(port, { path: '/tiny' });
      assert.strictEqual(r.body.toString(), 'tiny');
      tinyDone++;
    }
    const r = await bigP;
    assert.strictEqual(zlib.gunzipSync(r.body).toString(), huge);
    assert.ok(tinyDone > 0, 'tiny requests were answered while the big body compressed');
  });

  it('streams res.write() bodies chunked, and flush() delivers each event before the next is written', async function () {
    let next = null;
    const { port } = await common.startServer({ compression: true }, async (req, res) => {
      if (req.url === '/next') { res.end('ok'); if (next) next(); return; }
      res.setHeader('Content-Type', 'text/event-stream');
      res.setHeader('Cache-Control', 'no-cache');
      for (let i = 0; i < 5; i++) {
        const acked = new Promise((resolve) => { next = resolve; });
        res.write(`id: ${i}\ndata: ${'event payload '.repeat(20)}${i}\n\n`);
        res.flush();
        await acked;  // the client saw event i before event i+1 is written
      }
      res.end();
    });
    for (const enc of ['gzip', 'br', 'deflate']) {
      const events = await new Promise((resolve, reject) => {
        http.get({ port, host: '127.0.0.1', path: '/sse', agent: false, headers: { 'accept-encoding': enc } }, (res) => {
          assert.strictEqual(res.headers['content-encoding'], enc);
          assert.strictEqual(res.headers['transfer-encoding'], 'chunked');
          assert.strictEqual(res.headers.vary, 'Accept-Encoding');
          const dec = enc === 'gzip' ? zlib.createGunzip() : enc === 'br' ? zlib.createBrotliDecompress() : zlib.createInflate();
          let text = '';
          const seen = [];
          dec.on('data', (d) => {
            text += d;
            let k;
            while ((k = text.indexOf('\n\n')) !== -1) {
              const ev = text.slice(0, k);
              text = text.slice(k + 2);
              seen.push(Number(/^id: (\d+)/.exec(ev)[1]));
              common.httpRequest(port, { path: '/next' }).catch(reject);
            }
          });
          dec.on('end', () => resolve(seen));
          dec.on('error', reject);
          res.pipe(dec);
        }).on('error', reject);
      });
      assert.deepStrictEqual(events, [0, 1, 2, 3, 4], enc);
    }
  });

  it('streamed body with a user Content-Length is re-framed chunked; small streams below a Content-Length threshold stay as is', async function () {
    const { port } = await common.startServer({ compression: true }, (req, res) => {
      res.setHeader('Content-Type', 'text/plain');
      if (req.url === '/cl') {
        res.setHeader('Content-Length', bodies.big.length);
        res.write(bodies.big.slice(0, 1000));
        res.write(Buffer.from(bodies.big.slice(1000)));
        res.end();
      } else {
        res.setHeader('Content-Length', 5);
        res.write('he');
        res.end('llo');
      }
    });
    let r = await common.httpRequest(port, { path: '/cl', headers: { 'accept-encoding': 'br' } });
    assert.strictEqual(r.headers['content-encoding'], 'br');
    assert.strictEqual(r.headers['content-length'], undefined);
    assert.strictEqual(decode('br', r.body).toString(), bodies.big);
    r = await common.httpRequest(port, { path: '/small', headers: { 'accept-encoding': 'br' } });
    assert.strictEqual(r.headers['content-encoding'], undefined);
    assert.strictEqual(r.body.toString(), 'hello');
  });

  it('a client reset mid-compression frees everything (jobs, compressors) and the server keeps serving', async function () {
    const huge = jsonBody(4 * 1024 * 1024);
    const before = await quietStats();
    let streams = 0;
    const { port } = await common.startServer({ compression: true }, (req, res) => {
      res.setHeader('Content-Type', 'application/json');
      if (req.url === '/stream') {
        streams++;
        res.write(huge.slice(0, 100000));
        const t = setInterval(() => {
          if (res.destroyed || res.writableEnded) { clearInterval(t); return; }
          res.write(huge.slice(0, 100000));
        }, 5);
        res.on('close', () => clearInterval(t));
        return;
      }
      res.end(huge);
    });
    for (let i = 0; i < 10; i++) {
      const s = net.connect(port, '127.0.0.1');
      await common.once(s, 'connect');
      s.write(`GET /${i % 2 ? 'stream' : 'huge'} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: ${['gzip', 'br'][i % 2 ? 1 : 0]}\r\n\r\n`);
      await common.sleep(i % 2 ? 30 : 2);
      s.resetAndDestroy();
    }
    assert.strictEqual(streams, 5);
    const ok = await waitFor(() => {
      const st = binding.compressionStats();
      return st.jobs === before.jobs && st.compressors === before.compressors;
    }, 30000);
    assert.ok(ok, `leaked: ${JSON.stringify(binding.compressionStats())} vs ${JSON.stringify(before)}`);
    const r = await common.httpRequest(port, { path: '/huge', headers: { 'accept-encoding': 'gzip' } });
    assert.strictEqual(zlib.gunzipSync(r.body).toString(), huge);
  });

  describe('files', function () {
    const fs = require('node:fs');
    const os = require('node:os');
    const path = require('node:path');
    let dir;
    let text;      // ~1 MiB of log-like text
    before(function () {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-cz-'));
      const lines = [];
      for (let i = 0; lines.length < 14000; i++) {
        lines.push(`2026-12-02T15:${String(i % 60).padStart(2, '0')}:00Z GET /api/items/${i * 31 % 977} 200 ${i % 500}ms ua=${['curl', 'node', 'wrk'][i % 3]}`);
      }
      text = Buffer.from(lines.join('\n'));
      fs.writeFileSync(path.join(dir, 'log.txt'), text);
      fs.writeFileSync(path.join(dir, 'tiny.txt'), 'tiny');
      fs.writeFileSync(path.join(dir, 'pre.js'), text);
      fs.writeFileSync(path.join(dir, 'pre.js.br'), zlib.brotliCompressSync(text));
      fs.writeFileSync(path.join(dir, 'pre.js.gz'), zlib.gzipSync(text));
      fs.writeFileSync(path.join(dir, 'old.css'), text);
      fs.writeFileSync(path.join(dir, 'old.css.gz'), zlib.gzipSync(text));
      const past = new Date(Date.now() - 3600e3);
      fs.utimesSync(path.join(dir, 'old.css.gz'), past, past);
    });
    after(function () { fs.rmSync(dir, { recursive: true, force: true }); });

    function fileHandler(req, res) {
      const u = new URL(req.url, 'http://x');
      const name = u.pathname.slice(1);
      const type = name.endsWith('.js') ? 'application/javascript' : name.endsWith('.css') ? 'text/css' : 'text/plain';
      res.respondWithFile(path.join(dir, name), { 'content-type': type },
        { precompressed: u.searchParams.has('pre') });
    }

    it('respondWithFile bodies go through the native compressor intact (each encoding, node client and curl)', async function () {
      const { port, url } = await common.startServer({ compression: true }, fileHandler);
      for (const enc of ['gzip', 'br', 'deflate']) {
        const r = await common.httpRequest(port, { path: '/log.txt', headers: { 'accept-encoding': enc } });
        assert.strictEqual(r.headers['content-encoding'], enc);
        assert.strictEqual(r.headers['transfer-encoding'], 'chunked');
        assert.strictEqual(r.headers['content-length'], undefined);
        assert.strictEqual(r.headers.vary, 'Accept-Encoding');
        assert.ok(r.body.length < text.length / 3);
        assert.ok(decode(enc, r.body).equals(text), enc);
      }
      const c = await common.curl(['--compressed', `${url}/log.txt`]);
      assert.strictEqual(common.sha256(c.stdout), common.sha256(text));
      // Below the threshold and HEAD: as they are, with the file's length.
      let r = await common.httpRequest(port, { path: '/tiny.txt', headers: { 'accept-encoding': 'gzip' } });
      assert.strictEqual(r.headers['content-encoding'], undefined);
      assert.strictEqual(r.body.toString(), 'tiny');
      r = await common.httpRequest(port, { method: 'HEAD', path: '/log.txt', headers: { 'accept-encoding': 'gzip' } });
      assert.strictEqual(r.headers['content-encoding'], undefined);
      assert.strictEqual(Number(r.headers['content-length']), text.length);
    });

    it('precompressed: true serves path.br / path.gz with their length when acceptable and not older', async function () {
      const { port } = await common.startServer(fileHandler);  // works without the compression option
      const pre = (n) => fs.readFileSync(path.join(dir, n));
      let r = await common.httpRequest(port, { path: '/pre.js?pre', headers: { 'accept-encoding': 'gzip, br' } });
      assert.strictEqual(r.headers['content-encoding'], 'br');
      assert.strictEqual(Number(r.headers['content-length']), pre('pre.js.br').length);
      assert.strictEqual(r.headers['content-type'], 'application/javascript');
      assert.strictEqual(r.headers.vary, 'Accept-Encoding');
      assert.ok(zlib.brotliDecompressSync(r.body).equals(text));
      r = await common.httpRequest(port, { path: '/pre.js?pre', headers: { 'accept-encoding': 'gzip' } });
      assert.strictEqual(r.headers['content-encoding'], 'gzip');
      assert.strictEqual(Number(r.headers['content-length']), pre('pre.js.gz').length);
      assert.ok(zlib.gunzipSync(r.body).equals(text));
      r = await common.httpRequest(port, { path: '/pre.js?pre', headers: { 'accept-encoding': 'br;q=0.5, gzip' } });
      assert.strictEqual(r.headers['content-encoding'], 'gzip');
      r = await common.httpRequest(port, { path: '/pre.js?pre' });
      assert.strictEqual(r.headers['content-encoding'], undefined);
      assert.ok(r.body.equals(text));
      // An older sibling is stale: the original is served.
      r = await common.httpRequest(port, { path: '/old.css?pre', headers: { 'accept-encoding': 'gzip' } });
      assert.strictEqual(r.headers['content-encoding'], undefined);
      assert.strictEqual(Number(r.headers['content-length']), text.length);
      assert.ok(r.body.equals(text));
    });

    it('a client reset mid-file-compression frees transforms, sources and buffers', async function () {
      const before = await quietStats();
      const { port } = await common.startServer({ compression: { encodings: ['gzip'], level: 9 } }, fileHandler);
      for (let i = 0; i < 10; i++) {
        const s = net.connect(port, '127.0.0.1');
        await common.once(s, 'connect');
        s.write('GET /log.txt HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n');
        await common.sleep(i * 3);
        s.resetAndDestroy();
      }
      const ok = await waitFor(() => {
        const st = binding.compressionStats();
        return st.transforms === before.transforms && st.compressors === before.compressors &&
          binding.NativeFile.stats().sources === 0;
      }, 30000);
      assert.ok(ok, `leaked: ${JSON.stringify(binding.compressionStats())} ${JSON.stringify(binding.NativeFile.stats())}`);
      const r = await common.httpRequest(port, { path: '/log.txt', headers: { 'accept-encoding': 'gzip' } });
      assert.ok(zlib.gunzipSync(r.body).equals(text));
    });
  });

  it('server.close() while a body compresses on the threadpool: the response completes, then the server closes', async function () {
    const huge = jsonBody(4 * 1024 * 1024);
    let server;
    const started = new Promise((resolve) => {
      common.startServer({ compression: { encodings: ['gzip'], level: 9 } }, (req, res) => {
        res.setHeader('Content-Type', 'application/json');
        res.end(huge);
        resolve();
      }).then((s) => { server = s; });
    });
    while (!server) await common.sleep(5);
    const p = common.httpRequest(server.port, { path: '/', headers: { 'accept-encoding': 'gzip' }, timeout: 60000 });
    await started;
    const closed = new Promise((resolve) => server.server.close(resolve));
    const r = await p;
    assert.strictEqual(r.headers.connection, 'close');
    assert.strictEqual(zlib.gunzipSync(r.body).toString(), huge);
    await common.withTimeout(closed, 5000, 'server close');
  });

  it('validates options', function () {
    const sluice = common.impl;
    assert.throws(() => sluice.createServer({ compression: 'yes' }), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => sluice.createServer({ compression: { encodings: ['zstd'] } }), { code: 'ERR_INVALID_ARG_VALUE' });
    assert.throws(() => sluice.createServer({ compression: { level: 12 } }), { code: 'ERR_INVALID_ARG_VALUE' });
    assert.throws(() => sluice.createServer({ compression: { brotliQuality: -1 } }), { code: 'ERR_INVALID_ARG_VALUE' });
    assert.throws(() => sluice.createServer({ compression: { filter: 1 } }), { code: 'ERR_INVALID_ARG_TYPE' });
  });
});
