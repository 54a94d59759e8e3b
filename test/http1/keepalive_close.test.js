'use strict';

// Connection management: keep-alive for HTTP/1.1, close after the response
// for HTTP/1.0 and `Connection: close`, keepAliveTimeout.

const http = require('node:http');
const common = require('../common');
const { assert } = common;

function connectionHeader(r) {
  return String(r.headers.connection || '').toLowerCase();
}

// One request on a raw connection to a server made with `options`, then
// how long the idle connection stayed open after its response.
async function idleCloseAfterOneRequest(options) {
  const { port } = await common.startServer(options, (req, res) => res.end('x'));
  const c = await common.rawConnect(port);
  c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
  await c.responses(1);
  const t0 = Date.now();
  await c.waitClose(3000);
  return { c, ms: Date.now() - t0 };
}

describe(`http1 keep-alive and close [${common.implName}]`, function () {
  afterEach(common.cleanup);

  it('HTTP/1.1 keeps the connection open across requests', async function () {
    const ports = [];
    const { port } = await common.startServer((req, res) => {
      ports.push(req.socket.remotePort);
      res.end(req.url);
    });
    const c = await common.rawConnect(port);
    c.socket.write('GET /1 HTTP/1.1\r\nHost: h\r\n\r\n');
    const [r1] = await c.responses(1);
    assert.notStrictEqual(connectionHeader(r1), 'close');
    await common.sleep(50);
    assert.strictEqual(c.closed, false);
    c.socket.write('GET /2 HTTP/1.1\r\nHost: h\r\n\r\n');
    const rs = await c.responses(2);
    assert.strictEqual(rs[1].body.toString(), '/2');
    await common.sleep(50);
    assert.strictEqual(c.closed, false);
    assert.deepStrictEqual(ports, [c.socket.localPort, c.socket.localPort]);
  });

  it('node http client with a keep-alive agent reuses one connection', async function () {
    const ports = new Set();
    const { port } = await common.startServer((req, res) => {
      ports.add(req.socket.remotePort);
      res.end('ok');
    });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let i = 0; i < 5; i++) {
        const r = await common.httpRequest(port, { agent, path: `/${i}` });
        assert.strictEqual(r.body.toString(), 'ok');
      }
    } finally {
      agent.destroy();
    }
    assert.strictEqual(ports.size, 1);
  });

  it('Connection: close in the request: response says close and the server closes', async function () {
    const { port } = await common.startServer((req, res) => res.end('bye'));
    const c = await common.rawConnect(port);
    c.socket.write('GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n');
    const data = await c.waitClose(2000);
    const [r] = common.parseAll(data);
    assert.strictEqual(r.statusCode, 200);
    assert.strictEqual(connectionHeader(r), 'close');
    assert.strictEqual(r.body.toString(), 'bye');
  });

  it('Connection: close with two pipelined requests: both answered, then close', async function () {
    const { port } = await common.startServer((req, res) => res.end(req.url));
    const c = await common.rawConnect(port);
    c.socket.write('GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n');
    const data = await c.waitClose(2000);
    const rs = common.parseAll(data);
    assert.deepStrictEqual(rs.map((r) => r.body.toString()), ['/1', '/2']);
  });

  it('Connection: close set by the handler closes after the response', async function () {
    const { port } = await common.startServer((req, res) => {
      res.setHeader('Connection', 'close');
      res.end('handler closes');
    });
    const c = await common.rawConnect(port);
    c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
    const data = await c.waitClose(2000);
    const [r] = common.parseAll(data);
    assert.strictEqual(r.body.toString(), 'handler closes');
  });

  it('HTTP/1.0 closes after the response (Content-Length known)', async function () {
    const { port } = await common.startServer((req, res) => res.end('one-oh'));
    const c = await common.rawConnect(port);
    c.socket.write('GET / HTTP/1.0\r\n\r\n');
    const data = await c.waitClose(2000);
    const [r] = common.parseAll(data);
    assert.strictEqual(r.statusCode, 200);
    assert.strictEqual(r.body.toString(), 'one-oh');
    assert.notStrictEqual(String(r.headers['transfer-encoding'] || '').toLowerCase(), 'chunked');
  });

  it('HTTP/1.0 with a streamed body: no chunked encoding, body delimited by close', async function () {
    const { port } = await common.startServer(async (req, res) => {
      res.write('first ');
      await common.sleep(10);
      res.write('second ');
      res.end('third');
    });
    const c = await common.rawConnect(port);
    c.socket.write('GET / HTTP/1.0\r\nHost: h\r\n\r\n');
    const data = await c.waitClose(2000);
    const [r] = common.parseAll(data);
    assert.strictEqual(r.headers['transfer-encoding'], undefined);
    assert.strictEqual(r.body.toString(), 'first second third');
  });

  it('HTTP/1.0 with Connection: keep-alive and an explicit Content-Length stays open (as node)', async function () {
    const { port } = await common.startServer((req, res) => {
      res.setHeader('Content-Length', Buffer.byteLength(req.url));
      res.end(req.url);
    });
    const c = await common.rawConnect(port);
    c.socket.write('GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n');
    const [r1] = await c.responses(1);
    assert.strictEqual(r1.body.toString(), '/a');
    assert.strictEqual(connectionHeader(r1), 'keep-alive');
    await common.sleep(50);
    assert.strictEqual(c.closed, false);
    c.socket.write('GET /b HTTP/1.0\r\n\r\n');
    const data = await c.waitClose(2000);
    const rs = common.parseAll(data);
    assert.deepStrictEqual(rs.map((r) => r.body.toString()), ['/a', '/b']);
  });

  it('curl --http1.0', async function () {
    let version;
    const { url } = await common.startServer((req, res) => {
      version = req.httpVersion;
      res.end('via 1.0');
    });
    const r = await common.curl(['--http1.0', `${url}/`]);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(r.stdout.toString(), 'via 1.0');
    assert.strictEqual(version, '1.0');
  });

  it('server.close() right after res.end() in the handler: the connection is not idle yet and serves a next request', async function () {
    // node: the response is in flight until its write completes, so
    // close() does not close this connection as idle (node's
    // test-http-server-unconsume relies on it). node answers the next
    // request keep-alive, sluice (draining) with Connection: close.
    let n = 0;
    const { server, port } = await common.startServer((req, res) => {
      res.end(req.url);
      if (++n === 1) server.close();
    });
    const c = await common.rawConnect(port);
    c.socket.write('GET /1 HTTP/1.1\r\nHost: h\r\n\r\n');
    await c.responses(1);
    await common.sleep(50);
    c.socket.write('GET /2 HTTP/1.1\r\nHost: h\r\n\r\n');
    const rs = await c.responses(2);
    assert.deepStrictEqual(rs.map((r) => [r.statusCode, r.body.toString()]), [[200, '/1'], [200, '/2']]);
    if (common.isSluice) {
      assert.strictEqual(rs[1].headers.connection, 'close');
      await c.waitClose();
    }
  });

  it('keepAliveTimeout closes an idle connection', async function () {
    const { c, ms } = await idleCloseAfterOneRequest({ keepAliveTimeout: 300 });
    assert.ok(ms >= 150, `closed too early (${ms} ms)`);
    assert.ok(ms < 2000, `closed too late (${ms} ms)`);
    assert.strictEqual(common.parseAll(c.data).length, 1, 'nothing but the response was sent');
  });

  it('a request within keepAliveTimeout is served on the same connection', async function () {
    const { port } = await common.startServer({ keepAliveTimeout: 400 }, (req, res) => res.end(req.url));
    const c = await common.rawConnect(port);
    for (let i = 0; i < 4; i++) {
      c.socket.write(`GET /${i} HTTP/1.1\r\nHost: h\r\n\r\n`);
      const rs = await c.responses(i + 1);
      assert.strictEqual(rs[i].body.toString(), `/${i}`);
      await common.sleep(200);
    }
    assert.strictEqual(c.closed, false, 'each request restarts the idle timer');
    await c.waitClose(3000);
  });

  // node's keepAliveTimeoutBuffer (fixed 1000 ms on Node 20): the header
  // advertises keepAliveTimeout, the close comes that much later, so a
  // client reusing the connection right at the advertised limit (node's
  // agent after an event-loop stall) does not race the close.
  it('an idle connection stays open keepAliveTimeoutBuffer (1 s) past the advertised timeout', async function () {
    const { port } = await common.startServer({ keepAliveTimeout: 1000 }, (req, res) => res.end(req.url));
    const c = await common.rawConnect(port);
    c.socket.write('GET /a HTTP/1.1\r\nHost: h\r\n\r\n');
    const [first] = await c.responses(1);
    assert.strictEqual(first.headers['keep-alive'], 'timeout=1');
    await common.sleep(1300);
    assert.strictEqual(c.closed, false, 'open past the advertised timeout');
    c.socket.write('GET /b HTTP/1.1\r\nHost: h\r\n\r\n');
    const rs = await c.responses(2);
    assert.strictEqual(rs[1].body.toString(), '/b');
    const t0 = Date.now();
    await c.waitClose(5000);
    assert.ok(Date.now() - t0 >= 1500, `closed after ${Date.now() - t0} ms`);
  });

  const bufferOption = common.isSluice || Number(process.versions.node.split('.')[0]) >= 22;
  (bufferOption ? it : it.skip)('keepAliveTimeoutBuffer: 0 closes at keepAliveTimeout; bad values are refused as node', async function () {
    const { ms } = await idleCloseAfterOneRequest({ keepAliveTimeout: 300, keepAliveTimeoutBuffer: 0 });
    assert.ok(ms >= 150 && ms < 1000, `closed after ${ms} ms`);
    assert.throws(() => common.impl.createServer({ keepAliveTimeoutBuffer: -1 }), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => common.impl.createServer({ keepAliveTimeoutBuffer: 1.5 }), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => common.impl.createServer({ keepAliveTimeoutBuffer: '5' }), {
      code: 'ERR_INVALID_ARG_TYPE',
      message: /^The "keepAliveTimeoutBuffer" argument must be of type number\. Received type string/,
    });
  });
});
