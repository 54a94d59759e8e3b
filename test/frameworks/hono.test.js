'use strict';

// Hono through @hono/node-server: createAdaptorServer({ createServer }) with
// node's and sluice's createServer.

const http = require('node:http');
const crypto = require('node:crypto');
const common = require('../common');
const { assert } = common;
const { forEachServer, listen, get } = require('./helpers');

forEachServer('Hono (@hono/node-server)', (impl) => {
  it('routes, JSON, request bodies, streamed responses', async () => {
    const { Hono } = require('hono');
    const { stream } = require('hono/streaming');
    const { createAdaptorServer } = require('@hono/node-server');
    const app = new Hono();
    app.get('/hi/:name', (c) => c.json({ hi: c.req.param('name'), q: c.req.query('q') }));
    app.post('/sum', async (c) => {
      const buf = Buffer.from(await c.req.arrayBuffer());
      return c.text(`${buf.length} ${crypto.createHash('sha256').update(buf).digest('hex')}`);
    });
    app.get('/stream', (c) => stream(c, async (s) => {
      for (let i = 0; i < 5; i++) await s.write(`part${i};`);
    }));
    const server = createAdaptorServer({
      fetch: app.fetch,
      createServer: impl.isSluice ? impl.createServer : http.createServer,
    });
    const base = await listen(server);
    let r = await get(`${base}/hi/you?q=1`);
    assert.deepStrictEqual(JSON.parse(r.text), { hi: 'you', q: '1' });
    const body = crypto.randomBytes(2 * 1024 * 1024);
    r = await get(`${base}/sum`, { method: 'POST', body });
    assert.strictEqual(r.text, `${body.length} ${crypto.createHash('sha256').update(body).digest('hex')}`);
    r = await get(`${base}/stream`);
    assert.strictEqual(r.text, 'part0;part1;part2;part3;part4;');
    r = await get(`${base}/missing`);
    assert.strictEqual(r.status, 404);
  });
});
