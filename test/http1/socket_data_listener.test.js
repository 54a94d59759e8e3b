'use strict';

// A 'data' listener on an HTTP/1.1 request's socket, as node's server
// sockets: once one is added, every later read of the connection is also
// emitted as socket 'data' (node "unconsumes" the socket from its native
// parser), while the parser still gets the bytes. Shared: also run against
// node:http, with raw net clients.

const common = require('../common');
const { assert } = common;

const get = (url) => `GET ${url} HTTP/1.1\r\nHost: h\r\n\r\n`;
// A chunked body in three chunks: the parser moves its bytes in place.
const chunkedPost = 'POST /2 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n' +
  '3\r\nabc\r\n2\r\nde\r\n1\r\nf\r\n0\r\n\r\n';

// Starts a server whose handler answers, then (for the first request
// only) adds `listen(socket, onData)`, collecting what the socket emits.
async function tapped(options, listen) {
  const seen = [];  // ['request', url] and ['data', text], in order
  const { server, port } = await common.startServer(options, (req, res) => {
    seen.push(['request', req.url]);
    req.resume();
    req.on('end', () => res.end(req.url));
    if (req.url === '/1') listen(req.socket, (d) => seen.push(['data', d.toString('latin1')]));
  });
  return { server, port, seen };
}

describe(`http1 socket 'data' listener [${common.implName}]`, function () {
  afterEach(common.cleanup);

  for (const fn of ['on', 'addListener', 'prependListener', 'once']) {
    it(`socket.${fn}('data'): the bytes read after it are emitted raw (node's test-http-server-unconsume)`, async function () {
      let received = '';
      const { server, port } = await common.startServer((req, res) => {
        res.writeHead(200);
        res.end();
        req.socket[fn]('data', (d) => { received += d; });
        server.close();
      });
      const c = await common.rawConnect(port);
      c.socket.write('PUT / HTTP/1.1\r\nHost: example.com\r\n\r\n');
      await c.responses(1);
      c.socket.end('hello world');
      await c.waitClose();
      assert.strictEqual(received, 'hello world');
      // The parser saw the bytes too: not a request, so node's 400 and close.
      assert.match(c.text, /\r\n\r\nHTTP\/1\.1 400 Bad Request\r\nConnection: close\r\n\r\n$/);
    });
  }

  it('a pipelined request still reaches the handler; the listener hears its raw bytes after it (node\'s order)', async function () {
    const { port, seen } = await tapped({}, (socket, onData) => socket.on('data', onData));
    const c = await common.rawConnect(port);
    c.socket.write(get('/1'));
    await c.responses(1);
    c.socket.write(get('/2') + get('/3'));
    const rs = await c.responses(3);
    assert.deepStrictEqual(rs.map((r) => r.body.toString()), ['/1', '/2', '/3']);
    // The bytes may come in more than one read; the requests of a read
    // are dispatched before its 'data'.
    const text = seen.filter((e) => e[0] === 'data').map((e) => e[1]).join('');
    assert.strictEqual(text, get('/2') + get('/3'));
    assert.deepStrictEqual(seen[0], ['request', '/1']);
    assert.deepStrictEqual(seen[1], ['request', '/2']);
    assert.deepStrictEqual(seen.at(-1)[0], 'data');
  });

  it('a chunked body is seen as it came over the wire (chunk framing included)', async function () {
    const { port, seen } = await tapped({}, (socket, onData) => socket.on('data', onData));
    const c = await common.rawConnect(port);
    c.socket.write(get('/1'));
    await c.responses(1);
    c.socket.write(chunkedPost);
    const rs = await c.responses(2);
    assert.strictEqual(rs[1].body.toString(), '/2');
    assert.strictEqual(seen.filter((e) => e[0] === 'data').map((e) => e[1]).join(''), chunkedPost);
  });

  common.sluiceOnly('with a requestBufferAllocator: the copy is taken before the body is moved in place', async function () {
    // The parser moves a chunked body down over its framing inside the
    // user's buffer; the listener must still get the wire bytes.
    const sluice = require('../..');
    const pool = sluice.createBufferPool({ bufferSize: 4096, maxBuffers: 16 });
    const bodies = [];
    const seen = [];
    const { port } = await common.startServer({ requestBufferAllocator: pool.alloc }, (req, res) => {
      const parts = [];
      req.on('data', (d) => { parts.push(Buffer.from(d)); sluice.releaseBuffer(d); });
      req.on('end', () => { bodies.push(Buffer.concat(parts).toString()); res.end(req.url); });
      if (req.url === '/1') req.socket.on('data', (d) => seen.push(d.toString('latin1')));
    });
    const c = await common.rawConnect(port);
    c.socket.write(get('/1'));
    await c.responses(1);
    c.socket.write(chunkedPost);
    await c.responses(2);
    assert.deepStrictEqual(bodies, ['', 'abcdef']);
    assert.strictEqual(seen.join(''), chunkedPost);
  });

  it('without a listener nothing is emitted as socket data', async function () {
    let datas = 0;
    const { port } = await common.startServer((req, res) => {
      req.socket.on('close', () => {});
      const emit = req.socket.emit;
      req.socket.emit = function (ev, ...args) {
        if (ev === 'data') datas++;
        return emit.call(this, ev, ...args);
      };
      res.end('x');
    });
    const c = await common.rawConnect(port);
    c.socket.write(get('/1'));
    await c.responses(1);
    c.socket.write(get('/2'));
    await c.responses(2);
    assert.strictEqual(datas, 0);
  });
});
