'use strict';

// Pipelining: many requests in one write are all dispatched and answered
// strictly in request order, even when handlers finish out of order.

const crypto = require('node:crypto');
const common = require('../common');
const { assert } = common;

common.withAndWithoutPool(`http1 pipelining [${common.implName}]`, function (v) {
  afterEach(common.cleanup);

  it('64 pipelined GETs in one write are answered in order while handlers finish out of order', async function () {
    const finished = [];
    const { port } = await common.startServer(v.options(), (req, res) => {
      const i = Number(req.url.slice(1));
      common.setTimer(() => {
        finished.push(i);
        res.setHeader('X-Index', String(i));
        res.end(`response ${i}`);
      }, Math.floor(Math.random() * 40));
    });
    let wire = '';
    for (let i = 0; i < 64; i++) wire += `GET /${i} HTTP/1.1\r\nHost: h\r\n\r\n`;
    const c = await common.rawConnect(port);
    c.socket.write(wire);
    const rs = await c.responses(64);
    assert.strictEqual(rs.length, 64);
    rs.forEach((r, i) => {
      assert.strictEqual(r.statusCode, 200);
      assert.strictEqual(r.headers['x-index'], String(i));
      assert.strictEqual(r.body.toString(), `response ${i}`);
    });
    // The handlers really did finish out of order (random delays).
    assert.notDeepStrictEqual(finished, [...finished].sort((a, b) => a - b));
    // Nothing beyond the 64 responses.
    assert.strictEqual(common.parseAll(c.data, { ended: false }).length, 64);
    assert.strictEqual(c.closed, false, 'keep-alive connection stays open');
  });

  it('all pipelined requests are dispatched before earlier ones are answered', async function () {
    const pending = [];
    const { port } = await common.startServer(v.options(), (req, res) => {
      pending.push({ req, res });
    });
    let wire = '';
    for (let i = 0; i < 10; i++) wire += `GET /${i} HTTP/1.1\r\nHost: h\r\n\r\n`;
    const c = await common.rawConnect(port);
    c.socket.write(wire);
    // Wait until every request has reached the handler; none was answered.
    const t0 = Date.now();
    while (pending.length < 10 && Date.now() - t0 < 3000) await common.sleep(10);
    assert.strictEqual(pending.length, 10);
    assert.deepStrictEqual(pending.map((p) => p.req.url), Array.from({ length: 10 }, (_, i) => `/${i}`));
    // Answer in reverse order: output must still be in request order.
    for (let i = 9; i >= 0; i--) {
      pending[i].res.end(`r${i}`);
      await common.sleep(2);
    }
    const rs = await c.responses(10);
    assert.deepStrictEqual(rs.map((r) => r.body.toString()), Array.from({ length: 10 }, (_, i) => `r${i}`));
  });

  it('pipelined POSTs (Content-Length and chunked) with bodies, out-of-order completion', async function () {
    const { port } = await common.startServer(v.options(), (req, res) => {
      const parts = [];
      req.on('data', (d) => {
        parts.push(Buffer.from(d));
        v.release(d);
      });
      req.on('end', () => {
        const body = Buffer.concat(parts);
        common.setTimer(() => res.end(`${req.url}:${common.sha256(body)}`), Math.floor(Math.random() * 30));
      });
    });
    const bodies = [];
    let wire = Buffer.alloc(0);
    const pieces = [];
    for (let i = 0; i < 32; i++) {
      const body = crypto.randomBytes(2 + ((i * 7919) % 5000));
      bodies.push(body);
      if (i % 2) {
        pieces.push(Buffer.from(`POST /${i} HTTP/1.1\r\nHost: h\r\nContent-Length: ${body.length}\r\n\r\n`), body);
      } else {
        const half = body.length >> 1;
        pieces.push(Buffer.from(`POST /${i} HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n`),
                    Buffer.from(`${half.toString(16)}\r\n`), body.subarray(0, half), Buffer.from('\r\n'),
                    Buffer.from(`${(body.length - half).toString(16)}\r\n`), body.subarray(half), Buffer.from('\r\n0\r\n\r\n'));
      }
    }
    wire = Buffer.concat(pieces);
    const c = await common.rawConnect(port);
    c.socket.write(wire);
    const rs = await c.responses(32);
    rs.forEach((r, i) => assert.strictEqual(r.body.toString(), `/${i}:${common.sha256(bodies[i])}`));
  });

  it('a slow streamed response is not interleaved with later ready responses', async function () {
    const { port } = await common.startServer(v.options(), async (req, res) => {
      if (req.url === '/slow') {
        res.write('part1-');
        await common.sleep(30);
        res.write('part2-');
        await common.sleep(30);
        res.end('part3');
      } else {
        res.end(`fast ${req.url}`);
      }
    });
    const c = await common.rawConnect(port);
    c.socket.write('GET /slow HTTP/1.1\r\nHost: h\r\n\r\nGET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n');
    const rs = await c.responses(3);
    assert.strictEqual(rs[0].body.toString(), 'part1-part2-part3');
    assert.strictEqual(rs[0].chunked, true);
    assert.strictEqual(rs[1].body.toString(), 'fast /a');
    assert.strictEqual(rs[2].body.toString(), 'fast /b');
  });

  it('pipelined requests mixing HEAD and GET', async function () {
    const { port } = await common.startServer(v.options(), (req, res) => {
      res.setHeader('Content-Type', 'text/plain');
      res.end(`body of ${req.url}`);
    });
    const c = await common.rawConnect(port);
    c.socket.write('HEAD /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\nHEAD /3 HTTP/1.1\r\nHost: h\r\n\r\nGET /4 HTTP/1.1\r\nHost: h\r\n\r\n');
    const methods = ['HEAD', 'GET', 'HEAD', 'GET'];
    const rs = await c.responses(4, { methods });
    await common.sleep(50);
    const all = common.parseAll(c.data, { methods, ended: false });
    assert.strictEqual(all.length, 4);
    assert.strictEqual(rs[0].body.length, 0);
    assert.strictEqual(rs[1].body.toString(), 'body of /2');
    assert.strictEqual(rs[2].body.length, 0);
    assert.strictEqual(rs[3].body.toString(), 'body of /4');
  });

  // node's strict llhttp flags the bytes after `Connection: close` as an
  // error (HPE_CLOSED_CONNECTION) and destroys the socket, losing the
  // response to the request that asked to close. sluice must answer it.
  common.sluiceOnly('pipelined requests after Connection: close are not answered, earlier ones are', async function () {
    const urls = [];
    const { port } = await common.startServer(v.options(), (req, res) => {
      urls.push(req.url);
      res.end(req.url);
    });
    const c = await common.rawConnect(port);
    c.socket.write('GET /1 HTTP/1.1\r\nHost: h\r\n\r\n' +
                   'GET /2 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n' +
                   'GET /3 HTTP/1.1\r\nHost: h\r\n\r\n');
    const data = await c.waitClose();
    const rs = common.parseAll(data);
    assert.deepStrictEqual(rs.map((r) => r.body.toString()), ['/1', '/2']);
    assert.strictEqual(String(rs[1].headers.connection).toLowerCase(), 'close');
  });

  common.sluiceOnly('(issue 4) 100 pipelined requests in one write: responses are corked, the first data event holds many', async function () {
    const { port } = await common.startServer(v.options(), (req, res) => res.end(`r${req.url.slice(1)}`));
    let wire = '';
    for (let i = 0; i < 100; i++) wire += `GET /${i} HTTP/1.1\r\nHost: h\r\n\r\n`;
    const c = await common.rawConnect(port);
    c.socket.write(wire);
    const rs = await c.responses(100);
    rs.forEach((r, i) => assert.strictEqual(r.body.toString(), `r${i}`));
    const first = common.parseResponses(c.firstDataChunk).responses.length;
    assert.ok(first >= 50, `first data event held only ${first} complete responses`);
  });
});
