'use strict';

// Response splitting: every user string that reaches the wire is checked
// when the head (or trailer block, or interim response) is serialized,
// whichever API put it there. Each row is a handler that tries to inject
// "X-Injected: yes" (or a NUL, or a character above U+00FF that latin1
// would truncate to LF) and must throw node's code for the case; the
// handler then answers a clean 500 carrying the code it caught, which
// proves the throw left the response usable and that nothing of the bad
// head reached the socket (raw sockets for HTTP/1.1, node's http2 client
// for HTTP/2). The HTTP/1.1 rows run against node:http too
// (SLUICE_TEST_IMPL=node) except where sluice is stricter than node:
// those rows are sluice-only and docs/security.md lists them.

const fs = require('node:fs');
const http2 = require('node:http2');
const os = require('node:os');
const path = require('node:path');
const common = require('../common');
const h2 = require('../http2/h2common');
const { assert } = common;

const INJECT = 'a\r\nX-Injected: yes';
const CHAR = 'ERR_INVALID_CHAR';
const TOKEN = 'ERR_INVALID_HTTP_TOKEN';

// act(res, req): the attempt. code: what it must throw (synchronously),
// or, with `async`, the 'error' the response is destroyed with.
// nodeSends: node writes this to the wire (sluice-only row; why).
const H1_ROWS = [
  { name: 'statusMessage property, writeHead(200)', code: CHAR, act: (res) => { res.statusMessage = `OK\r\nX-Injected: yes`; res.writeHead(200); } },
  { name: 'statusMessage property, implicit head of end()', code: CHAR, act: (res) => { res.statusMessage = `OK\r\nX-Injected: yes`; res.end('body'); } },
  { name: 'statusMessage property, implicit head of write()', code: CHAR, act: (res) => { res.statusMessage = `OK\r\nX-Injected: yes`; res.write('body'); } },
  { name: 'statusMessage property, flushHeaders()', code: CHAR, act: (res) => { res.statusMessage = `OK\r\nX-Injected: yes`; res.flushHeaders(); } },
  { name: 'statusMessage property with a bare LF', code: CHAR, act: (res) => { res.statusMessage = 'OK\nX-Injected: yes'; res.end(); } },
  { name: 'statusMessage property with a NUL', code: CHAR, act: (res) => { res.statusMessage = 'O\0K'; res.end(); } },
  { name: 'statusMessage argument of writeHead', code: CHAR, act: (res) => { res.writeHead(200, `OK\r\nX-Injected: yes`); } },
  { name: 'statusMessage argument with U+010D U+010A (latin1 would write CR LF)', code: CHAR, act: (res) => { res.writeHead(200, 'OK\u010d\u010aX-Injected: yes'); } },
  { name: 'statusMessage argument with headers', code: CHAR, act: (res) => { res.writeHead(200, `OK\r\nX-Injected: yes`, { 'x-b': 'c' }); } },
  { name: 'statusCode property with CR LF', code: 'ERR_HTTP_INVALID_STATUS_CODE', act: (res) => { res.statusCode = '200\r\nX-Injected: yes'; res.end(); } },
  { name: 'statusCode property out of range', code: 'ERR_HTTP_INVALID_STATUS_CODE', act: (res) => { res.statusCode = 2000; res.end(); } },
  { name: 'setHeader value with CR LF', code: CHAR, act: (res) => res.setHeader('X-A', INJECT) },
  { name: 'setHeader value with U+010A', code: CHAR, act: (res) => res.setHeader('X-A', 'a\u010aX-Injected: yes') },
  { name: 'setHeader value with a NUL', code: CHAR, act: (res) => res.setHeader('X-A', 'a\0b') },
  { name: 'setHeader name with CR LF', code: TOKEN, act: (res) => res.setHeader('X-A\r\nX-Injected', 'yes') },
  { name: 'setHeader name with a colon', code: TOKEN, act: (res) => res.setHeader('X-Injected: yes\r\nX-A', 'b') },
  { name: 'setHeader array element', code: CHAR, act: (res) => res.setHeader('Set-Cookie', ['a=1', INJECT]) },
  { name: 'appendHeader value', code: CHAR, act: (res) => res.appendHeader('X-A', INJECT) },
  { name: 'appendHeader name', code: TOKEN, act: (res) => res.appendHeader('X A', 'b') },
  { name: 'writeHead object value', code: CHAR, act: (res) => res.writeHead(200, { 'X-A': INJECT }) },
  { name: 'writeHead object name', code: TOKEN, act: (res) => res.writeHead(200, { 'X-A\r\nX-Injected': 'yes' }) },
  { name: 'writeHead object value after setHeader', code: CHAR, act: (res) => { res.setHeader('x-b', 'c'); res.writeHead(200, { 'X-A': INJECT }); } },
  { name: 'writeHead flat array value', code: CHAR, act: (res) => res.writeHead(200, ['X-A', INJECT]) },
  { name: 'writeHead flat array name', code: TOKEN, act: (res) => res.writeHead(200, ['X A', 'b']) },
  { name: 'writeHead array of pairs value', code: CHAR, act: (res) => res.writeHead(200, [['X-A', INJECT]]) },
  { name: 'writeHead array of pairs name', code: TOKEN, act: (res) => res.writeHead(200, [['X:A', 'b']]) },
  { name: 'addTrailers object value', code: CHAR, act: (res) => res.addTrailers({ 'X-T': INJECT }) },
  { name: 'addTrailers object name', code: TOKEN, act: (res) => res.addTrailers({ 'X T': 'a' }) },
  { name: 'addTrailers array of pairs value', code: CHAR, act: (res) => res.addTrailers([['X-T', INJECT]]) },
  { name: 'addTrailers array value element', code: CHAR, act: (res) => res.addTrailers({ 'X-T': ['a', INJECT] }) },
  { name: 'writeEarlyHints Link not in the Link format', code: 'ERR_INVALID_ARG_VALUE', act: (res) => res.writeEarlyHints({ link: 'nope\r\nX-Injected: yes' }) },
  { name: 'writeEarlyHints Link with CR LF inside <...>', code: CHAR, act: (res) => res.writeEarlyHints({ link: '</a\r\nX-Injected: yes>; rel=preload' }), nodeSends: "node's Link format check lets CR/LF through inside <...>" },
  { name: 'writeEarlyHints other hint value', code: CHAR, act: (res) => res.writeEarlyHints({ link: '</a.css>; rel=preload', 'x-b': INJECT }), nodeSends: 'node checks no hint but Link' },
  { name: 'writeEarlyHints other hint name', code: TOKEN, act: (res) => res.writeEarlyHints({ link: '</a.css>; rel=preload', 'x-b\r\nX-Injected': 'yes' }), nodeSends: 'node checks no hint but Link' },
  { name: 'array mutated after setHeader', code: CHAR, act: (res) => { const a = ['ok']; res.setHeader('X-A', a); a.push(INJECT); res.end(); }, nodeSends: 'node checks the array when set, not when written' },
  { name: 'object whose toString changes after setHeader', code: CHAR, act: (res) => { let n = 0; res.setHeader('X-A', { toString: () => (n++ ? INJECT : 'ok') }); res.end(); }, nodeSends: 'node checks the string when set, not when written' },
];

