'use strict';

// server.emit('connection', stream) with a stream the server did not
// accept: a generic Duplex (stream.duplexPair()) or a net.Socket accepted
// by another server and handed over with a byte already read and
// unshift()ed. The HTTP served over it is node's: requests and their
// bodies, keep-alive, pipelining, 'clientError' for bytes that are not
// HTTP, a stream that ends mid-request. The server never listens. Shared:
// run against node:http with SLUICE_TEST_IMPL=node.

const assert = require('node:assert');
const net = require('node:net');
const { duplexPair } = require('node:stream');
const common = require('../common');

// The server side of a fresh pair handed to `server`, and a raw client on
// the other side: write(bytes), responses(n) (parsed, once n are whole),
// ended() (the server ended its half or destroyed its side).
function connect(server) {
  const [client, serverSide] = duplexPair();
  server.emit('connection', serverSide);
  let data = Buffer.alloc(0);
  const waiters = [];
  const check = () => {
    for (let i = waiters.length - 1; i >= 0; i--) {
      const w = waiters[i];
      if (w()) waiters.splice(i, 1);
    }
  };
  let ended = false;
  client.on('data', (d) => { data = Buffer.concat([data, d]); check(); });
  client.on('end', () => { ended = true; check(); });
  client.on('close', () => { ended = true; check(); });
  // duplexPair does not carry a destroy() across: the server destroying
  // its side shows as that side's 'close'.
  serverSide.on('close', () => { ended = true; check(); });
  client.on('error', () => {});
  const until = (pred, what) => common.withTimeout(new Promise((resolve) => {
    const w = () => { const v = pred(); if (v) resolve(v); return !!v; };
    if (!w()) waiters.push(w);
  }), 5000, what);
  return {
    client,
    serverSide,
    write: (s) => client.write(s),
    end: (s) => client.end(s),
    data: () => data,
    responses: (n) => until(() => {
      const r = common.parseResponses(data, { ended }).responses;
      return r.length >= n ? r : null;
    }, `${n} response(s)`),
    ended: () => until(() => ended, 'the server ending the stream'),
  };
}

