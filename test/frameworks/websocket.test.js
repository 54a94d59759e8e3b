'use strict';

// 'upgrade' and 'connect' as node:http: ws (echo, 1 MiB messages,
// permessage-deflate, ping/pong, close codes, 1,000 concurrent sockets, a
// client that disappears), socket.io, @fastify/websocket, a CONNECT tunnel;
// on node:http and on sluice.

const net = require('node:net');
const crypto = require('node:crypto');
const common = require('../common');
const { assert } = common;
const { forEachServer, listen, get, sluice } = require('./helpers');

function wsUrl(base) { return base.replace(/^http/, 'ws'); }

// Resolves with the next `event` of `emitter` (args array), with a deadline.
function next(emitter, event, ms = 8000) {
  return common.once(emitter, event, ms, `'${event}'`);
}

forEachServer('ws', (impl) => {
  const { WebSocketServer, WebSocket } = require('ws');
  let server;
  let wss;
  let base;
  const clients = [];

  function connect(opts) {
    const ws = new WebSocket(wsUrl(base), opts);
    ws.on('error', () => {});
    clients.push(ws);
    return ws;
  }

  beforeEach(async () => {
    server = impl.createServer((req, res) => res.end(`plain ${req.headers.upgrade || ''}`));
    wss = new WebSocketServer({ server, perMessageDeflate: { threshold: 0 } });
    wss.on('connection', (ws, req) => {
      ws.on('message', (m, isBinary) => {
        const s = isBinary ? '' : m.toString();
        if (s === 'close-me') ws.close(4000, 'as asked');
        else if (s === 'whoami') ws.send(`${req.socket.remoteAddress} ${req.url}`);
        else ws.send(m, { binary: isBinary });
      });
      ws.on('error', () => {});
    });
    base = await listen(server);
  });

  afterEach(() => {
    for (const c of clients.splice(0)) c.terminate();
    for (const c of wss.clients) c.terminate();
    wss.close();
  });

  it('echo of text and 1 MiB binary messages, with and without permessage-deflate', async () => {
    for (const perMessageDeflate of [false, true]) {
      const ws = connect({ perMessageDeflate });
      await next(ws, 'open');
      assert.strictEqual(ws.extensions.includes('permessage-deflate'), perMessageDeflate);
      ws.send('hello');
      let [m] = await next(ws, 'message');
      assert.strictEqual(m.toString(), 'hello');
      const big = crypto.randomBytes(1024 * 1024);
      ws.send(big);
      [m] = await next(ws, 'message');
      assert.ok(Buffer.from(m).equals(big));
      ws.send('whoami');
      [m] = await next(ws, 'message');
      assert.strictEqual(m.toString(), '127.0.0.1 /');
      ws.close(1000);
      const [code] = await next(ws, 'close');
      assert.strictEqual(code, 1000);
    }
  });

  it('ping/pong and close codes from either side', async () => {
    const ws = connect();
    await next(ws, 'open');
    ws.ping('p1');
    const [data] = await next(ws, 'pong');
    assert.strictEqual(data.toString(), 'p1');
    ws.send('close-me');
    const [code, reason] = await next(ws, 'close');
    assert.strictEqual(code, 4000);
    assert.strictEqual(reason.toString(), 'as asked');
    const ws2 = connect();
    await next(ws2, 'open');
    const [serverWs] = [...wss.clients];
    const closed = next(serverWs, 'close');
    ws2.close(4321, 'client says');
    const [c2, r2] = await closed;
    assert.strictEqual(c2, 4321);
    assert.strictEqual(r2.toString(), 'client says');
  });

  it('1,000 concurrent sockets', async function () {
    this.timeout(60000);
    const N = 1000;
    const socks = [];
    for (let i = 0; i < N; i++) socks.push(connect({ perMessageDeflate: false }));
    await Promise.all(socks.map((ws) => next(ws, 'open', 40000)));
    const replies = await Promise.all(socks.map((ws, i) => {
      const p = next(ws, 'message', 40000);
      ws.send(`n${i}`);
      return p;
    }));
    replies.forEach(([m], i) => assert.strictEqual(m.toString(), `n${i}`));
    assert.strictEqual(wss.clients.size, N);
    await Promise.all(socks.map((ws) => { const p = next(ws, 'close', 40000); ws.close(); return p; }));
  });

  it('a client that disappears: the server side closes with 1006', async () => {
    const sock = net.connect(Number(new URL(base).port), '127.0.0.1');
    common.trackSocket(sock);
    const key = crypto.randomBytes(16).toString('base64');
    const connected = next(wss, 'connection');
    sock.write(`GET /gone HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    const [serverWs] = await connected;
    const closed = next(serverWs, 'close');
    sock.destroy();
    const [code] = await closed;
    assert.strictEqual(code, 1006);
  });

  it('a plain request with Upgrade headers still reaches the request handler when nobody handles it', async () => {
    // Another server without an 'upgrade' listener: answered as a request.
    const plain = await listen(impl.createServer((req, res) => res.end(`plain ${req.headers.upgrade} ${req.upgrade}`)));
    const r = await common.httpRequest(Number(new URL(plain).port), {
      headers: { upgrade: 'websocket', connection: 'upgrade' },
    });
    assert.strictEqual(r.body.toString(), 'plain websocket false');
    const r2 = await get(`${base}/x`);
    assert.strictEqual(r2.text, 'plain ');
  });
});

forEachServer('CONNECT tunnel', (impl) => {
  it("'connect' (req, socket, head): bytes flow both ways, head included", async () => {
    const backend = net.createServer((s) => s.pipe(s));  // echo
    common.trackServer(backend);
    await new Promise((r) => backend.listen(0, '127.0.0.1', r));
    const server = impl.createServer();
    server.on('connect', (req, socket, head) => {
      const [host, port] = req.url.split(':');
      const up = net.connect(Number(port), host, () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) up.write(head);
        up.pipe(socket);
        socket.pipe(up);
      });
      socket.on('error', () => up.destroy());
      up.on('error', () => socket.destroy());
    });
    const base = await listen(server);
    const sock = common.trackSocket(net.connect(Number(new URL(base).port), '127.0.0.1'));
    const target = `127.0.0.1:${backend.address().port}`;
    sock.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\nearly-bytes;`);
    let got = '';
    const payload = crypto.randomBytes(300000).toString('hex');
    await new Promise((resolve, reject) => {
      sock.on('error', reject);
      let sent = false;
      sock.on('data', (d) => {
        got += d.toString('latin1');
        if (!sent && got.includes('\r\n\r\n')) {
          sent = true;
          sock.write(payload);
        }
        if (got.endsWith(payload)) resolve();
      });
    });
    assert.match(got, /^HTTP\/1\.1 200 Connection Established\r\n\r\nearly-bytes;/);
    sock.end();
  });
});

