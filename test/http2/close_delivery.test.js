'use strict';

// A response given together with stream.close() in one turn of the loop
// is delivered whole before the RST_STREAM, as node:http2's close() does
// (it ends the writable side and resets after 'finish'): respond() +
// end(body) + close(), and write() + write() + end() + close() with more
// than a window of body (node's test-http2-large-write-close), on h2c and
// over TLS. And the other way round: a client that sends DATA +
// END_STREAM and RST_STREAM(NO_ERROR) at once has its body delivered
// ('data', 'end', then 'close'), as node's test-http2-buffersize. The
// compat handler may overwrite res.req (node's
// test-http2-compat-serverresponse). Shared with node:http2
// (SLUICE_TEST_IMPL=node).

const http2 = require('node:http2');
const net = require('node:net');
const common = require('../common');
const h2 = require('./h2common');
const { startSecure, fixtures } = require('../tls/tls_common');

const { assert } = common;

// A secure server with a 'stream' listener on either impl; node's
// sessions are tracked so cleanup ends them.
async function startH2Secure(onStream) {
  const { server, port } = await startSecure({});
  server.on('stream', onStream);
  server.on('session', (s) => common.trackSocket(s));
  return { port, url: `https://localhost:${port}` };
}

// Requests / on `url`; resolves { status, length, rstCode } at 'close'.
function fetchAll(url, options) {
  const session = http2.connect(url, options);
  common.trackSocket(session);
  session.on('error', () => {});
  return common.withTimeout(new Promise((resolve) => {
    const req = session.request({ ':path': '/' });
    let status;
    let length = 0;
    req.on('response', (h) => { status = h[':status']; });
    req.on('data', (d) => { length += d.length; });
    req.on('error', () => {});
    req.on('close', () => {
      session.close();
      resolve({ status, length, rstCode: req.rstCode });
    });
    req.end();
  }), 10000, 'the response');
}

const big = Buffer.alloc(100000, 0x44);
const handlers = {
  'respond() + end(body) + close()': (stream) => {
    stream.respond({ ':status': 200 });
    stream.end(big);
    stream.close();
  },
  'respond() with content-length + end(body) + close()': (stream) => {
    stream.respond({ ':status': 200, 'content-length': big.length });
    stream.end(big);
    stream.close();
  },
  'write() + write() + end() + close(), two windows of body': (stream) => {
    stream.respond({ ':status': 200, 'content-length': big.length * 2 });
    stream.write(big);
    stream.write(big);
    stream.end();
    stream.close();
  },
};
const expected = {
  'write() + write() + end() + close(), two windows of body': big.length * 2,
};

describe('http2 close() after the response in the same turn', function () {
  afterEach(common.cleanup);

  for (const [title, handler] of Object.entries(handlers)) {
    const length = expected[title] || big.length;
    it(`h2c: ${title} delivers the whole response`, async function () {
      const { port } = await h2.startH2(handler);
      const r = await fetchAll(`http://127.0.0.1:${port}`);
      assert.deepStrictEqual(r, { status: 200, length, rstCode: 0 });
    });

    it(`TLS: ${title} delivers the whole response`, async function () {
      const { url } = await startH2Secure(handler);
      const r = await fetchAll(url, { ca: fixtures().ca });
      assert.deepStrictEqual(r, { status: 200, length, rstCode: 0 });
    });
  }

  it("close() in 'wantTrailers' (no trailers sent): the body arrives, the stream closes", async function () {
    const { port } = await h2.startH2((stream) => {
      stream.respond({ ':status': 200 }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.close());
      stream.end('hello');
    });
    const r = await h2.request(h2.connect(port));
    assert.strictEqual(r.body.toString(), 'hello');
  });

  it('DATA + END_STREAM then RST_STREAM(NO_ERROR) at once: the stream emits data, end, close', async function () {
    let done;
    const seen = new Promise((resolve) => { done = resolve; });
    const { port } = await h2.startH2((stream) => {
      const events = [];
      let body = '';
      stream.on('data', (d) => { body += d; });
      stream.on('end', () => events.push(`end ${body}`));
      stream.on('close', () => { events.push('close'); done(events); });
    });
    const sock = net.connect(port, '127.0.0.1');
    common.trackSocket(sock);
    sock.on('error', () => {});
    // POST / (HPACK :method POST, static index 3), then DATA "hello" with
    // END_STREAM and RST_STREAM(NO_ERROR), one write.
    const post = Buffer.from([0x83, 0x86, 0x84, 0x41, 0x01, 0x61]);
    sock.write(Buffer.concat([
      h2.PREFACE,
      h2.frame(h2.FRAME.SETTINGS, 0, 0),
      h2.frame(h2.FRAME.HEADERS, 0x4, 1, post),
      h2.frame(h2.FRAME.DATA, 0x1, 1, Buffer.from('hello')),
      h2.frame(h2.FRAME.RST_STREAM, 0, 1, Buffer.alloc(4)),
    ]));
    assert.deepStrictEqual(await common.withTimeout(seen, 5000, "the stream's 'close'"),
      ['end hello', 'close']);
  });
});

describe('http2 compat: res.req may be overwritten', function () {
  afterEach(common.cleanup);

  it('res.req = null in the handler: the response finishes, the server serves on', async function () {
    const onRequest = (req, res) => {
      assert.strictEqual(res.req, req);
      res.req = null;
      res.end('ok');
    };
    let server;
    if (common.isNode) {
      server = common.trackServer(http2.createServer(onRequest));
      server.on('session', (s) => common.trackSocket(s));
      await common.listenLocal(server);
    } else {
      ({ server } = await common.startServer(onRequest));
    }
    const session = h2.connect(server.address().port);
    for (let i = 0; i < 2; i++) {
      const r = await h2.request(session, { ':path': '/' });
      assert.strictEqual(r.headers[':status'], 200);
      assert.strictEqual(r.body.toString(), 'ok');
    }
  });
});
