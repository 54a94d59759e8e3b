'use strict';

// HTTP/2: the client's socket ends (FIN) while streams are open — mid
// upload, or after a complete request whose response is not done. As
// node:http2 does on its socket's 'end': every open stream is reset
// (CANCEL), emits 'aborted' when its response had not ended, then 'close';
// what it held (compressor, compression job, file pipe, JS pipes) is freed
// and the session and connection close. A response not complete by then
// is not delivered (node:http2 neither delivers it; observed with
// node 20 on the same raw-frame sequences).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { PassThrough } = require('node:stream');
const http2 = require('node:http2');
const common = require('../common');
const h2 = require('./h2common');
const { assert } = common;

const describeSluice = common.isNode ? describe.skip : describe;
const CANCEL = http2.constants.NGHTTP2_CANCEL;

// A request header block in HPACK, every field a literal without indexing
// (no Huffman): enough for a raw client (names and values < 127 bytes).
function hpack(fields) {
  const parts = [];
  for (const [name, value] of fields) {
    parts.push(Buffer.from([0x00, name.length]), Buffer.from(name, 'latin1'),
      Buffer.from([value.length]), Buffer.from(value, 'latin1'));
  }
  return Buffer.concat(parts);
}

function requestBlock(method, p, extra = []) {
  return hpack([[':method', method], [':scheme', 'http'], [':path', p], [':authority', 'a'], ...extra]);
}

async function waitUntil(fn, ms, what) {
  const deadline = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await common.sleep(10);
  }
}

function fdCount() {
  return fs.readdirSync('/proc/self/fd').length;
}