forEachServer('socket.io', (impl) => {
  it('connects over websocket and polling, emits and acks', async () => {
    const { Server } = require('socket.io');
    const { io: ioc } = require('socket.io-client');
    const httpServer = impl.createServer();
    const io = new Server(httpServer);
    io.on('connection', (socket) => {
      socket.on('add', (a, b, ack) => ack(a + b));
      socket.emit('hello', socket.conn.transport.name);
    });
    const base = await listen(httpServer);
    try {
      for (const transports of [['websocket'], ['polling']]) {
        const c = ioc(base, { transports, reconnection: false, forceNew: true });
        try {
          const [transport] = await next(c, 'hello');
          assert.strictEqual(transport, transports[0]);
          const sum = await c.timeout(5000).emitWithAck('add', 2, 3);
          assert.strictEqual(sum, 5);
        } finally {
          c.close();
        }
      }
    } finally {
      io.close();
    }
  });
});

forEachServer('@fastify/websocket', (impl) => {
  it('a websocket route next to HTTP routes', async () => {
    const Fastify = require('fastify');
    const { WebSocket } = require('ws');
    const app = impl.isSluice ?
      Fastify({ serverFactory: (handler) => sluice.createServer(handler) }) : Fastify();
    await app.register(require('@fastify/websocket'));
    app.get('/ws', { websocket: true }, (socket) => {
      socket.on('message', (m) => socket.send(`echo ${m}`));
    });
    app.get('/http', async () => ({ ok: 1 }));
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    common.trackServer(app.server);
    try {
      const ws = new WebSocket(`${wsUrl(base)}/ws`);
      await next(ws, 'open');
      ws.send('fy');
      const [m] = await next(ws, 'message');
      assert.strictEqual(m.toString(), 'echo fy');
      ws.close();
      await next(ws, 'close');
      const r = await get(`${base}/http`);
      assert.deepStrictEqual(JSON.parse(r.text), { ok: 1 });
    } finally {
      await app.close();
    }
  });
});
