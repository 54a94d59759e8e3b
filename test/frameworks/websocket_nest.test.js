'use strict';

// NestJS gateways with @nestjs/platform-ws's WsAdapter on the app's own
// HTTP server (Fastify adapter; sluice through its serverFactory). WsAdapter
// builds `new (require('ws').Server)({ noServer: true, ...options })`; the
// documented way to change that is a custom adapter, so this one subclasses
// WsAdapter and builds the given WebSocketServer class instead (for ws too,
// so the ws run proves the adapter).

require('reflect-metadata');
const common = require('../common');
const { assert } = common;
const { get, sluice } = require('./helpers');
const { forEachWsEngine, next } = require('./ws_engines');

function adapterFor(WSS) {
  const { WsAdapter } = require('@nestjs/platform-ws');
  return class extends WsAdapter {
    create(port, options) {
      const { server, path, ...wsOptions } = options;
      if (port !== 0 || !this.httpServer || server) return super.create(port, options);
      this.ensureHttpServerExists(port, this.httpServer);
      const wss = this.bindErrorHandler(new WSS({ noServer: true, ...wsOptions }));
      this.addWsServerToRegistry(wss, port, path);
      return wss;
    }
  };
}

// A gateway on /events: 'echo' answers the caller, 'everyone' goes to all
// clients through the @WebSocketServer()-injected server; decorated by hand.
function appModule(seen) {
  const { Module } = require('@nestjs/common');
  const ws = require('@nestjs/websockets');
  class Gateway {
    echo(data) { return { event: 'echo', data }; }
    everyone(data) {
      for (const c of this.server.clients) c.send(JSON.stringify({ event: 'everyone', data }));
    }
    afterInit(server) { seen.server = server; }
  }
  const proto = Gateway.prototype;
  ws.WebSocketGateway({ path: '/events' })(Gateway);
  ws.WebSocketServer()(proto, 'server');
  for (const [name, event] of [['echo', 'echo'], ['everyone', 'everyone']]) {
    ws.SubscribeMessage(event)(proto, name, Object.getOwnPropertyDescriptor(proto, name));
    ws.MessageBody()(proto, name, 0);
  }
  class AppModule {}
  Module({ providers: [Gateway] })(AppModule);
  return AppModule;
}

forEachWsEngine('NestJS WsAdapter', (impl, engine) => {
  it('a gateway on the app\'s port: echo, broadcast, HTTP still served', async () => {
    const { NestFactory } = require('@nestjs/core');
    const { FastifyAdapter } = require('@nestjs/platform-fastify');
    const { WebSocket } = require('ws');
    const seen = {};
    const fastify = new FastifyAdapter(impl.isSluice ? { serverFactory: (handler) => sluice.createServer(handler) } : {});
    fastify.get('/plain', (req, reply) => reply.send({ plain: true }));
    const app = await NestFactory.create(appModule(seen), fastify, { logger: false });
    app.useWebSocketAdapter(new (adapterFor(engine.WebSocketServer))(app));
    await app.listen(0, '127.0.0.1');
    common.trackServer(app.getHttpServer());
    try {
      assert.ok(seen.server instanceof engine.WebSocketServer);
      const base = (await app.getUrl()).replace(/^http/, 'ws').replace('[::1]', '127.0.0.1');
      const a = new WebSocket(`${base}/events`);
      const b = new WebSocket(`${base}/events`);
      await Promise.all([next(a, 'open'), next(b, 'open')]);
      a.send(JSON.stringify({ event: 'echo', data: { n: 1 } }));
      const [m] = await next(a, 'message');
      assert.deepStrictEqual(JSON.parse(m), { event: 'echo', data: { n: 1 } });
      const both = Promise.all([next(a, 'message'), next(b, 'message')]);
      b.send(JSON.stringify({ event: 'everyone', data: 'hi' }));
      for (const [x] of await both) assert.deepStrictEqual(JSON.parse(x), { event: 'everyone', data: 'hi' });
      const r = await get(`${base.replace(/^ws/, 'http')}/plain`);
      assert.deepStrictEqual(JSON.parse(r.text), { plain: true });
      a.close();
      b.close();
      await Promise.all([next(a, 'close'), next(b, 'close')]);
    } finally {
      await app.close();
    }
  });
});
