'use strict';

// How node:http frames a response and orders the headers it adds, byte-exact
// over raw sockets: Date, Connection, Keep-Alive, then Content-Length or
// Transfer-Encoding after the user's headers; end(body) sends a length only
// when end() starts the head (after an explicit writeHead() or with a
// Trailer header the body is chunked); a 204 / 304 the user marked chunked
// gets no chunk and closes the connection. Shared: also run against
// node:http (SLUICE_TEST_IMPL=node).

const common = require('../common');
const { assert } = common;

const GET = 'GET / HTTP/1.1\r\nHost: h\r\n\r\n';

// The first response to `wire` (c.text: the raw bytes received).
async function exchange(handler, wire = GET) {
  const { port } = await common.startServer(handler);
  const c = await common.rawConnect(port);
  c.socket.write(wire);
  const [r] = await c.responses(1);
  return { r, c };
}

// The header names of a raw head, in order, Date's value dropped.
function headLines(text) {
  const head = text.slice(0, text.indexOf('\r\n\r\n'));
  return head.split('\r\n').map((l) => (l.startsWith('Date: ') ? 'Date: *' : l));
}

describe(`http1 response framing and header order [${common.implName}]`, function () {
  afterEach(common.cleanup);

  it('end(body): user headers, Date, Connection, Keep-Alive, Content-Length', async function () {
    const { c } = await exchange((req, res) => {
      res.setHeader('X-A', '1');
      res.end('hello');
    });
    assert.deepStrictEqual(headLines(c.text), [
      'HTTP/1.1 200 OK', 'X-A: 1', 'Date: *', 'Connection: keep-alive',
      'Keep-Alive: timeout=5', 'Content-Length: 5',
    ]);
  });

  it('write() then end(): Transfer-Encoding: chunked comes last', async function () {
    const { c, r } = await exchange((req, res) => {
      res.setHeader('Content-Type', 'text/plain');
      res.write('he');
      res.end('llo');
    });
    assert.deepStrictEqual(headLines(c.text), [
      'HTTP/1.1 200 OK', 'Content-Type: text/plain', 'Date: *', 'Connection: keep-alive',
      'Keep-Alive: timeout=5', 'Transfer-Encoding: chunked',
    ]);
    assert.strictEqual(r.body.toString(), 'hello');
  });

  it('maxRequestsPerSocket: Keep-Alive carries max= before the framing header', async function () {
    const { port, server } = await common.startServer((req, res) => res.end('x'));
    server.maxRequestsPerSocket = 3;
    const c = await common.rawConnect(port);
    c.socket.write(GET);
    await c.responses(1);
    assert.deepStrictEqual(headLines(c.text).slice(2), [
      'Connection: keep-alive', 'Keep-Alive: timeout=5, max=3', 'Content-Length: 1',
    ]);
  });

  it('keepAliveTimeout and maxRequestsPerSocket changed between requests: each head says the current ones, in whole seconds rounded down', async function () {
    const { port, server } = await common.startServer((req, res) => res.end('x'));
    const c = await common.rawConnect(port);
    const keepAliveLine = async () => {
      const before = c.text.length;
      c.socket.write(GET);
      await c.waitFor(() => c.text.indexOf('\r\n\r\nx', before) !== -1);
      return headLines(c.text.slice(before)).filter((l) => l.startsWith('Keep-Alive'));
    };
    assert.deepStrictEqual(await keepAliveLine(), ['Keep-Alive: timeout=5']);
    server.keepAliveTimeout = 7900;
    assert.deepStrictEqual(await keepAliveLine(), ['Keep-Alive: timeout=7']);
    server.maxRequestsPerSocket = 10;
    assert.deepStrictEqual(await keepAliveLine(), ['Keep-Alive: timeout=7, max=10']);
    server.keepAliveTimeout = 999;
    assert.deepStrictEqual(await keepAliveLine(), ['Keep-Alive: timeout=0, max=10']);
    server.keepAliveTimeout = 0;
    assert.deepStrictEqual(await keepAliveLine(), []);
  });

  it('writeHead() then end(body): chunked, as node (the head was fixed by writeHead)', async function () {
    for (const writeHead of [
      (res) => res.writeHead(200),
      (res) => res.writeHead(200, { 'content-type': 'text/plain', date: 'now' }),
    ]) {
      const { c, r } = await exchange((req, res) => {
        writeHead(res);
        res.end('bye');
      });
      assert.ok(c.text.includes('Transfer-Encoding: chunked\r\n\r\n3\r\nbye\r\n0\r\n\r\n'), c.text);
      assert.strictEqual(r.headers['content-length'], undefined);
    }
  });

  it('writeHead() with a Content-Length then end(body): the user\'s length', async function () {
    const { c, r } = await exchange((req, res) => {
      res.writeHead(200, { 'Content-Length': 3 });
      res.end('bye');
    });
    assert.ok(c.text.startsWith('HTTP/1.1 200 OK\r\nContent-Length: 3\r\n'), c.text);
    assert.ok(c.text.endsWith('\r\n\r\nbye'), c.text);
    assert.strictEqual(r.headers['transfer-encoding'], undefined);
    assert.strictEqual(r.body.toString(), 'bye');
  });

  it('a Trailer header makes end(body) chunked, with the trailers after the last chunk', async function () {
    const { c, r } = await exchange((req, res) => {
      res.setHeader('Trailer', 'x-foo');
      res.addTrailers({ 'x-foo': 'bar' });
      res.end('body');
    });
    assert.ok(c.text.includes('Transfer-Encoding: chunked\r\n\r\n4\r\nbody\r\n0\r\nx-foo: bar\r\n\r\n'), c.text);
    assert.strictEqual(r.body.toString(), 'body');
  });

  for (const status of [204, 304]) {
    it(`${status} with Transfer-Encoding: chunked: no chunk, Connection: close`, async function () {
      const { port } = await common.startServer((req, res) => {
        res.writeHead(status, { 'Transfer-Encoding': 'chunked' });
        res.end();
      });
      const c = await common.rawUntilClose(port, GET);
      assert.match(c.text, /^Connection: close\r\n/m);
      assert.doesNotMatch(c.text, /^0\r\n/m);
      assert.ok(c.text.endsWith('\r\n\r\n'));
    });
  }

  it('a 204 without a chunked header keeps the connection', async function () {
    const { c } = await exchange((req, res) => {
      res.writeHead(204);
      res.end();
    });
    assert.match(c.text, /^Connection: keep-alive\r\n/m);
  });
});
