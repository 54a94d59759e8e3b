'use strict';

// Fastify on sluice (serverFactory: HTTP/1.1 and h2c on one port, parsed
// natively), with @fastify/websocket for a WebSocket route. The plugin
// brings its own ws server; it takes the connection from sluice's
// 'upgrade' event after Fastify's routing and hooks, as on node:http.
//
//   PORT=3000 node server.js

const Fastify = require('fastify');
const sluice = require('sluice');

const port = Number(process.env.PORT) || 3000;
const app = Fastify({ serverFactory: (handler) => sluice.createServer(handler) });

app.register(require('@fastify/websocket'), { options: { maxPayload: 64 * 1024 } });
app.register(async (scope) => {
  scope.get('/ws', { websocket: true }, (socket, req) => {
    socket.send(`hello ${req.query.name || 'there'}`);
    socket.on('message', (message) => socket.send(`echo: ${message}`));
  });
});
app.get('/', async () => ({ hello: 'fastify on sluice' }));
app.post('/sum', async (req) => ({ sum: (req.body.numbers || []).reduce((a, b) => a + b, 0) }));

app.listen({ port, host: process.env.HOST || '127.0.0.1' }).then((address) => {
  console.log(`fastify on sluice at ${address}`);
}, (err) => {
  console.error(err.message);
  process.exit(1);
});
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
