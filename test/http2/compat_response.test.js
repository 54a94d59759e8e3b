'use strict';

// The compat response on HTTP/2 as node's Http2ServerResponse where it
// differs from HTTP/1.1's: statusMessage stays '' (setting it warns),
// statusCode refuses 1xx and out-of-range codes with HTTP/2's codes, a
// head already sent is ERR_HTTP2_HEADERS_SENT, header names are trimmed,
// pseudo-headers cannot be set, setTrailer() and addTrailers() add up.
// Shared with node:http2 (SLUICE_TEST_IMPL=node).

const common = require('../common');
const h2 = require('./h2common');

const { assert } = common;

const { startCompat } = h2;

// A request whose head asks for `expect`; resolves { status, continued, body }.
function expectRequest(port, expect) {
  const session = h2.connect(port);
  return common.withTimeout(new Promise((resolve, reject) => {
    const req = session.request({ ':method': 'POST', ':path': '/', expect });
    let continued = false;
    let status;
    let body = '';
    req.on('continue', () => {
      continued = true;
      req.end('x');
    });
    req.on('response', (h) => { status = h[':status']; });
    req.setEncoding('utf8');
    req.on('data', (d) => { body += d; });
    req.on('end', () => resolve({ status, continued, body }));
    req.on('error', reject);
    if (expect !== '100-continue') req.end();
  }), 5000, 'the response');
}

describe('http2 compat response (node Http2ServerResponse differences)', function () {
  afterEach(common.cleanup);

  it('statusCode, statusMessage, header names, HEADERS_SENT, trailers', async function () {
    const seen = {};
    const port = await startCompat((req, res) => {
      const warnings = [];
      const onWarning = (w) => warnings.push(w.name);
      process.on('warning', onWarning);
      res.statusMessage = 'nope';
      seen.statusMessage = res.statusMessage;
      assert.throws(() => { res.statusCode = 101; }, { code: 'ERR_HTTP2_INFO_STATUS_NOT_ALLOWED', name: 'RangeError' });
      assert.throws(() => { res.statusCode = 600; }, { code: 'ERR_HTTP2_STATUS_INVALID', name: 'RangeError' });
      res.statusCode = 201;
      assert.throws(() => res.setHeader(':path', '/'), { code: 'ERR_HTTP2_PSEUDOHEADER_NOT_ALLOWED' });
      res.setHeader(' X-Name\t', 'v');
      seen.trimmed = [res.hasHeader(' X-NAME '), res.getHeader('x-name ')];
      assert.throws(() => res.setTrailer('t', undefined), { code: 'ERR_HTTP2_INVALID_HEADER_VALUE' });
      assert.throws(() => res.addTrailers({ '': 'x' }), { message: 'Header name must be a valid HTTP token [""]' });
      res.addTrailers({ 'x-a': '1' });
      res.setTrailer('x-b', '2');
      res.writeHead(202);
      assert.throws(() => res.setHeader('x-late', '1'), { code: 'ERR_HTTP2_HEADERS_SENT' });
      assert.throws(() => res.writeHead(200), { code: 'ERR_HTTP2_HEADERS_SENT' });
      res.end('ok');
      setImmediate(() => {
        process.removeListener('warning', onWarning);
        seen.warnings = warnings;
      });
    });
    const r = await h2.request(h2.connect(port));
    assert.strictEqual(r.headers[':status'], 202);
    assert.strictEqual(r.headers['x-name'], 'v');
    assert.strictEqual(r.body.toString(), 'ok');
    assert.deepStrictEqual({ a: r.trailers['x-a'], b: r.trailers['x-b'] }, { a: '1', b: '2' });
    assert.strictEqual(seen.statusMessage, '');
    assert.deepStrictEqual(seen.trimmed, [true, 'v']);
    await h2.waitFor(() => seen.warnings !== undefined);
    // node warns once per process; this may be the first or not.
    assert.ok(seen.warnings.every((n) => n === 'UnsupportedWarning'), seen.warnings.join());
  });

  it("Expect: 100-continue gets a 100 before 'request'; 'checkContinue' takes it when listened to", async function () {
    const echo = (req, res) => {
      let b = '';
      req.on('data', (d) => { b += d; });
      req.on('end', () => res.end(`got ${b}`));
    };
    let port = await startCompat(echo);
    assert.deepStrictEqual(await expectRequest(port, '100-continue'), { status: 200, continued: true, body: 'got x' });
    let checked = 0;
    port = await startCompat(() => { throw new Error("'request' must not be emitted"); }, {
      checkContinue(req, res) {
        checked++;
        assert.strictEqual(res.writeContinue(), true);
        echo(req, res);
      },
    });
    assert.deepStrictEqual(await expectRequest(port, '100-continue'), { status: 200, continued: true, body: 'got x' });
    assert.strictEqual(checked, 1);
  });

  it("another Expect: 417, or 'checkExpectation' when listened to", async function () {
    let port = await startCompat(() => { throw new Error("'request' must not be emitted"); });
    assert.strictEqual((await expectRequest(port, 'x-other')).status, 417);
    port = await startCompat(() => { throw new Error("'request' must not be emitted"); }, {
      checkExpectation(req, res) { res.end('checked'); },
    });
    assert.deepStrictEqual(await expectRequest(port, 'x-other'), { status: 200, continued: false, body: 'checked' });
  });

  it("CONNECT goes to 'connect' (req, res) when listened to", async function () {
    const port = await startCompat(() => { throw new Error("'request' must not be emitted"); }, {
      connect(req, res) {
        assert.strictEqual(req.method, 'CONNECT');
        res.end('tunnel');
      },
    });
    const r = await h2.request(h2.connect(port), { ':method': 'CONNECT', ':authority': 'example.org:443', ':path': undefined });
    assert.strictEqual(r.body.toString(), 'tunnel');
  });
});
