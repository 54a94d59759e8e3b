'use strict';

// maxRequestBodySize over HTTP/2 (sluice's own limit; node:http2 has none),
// with node's http2 client: a body that passes it gets 413 and the stream
// is reset with NO_ERROR after the response (RFC 9113 8.1); no byte past
// the limit reaches the handler; a content-length over it is refused
// before any DATA; the session serves on.

const common = require('../common');
const h2 = require('./h2common');
const { assert } = common;

const describeSluice = common.isNode ? describe.skip : describe;
const LIMIT = 1000;

// Sends `total` bytes in 100-byte writes (no content-length unless
// `contentLength`); resolves { status, body, rstCode }.
function upload(session, total, { contentLength = false, path = '/' } = {}) {
  return common.withTimeout(new Promise((resolve) => {
    const headers = { ':method': 'POST', ':path': path };
    if (contentLength) headers['content-length'] = String(total);
    const req = session.request(headers, { endStream: false });
    let status;
    const chunks = [];
    req.on('response', (h) => { status = h[':status']; });
    req.on('data', (d) => chunks.push(d));
    req.on('error', () => {});
    req.on('close', () => resolve({ status, body: Buffer.concat(chunks).toString(), rstCode: req.rstCode }));
    let sent = 0;
    const more = () => {
      while (sent < total) {
        const n = Math.min(100, total - sent);
        sent += n;
        if (sent === total) { req.end(Buffer.alloc(n, 'x')); return; }
        if (!req.write(Buffer.alloc(n, 'x'))) { req.once('drain', more); return; }
      }
    };
    more();
  }), 10000, 'upload');
}

describeSluice('HTTP/2 maxRequestBodySize', function () {
  afterEach(common.cleanup);

  // A compat server that records what its handler saw.
  async function compatServer(respondEarly = false) {
    const seen = { bytes: 0, errors: [], ended: false };
    const s = await common.startServer({ maxRequestBodySize: LIMIT }, (req, res) => {
      if (respondEarly) {
        res.writeHead(200);
        res.flushHeaders();
      }
      req.on('data', (d) => { seen.bytes += d.length; });
      req.on('end', () => { seen.ended = true; res.end('done'); });
      req.on('error', (e) => { seen.errors.push([e.code, e.statusCode]); if (respondEarly) res.end('early'); });
    });
    return { ...s, seen };
  }

  it('compat: a streamed body over the limit gets 413; req emits ERR_SLUICE_BODY_TOO_LARGE; no byte past the limit was delivered', async function () {
    const { port, seen } = await compatServer();
    const session = h2.connect(port);
    const r = await upload(session, 5000);
    assert.strictEqual(r.status, 413);
    assert.strictEqual(r.rstCode, 0, 'NO_ERROR');
    assert.deepStrictEqual(seen.errors, [['ERR_SLUICE_BODY_TOO_LARGE', 413]]);
    assert.ok(seen.bytes <= LIMIT, `${seen.bytes} bytes delivered`);
    assert.strictEqual(seen.ended, false);
    // The session serves on.
    const ok = await upload(session, LIMIT);
    assert.deepStrictEqual([ok.status, ok.body], [200, 'done']);
  });

  it('compat: a content-length over the limit is refused before any DATA is delivered', async function () {
    const { port, seen } = await compatServer();
    const r = await upload(h2.connect(port), 5000, { contentLength: true });
    assert.strictEqual(r.status, 413);
    assert.strictEqual(seen.bytes, 0);
    assert.deepStrictEqual(seen.errors, [['ERR_SLUICE_BODY_TOO_LARGE', 413]]);
  });

  it('compat: a handler that responded already keeps its response; the excess is discarded', async function () {
    const { port, seen } = await compatServer(true);
    const r = await upload(h2.connect(port), 20000);
    assert.deepStrictEqual([r.status, r.body], [200, 'early']);
    assert.deepStrictEqual(seen.errors, [['ERR_SLUICE_BODY_TOO_LARGE', 413]]);
    assert.ok(seen.bytes <= LIMIT);
  });

  it('stream API: the stream emits ERR_SLUICE_BODY_TOO_LARGE and the client gets 413; a later server.maxRequestBodySize applies', async function () {
    const { server, port } = await common.startServer({ maxRequestBodySize: LIMIT });
    const seen = [];
    server.on('stream', (stream) => {
      let bytes = 0;
      stream.on('data', (d) => { bytes += d.length; });
      stream.on('error', (e) => seen.push([e.code, e.statusCode, bytes <= server.maxRequestBodySize]));
      stream.on('end', () => { stream.respond({ ':status': 200 }); stream.end(`got ${bytes}`); });
    });
    const session = h2.connect(port);
    const r = await upload(session, 3000);
    assert.strictEqual(r.status, 413);
    assert.deepStrictEqual(seen, [['ERR_SLUICE_BODY_TOO_LARGE', 413, true]]);
    server.maxRequestBodySize = 4000;
    const ok = await upload(session, 3000);
    assert.deepStrictEqual([ok.status, ok.body], [200, 'got 3000']);
  });
});
