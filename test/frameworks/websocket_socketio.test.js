'use strict';

// socket.io with engine.io's `wsEngine` option: ws's WebSocketServer (its
// default, named explicitly here) and sluice.WebSocketServer. The server's
// engine really is the one given (checked), the client upgrades from
// polling to websocket, events, acks, binary and a broadcast go through.

const common = require('../common');
const { assert } = common;
const { listen } = require('./helpers');
const { forEachWsEngine, next } = require('./ws_engines');

forEachWsEngine('socket.io wsEngine', (impl, engine) => {
  let io;
  const clients = [];
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
    if (io) io.close();
    io = null;
  });

  async function start() {
    const { Server } = require('socket.io');
    const httpServer = impl.createServer((req, res) => { if (!req.url.startsWith('/socket.io')) res.end('app'); });
    io = new Server(httpServer, { wsEngine: engine.WebSocketServer, perMessageDeflate: { threshold: 0 } });
    io.on('connection', (socket) => {
      socket.on('add', (a, b, ack) => ack(a + b));
      socket.on('bin', (buf, ack) => ack(Buffer.from(buf).reverse()));
      socket.on('shout', (msg) => io.emit('all', msg));
      socket.emit('hello', socket.conn.transport.name);
    });
    return listen(httpServer);
  }

  function client(base, opts) {
    const { io: ioc } = require('socket.io-client');
    const c = ioc(base, { reconnection: false, forceNew: true, ...opts });
    clients.push(c);
    return c;
  }

  it('the engine in use is the one given', async () => {
    await start();
    assert.ok(io.engine.ws instanceof engine.WebSocketServer, `engine.io's ws is a ${io.engine.ws && io.engine.ws.constructor.name}`);
  });

  it('websocket transport: events, acks and binary', async () => {
    const base = await start();
    const c = client(base, { transports: ['websocket'] });
    const [transport] = await next(c, 'hello');
    assert.strictEqual(transport, 'websocket');
    assert.strictEqual(await c.timeout(8000).emitWithAck('add', 2, 3), 5);
    const big = Buffer.alloc(200000, 7);
    big[0] = 1;
    const back = await c.timeout(8000).emitWithAck('bin', big);
    assert.strictEqual(Buffer.from(back)[big.length - 1], 1);
    assert.strictEqual(back.byteLength, big.length);
  });

  it('polling upgrades to websocket, and a broadcast reaches every client', async () => {
    const base = await start();
    const a = client(base, { transports: ['polling', 'websocket'] });
    const b = client(base, { transports: ['websocket'] });
    await Promise.all([next(a, 'hello'), next(b, 'hello')]);
    if (a.io.engine.transport.name !== 'websocket') await next(a.io.engine, 'upgrade');
    assert.strictEqual(a.io.engine.transport.name, 'websocket');
    const got = Promise.all([next(a, 'all'), next(b, 'all')]);
    a.emit('shout', 'to everyone');
    const [[ma], [mb]] = await got;
    assert.strictEqual(ma, 'to everyone');
    assert.strictEqual(mb, 'to everyone');
  });
});
