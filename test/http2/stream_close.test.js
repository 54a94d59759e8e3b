'use strict';

// stream.close(code) on the server's stream API: the events the handler
// sees, as node:http2 — 'aborted' (the response had not ended), an
// 'error' ERR_HTTP2_STREAM_ERROR for a code other than NO_ERROR and
// CANCEL, then 'close' with rstCode; the client sees the reset code.
// Shared with node:http2 (SLUICE_TEST_IMPL=node).

const http2 = require('node:http2');
const common = require('../common');
const h2 = require('./h2common');
const { assert } = common;

const { NGHTTP2_NO_ERROR, NGHTTP2_INTERNAL_ERROR, NGHTTP2_CANCEL, NGHTTP2_ENHANCE_YOUR_CALM } = http2.constants;

async function closeWith(code, respondFirst) {
  let done;
  const seen = new Promise((resolve) => { done = resolve; });
  const { port } = await h2.startH2((s) => {
    const events = [];
    s.on('aborted', () => events.push('aborted'));
    s.on('error', (e) => events.push(`error ${e.code}: ${e.message}`));
    s.on('close', () => { events.push(`close ${s.rstCode}`); done(events); });
    if (respondFirst) s.respond({ ':status': 200 });
    s.close(code);
  });
  const session = h2.connect(port);
  const req = session.request({ ':path': '/' });
  req.on('error', () => {});
  req.resume();
  await common.once(req, 'close', 5000);
  return { server: await seen, client: req.rstCode };
}

describe('http2 stream.close(code)', function () {
  afterEach(common.cleanup);

  const table = [
    [NGHTTP2_NO_ERROR, false, null],
    [NGHTTP2_CANCEL, false, null],
    [NGHTTP2_INTERNAL_ERROR, false, 'NGHTTP2_INTERNAL_ERROR'],
    [NGHTTP2_ENHANCE_YOUR_CALM, false, 'NGHTTP2_ENHANCE_YOUR_CALM'],
    [NGHTTP2_INTERNAL_ERROR, true, 'NGHTTP2_INTERNAL_ERROR'],
  ];
  for (const [code, respondFirst, name] of table) {
    it(`close(${code})${respondFirst ? ' after respond()' : ''}: ${name ? 'ERR_HTTP2_STREAM_ERROR' : 'no error'}`, async function () {
      const { server, client } = await closeWith(code, respondFirst);
      const expected = ['aborted'];
      if (name) expected.push(`error ERR_HTTP2_STREAM_ERROR: Stream closed with error code ${name}`);
      expected.push(`close ${code}`);
      assert.deepStrictEqual(server, expected);
      // (After a response head, node's client reports rstCode 0.)
      if (!respondFirst) assert.strictEqual(client, code);
    });
  }

  it('additionalHeaders() after close() is ERR_HTTP2_INVALID_STREAM; 101 is ERR_HTTP2_STATUS_101', async function () {
    let done;
    const seen = new Promise((resolve) => { done = resolve; });
    const { port } = await h2.startH2((s) => {
      const codes = [];
      const attempt = (fn) => {
        try { fn(); codes.push('ok'); } catch (e) { codes.push(e.code); }
      };
      attempt(() => s.additionalHeaders({ ':status': 101 }));
      s.close();
      attempt(() => s.additionalHeaders({ ':status': 100 }));
      done(codes);
    });
    const session = h2.connect(port);
    const req = session.request({ ':path': '/' });
    req.on('error', () => {});
    req.resume();
    assert.deepStrictEqual(await common.withTimeout(seen, 5000, 'the handler'),
      ['ERR_HTTP2_STATUS_101', 'ERR_HTTP2_INVALID_STREAM']);
  });
});