// Rows over sluice's own APIs (node:http has none of them).
let tmpFile;
const H1_SLUICE_ROWS = [
  { name: 'respondWithFile headers argument', code: CHAR, act: (res) => res.respondWithFile(tmpFile, { 'x-a': INJECT }) },
  { name: 'respondWithFile with a bad statusMessage', code: CHAR, act: (res) => { res.statusMessage = `OK\r\nX-Injected: yes`; res.respondWithFile(tmpFile); } },
  { name: 'respondWithFile statCheck adding a header', code: CHAR, async: true, act: (res) => res.respondWithFile(tmpFile, {}, { statCheck: (st, h) => { h['x-a'] = INJECT; } }) },
  { name: 'respondWithFile statCheck setting :status', code: 'ERR_HTTP_INVALID_STATUS_CODE', async: true, act: (res) => res.respondWithFile(tmpFile, {}, { statCheck: (st, h) => { h[':status'] = 20000; } }) },
  { name: 'respondWithFile statusMessage set after the call', code: CHAR, async: true, act: (res) => { res.respondWithFile(tmpFile); res.statusMessage = `OK\r\nX-Injected: yes`; } },
  { name: 'compression: a Vary array mutated before the compressed end()', code: CHAR, compress: true, act: (res) => { const v = ['Origin']; res.setHeader('Vary', v); v.push(INJECT); res.end('x'.repeat(4096)); } },
];

// Runs `act` and answers a clean 500 with the code it threw (or 'none').
function tableHandler(rows) {
  return (req, res) => {
    const row = rows[Number(req.url.slice(1))];
    let code = 'none';
    res.on('error', (e) => { row.asyncCode = e.code; });
    try {
      row.act(res, req);
    } catch (e) {
      code = e.code || e.message;
    }
    if (row.async) return;  // the response dies with the error, or not
    if (res.headersSent || res.writableEnded) {
      if (!res.writableEnded) res.end();
      return;
    }
    res.statusMessage = undefined;
    for (const n of res.getHeaderNames()) res.removeHeader(n);
    res.addTrailers({});
    res.statusCode = 500;
    res.setHeader('x-code', code);
    res.end('clean');
  };
}

