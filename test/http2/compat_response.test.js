'use strict';

// The compat response on HTTP/2 as node's Http2ServerResponse where it
// differs from HTTP/1.1's: statusMessage stays '' (setting it warns),
// statusCode refuses 1xx and out-of-range codes with HTTP/2's codes, a
// head already sent is ERR_HTTP2_HEADERS_SENT, header names are trimmed,
// pseudo-headers cannot be set, setTrailer() and addTrailers() add up.
// Shared with node:http2 (SLUICE_TEST_IMPL=node).

const http2 = require('node:http2');
const common = require('../common');
const h2 = require('./h2common');

const { assert } = common;

async function startCompat(onRequest) {
  if (common.isNode) {
    const server = common.trackServer(http2.createServer(onRequest));
    server.on('session', (s) => common.trackSocket(s));
    await common.listenLocal(server);
    return server.address().port;
  }
  const { port } = await common.startServer(onRequest);
  return port;
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
});
