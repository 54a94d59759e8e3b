'use strict';

// Bad input: parse errors -> 400 and close, oversized headers -> 431,
// Content-Length with Transfer-Encoding -> 400, bad chunk framing -> 400;
// `clientError` is emitted, and the server keeps serving.

const common = require('../common');
const { assert } = common;

function okHandler(req, res) {
  req.resume();
  req.on('end', () => res.end('fine'));
}

// Send `wire` on a fresh connection; expect one response with `status` and
// the connection closed by the server afterwards.
async function expectStatusAndClose(port, wire, status) {
  const c = await common.rawConnect(port);
  c.socket.write(wire);
  const data = await c.waitClose(3000);
  const rs = common.parseAll(data);
  assert.strictEqual(rs.length, 1, `expected exactly one response, got ${JSON.stringify(data.toString('latin1'))}`);
  assert.strictEqual(rs[0].statusCode, status, `for ${JSON.stringify(wire.slice(0, 80))}`);
  return rs[0];
}

async function expectServing(port) {
  const r = await common.httpRequest(port, { path: '/still-ok' });
  assert.strictEqual(r.statusCode, 200);
  assert.strictEqual(r.body.toString(), 'fine');
}

// A first request line with no method llhttp knows and no version: 400 and
// a close, byte for byte node's — on sluice's port, which also speaks h2c,
// too (a line that names another protocol's version is closed without an
// answer there: test/http2/conformance.test.js, docs/http2.md).
const NOT_HTTP1 = {
  'garbage request line': 'HELLO WORLD\r\n\r\n',
  'binary garbage': '\x01\x02\x03\x04\xff\xfe\r\n\r\n',
  'method without target': 'GET\r\n\r\n',
};

const GARBAGE = {
  'unknown method with an HTTP/1.1 version': 'HELLO / HTTP/1.1\r\nHost: h\r\n\r\n',
  'unknown HTTP version': 'GET / HTTP/9.9\r\nHost: h\r\n\r\n',
  'space in a header name': 'GET / HTTP/1.1\r\nHost: h\r\nBad Header: x\r\n\r\n',
  'space before the colon': 'GET / HTTP/1.1\r\nHost: h\r\nX-A : x\r\n\r\n',
  'NUL in a header value': 'GET / HTTP/1.1\r\nHost: h\r\nX-A: a\x00b\r\n\r\n',
  // RFC 9112 5.2 lets a server either reject obs-fold with 400 or replace
  // it with SP; node rejects.
  'obsolete line folding (as node)': 'GET / HTTP/1.1\r\nHost: h\r\nX-A: a\r\n b\r\n\r\n',
};

const FRAMING = {
  'Content-Length with Transfer-Encoding': 'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
  'Transfer-Encoding with Content-Length': 'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
  'two different Content-Lengths': 'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd',
  'non-numeric Content-Length': 'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: abc\r\n\r\n',
  'negative Content-Length': 'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n',
  'Transfer-Encoding not ending in chunked': 'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\nabc',
  'invalid chunk size': 'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n',
  'chunk data not followed by CRLF': 'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXX0\r\n\r\n',
};