async function rawGet(port, i) {
  const c = await common.rawUntilClose(port, `GET /${i} HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n`);
  return c.text;
}

function checkClean(wire, code) {
  assert.ok(!/X-Injected/i.test(wire), `injected bytes reached the socket: ${JSON.stringify(wire)}`);
  assert.ok(wire.startsWith('HTTP/1.1 500 '), `not the clean 500 alone: ${JSON.stringify(wire)}`);
  assert.match(wire, new RegExp(`\r\nx-code: ${code}\r\n`, 'i'));
  assert.ok(wire.endsWith('clean'), JSON.stringify(wire));
}

describe(`hardening: response splitting, HTTP/1.1 [${common.implName}]`, function () {
  let port;
  before(async function () {
    ({ port } = await common.startServer(tableHandler(H1_ROWS)));
  });
  after(common.cleanup);

  H1_ROWS.forEach((row, i) => {
    const t = row.nodeSends ? common.sluiceOnly : it;
    t(`${row.name} -> ${row.code}${row.nodeSends ? ` (node writes it: ${row.nodeSends})` : ''}`, async function () {
      checkClean(await rawGet(port, i), row.code);
    });
  });

  it('controls: valid early hints and 102 Processing reach the wire before the response', async function () {
    const { port: p } = await common.startServer((req, res) => {
      res.writeProcessing();
      res.writeEarlyHints({ link: ['</a.css>; rel=preload', '</b.js>; rel=preload'], 'x-hint': 'h' });
      res.setHeader('X-A', ['1', '2']);
      res.end('ok');
    });
    const wire = await rawGet(p, 0);
    assert.match(wire, /^HTTP\/1\.1 102 Processing\r\n\r\nHTTP\/1\.1 103 Early Hints\r\nLink: <\/a\.css>; rel=preload, <\/b\.js>; rel=preload\r\nx-hint: h\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
    assert.match(wire, /\r\nX-A: 1\r\nX-A: 2\r\n/);
  });

  it('controls: trailers as node writes them (an array value of several is one line each)', async function () {
    const { port: p } = await common.startServer((req, res) => {
      res.setHeader('Trailer', 'X-T, X-U');
      res.write('a');
      res.addTrailers({ 'X-Old': 'replaced' });
      res.addTrailers({ 'X-T': ['1', '2'], 'X-U': ['3'] });
      res.end();
    });
    const wire = await rawGet(p, 0);
    assert.match(wire, /\r\n0\r\nX-T: 1\r\nX-T: 2\r\nX-U: 3\r\n\r\n$/);
  });
});

(common.isNode ? describe.skip : describe)('hardening: response splitting, sluice APIs over HTTP/1.1 [sluice]', function () {
  let port;
  let cport;
  before(async function () {
    tmpFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-split-')), 'f.txt');
    fs.writeFileSync(tmpFile, 'file body');
    ({ port } = await common.startServer(tableHandler(H1_SLUICE_ROWS)));
    ({ port: cport } = await common.startServer({ compression: { encodings: ['gzip'] } }, tableHandler(H1_SLUICE_ROWS)));
  });
  after(async function () {
    await common.cleanup();
    fs.rmSync(path.dirname(tmpFile), { recursive: true, force: true });
  });

  H1_SLUICE_ROWS.forEach((row, i) => {
    it(`${row.name} -> ${row.code}`, async function () {
      if (!row.async) {
        checkClean(await rawGet(row.compress ? cport : port, i), row.code);
        return;
      }
      // Thrown after the stat: the response is destroyed with the error
      // and not a byte of it leaves.
      const wire = await rawGet(port, i);
      assert.strictEqual(wire, '');
      assert.strictEqual(row.asyncCode, row.code);
    });
  });
});

// ---- HTTP/2 -------------------------------------------------------------------

// stream rows: act(stream) on a 'stream' event; compat rows: act(res) in a
// request handler. Node's http2 throws only for the pseudo-header,
// connection-header and space-in-name rows; it sends the others and the
// peer's nghttp2 resets the stream or drops the field (docs/security.md).
const H2_STREAM_ROWS = [
  { name: 'respond() value with CR LF', code: CHAR, act: (s) => s.respond({ ':status': 200, 'x-a': INJECT }) },
  { name: 'respond() value with a NUL', code: CHAR, act: (s) => s.respond({ ':status': 200, 'x-a': 'a\0b' }) },
  { name: 'respond() value with U+010A', code: CHAR, act: (s) => s.respond({ ':status': 200, 'x-a': 'a\u010ab' }) },
  { name: 'respond() array value element', code: CHAR, act: (s) => s.respond({ ':status': 200, 'set-cookie': ['a=1', INJECT] }) },
  { name: 'respond() name with CR LF', code: TOKEN, act: (s) => s.respond({ ':status': 200, 'x-a\r\nx-injected': 'yes' }) },
  { name: 'respond() name with a space', code: TOKEN, act: (s) => s.respond({ ':status': 200, 'x a': 'b' }) },
  { name: 'respond() request pseudo-header :path', code: 'ERR_HTTP2_INVALID_PSEUDOHEADER', act: (s) => s.respond({ ':status': 200, ':path': '/x' }) },
  { name: 'respond() unknown pseudo-header', code: 'ERR_HTTP2_INVALID_PSEUDOHEADER', act: (s) => s.respond({ ':status': 200, ':x-injected': 'yes' }) },
  { name: 'respond() :status with CR LF', code: 'ERR_HTTP2_STATUS_INVALID', act: (s) => s.respond({ ':status': '200\r\nx-injected: yes' }) },
  { name: 'respond() connection-specific header', code: 'ERR_HTTP2_INVALID_CONNECTION_HEADERS', act: (s) => s.respond({ ':status': 200, connection: 'close' }) },
  { name: 'additionalHeaders() value', code: CHAR, act: (s) => s.additionalHeaders({ ':status': 103, 'x-a': INJECT }) },
  { name: 'additionalHeaders() name', code: TOKEN, act: (s) => s.additionalHeaders({ ':status': 103, 'x a': 'b' }) },
  { name: 'respondWithFile() headers argument', code: CHAR, act: (s) => s.respondWithFile(tmpFile, { 'x-a': INJECT }) },
  { name: 'respondWithFD() headers argument', code: CHAR, act: (s) => s.respondWithFD(fs.openSync(tmpFile, 'r'), { 'x-a': INJECT }) },
  { name: 'respondWithFile() statCheck adding a header', code: CHAR, async: true, act: (s) => s.respondWithFile(tmpFile, {}, { statCheck: (st, h) => { h['x-a'] = INJECT; } }) },
  { name: 'sendTrailers() value', code: CHAR, trailers: { 'x-t': INJECT } },
  { name: 'sendTrailers() pseudo-header', code: 'ERR_HTTP2_INVALID_PSEUDOHEADER', trailers: { ':status': 200 } },
  { name: 'compression: a vary array mutated before respond()', code: CHAR, compress: true, act: (s) => { const v = ['origin']; const h = { ':status': 200, vary: v }; v.push(INJECT); s.respond(h); } },
];

const H2_COMPAT_ROWS = [
  { name: 'compat setHeader value', code: CHAR, act: (res) => res.setHeader('x-a', INJECT) },
  { name: 'compat setHeader name', code: TOKEN, act: (res) => res.setHeader('x a', 'b') },
  { name: 'compat writeHead object value', code: CHAR, act: (res) => res.writeHead(200, { 'x-a': INJECT }) },
  { name: 'compat array mutated after setHeader', code: CHAR, act: (res) => { const a = ['ok']; res.setHeader('x-a', a); a.push(INJECT); res.end(); } },
  { name: 'compat addTrailers value', code: CHAR, act: (res) => res.addTrailers({ 'x-t': INJECT }) },
  { name: 'compat writeEarlyHints hint value', code: CHAR, act: (res) => res.writeEarlyHints({ link: '</a.css>; rel=preload', 'x-b': INJECT }) },
  { name: 'compat writeEarlyHints Link with CR LF inside <...>', code: CHAR, act: (res) => res.writeEarlyHints({ link: '</a\r\nx-injected: yes>; rel=preload' }) },
  { name: 'compat respondWithFile statCheck adding a header', code: CHAR, async: true, act: (res) => res.respondWithFile(tmpFile, {}, { statCheck: (st, h) => { h['x-a'] = INJECT; } }) },
  // HTTP/2 has no reason phrase: the message never reaches the wire, so
  // (as node's compat) it is not an error.
  { name: 'compat statusMessage is not sent and not refused', code: 'none', act: (res) => { res.statusMessage = `OK\r\nX-Injected: yes`; } },
];

function cleanH2(stream, code) {
  stream.respond({ ':status': 500, 'x-code': code });
  stream.end('clean');
}

(common.isNode ? describe.skip : describe)('hardening: response splitting, HTTP/2 [sluice]', function () {
  let port;
  let cport;
  before(async function () {
    tmpFile = tmpFile && fs.existsSync(tmpFile) ? tmpFile :
      path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-split-')), 'f.txt');
    fs.writeFileSync(tmpFile, 'file body');
    const onStream = (stream, headers) => {
      const row = H2_STREAM_ROWS[Number(headers[':path'].slice(1))];
      stream.on('error', (e) => { row.asyncCode = e.code; });
      if (row.trailers) {
        stream.respond({ ':status': 200 }, { waitForTrailers: true });
        stream.on('wantTrailers', () => {
          let code = 'none';
          try {
            stream.sendTrailers(row.trailers);
          } catch (e) {
            code = e.code;
          }
          if (code !== 'none') stream.sendTrailers({ 'x-code': code });
        });
        stream.end('body');
        return;
      }
      let code = 'none';
      try {
        row.act(stream);
      } catch (e) {
        code = e.code;
      }
      if (!row.async && !stream.headersSent) cleanH2(stream, code);
    };
    let server;
    ({ server, port } = await common.startServer());
    server.on('stream', onStream);
    let cserver;
    ({ server: cserver, port: cport } = await common.startServer({ compression: { encodings: ['gzip'] } }));
    cserver.on('stream', onStream);
  });
  after(async function () {
    await common.cleanup();
    fs.rmSync(path.dirname(tmpFile), { recursive: true, force: true });
  });

  // The response the client saw: informational heads, final head, body,
  // trailers, and the reset code if the stream was reset.
  function h2get(p, i) {
    return new Promise((resolve) => {
      const session = h2.connect(p);
      const req = session.request({ ':path': `/${i}`, 'accept-encoding': 'gzip' });
      const out = { info: [], headers: null, body: '', trailers: null, rst: 0 };
      req.on('headers', (h) => out.info.push(h));
      req.on('response', (h) => { out.headers = h; });
      req.on('trailers', (t) => { out.trailers = t; });
      req.on('data', (d) => { out.body += d; });
      req.on('error', () => {});
      req.on('close', () => {
        out.rst = req.rstCode;
        session.close();
        resolve(out);
      });
    });
  }

  function noInjection(out) {
    const all = JSON.stringify([out.info, out.headers, out.trailers]);
    assert.ok(!/injected/i.test(all), `injected field reached the client: ${all}`);
  }

  H2_STREAM_ROWS.forEach((row, i) => {
    it(`${row.name} -> ${row.code}`, async function () {
      const out = await h2get(row.compress ? cport : port, i);
      noInjection(out);
      assert.deepStrictEqual(out.info, []);
      if (row.trailers) {
        assert.strictEqual(out.headers[':status'], 200);
        assert.deepStrictEqual(Object.entries(out.trailers), [['x-code', row.code]]);
      } else if (row.async) {
        // Destroyed with the error before its head: a reset, no response.
        assert.strictEqual(out.headers, null);
        assert.strictEqual(out.rst, http2.constants.NGHTTP2_INTERNAL_ERROR);
        assert.strictEqual(row.asyncCode, row.code);
      } else {
        assert.strictEqual(out.headers[':status'], 500);
        assert.strictEqual(out.headers['x-code'], row.code);
        assert.strictEqual(out.body, 'clean');
      }
    });
  });

  describe('compat API', function () {
    let compatPort;
    before(async function () {
      const handler = tableHandler(H2_COMPAT_ROWS);
      ({ port: compatPort } = await common.startServer(handler));
    });

    H2_COMPAT_ROWS.forEach((row, i) => {
      it(`${row.name} -> ${row.code}`, async function () {
        const out = await h2get(compatPort, i);
        noInjection(out);
        assert.deepStrictEqual(out.info, []);
        if (row.async) {
          assert.strictEqual(out.headers, null);
          assert.strictEqual(row.asyncCode, row.code);
          return;
        }
        assert.strictEqual(out.headers[':status'], 500);
        assert.strictEqual(out.headers['x-code'], row.code);
        assert.strictEqual(out.body, 'clean');
      });
    });

    it('controls: compat early hints with valid fields reach the client as a 103', async function () {
      const { port: p } = await common.startServer((req, res) => {
        res.writeEarlyHints({ link: '</a.css>; rel=preload', 'x-hint': 'h' });
        res.end('ok');
      });
      const out = await h2get(p, 0);
      assert.strictEqual(out.info.length, 1);
      assert.strictEqual(out.info[0][':status'], 103);
      assert.strictEqual(out.info[0].link, '</a.css>; rel=preload');
      assert.strictEqual(out.info[0]['x-hint'], 'h');
      assert.strictEqual(out.headers[':status'], 200);
    });
  });
});