describe(`server.emit('connection', duplex) [${common.implName}]`, function () {
  it('a GET is answered over the Duplex; req.socket is the stream handed over', async function () {
    let seen = null;
    const server = common.impl.createServer((req, res) => {
      seen = { method: req.method, url: req.url, host: req.headers.host, socket: req.socket };
      res.setHeader('Content-Type', 'text/plain');
      res.end('hello');
    });
    const c = connect(server);
    c.write('GET /a?b=1 HTTP/1.1\r\nHost: example\r\n\r\n');
    const [r] = await c.responses(1);
    assert.strictEqual(r.statusCode, 200);
    assert.strictEqual(r.headers['content-type'], 'text/plain');
    assert.strictEqual(r.headers.connection, 'keep-alive');
    assert.strictEqual(r.body.toString(), 'hello');
    assert.strictEqual(seen.method, 'GET');
    assert.strictEqual(seen.url, '/a?b=1');
    assert.strictEqual(seen.host, 'example');
    assert.strictEqual(seen.socket, c.serverSide);
    assert.strictEqual(c.serverSide.server, server);
    c.client.destroy();
  });

  it('a POST body arrives whole (Content-Length and chunked)', async function () {
    const server = common.impl.createServer((req, res) => {
      const chunks = [];
      req.on('data', (d) => chunks.push(d));
      req.on('end', () => res.end(`${req.method} ${Buffer.concat(chunks).toString()}`));
    });
    const c = connect(server);
    c.write('POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nhello');
    await common.sleep(20);
    c.write(' world');
    const [r1] = await c.responses(1);
    assert.strictEqual(r1.body.toString(), 'POST hello world');
    c.write('PUT / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n');
    const r = await c.responses(2);
    assert.strictEqual(r[1].body.toString(), 'PUT abcde');
    c.client.destroy();
  });

  it('keep-alive: two requests one after the other on one stream, one connection', async function () {
    let connections = 0;
    const sockets = [];
    const server = common.impl.createServer((req, res) => {
      sockets.push(req.socket);
      res.end(req.url);
    });
    server.on('connection', () => { connections++; });
    const c = connect(server);
    c.write('GET /1 HTTP/1.1\r\nHost: h\r\n\r\n');
    const [r1] = await c.responses(1);
    assert.strictEqual(r1.body.toString(), '/1');
    c.write('GET /2 HTTP/1.1\r\nHost: h\r\n\r\n');
    const r = await c.responses(2);
    assert.strictEqual(r[1].body.toString(), '/2');
    assert.strictEqual(r[1].headers.connection, 'keep-alive');
    assert.strictEqual(connections, 1);
    assert.strictEqual(sockets[0], sockets[1]);
    c.client.destroy();
  });

  it('pipelining: three requests in one write are answered in order', async function () {
    const server = common.impl.createServer((req, res) => {
      // The first answers last: the order on the wire is still the requests'.
      setTimeout(() => res.end(req.url), req.url === '/1' ? 50 : 0);
    });
    const c = connect(server);
    c.write('GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n' +
      'GET /3 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n');
    const r = await c.responses(3);
    assert.deepStrictEqual(r.map((x) => x.body.toString()), ['/1', '/2', '/3']);
    assert.strictEqual(r[2].headers.connection, 'close');
    await c.ended();
  });

  it("bytes that are not HTTP: 'clientError' with the stream, as node's parse error", async function () {
    const server = common.impl.createServer(() => assert.fail('no request expected'));
    const errors = [];
    server.on('clientError', (err, socket) => {
      errors.push({ code: err.code, raw: err.rawPacket && err.rawPacket.toString(), socket });
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    });
    const c = connect(server);
    c.write('HELLO THERE\r\n\r\n');
    const [r] = await c.responses(1);
    assert.strictEqual(r.statusCode, 400);
    assert.strictEqual(errors.length, 1);
    assert.strictEqual(errors[0].code, 'HPE_INVALID_METHOD');
    assert.strictEqual(errors[0].raw, 'HELLO THERE\r\n\r\n');
    assert.strictEqual(errors[0].socket, c.serverSide);
  });

  it("without a 'clientError' listener the stream gets node's 400 and is destroyed", async function () {
    const server = common.impl.createServer(() => assert.fail('no request expected'));
    const c = connect(server);
    c.write('GET / HTTP/1.1\r\nHost: h\r\nBad Header\r\n\r\n');
    await c.ended();
    assert.strictEqual(c.data().toString(), 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    assert.strictEqual(c.serverSide.destroyed, true);
  });

  it("a stream that ends mid-request: 'clientError' HPE_INVALID_EOF_STATE, no 'request', nothing written", async function () {
    let requests = 0;
    const server = common.impl.createServer(() => { requests++; });
    const errors = [];
    server.on('clientError', (err, socket) => {
      errors.push(err.code);
      socket.destroy();
    });
    const c = connect(server);
    c.end('GET / HTTP/1.1\r\nHost: h\r\n');
    await c.ended();
    assert.strictEqual(requests, 0);
    assert.strictEqual(c.data().length, 0);
    assert.deepStrictEqual(errors, ['HPE_INVALID_EOF_STATE']);
  });

  it('maxHeaderSize and insecureHTTPParser of the server apply to the stream', async function () {
    const big = 'x'.repeat(20000);
    const lenient = common.impl.createServer({ maxHeaderSize: 64 * 1024, insecureHTTPParser: true },
      (req, res) => res.end(`${req.headers.big.length} ${JSON.stringify(req.headers.ctl)}`));
    const c = connect(lenient);
    c.write(`GET / HTTP/1.1\r\nHost: h\r\nBig: ${big}\r\nCtl: a\x08b\r\n\r\n`);
    const [r] = await c.responses(1);
    assert.strictEqual(r.body.toString(), `20000 ${JSON.stringify('a\x08b')}`);
    c.client.destroy();

    const strict = common.impl.createServer(() => assert.fail('no request expected'));
    const codes = [];
    strict.on('clientError', (err, socket) => { codes.push(err.code); socket.destroy(); });
    const d = connect(strict);
    d.write(`GET / HTTP/1.1\r\nHost: h\r\nBig: ${big}\r\n\r\n`);
    await d.ended();
    const e = connect(strict);
    e.write('GET / HTTP/1.1\r\nHost: h\r\nCtl: a\x08b\r\n\r\n');
    await e.ended();
    assert.deepStrictEqual(codes, ['HPE_HEADER_OVERFLOW', 'HPE_INVALID_HEADER_TOKEN']);
  });

  it('a net.Socket accepted elsewhere, a byte read and unshift()ed, is served whole', async function () {
    const server = common.impl.createServer((req, res) => res.end(`${req.method} ${req.url}`));
    const front = net.createServer((socket) => {
      const take = () => {
        const first = socket.read(1);
        if (first === null) {
          socket.once('readable', take);
          return;
        }
        socket.unshift(first);
        server.emit('connection', socket);
      };
      take();
    });
    common.trackServer(front);
    await new Promise((resolve) => front.listen(0, '127.0.0.1', resolve));
    const c = await common.rawConnect(front.address().port);
    c.socket.write('GET /handed HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n');
    await c.waitClose(5000);
    const [r] = common.parseAll(c.data);
    assert.strictEqual(r.statusCode, 200);
    assert.strictEqual(r.body.toString(), 'GET /handed');
  });
});