describe(`http1 bad input [${common.implName}]`, function () {
  afterEach(common.cleanup);

  describe('400 and close', function () {
    for (const [name, wire] of Object.entries(GARBAGE)) {
      it(`${name} -> 400`, async function () {
        const { port } = await common.startServer(okHandler);
        await expectStatusAndClose(port, wire, 400);
        await expectServing(port);
      });
    }

    for (const [name, wire] of Object.entries(NOT_HTTP1)) {
      it(`${name} -> 400, byte for byte node's`, async function () {
        const { port } = await common.startServer(okHandler);
        const c = await common.rawUntilClose(port, wire, 3000);
        assert.strictEqual(c.text, 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
        await expectServing(port);
      });
    }

    for (const [name, wire] of Object.entries(FRAMING)) {
      it(`${name} -> 400`, async function () {
        const { port } = await common.startServer(okHandler);
        await expectStatusAndClose(port, wire, 400);
        await expectServing(port);
      });
    }

    it('a bad request after a good one on a keep-alive connection: first answered, then 400 and close', async function () {
      const { port } = await common.startServer(okHandler);
      const c = await common.rawConnect(port);
      c.socket.write('GET /good HTTP/1.1\r\nHost: h\r\n\r\n');
      await c.responses(1);
      c.socket.write('BLAH BLAH BLAH\r\n\r\n');
      const data = await c.waitClose(3000);
      const rs = common.parseAll(data);
      assert.deepStrictEqual(rs.map((r) => r.statusCode), [200, 400]);
      assert.strictEqual(rs[0].body.toString(), 'fine');
    });

    // node destroys the socket right after queueing the 400 behind the corked
    // first response, so one or the other is lost.
    common.sluiceOnly('a good and a bad request in one write: both answered (200, 400), then close', async function () {
      const { port } = await common.startServer((req, res) => res.end('fine'));
      const c = await common.rawConnect(port);
      c.socket.write('GET /good HTTP/1.1\r\nHost: h\r\n\r\nBLAH BLAH BLAH\r\n\r\n');
      const data = await c.waitClose(3000);
      const rs = common.parseAll(data);
      assert.deepStrictEqual(rs.map((r) => r.statusCode), [200, 400]);
    });

    it('invalid chunk framing while the handler waits for the body -> 400, req gets aborted', async function () {
      const events = [];
      let reqClosed;
      const closed = new Promise((r) => { reqClosed = r; });
      const { port } = await common.startServer((req, res) => {
        if (req.url === '/still-ok') {
          okHandler(req, res);
          return;
        }
        req.on('data', (d) => events.push(`data ${d.length}`));
        req.on('aborted', () => events.push('aborted'));
        req.on('end', () => {
          events.push('end');
          res.end('should not happen');
        });
        req.on('close', () => {
          events.push('close');
          reqClosed();
        });
      });
      const c = await common.rawConnect(port);
      c.socket.write('POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n');
      await common.sleep(50);
      c.socket.write('nothex\r\n');
      const data = await c.waitClose(3000);
      const rs = common.parseAll(data);
      assert.strictEqual(rs.length, 1);
      assert.strictEqual(rs[0].statusCode, 400);
      await common.withTimeout(closed, 2000, "req 'close'");
      assert.ok(!events.includes('end'), `events: ${events}`);
      assert.ok(events.includes('aborted'), `events: ${events}`);
      await expectServing(port);
    });
  });

  describe('431 for headers over maxHeaderSize', function () {
    it('default maxHeaderSize (16384): 12 KB of headers pass, 20 KB get 431', async function () {
      const { port } = await common.startServer(okHandler);
      const ok = await common.rawConnect(port);
      ok.socket.write(`GET / HTTP/1.1\r\nHost: h\r\nX-Big: ${'a'.repeat(12000)}\r\n\r\n`);
      const [r] = await ok.responses(1);
      assert.strictEqual(r.statusCode, 200);
      await expectStatusAndClose(port, `GET / HTTP/1.1\r\nHost: h\r\nX-Big: ${'a'.repeat(20000)}\r\n\r\n`, 431);
      await expectServing(port);
    });

    it('many small headers adding up past the limit get 431', async function () {
      const { port } = await common.startServer(okHandler);
      let wire = 'GET / HTTP/1.1\r\nHost: h\r\n';
      for (let i = 0; i < 1000; i++) wire += `X-Header-${i}: value-${i}\r\n`;
      await expectStatusAndClose(port, `${wire}\r\n`, 431);
    });

    it('oversized headers arriving in many small writes get 431', async function () {
      const { port } = await common.startServer(okHandler);
      const c = await common.rawConnect(port);
      c.socket.write('GET / HTTP/1.1\r\nHost: h\r\nX-Big: ');
      for (let i = 0; i < 40 && !c.closed; i++) {
        c.socket.write('b'.repeat(512));
        await common.sleep(1);
      }
      const data = await c.waitClose(3000);
      const rs = common.parseAll(data);
      assert.strictEqual(rs.length, 1);
      assert.strictEqual(rs[0].statusCode, 431);
    });

    it('a URL over maxHeaderSize gets 431 (or 414)', async function () {
      const { port } = await common.startServer(okHandler);
      const c = await common.rawConnect(port);
      c.socket.write(`GET /${'u'.repeat(20000)} HTTP/1.1\r\nHost: h\r\n\r\n`);
      const data = await c.waitClose(3000);
      const rs = common.parseAll(data);
      assert.strictEqual(rs.length, 1);
      assert.ok([414, 431].includes(rs[0].statusCode), `status ${rs[0].statusCode}`);
    });

    it('a small configured maxHeaderSize (1024)', async function () {
      const { port } = await common.startServer({ maxHeaderSize: 1024 }, okHandler);
      const ok = await common.rawConnect(port);
      ok.socket.write(`GET / HTTP/1.1\r\nHost: h\r\nX-Big: ${'a'.repeat(600)}\r\n\r\n`);
      const [r] = await ok.responses(1);
      assert.strictEqual(r.statusCode, 200);
      await expectStatusAndClose(port, `GET / HTTP/1.1\r\nHost: h\r\nX-Big: ${'a'.repeat(2000)}\r\n\r\n`, 431);
      await expectServing(port);
    });

    it('the limit applies per request on a keep-alive connection, not cumulatively', async function () {
      const { port } = await common.startServer({ maxHeaderSize: 1024 }, okHandler);
      const c = await common.rawConnect(port);
      const one = `GET / HTTP/1.1\r\nHost: h\r\nX-Mid: ${'m'.repeat(500)}\r\n\r\n`;
      c.socket.write(one.repeat(6));
      const rs = await c.responses(6);
      assert.deepStrictEqual(rs.map((r) => r.statusCode), [200, 200, 200, 200, 200, 200]);
    });
  });

  describe('clientError', function () {
    it('is emitted with an Error and the socket; with a listener, the listener writes the response', async function () {
      const seen = [];
      const { server, port } = await common.startServer(okHandler);
      server.on('clientError', (err, socket) => {
        seen.push(err);
        socket.end('HTTP/1.1 400 Bad Request\r\nX-Handled-By: listener\r\nContent-Length: 7\r\nConnection: close\r\n\r\nhandled');
      });
      const c = await common.rawConnect(port);
      c.socket.write('GARBAGE!!\r\n\r\n');
      const data = await c.waitClose(3000);
      const rs = common.parseAll(data);
      assert.strictEqual(rs.length, 1, 'only the listener\'s response is sent');
      assert.strictEqual(rs[0].statusCode, 400);
      assert.strictEqual(rs[0].headers['x-handled-by'], 'listener');
      assert.strictEqual(rs[0].body.toString(), 'handled');
      assert.strictEqual(seen.length, 1);
      assert.ok(seen[0] instanceof Error);
      assert.strictEqual(typeof seen[0].code, 'string');
      assert.match(seen[0].code, /^HPE_/);
      await expectServing(port);
    });

    it('a listener that destroys the socket: the client gets no bytes', async function () {
      let called = 0;
      const { server, port } = await common.startServer(okHandler);
      server.on('clientError', (err, socket) => {
        called++;
        socket.destroy();
      });
      const c = await common.rawConnect(port);
      c.socket.write('GARBAGE!!\r\n\r\n');
      const data = await c.waitClose(3000);
      assert.strictEqual(data.length, 0, `received ${JSON.stringify(data.toString('latin1'))}`);
      assert.strictEqual(called, 1);
      await expectServing(port);
    });

    it('header overflow is reported with code HPE_HEADER_OVERFLOW', async function () {
      const codes = [];
      const { server, port } = await common.startServer({ maxHeaderSize: 1024 }, okHandler);
      server.on('clientError', (err, socket) => {
        codes.push(err.code);
        socket.end('HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n');
      });
      await expectStatusAndClose(port, `GET / HTTP/1.1\r\nHost: h\r\nX: ${'a'.repeat(3000)}\r\n\r\n`, 431);
      assert.deepStrictEqual(codes, ['HPE_HEADER_OVERFLOW']);
    });

    it('without a listener the server answers by itself (400) and the request handler is not called', async function () {
      let requests = 0;
      const { port } = await common.startServer((req, res) => {
        requests++;
        res.end();
      });
      const r = await expectStatusAndClose(port, 'NOT / HTTP/1.1\r\n\r\n', 400);
      assert.strictEqual(requests, 0);
      assert.strictEqual(r.body.length, 0);
    });
  });

  describe('robustness', function () {
    it('a burst of bad connections does not disturb good ones', async function () {
      const { port } = await common.startServer(okHandler);
      const wires = [...Object.values(GARBAGE), ...Object.values(FRAMING)];
      const bad = [];
      for (let i = 0; i < 40; i++) {
        bad.push((async () => {
          const c = await common.rawConnect(port);
          c.socket.write(wires[i % wires.length]);
          // closed, or answered (a wire this server tolerates)
          await c.waitFor((x) => x.closed || common.parseResponses(x.data).responses.length > 0, 3000, 'close or a response');
          c.destroy();
        })());
      }
      const good = Array.from({ length: 20 }, () => common.httpRequest(port));
      const results = await Promise.all(good);
      await Promise.all(bad);
      for (const r of results) assert.strictEqual(r.body.toString(), 'fine');
    });
  });
});
