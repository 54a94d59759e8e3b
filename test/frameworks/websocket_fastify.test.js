'use strict';

// @fastify/websocket with ws's WebSocketServer and with
// sluice.WebSocketServer. The plugin has no option for the WebSocket
// server class: it does `require('ws')` and builds `new WebSocket.Server(
// { noServer: true, ...options })`, then calls handleUpgrade itself after
// Fastify's routing and hooks. So the plugin is loaded here with its
// `require('ws')` answered by ws with `Server` replaced (the same mechanism
// for both engines, so the ws run proves the injection itself).

const Module = require('node:module');
const path = require('node:path');
const common = require('../common');
const { assert } = common;
const { get, sluice } = require('./helpers');
const { forEachWsEngine, next } = require('./ws_engines');

// A fresh copy of @fastify/websocket whose ws.Server is `WSS`.
function pluginWith(WSS) {
  const pluginPath = require.resolve('@fastify/websocket');
  const wsPath = require.resolve('ws', { paths: [path.dirname(pluginPath)] });
  const realWs = require(wsPath);
  const swapped = new Proxy(realWs, {
    get: (t, k) => (k === 'Server' || k === 'WebSocketServer' ? WSS : t[k]),
  });
  const saved = require.cache[pluginPath];
  delete require.cache[pluginPath];
  const load = Module._load;
  Module._load = function (request, parent, ...rest) {
    if (request === 'ws' && parent && parent.filename === pluginPath) return swapped;
    return load.call(this, request, parent, ...rest);
  };
  try {
    return require(pluginPath);
  } finally {
    Module._load = load;
    delete require.cache[pluginPath];
    if (saved) require.cache[pluginPath] = saved;
  }
}

forEachWsEngine('@fastify/websocket', (impl, engine) => {
  let app;
  afterEach(async () => { if (app) await app.close(); app = null; });

  async function start() {
    const Fastify = require('fastify');
    app = impl.isSluice ? Fastify({ serverFactory: (handler) => sluice.createServer(handler) }) : Fastify();
    await app.register(pluginWith(engine.WebSocketServer), { options: { maxPayload: 1 << 20, perMessageDeflate: true } });
    app.addHook('preValidation', async (req, reply) => {
      if (req.url.startsWith('/private')) await reply.code(401).send({ error: 'no' });
    });
    app.register(async (scope) => {
      scope.get('/ws', { websocket: true }, (socket, req) => {
        socket.on('message', (m, isBinary) => socket.send(isBinary ? m : `echo ${m} ${req.query.q || ''}`.trim(), { binary: isBinary }));
      });
      scope.get('/private/ws', { websocket: true }, (socket) => socket.send('should not happen'));
    });
    app.get('/http', async () => ({ ok: 1 }));
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    common.trackServer(app.server);
    return base.replace(/^http/, 'ws');
  }

  function connect(url, opts) {
    const { WebSocket } = require('ws');
    const ws = new WebSocket(url, opts);
    ws.on('error', () => {});
    return ws;
  }

  it('the plugin\'s server is the one given', async () => {
    await start();
    assert.ok(app.websocketServer instanceof engine.WebSocketServer);
  });

  it('a websocket route next to HTTP routes: text, binary, query, deflate', async () => {
    const base = await start();
    for (const perMessageDeflate of [false, true]) {
      const ws = connect(`${base}/ws?q=x`, { perMessageDeflate });
      await next(ws, 'open');
      assert.strictEqual(ws.extensions.includes('permessage-deflate'), perMessageDeflate);
      ws.send('fy');
      let [m] = await next(ws, 'message');
      assert.strictEqual(m.toString(), 'echo fy x');
      const b = Buffer.from([0, 1, 2, 255]);
      ws.send(b);
      [m] = await next(ws, 'message');
      assert.ok(Buffer.from(m).equals(b));
      ws.close(1000);
      const [code] = await next(ws, 'close');
      assert.strictEqual(code, 1000);
    }
    const r = await get(`${base.replace(/^ws/, 'http')}/http`);
    assert.deepStrictEqual(JSON.parse(r.text), { ok: 1 });
  });

  it('a hook refuses the upgrade with 401; maxPayload closes with 1009', async () => {
    const base = await start();
    const denied = connect(`${base}/private/ws`);
    const [, res] = await next(denied, 'unexpected-response');
    assert.strictEqual(res.statusCode, 401);
    const ws = connect(`${base}/ws`);
    await next(ws, 'open');
    ws.send(Buffer.alloc((1 << 20) + 1));
    const [code] = await next(ws, 'close');
    assert.strictEqual(code, 1009);
  });
});
