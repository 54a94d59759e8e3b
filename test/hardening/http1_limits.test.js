'use strict';

// Limits with node-compatible names and defaults: maxHeadersCount,
// request line over maxHeaderSize, maxRequestBodySize (413),
// maxRequestsPerSocket, maxConnections. (431 for headers, 400s and the
// timeouts have their own files in test/http1/.)

const http = require('node:http');
const net = require('node:net');

const common = require('../common');
const { assert } = common;

const manyHeaders = (n, prefix = 'x') => Array.from({ length: n }, (_, i) => `${prefix}${i}:v\r\n`).join('');

function ok(req, res) {
  req.resume();
  req.on('end', () => res.end('fine'));
}

async function expectServing(port) {
  const r = await common.httpRequest(port, { path: '/still-ok' });
  assert.strictEqual(r.statusCode, 200);
}

describe(`hardening: limits [${common.implName}]`, function () {
  afterEach(common.cleanup);

  describe('maxHeadersCount', function () {
    const countHandler = (req, res) => {
      res.end(JSON.stringify({ keys: Object.keys(req.headers).length, raw: req.rawHeaders.length }));
    };

    common.sluiceOnly('default 2000: header lines past 2000 are dropped (headers and rawHeaders)', async function () {
      const { server, port } = await common.startServer({ maxHeaderSize: 65536 }, countHandler);
      assert.strictEqual(server.maxHeadersCount, null);
      const c = await common.rawConnect(port);
      c.socket.write(`GET / HTTP/1.1\r\nHost: h\r\n${manyHeaders(2500)}\r\n`);
      const [r] = await c.responses(1);
      assert.strictEqual(r.statusCode, 200);
      assert.deepStrictEqual(JSON.parse(r.body), { keys: 2000, raw: 4000 });
    });

    it('server.maxHeadersCount = 10 keeps the first 10 in req.headers (as node)', async function () {
      const { server, port } = await common.startServer({}, countHandler);
      server.maxHeadersCount = 10;
      const c = await common.rawConnect(port);
      c.socket.write(`GET / HTTP/1.1\r\nHost: h\r\n${manyHeaders(30)}\r\n`);
      const [r] = await c.responses(1);
      assert.strictEqual(JSON.parse(r.body).keys, 10);
    });

    it('maxHeadersCount = 0: no limit (as node)', async function () {
      const { server, port } = await common.startServer({ maxHeaderSize: 65536 }, countHandler);
      server.maxHeadersCount = 0;
      const c = await common.rawConnect(port);
      c.socket.write(`GET / HTTP/1.1\r\nHost: h\r\n${manyHeaders(2500)}\r\n`);
      const [r] = await c.responses(1);
      assert.strictEqual(JSON.parse(r.body).keys, 2501);
    });

    common.sluiceOnly('as a createServer option; trailers are limited too', async function () {
      const { port } = await common.startServer({ maxHeadersCount: 3 }, (req, res) => {
        req.resume();
        req.on('end', () => res.end(JSON.stringify({ raw: req.rawHeaders.length, trailers: req.rawTrailers.length })));
      });
      const c = await common.rawConnect(port);
      c.socket.write(`POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n${manyHeaders(5)}\r\n1\r\na\r\n0\r\n${manyHeaders(5, 't')}\r\n`);
      const [r] = await c.responses(1);
      assert.deepStrictEqual(JSON.parse(r.body), { raw: 6, trailers: 6 });
    });

    it('rejects a negative or non-numeric value', function () {
      const server = common.impl.createServer(() => {});
      if (common.isSluice) {
        assert.throws(() => { server.maxHeadersCount = -1; }, { code: 'ERR_INVALID_ARG_TYPE' });
        assert.throws(() => common.impl.createServer({ maxRequestBodySize: 'big' }), { code: 'ERR_INVALID_ARG_TYPE' });
      }
    });
  });

  describe('request line longer than maxHeaderSize', function () {
    it('a URL over maxHeaderSize: 431 and close, clientError HPE_HEADER_OVERFLOW (as node)', async function () {
      const codes = [];
      const { server, port } = await common.startServer({ maxHeaderSize: 1024 }, ok);
      server.on('clientError', (err, socket) => {
        codes.push(err.code);
        socket.end('HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n');
      });
      const c = await common.rawConnect(port);
      c.socket.write(`GET /${'u'.repeat(2000)} HTTP/1.1\r\nHost: h\r\n\r\n`);
      const rs = common.parseAll(await c.waitClose(3000));
      assert.deepStrictEqual(rs.map((r) => r.statusCode), [431]);
      assert.deepStrictEqual(codes, ['HPE_HEADER_OVERFLOW']);
      await expectServing(port);
    });

    it('a URL that fits with its headers is served', async function () {
      const { port } = await common.startServer({ maxHeaderSize: 1024 }, (req, res) => res.end(String(req.url.length)));
      const c = await common.rawConnect(port);
      c.socket.write(`GET /${'u'.repeat(900)} HTTP/1.1\r\nHost: h\r\n\r\n`);
      const [r] = await c.responses(1);
      assert.strictEqual(r.body.toString(), '901');
    });
  });

  describe('maxRequestBodySize', function () {
    function recordingHandler(events) {
      return (req, res) => {
        if (req.url === '/still-ok') return ok(req, res);
        events.push('request');
        let n = 0;
        req.on('data', (d) => { n += d.length; });
        req.on('error', (err) => events.push(`error ${err.code} ${err.statusCode}`));
        req.on('end', () => {
          events.push(`end ${n}`);
          res.end(`got ${n}`);
        });
        req.on('close', () => events.push(`close ${n}`));
        res.on('close', () => events.push('res close'));
      };
    }

    common.sluiceOnly('Content-Length over the limit: 413 + Connection: close before any body byte; req emits error ERR_SLUICE_BODY_TOO_LARGE', async function () {
      const events = [];
      const { server, port } = await common.startServer({ maxRequestBodySize: 1000 }, recordingHandler(events));
      assert.strictEqual(server.maxRequestBodySize, 1000);
      const c = await common.rawConnect(port);
      // Only the head: the answer must not wait for the body.
      c.socket.write('POST /big HTTP/1.1\r\nHost: h\r\nContent-Length: 5000\r\n\r\n');
      const data = await c.waitClose(3000);
      const rs = common.parseAll(data);
      assert.deepStrictEqual(rs.map((r) => r.statusCode), [413]);
      assert.strictEqual(rs[0].headers.connection, 'close');
      assert.strictEqual(rs[0].headers['content-length'], '0');
      await common.withTimeout((async () => { while (!events.includes('res close')) await common.sleep(10); })(), 2000, 'res close');
      assert.deepStrictEqual(events.filter((e) => !e.startsWith('res')), ['request', 'error ERR_SLUICE_BODY_TOO_LARGE 413', 'close 0']);
      await expectServing(port);
    });

    common.sluiceOnly('Expect: 100-continue with a Content-Length over the limit: 413 only, no 100 Continue', async function () {
      const { port } = await common.startServer({ maxRequestBodySize: 1000 }, (req, res) => {
        req.on('error', () => {});
        req.resume();
        req.on('end', () => res.end('no'));
      });
      const c = await common.rawConnect(port);
      c.socket.write('PUT / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 100000\r\n\r\n');
      const data = await c.waitClose(3000);
      assert.deepStrictEqual(common.parseAll(data).map((r) => r.statusCode), [413]);
      assert.ok(!data.toString('latin1').includes('100 Continue'));
    });

    common.sluiceOnly('a body of exactly maxRequestBodySize is accepted (Content-Length and chunked)', async function () {
      const events = [];
      const { port } = await common.startServer({ maxRequestBodySize: 1000 }, recordingHandler(events));
      const r1 = await common.httpRequest(port, { method: 'POST', path: '/cl', body: Buffer.alloc(1000, 'a') });
      assert.strictEqual(r1.body.toString(), 'got 1000');
      const r2 = await common.httpRequest(port, { method: 'POST', path: '/chunked', body: [Buffer.alloc(600, 'b'), Buffer.alloc(400, 'c')] });
      assert.strictEqual(r2.body.toString(), 'got 1000');
    });

    common.sluiceOnly('a chunked body growing past it: data up to the limit, then error, 413 and close', async function () {
      const events = [];
      const { port } = await common.startServer({ maxRequestBodySize: 1000 }, recordingHandler(events));
      const c = await common.rawConnect(port);
      c.socket.write('POST /chunked HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n');
      for (let i = 0; i < 5 && !c.closed; i++) {
        await common.sleep(20);
        c.socket.write(`190\r\n${'x'.repeat(400)}\r\n`);
      }
      const rs = common.parseAll(await c.waitClose(3000));
      assert.deepStrictEqual(rs.map((r) => r.statusCode), [413]);
      await common.withTimeout((async () => { while (!events.some((e) => e.startsWith('close'))) await common.sleep(10); })(), 2000, 'req close');
      const err = events.find((e) => e.startsWith('error'));
      assert.strictEqual(err, 'error ERR_SLUICE_BODY_TOO_LARGE 413');
      const closed = events.find((e) => e.startsWith('close'));
      assert.ok(Number(closed.split(' ')[1]) <= 1000, `delivered ${closed}`);
      assert.ok(!events.some((e) => e.startsWith('end')), `events: ${events}`);
      await expectServing(port);
    });

    common.sluiceOnly('pipelined: the request before is answered, then 413, in order; nothing after it is parsed', async function () {
      let handled = 0;
      const { port } = await common.startServer({ maxRequestBodySize: 10 }, (req, res) => {
        handled++;
        req.on('error', () => {});
        req.resume();
        req.on('end', () => res.end(`ok ${req.url}`));
      });
      const c = await common.rawConnect(port);
      c.socket.write('POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc' +
        'POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: h\r\n\r\n');
      const rs = common.parseAll(await c.waitClose(3000));
      assert.deepStrictEqual(rs.map((r) => r.statusCode), [200, 413]);
      assert.strictEqual(rs[0].body.toString(), 'ok /a');
      assert.strictEqual(handled, 2);
    });

    common.sluiceOnly('a handler that answered early keeps its response; the connection closes after it', async function () {
      const { port } = await common.startServer({ maxRequestBodySize: 100 }, (req, res) => {
        req.on('error', () => {});
        res.end('early');
      });
      const c = await common.rawConnect(port);
      c.socket.write('POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n');
      await common.sleep(30);
      c.socket.write(`200\r\n${'y'.repeat(512)}\r\n`);
      const rs = common.parseAll(await c.waitClose(3000));
      assert.deepStrictEqual(rs.map((r) => r.statusCode), [200]);
      assert.strictEqual(rs[0].body.toString(), 'early');
    });

    common.sluiceOnly('set as a property: applies from the next request', async function () {
      const { server, port } = await common.startServer((req, res) => {
        req.on('error', () => {});
        req.resume();
        req.on('end', () => res.end('ok'));
      });
      assert.strictEqual(server.maxRequestBodySize, Infinity);
      const r1 = await common.httpRequest(port, { method: 'POST', body: Buffer.alloc(5000) });
      assert.strictEqual(r1.statusCode, 200);
      server.maxRequestBodySize = 100;
      const r2 = await common.httpRequest(port, { method: 'POST', body: Buffer.alloc(5000) }).catch((e) => e);
      assert.strictEqual(r2.statusCode, 413, String(r2));
    });
  });

  describe('maxRequestsPerSocket', function () {
    it('responses carry Keep-Alive max=N; the Nth says Connection: close (as node)', async function () {
      const { server, port } = await common.startServer((req, res) => res.end(req.url));
      server.maxRequestsPerSocket = 2;
      const c = await common.rawConnect(port);
      c.socket.write('GET /1 HTTP/1.1\r\nHost: h\r\n\r\n');
      await c.responses(1);
      c.socket.write('GET /2 HTTP/1.1\r\nHost: h\r\n\r\n');
      const rs = await c.responses(2);
      assert.strictEqual(rs[0].headers.connection, 'keep-alive');
      assert.match(rs[0].headers['keep-alive'], /^timeout=\d+, max=2$/);
      assert.strictEqual(rs[1].headers.connection, 'close');
      assert.strictEqual(rs[1].body.toString(), '/2');
    });

    // node's wire, byte for byte (Date masked): the Nth response says
    // Connection: close without closing; every HTTP/1.1 request after it is
    // answered 503 (writeHead(503) + end(): chunked, empty) with
    // Connection: close, never reaches the handler, and is reported as
    // 'dropRequest' (req, socket); the connection stays open.
    const get = (url) => `GET ${url} HTTP/1.1\r\nHost: h\r\n\r\n`;
    const okWire = (body) => 'HTTP/1.1 200 OK\r\nDate: D\r\nConnection: close\r\n' +
      `Content-Length: ${body.length}\r\n\r\n${body}`;
    const dropWire = 'HTTP/1.1 503 Service Unavailable\r\nDate: D\r\nConnection: close\r\n' +
      'Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n';
    const masked = (c) => c.text.replace(/\r\nDate: [^\r]+\r\n/g, '\r\nDate: D\r\n');

    async function limited(max, answer) {
      const urls = [];
      const drops = [];
      const { server, port } = await common.startServer((req, res) => {
        urls.push(req.url);
        answer(res, req.url);
      });
      // Set after creation, as node's own test does.
      server.maxRequestsPerSocket = max;
      server.on('dropRequest', (req, socket) => {
        drops.push([req.url, req instanceof http.IncomingMessage, socket instanceof net.Socket]);
      });
      const c = await common.rawConnect(port);
      return { c, urls, drops };
    }

    it('pipelined past the limit: 200 with Connection: close, then 503s; the connection stays open (node\'s bytes)', async function () {
      const { c, urls, drops } = await limited(1, (res) => res.end('ok'));
      // node's test-http-keep-alive-drop-requests sends a stray CRLF too.
      c.socket.write('GET /1 HTTP/1.1\r\nConnection: keep-alive\r\nHost: h\r\n\r\n\r\n' + get('/2') + get('/3'));
      const want = okWire('ok') + dropWire + dropWire;
      await c.waitFor(() => masked(c).length >= want.length, 5000, 'three responses');
      assert.strictEqual(masked(c), want);
      // Still open: one more request, one more 503.
      c.socket.write(get('/4'));
      await c.waitFor(() => masked(c).length >= want.length + dropWire.length, 5000, 'a fourth response');
      assert.strictEqual(masked(c), want + dropWire);
      assert.strictEqual(c.closed, false);
      assert.deepStrictEqual(urls, ['/1']);
      assert.deepStrictEqual(drops, [['/2', true, true], ['/3', true, true], ['/4', true, true]]);
    });

    it('a request read while the last allowed one is still being answered is dropped the same way', async function () {
      // Answered late: the second request is parsed before the first answer.
      const { c, urls, drops } = await limited(1, (res) => common.setTimer(() => res.end('x'), 50));
      c.socket.write(get('/1') + get('/2'));
      const want = okWire('x') + dropWire;
      await c.waitFor(() => masked(c).length >= want.length, 5000, 'two responses');
      assert.strictEqual(masked(c), want);
      assert.deepStrictEqual(urls, ['/1']);
      assert.deepStrictEqual(drops.map((d) => d[0]), ['/2']);
    });

    it('max=2 one at a time: keep-alive with max=2, then Connection: close, then 503 on the same connection', async function () {
      const { c, urls, drops } = await limited(2, (res, url) => res.end(url));
      c.socket.write(get('/1'));
      await c.responses(1);
      c.socket.write(get('/2'));
      const rs = await c.responses(2);
      assert.strictEqual(rs[0].headers.connection, 'keep-alive');
      assert.match(rs[0].headers['keep-alive'], /^timeout=\d+, max=2$/);
      assert.strictEqual(rs[1].headers.connection, 'close');
      assert.strictEqual(rs[1].body.toString(), '/2');
      c.socket.write(get('/3'));
      const all = await c.responses(3);
      assert.strictEqual(all[2].statusCode, 503);
      assert.strictEqual(all[2].headers.connection, 'close');
      assert.deepStrictEqual(urls, ['/1', '/2']);
      assert.deepStrictEqual(drops.map((d) => d[0]), ['/3']);
    });

    it('only HTTP/1.1 requests count (as node): HTTP/1.0 keep-alive requests are served past the limit', async function () {
      // A declared length: node keeps an HTTP/1.0 connection only then.
      const { c, urls, drops } = await limited(1, (res, url) => {
        res.setHeader('Content-Length', url.length);
        res.end(url);
      });
      const get10 = (url) => `GET ${url} HTTP/1.0\r\nConnection: keep-alive\r\n\r\n`;
      c.socket.write(get10('/a') + get10('/b') + get('/c') + get('/d'));
      const rs = await c.responses(4);
      assert.deepStrictEqual(rs.map((r) => [r.statusCode, r.headers.connection]),
        [[200, 'keep-alive'], [200, 'keep-alive'], [200, 'close'], [503, 'close']]);
      assert.strictEqual(rs[0].headers['keep-alive'], 'timeout=5, max=1');
      assert.deepStrictEqual(urls, ['/a', '/b', '/c']);
      assert.deepStrictEqual(drops.map((d) => d[0]), ['/d']);
    });

    it('0 (the default) means no limit', async function () {
      const { server, port } = await common.startServer((req, res) => res.end('x'));
      assert.strictEqual(server.maxRequestsPerSocket, 0);
      const c = await common.rawConnect(port);
      c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n'.repeat(20));
      const rs = await c.responses(20);
      assert.ok(rs.every((r) => r.headers.connection === 'keep-alive'));
    });
  });

  describe('timeouts (cases test/http1/timeouts.test.js does not cover)', function () {
    it('headersTimeout > requestTimeout is refused with ERR_OUT_OF_RANGE (as node)', function () {
      assert.throws(() => common.impl.createServer({ headersTimeout: 5000, requestTimeout: 1000 }), { code: 'ERR_OUT_OF_RANGE' });
      // 0 means "none" and is not compared.
      common.impl.createServer({ headersTimeout: 5000, requestTimeout: 0 });
    });

    it('requestTimeout: 0 disables it: a body trickled over 1 s completes (as node)', async function () {
      const { port } = await common.startServer({ headersTimeout: 300, requestTimeout: 0 }, ok);
      const c = await common.rawConnect(port);
      c.socket.write('POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n');
      for (let i = 0; i < 10; i++) {
        await common.sleep(110);
        c.socket.write('x');
      }
      const [r] = await c.responses(1);
      assert.strictEqual(r.statusCode, 200);
    });

    it('keepAliveTimeout does not cut a connection whose handler is still answering (as node)', async function () {
      const { port } = await common.startServer({ keepAliveTimeout: 200 }, (req, res) => {
        common.setTimer(() => res.end(req.url), 600);
      });
      const c = await common.rawConnect(port);
      c.socket.write('GET /1 HTTP/1.1\r\nHost: h\r\n\r\n');
      await c.responses(1, {}, 3000);
      // Pipelined pair, both slow: the idle timer must not run meanwhile.
      c.socket.write('GET /2 HTTP/1.1\r\nHost: h\r\n\r\nGET /3 HTTP/1.1\r\nHost: h\r\n\r\n');
      const rs = await c.responses(3, {}, 3000);
      assert.deepStrictEqual(rs.map((r) => r.body.toString()), ['/1', '/2', '/3']);
      // And then it does close the idle connection.
      await c.waitClose(2000);
    });
  });

  describe('maxConnections', function () {
    it("a connection beyond it is closed at accept without a byte, with a 'drop' event; others keep working (as node)", async function () {
      const { server, port } = await common.startServer((req, res) => res.end('x'));
      const drops = [];
      server.on('drop', (data) => drops.push(data));
      server.maxConnections = 2;
      const a = await common.rawConnect(port);
      const b = await common.rawConnect(port);
      await common.sleep(50);
      const extra = await common.rawConnect(port);
      const extraPort = extra.socket.localPort;
      extra.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
      await extra.waitClose(3000);
      assert.strictEqual(extra.data.length, 0);
      await common.sleep(20);
      assert.strictEqual(drops.length, 1);
      assert.deepStrictEqual(
        [drops[0].localAddress, drops[0].localPort, drops[0].localFamily, drops[0].remoteAddress, drops[0].remotePort, drops[0].remoteFamily],
        ['127.0.0.1', port, 'IPv4', '127.0.0.1', extraPort, 'IPv4']);
      a.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
      const [r] = await a.responses(1);
      assert.strictEqual(r.statusCode, 200);
      b.destroy();
      a.destroy();
      await common.sleep(100);
      const fresh = await common.rawConnect(port);
      fresh.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
      const [r2] = await fresh.responses(1);
      assert.strictEqual(r2.statusCode, 200);
    });

    common.sluiceOnly('as a createServer option; dropped connections are counted', async function () {
      const { server, port } = await common.startServer({ maxConnections: 1 }, (req, res) => res.end('x'));
      const a = await common.rawConnect(port);
      await common.sleep(30);
      const extra = await common.rawConnect(port);
      await extra.waitClose(3000);
      assert.strictEqual(server._connections, 1);
      a.destroy();
    });
  });
});