describeSluice('http2: the client closes its socket with streams open', function () {
  const binding = common.libInternal('common/binding');
  afterEach(common.cleanup);

  let dir;
  let bigFile;
  before(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-h2eof-'));
    bigFile = path.join(dir, 'big.txt');
    fs.writeFileSync(bigFile, 'line of text for the file pipe\n'.repeat(150000));  // ~4.5 MiB
  });
  after(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('core: mid-upload EOF (end and destroy): data, then aborted and close (CANCEL), no error; session and connection close', async function () {
    const { server, port } = await common.startServer();
    const log = [];
    let sessionCloses = 0;
    server.on('session', (s) => s.on('close', () => { sessionCloses++; }));
    server.on('stream', (stream, headers) => {
      const tag = headers[':path'];
      stream.on('data', (d) => log.push(`${tag} data ${d}`));
      stream.on('aborted', () => log.push(`${tag} aborted`));
      stream.on('error', (e) => log.push(`${tag} error ${e.code}`));
      stream.on('close', () => log.push(`${tag} close ${stream.rstCode}`));
    });
    const rounds = 10;
    for (let i = 0; i < rounds; i++) {
      const how = i % 2 ? 'destroy' : 'end';
      const tag = `/${how}${i}`;
      const c = await common.rawConnect(port);
      await c.write(Buffer.concat([h2.PREFACE, h2.frame(h2.FRAME.SETTINGS, 0, 0),
        h2.frame(h2.FRAME.HEADERS, 0x4, 1, requestBlock('POST', tag)),
        h2.frame(h2.FRAME.DATA, 0, 1, Buffer.from('abc'))]));
      await waitUntil(() => log.includes(`${tag} data abc`), 3000, `${tag} data`);
      if (how === 'end') c.end(); else c.destroy();
      await waitUntil(() => log.some((e) => e.startsWith(`${tag} close`)), 3000, `${tag} close`);
      const mine = log.filter((e) => e.startsWith(`${tag} `));
      assert.deepStrictEqual(mine, [`${tag} data abc`, `${tag} aborted`, `${tag} close ${CANCEL}`]);
      if (how === 'end') await c.waitClose(3000);  // the server closes its side too
    }
    await waitUntil(() => server._connections === 0 && sessionCloses === rounds, 3000,
      () => `connections 0 (${server._connections}), ${rounds} session closes (${sessionCloses})`);
  });

  it('compat (node http2 client destroys its session mid-upload): req aborted, res close, req close; no error', async function () {
    const log = [];
    const { server, port } = await common.startServer((req, res) => {
      req.on('data', (d) => log.push(`data ${d}`));
      req.on('aborted', () => log.push('req aborted'));
      req.on('error', (e) => log.push(`req error ${e.code}`));
      req.on('close', () => log.push('req close'));
      res.on('close', () => log.push('res close'));
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
    });
    for (let i = 0; i < 5; i++) {
      log.length = 0;
      const s = h2.connect(port);
      const req = s.request({ ':method': 'POST', ':path': '/up' });
      req.on('error', () => {});
      const response = common.once(req, 'response', 3000);
      req.write('abc');
      await waitUntil(() => log.includes('data abc'), 3000, 'upload data');
      await response;
      s.destroy();
      await waitUntil(() => log.includes('req close') && log.includes('res close'), 3000,
        () => `req/res close, got ${log.join()}`);
      assert.deepStrictEqual(log.filter((e) => e !== 'req close' && e !== 'res close'),
        ['data abc', 'req aborted'], log.join());
      assert.ok(log.indexOf('req aborted') < log.indexOf('res close'), log.join());
    }
    await waitUntil(() => server._connections === 0, 3000, 'connections 0');
  });

  // A client window of 16 MiB (SETTINGS and connection WINDOW_UPDATE).
  function bigWindow() {
    const settings = Buffer.alloc(6);
    settings.writeUInt16BE(0x4, 0);  // SETTINGS_INITIAL_WINDOW_SIZE
    settings.writeUInt32BE(16 << 20, 2);
    const inc = Buffer.alloc(4);
    inc.writeUInt32BE(16 << 20, 0);
    return [h2.frame(h2.FRAME.SETTINGS, 0, 0, settings), h2.frame(h2.FRAME.WINDOW_UPDATE, 0, 0, inc)];
  }

  for (const how of ['end', 'destroy']) {
    const title = how === 'end' ?
      'half-close with a 16 MiB client window' : 'socket destroyed with the default 64 KiB window';
    it(`what open streams held is freed (${title}): streamed compressor, threadpool job, compressed file pipe, stream.pipe()`, async function () {
      const { server, port } = await common.startServer({ compression: true });
      const before = binding.compressionStats();
      const fdsBefore = fdCount();
      const events = new Map();
      const text = 'some compressible text, '.repeat(20000);  // ~480 KB
      server.on('stream', (stream, headers) => {
        const p = headers[':path'];
        const ev = [];
        events.set(p, ev);
        stream.on('aborted', () => ev.push('aborted'));
        stream.on('error', (e) => ev.push(`error ${e.code}`));
        stream.on('close', () => ev.push(`close ${stream.rstCode}`));
        const h = { 'content-type': 'text/plain' };
        if (p === '/stream') {
          // Streamed through the stream's native compressor; the response
          // stays open (more writes could come).
          stream.respond(h);
          stream.write(text);
        } else if (p === '/whole') {
          // A whole body >= 32 KiB: compressed by a threadpool job.
          stream.respond(h);
          stream.end(text);
        } else if (p === '/file') {
          // FileSource → CompressTransform → Http2PipeBody.
          stream.respondWithFile(bigFile, h);
        } else if (p === '/pipe') {
          // The request body piped into a JS stream that never drains.
          stream.pipe(new PassThrough({ highWaterMark: 1 }));
          stream.respond(h);
          stream.write('x');
        }
      });
      const c = await common.rawConnect(port);
      const frames = [h2.PREFACE, h2.frame(h2.FRAME.SETTINGS, 0, 0)];
      if (how === 'end') frames.push(...bigWindow());
      const paths = ['/stream', '/whole', '/file', '/pipe'];
      paths.forEach((p, i) => {
        frames.push(h2.frame(h2.FRAME.HEADERS, 0x4, 1 + 2 * i,
          requestBlock('POST', p, [['accept-encoding', 'gzip']])));
        frames.push(h2.frame(h2.FRAME.DATA, 0, 1 + 2 * i, Buffer.alloc(1000, 'u')));
      });
      await c.write(Buffer.concat(frames));
      // Every response has started (HEADERS seen for all four streams).
      await c.waitFor((cl) => {
        const ids = new Set(h2.parseFrames(cl.data).filter((f) => f.type === h2.FRAME.HEADERS).map((f) => f.streamId));
        return ids.size === 4;
      }, 5000, 'four responses started');
      const live = binding.compressionStats();
      assert.ok(live.compressors > before.compressors, `a streamed compressor is live: ${JSON.stringify(live)}`);
      if (how === 'end') c.end(); else c.destroy();
      await waitUntil(() => paths.every((p) => events.get(p).some((e) => e.startsWith('close'))), 3000,
        () => `all four closed: ${JSON.stringify([...events])}`);
      for (const p of paths) {
        const ev = events.get(p);
        assert.ok(ev.includes(`close ${CANCEL}`) || (p === '/file' && ev.includes('close 0')), `${p}: ${ev.join()}`);
        assert.ok(!ev.some((e) => e.startsWith('error')), `${p}: ${ev.join()}`);
      }
      // Responses not ended abort; ended ones (whole body, file) only close.
      assert.ok(events.get('/stream').includes('aborted'));
      assert.ok(events.get('/pipe').includes('aborted'));
      await waitUntil(() => {
        const st = binding.compressionStats();
        return server._connections === 0 && st.compressors === before.compressors &&
          st.jobs === before.jobs && st.transforms === before.transforms &&
          binding.NativeFile.stats().sources === 0 && fdCount() <= fdsBefore;
      }, 3000, () => `everything freed: ${JSON.stringify(binding.compressionStats())} ` +
        `${JSON.stringify(binding.NativeFile.stats())} fds ${fdCount()}/${fdsBefore} conns ${server._connections}`);
    });
  }

  it('half-close after a complete request (core): a response done before is delivered; a late one is not (as node:http2), the stream is aborted', async function () {
    const { server, port } = await common.startServer();
    const log = [];
    let lateError;
    server.on('stream', (stream, headers) => {
      const p = headers[':path'];
      stream.on('aborted', () => log.push(`${p} aborted`));
      stream.on('close', () => log.push(`${p} close ${stream.rstCode}`));
      stream.on('error', (e) => log.push(`${p} error ${e.code}`));
      if (p === '/now') {
        stream.respond({ ':status': 200 });
        stream.end('early');
      } else {
        common.setTimer(() => {
          try {
            stream.respond({ ':status': 200 });
            stream.end('late');
          } catch (e) {
            lateError = e;
          }
          log.push(`${p} responded`);
        }, 100);
      }
    });
    const c = await common.rawConnect(port);
    await c.write(Buffer.concat([h2.PREFACE, h2.frame(h2.FRAME.SETTINGS, 0, 0),
      h2.frame(h2.FRAME.HEADERS, 0x5, 1, requestBlock('GET', '/now'))]));
    await c.waitFor((cl) => h2.parseFrames(cl.data).some((f) => f.streamId === 1 && f.type === h2.FRAME.DATA && (f.flags & 1)),
      3000, 'the first response');
    await c.write(h2.frame(h2.FRAME.HEADERS, 0x5, 3, requestBlock('GET', '/late')));
    c.end();  // shutdown(SHUT_WR): the client can still read
    const data = await c.waitClose(3000);
    const frames = h2.parseFrames(data);
    const body1 = Buffer.concat(frames.filter((f) => f.streamId === 1 && f.type === h2.FRAME.DATA).map((f) => f.payload));
    assert.strictEqual(body1.toString(), 'early');
    assert.ok(!frames.some((f) => f.streamId === 3 && (f.type === h2.FRAME.HEADERS || f.type === h2.FRAME.DATA)),
      'nothing of the late response');
    await waitUntil(() => log.includes('/late responded'), 3000, 'the late respond()');
    assert.deepStrictEqual(log, ['/now close 0', '/late aborted', `/late close ${CANCEL}`, '/late responded']);
    assert.ok(lateError, 'respond() on the reset stream throws');
    assert.strictEqual(lateError.code, 'ERR_HTTP2_INVALID_STREAM');
    await waitUntil(() => server._connections === 0, 3000, 'connections 0');
  });

  it('half-close after a complete request (compat): req aborted, res finish and close; the late res.end() is a no-op', async function () {
    const log = [];
    let lateThrew = null;
    let seen = false;
    const { server, port } = await common.startServer((req, res) => {
      seen = true;
      req.on('aborted', () => log.push('req aborted'));
      req.on('error', (e) => log.push(`req error ${e.code}`));
      res.on('close', () => log.push('res close'));
      res.on('finish', () => log.push('res finish'));
      req.resume();
      common.setTimer(() => {
        try {
          res.end('late');
          lateThrew = false;
        } catch (e) {
          lateThrew = e;
        }
      }, 100);
    });
    const c = await common.rawConnect(port);
    await c.write(Buffer.concat([h2.PREFACE, h2.frame(h2.FRAME.SETTINGS, 0, 0),
      h2.frame(h2.FRAME.HEADERS, 0x5, 1, requestBlock('GET', '/late'))]));
    await waitUntil(() => seen, 3000, 'request seen');
    c.end();
    const data = await c.waitClose(3000);
    assert.ok(!h2.parseFrames(data).some((f) => f.streamId === 1 && f.type === h2.FRAME.HEADERS), 'no response');
    await waitUntil(() => lateThrew !== null, 3000, 'the late res.end()');
    assert.strictEqual(lateThrew, false);
    // As node's compat: the stream's close is the response's 'finish'
    // (ended or not), then 'close'.
    assert.deepStrictEqual(log, ['req aborted', 'res finish', 'res close']);
    await waitUntil(() => server._connections === 0, 3000, 'connections 0');
  });
});
