'use strict';

// wss: the WebSocket session over the TLS layer (sluice.createSecureServer,
// ALPN http/1.1), with ws's client and the test CA; echo with and without
// permessage-deflate, a large message, pub/sub, close. Shared: the
// reference is ws on node's https server.

const https = require('node:https');
const common = require('../common');
const { assert } = common;
const { fixtures } = require('../tls/tls_common');
const { WS, client, terminateClients, next } = require('./helpers');

describe(`wss: WebSockets over TLS [${common.implName}]`, function () {
  this.timeout(30000);
  afterEach(async () => {
    terminateClients();
    await common.cleanup();
  });

  async function startWss(wsOptions) {
    const f = fixtures();
    const opts = { key: f.localhost.key, cert: f.localhost.cert };
    const handler = (req, res) => res.end('secure plain');
    const server = common.isSluice ? common.impl.createSecureServer(opts, handler) :
      https.createServer(opts, handler);
    const Server = common.isSluice ? common.impl.WebSocketServer : WS.WebSocketServer;
    const wss = new Server({ server, ...wsOptions });
    wss.on('connection', (ws) => {
      ws.on('error', () => {});
      ws.on('message', (m, isBinary) => ws.send(m, { binary: isBinary }));
    });
    const port = await common.listenLocal(server);
    return { server, wss, port };
  }

  for (const perMessageDeflate of [false, true]) {
    it(`echoes text and a 512 KiB message over wss (permessage-deflate ${perMessageDeflate})`, async () => {
      const { port } = await startWss({ perMessageDeflate });
      const c = client(`wss://localhost:${port}/`, undefined,
        { ca: fixtures().ca, perMessageDeflate });
      await next(c, 'open');
      assert.strictEqual(c.extensions, perMessageDeflate ? 'permessage-deflate' : '');
      c.send('secure hello');
      assert.strictEqual((await next(c, 'message'))[0].toString(), 'secure hello');
      const big = Buffer.alloc(512 * 1024);
      for (let i = 0; i < big.length; i++) big[i] = (i * 13) & 255;
      c.send(big);
      assert.ok((await next(c, 'message'))[0].equals(big));
      const closed = next(c, 'close');
      c.close(4100, 'tls bye');
      assert.strictEqual((await closed)[0], 4100);
    });
  }

  common.sluiceOnly('publishes to subscribers over wss', async () => {
    const { wss, port } = await startWss({});
    const sockets = [];
    wss.on('connection', (ws) => { ws.subscribe('t'); sockets.push(ws); });
    const cs = [client(`wss://localhost:${port}/`, undefined, { ca: fixtures().ca }),
      client(`wss://localhost:${port}/`, undefined, { ca: fixtures().ca })];
    await Promise.all(cs.map((c) => next(c, 'open')));
    await common.withTimeout((async () => { while (sockets.length < 2) await common.sleep(5); })(), 8000, 'connections');
    const got = Promise.all(cs.map((c) => next(c, 'message')));
    assert.strictEqual(wss.publish('t', Buffer.alloc(5000, 3)), 2);
    for (const [m] of await got) assert.ok(m.equals(Buffer.alloc(5000, 3)));
  });
});
