'use strict';

// NestJS (a minimal app) with its Express adapter and its Fastify adapter,
// on node:http and on sluice.

require('reflect-metadata');
const common = require('../common');
const { assert } = common;
const { forEachServer, listen, get, sluice } = require('./helpers');

// The app, decorated by hand (plain JS has no decorator syntax).
function appModule() {
  const {
    Controller, Get, Post, Body, Query, Param, Module, HttpException, Header,
  } = require('@nestjs/common');
  class ItemsController {
    list(q) { return { items: [1, 2, 3], q }; }
    one(id) {
      if (id === '0') throw new HttpException('no such item', 404);
      return { id };
    }
    create(body) { return { created: body }; }
  }
  const proto = ItemsController.prototype;
  const method = (name, ...decorators) => {
    for (const d of decorators) d(proto, name, Object.getOwnPropertyDescriptor(proto, name));
  };
  Controller('items')(ItemsController);
  method('list', Get(), Header('x-nest', 'yes'));
  Query('q')(proto, 'list', 0);
  method('one', Get(':id'));
  Param('id')(proto, 'one', 0);
  method('create', Post());
  Body()(proto, 'create', 0);
  class AppModule {}
  Module({ controllers: [ItemsController] })(AppModule);
  return AppModule;
}

async function checks(base) {
  let r = await get(`${base}/items?q=a`);
  assert.strictEqual(r.status, 200);
  assert.deepStrictEqual(JSON.parse(r.text), { items: [1, 2, 3], q: 'a' });
  assert.strictEqual(r.headers.get('x-nest'), 'yes');
  r = await get(`${base}/items/5`);
  assert.deepStrictEqual(JSON.parse(r.text), { id: '5' });
  r = await get(`${base}/items/0`);
  assert.strictEqual(r.status, 404);
  assert.strictEqual(JSON.parse(r.text).message, 'no such item');
  r = await get(`${base}/items`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"n":1}' });
  assert.strictEqual(r.status, 201);
  assert.deepStrictEqual(JSON.parse(r.text), { created: { n: 1 } });
  r = await get(`${base}/nothing`);
  assert.strictEqual(r.status, 404);
}

forEachServer('NestJS, Express adapter', (impl) => {
  it('controller routes, params, body, exceptions', async () => {
    const { NestFactory } = require('@nestjs/core');
    const { ExpressAdapter } = require('@nestjs/platform-express');
    const adapter = new ExpressAdapter();
    const app = await NestFactory.create(appModule(), adapter, { logger: false });
    await app.init();
    try {
      const base = await listen(impl.createServer(adapter.getInstance()));
      await checks(base);
    } finally {
      await app.close();
    }
  });
});

forEachServer('NestJS, Fastify adapter', (impl) => {
  it('controller routes, params, body, exceptions', async () => {
    const { NestFactory } = require('@nestjs/core');
    const { FastifyAdapter } = require('@nestjs/platform-fastify');
    const adapter = new FastifyAdapter(impl.isSluice ?
      { serverFactory: (handler) => sluice.createServer(handler) } : {});
    const app = await NestFactory.create(appModule(), adapter, { logger: false });
    await app.listen(0, '127.0.0.1');
    common.trackServer(app.getHttpServer());
    try {
      await checks(await app.getUrl());
    } finally {
      await app.close();
    }
  });
});
