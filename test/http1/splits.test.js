'use strict';

// A request may arrive split at any byte. Every split point of a request
// with headers and a body: one byte per write, and two writes split at each
// index; the handler must see exactly the same request every time.

const common = require('../common');
const { assert } = common;

const BODY = 'hello, split world!';
const REQUEST =
  'POST /split/path?query=value&x=%20y HTTP/1.1\r\n' +
  'Host: split.example\r\n' +
  'X-Long-Header-Name-For-Splitting: a fairly long header value, with commas, and spaces\r\n' +
  'x-dup: one\r\n' +
  'X-Dup: two\r\n' +
  'Content-Type: text/plain\r\n' +
  `Content-Length: ${BODY.length}\r\n` +
  '\r\n' +
  BODY;

const CHUNKED_REQUEST =
  'PUT /chunked HTTP/1.1\r\n' +
  'Host: split.example\r\n' +
  'Transfer-Encoding: chunked\r\n' +
  'X-After-TE: yes\r\n' +
  '\r\n' +
  '6\r\nhello,\r\n' +
  'd;name=value\r\n split world!\r\n' +
  '0\r\n' +
  '\r\n';

const EXPECTED = {
  method: 'POST',
  url: '/split/path?query=value&x=%20y',
  httpVersion: '1.1',
  headers: {
    host: 'split.example',
    'x-long-header-name-for-splitting': 'a fairly long header value, with commas, and spaces',
    'x-dup': 'one, two',
    'content-type': 'text/plain',
    'content-length': String(BODY.length),
  },
  rawHeaders: [
    'Host', 'split.example',
    'X-Long-Header-Name-For-Splitting', 'a fairly long header value, with commas, and spaces',
    'x-dup', 'one',
    'X-Dup', 'two',
    'Content-Type', 'text/plain',
    'Content-Length', String(BODY.length),
  ],
  body: BODY,
};

const EXPECTED_CHUNKED = {
  method: 'PUT',
  url: '/chunked',
  httpVersion: '1.1',
  headers: {
    host: 'split.example',
    'transfer-encoding': 'chunked',
    'x-after-te': 'yes',
  },
  rawHeaders: [
    'Host', 'split.example',
    'Transfer-Encoding', 'chunked',
    'X-After-TE', 'yes',
  ],
  body: BODY,
};

// `release` gives each chunk back to its buffer pool once copied.
const describeHandler = (release) => function describeRequest(req, res) {
  const parts = [];
  req.on('data', (d) => {
    parts.push(Buffer.from(d));
    release(d);
  });
  req.on('end', () => {
    res.end(JSON.stringify({
      method: req.method,
      url: req.url,
      httpVersion: req.httpVersion,
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      body: Buffer.concat(parts).toString(),
    }));
  });
};

function pause(i) {
  // Alternate short timers and setImmediate: timers give the server time to
  // read each piece separately.
  return i % 4 === 3 ? new Promise((r) => setImmediate(r)) : common.sleep(1);
}

common.withAndWithoutPool(`http1 split requests [${common.implName}]`, function (v) {
  afterEach(common.cleanup);

  it('request with headers and body sent one byte per write', async function () {
    const { port } = await common.startServer(v.options(), describeHandler(v.release));
    const c = await common.rawConnect(port);
    const bytes = Buffer.from(REQUEST, 'latin1');
    for (let i = 0; i < bytes.length; i++) {
      c.socket.write(bytes.subarray(i, i + 1));
      await pause(i);
    }
    const [r] = await c.responses(1);
    assert.strictEqual(r.statusCode, 200);
    assert.deepStrictEqual(JSON.parse(r.body), EXPECTED);
  });

  it('chunked request sent one byte per write', async function () {
    const { port } = await common.startServer(v.options(), describeHandler(v.release));
    const c = await common.rawConnect(port);
    const bytes = Buffer.from(CHUNKED_REQUEST, 'latin1');
    for (let i = 0; i < bytes.length; i++) {
      c.socket.write(bytes.subarray(i, i + 1));
      await pause(i);
    }
    const [r] = await c.responses(1);
    assert.deepStrictEqual(JSON.parse(r.body), EXPECTED_CHUNKED);
  });

  it('two pipelined requests sent one byte per write on one connection', async function () {
    const { port } = await common.startServer(v.options(), describeHandler(v.release));
    const c = await common.rawConnect(port);
    const bytes = Buffer.from(REQUEST + CHUNKED_REQUEST, 'latin1');
    for (let i = 0; i < bytes.length; i++) {
      c.socket.write(bytes.subarray(i, i + 1));
      if (i % 3 === 0) await pause(i);
    }
    const rs = await c.responses(2);
    assert.deepStrictEqual(JSON.parse(rs[0].body), EXPECTED);
    assert.deepStrictEqual(JSON.parse(rs[1].body), EXPECTED_CHUNKED);
  });

  it('request split into two writes at every index (fresh connection each)', async function () {
    this.timeout(30000);
    const { port } = await common.startServer(v.options(), describeHandler(v.release));
    const bytes = Buffer.from(REQUEST, 'latin1');
    for (let i = 1; i < bytes.length; i++) {
      const c = await common.rawConnect(port);
      await c.write(bytes.subarray(0, i));
      await common.sleep(1);
      await c.write(bytes.subarray(i));
      const [r] = await c.responses(1);
      assert.deepStrictEqual(JSON.parse(r.body), EXPECTED, `split at ${i}: ${JSON.stringify(REQUEST.slice(0, i))}`);
      c.destroy();
    }
  });

  it('chunked request split into two writes at every index (one keep-alive connection)', async function () {
    this.timeout(30000);
    const { port } = await common.startServer(v.options(), describeHandler(v.release));
    const bytes = Buffer.from(CHUNKED_REQUEST, 'latin1');
    const c = await common.rawConnect(port);
    for (let i = 1; i < bytes.length; i++) {
      await c.write(bytes.subarray(0, i));
      await common.sleep(1);
      await c.write(bytes.subarray(i));
      const rs = await c.responses(i);
      assert.deepStrictEqual(JSON.parse(rs[i - 1].body), EXPECTED_CHUNKED, `split at ${i}: ${JSON.stringify(CHUNKED_REQUEST.slice(0, i))}`);
    }
    assert.strictEqual(c.closed, false);
  });

  it('request split into three writes around the header/body boundary', async function () {
    const { port } = await common.startServer(v.options(), describeHandler(v.release));
    const bytes = Buffer.from(REQUEST, 'latin1');
    const boundary = REQUEST.indexOf('\r\n\r\n');
    const c = await common.rawConnect(port);
    let n = 0;
    for (let a = boundary - 2; a <= boundary + 4; a++) {
      for (let b = a + 1; b <= boundary + 6; b++) {
        await c.write(bytes.subarray(0, a));
        await common.sleep(1);
        await c.write(bytes.subarray(a, b));
        await common.sleep(1);
        await c.write(bytes.subarray(b));
        n++;
        const rs = await c.responses(n);
        assert.deepStrictEqual(JSON.parse(rs[n - 1].body), EXPECTED, `splits at ${a}, ${b}`);
      }
    }
  });
});
