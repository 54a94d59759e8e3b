'use strict';

// sluice.WebSocketServer against ws's own client, checked the same way
// against ws's WebSocketServer on node:http (SLUICE_TEST_IMPL=node): the
// handshake (subprotocols, verifyClient, path, 'headers', wsClientError),
// echo of text and binary, large messages, ping/pong, close codes both
// ways, terminate, sends on a closed socket, binaryType, the EventTarget
// shapes, clients tracking, pause/resume; the HTTP app on the same port.

const common = require('../common');
const { assert } = common;
const {
  startWs, client, terminateClients, next, rawWs, frame,
} = require('./helpers');

describe(`WebSocketServer API [${common.implName}]`, function () {
  this.timeout(30000);
  afterEach(async () => {
    terminateClients();
    await common.cleanup();
  });

  function echo(wss) {
    wss.on('connection', (ws) => {
      ws.on('error', () => {});
      ws.on('message', (m, isBinary) => ws.send(m, { binary: isBinary }));
    });
  }

  it('echoes text and binary messages; the HTTP app answers on the same port', async () => {
    const { wss, port, url } = await startWs();
    echo(wss);
    const c = client(`${url}/echo`);
    await next(c, 'open');
    c.send('héllo');
    let [m, isBinary] = await next(c, 'message');
    assert.strictEqual(m.toString(), 'héllo');
    assert.strictEqual(isBinary, false);
    c.send(Buffer.from([0, 1, 2, 255]));
    [m, isBinary] = await next(c, 'message');
    assert.deepStrictEqual([...m], [0, 1, 2, 255]);
    assert.strictEqual(isBinary, true);
    const r = await fetch(`http://127.0.0.1:${port}/page`);
    assert.strictEqual(await r.text(), 'plain /page');
  });

  it('carries 1 MiB and empty messages, many in one burst, in order', async () => {
    const { wss, url } = await startWs();
    echo(wss);
    const c = client(url);
    await next(c, 'open');
    const big = Buffer.alloc(1 << 20);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7) & 255;
    const got = [];
    const done = new Promise((resolve) => c.on('message', (m) => {
      got.push(m);
      if (got.length === 102) resolve();
    }));
    c.send(big);
    c.send('');
    for (let i = 0; i < 100; i++) c.send(`m${i}`);
    await common.withTimeout(done, 15000, 'echoes');
    assert.ok(got[0].equals(big));
    assert.strictEqual(got[1].length, 0);
    for (let i = 0; i < 100; i++) assert.strictEqual(got[i + 2].toString(), `m${i}`);
  });

  it('negotiates a subprotocol with handleProtocols, and emits headers', async () => {
    const { wss, url } = await startWs({
      handleProtocols: (protocols) => (protocols.has('two') ? 'two' : false),
    });
    let seen = null;
    wss.on('headers', (headers) => {
      seen = headers.slice();
      headers.push('X-Extra: yes');
    });
    const conn = next(wss, 'connection');
    const c = client(url, ['one', 'two']);
    const upgrade = next(c, 'upgrade');
    const open = next(c, 'open');
    const [res] = await upgrade;
    assert.strictEqual(res.headers['x-extra'], 'yes');
    await open;
    assert.strictEqual(c.protocol, 'two');
    const [ws] = await conn;
    assert.strictEqual(ws.protocol, 'two');
    assert.strictEqual(seen[0], 'HTTP/1.1 101 Switching Protocols');
  });

  it('refuses by verifyClient (sync and async) and by path, with ws\'s statuses', async () => {
    const { port } = await startWs({
      path: '/ok',
      verifyClient: (info, cb) => {
        if (info.req.url === '/ok' && info.req.headers['x-deny']) cb(false, 403, 'nope');
        else cb(true);
      },
    });
    const denied = client(`ws://127.0.0.1:${port}/ok`, undefined, { headers: { 'x-deny': '1' } });
    const [, res] = await next(denied, 'unexpected-response');
    assert.strictEqual(res.statusCode, 403);
    const wrongPath = client(`ws://127.0.0.1:${port}/other`);
    const [, res2] = await next(wrongPath, 'unexpected-response');
    assert.strictEqual(res2.statusCode, 400);
    const ok = client(`ws://127.0.0.1:${port}/ok`);
    await next(ok, 'open');
  });

  it('answers a bad handshake 400 (bad key, bad version) or hands it to wsClientError', async () => {
    const { wss, port } = await startWs();
    const badKey = await common.rawConnect(port);
    await badKey.write('GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      'Sec-WebSocket-Key: short\r\nSec-WebSocket-Version: 13\r\n\r\n');
    const t1 = (await badKey.waitClose()).toString();
    assert.match(t1, /^HTTP\/1\.1 400 /);
    assert.match(t1, /Missing or invalid Sec-WebSocket-Key header/);
    const badVersion = await common.rawConnect(port);
    await badVersion.write('GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 12\r\n\r\n');
    const t2 = (await badVersion.waitClose()).toString();
    assert.match(t2, /^HTTP\/1\.1 400 /);
    assert.match(t2, /Sec-WebSocket-Version: 13, 8/i);
    const errs = [];
    wss.on('wsClientError', (err, socket) => {
      errs.push(err.message);
      socket.end('HTTP/1.1 418 Teapot\r\nConnection: close\r\n\r\n');
    });
    const custom = await common.rawConnect(port);
    await custom.write('POST / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nContent-Length: 0\r\n\r\n');
    assert.match((await custom.waitClose()).toString(), /^HTTP\/1\.1 418/);
    assert.deepStrictEqual(errs, ['Invalid HTTP method']);
  });

  it('ping and pong both ways, with payloads', async () => {
    const { wss, url } = await startWs();
    const conn = next(wss, 'connection');
    const c = client(url);
    await next(c, 'open');
    const [ws] = await conn;
    const serverPing = next(ws, 'ping');
    const clientPong = next(c, 'pong');
    c.ping('abc');
    assert.strictEqual((await serverPing)[0].toString(), 'abc');
    assert.strictEqual((await clientPong)[0].toString(), 'abc');
    const clientPing = next(c, 'ping');
    const serverPong = next(ws, 'pong');
    ws.ping(Buffer.from('xyz'));
    assert.strictEqual((await clientPing)[0].toString(), 'xyz');
    assert.strictEqual((await serverPong)[0].toString(), 'xyz');
    assert.throws(() => ws.ping(Buffer.alloc(126)), RangeError);
  });

  it('closes with code and reason both ways', async () => {
    const { wss, url } = await startWs();
    let conn = next(wss, 'connection');
    let c = client(url);
    await next(c, 'open');
    let [ws] = await conn;
    const serverClose = next(ws, 'close');
    const clientClose = next(c, 'close');
    ws.close(4000, 'server says');
    assert.strictEqual(ws.readyState, ws.CLOSING);
    let [code, reason] = await clientClose;
    assert.strictEqual(code, 4000);
    assert.strictEqual(reason.toString(), 'server says');
    [code] = await serverClose;
    assert.strictEqual(code, 4000);
    assert.strictEqual(ws.readyState, 3);

    conn = next(wss, 'connection');
    c = client(url);
    await next(c, 'open');
    [ws] = await conn;
    const sc = next(ws, 'close');
    c.close(4001, 'client says');
    [code, reason] = await sc;
    assert.strictEqual(code, 4001);
    assert.strictEqual(reason.toString(), 'client says');
  });

  it('terminate closes at once (1006); sends on a closed socket call back with an error, never throw', async () => {
    const { wss, url } = await startWs();
    const conn = next(wss, 'connection');
    const c = client(url);
    await next(c, 'open');
    const [ws] = await conn;
    const clientClose = next(c, 'close');
    const serverClose = next(ws, 'close');
    ws.terminate();
    assert.strictEqual((await clientClose)[0], 1006);
    assert.strictEqual((await serverClose)[0], 1006);
    assert.strictEqual(ws.readyState, 3);
    const err = await new Promise((resolve) => ws.send('late', resolve));
    assert.match(err.message, /WebSocket is not open: readyState 3 \(CLOSED\)/);
    const err2 = await new Promise((resolve) => ws.ping('late', false, resolve));
    assert.ok(err2 instanceof Error);
    ws.send('no callback');
    ws.close();
    ws.terminate();
    ws.pause();
    ws.resume();
    assert.strictEqual(typeof ws.bufferedAmount, 'number');
  });

  it('a client that leaves without a close frame gives close 1006', async () => {
    const { wss, port } = await startWs();
    const conn = next(wss, 'connection');
    const r = await rawWs(port);
    const [ws] = await conn;
    const closed = next(ws, 'close');
    r.c.destroy();
    assert.strictEqual((await closed)[0], 1006);
  });

  it('send callbacks, binaryType, EventTarget shapes and clients tracking', async () => {
    const { wss, url } = await startWs();
    const conn = next(wss, 'connection');
    const c = client(url);
    await next(c, 'open');
    const [ws] = await conn;
    assert.ok(wss.clients.has(ws));
    assert.strictEqual(ws.readyState, 1);
    assert.strictEqual(ws.OPEN, 1);
    assert.strictEqual(ws.extensions, '');
    await new Promise((resolve, reject) => ws.send('cb', (err) => (err ? reject(err) : resolve())));
    assert.strictEqual(typeof ws.bufferedAmount, 'number');

    ws.binaryType = 'arraybuffer';
    const ab = next(ws, 'message');
    c.send(Buffer.from([9, 8, 7]));
    const [data] = await ab;
    assert.ok(data instanceof ArrayBuffer);
    assert.deepStrictEqual([...new Uint8Array(data)], [9, 8, 7]);
    ws.binaryType = 'nodebuffer';

    const events = [];
    ws.onmessage = (ev) => events.push(['on', ev.type, ev.data]);
    const listener = (ev) => events.push(['add', ev.data]);
    ws.addEventListener('message', listener);
    const two = new Promise((resolve) => ws.on('message', () => { if (events.length >= 2) resolve(); }));
    c.send('text');
    await two;
    assert.deepStrictEqual(events, [['on', 'message', 'text'], ['add', 'text']]);
    ws.removeEventListener('message', listener);
    assert.strictEqual(typeof ws.onmessage, 'function');

    const closeEv = new Promise((resolve) => ws.addEventListener('close', resolve, { once: true }));
    c.close(1000);
    const ev = await closeEv;
    assert.strictEqual(ev.code, 1000);
    assert.strictEqual(ev.wasClean, true);
    await common.withTimeout((async () => { while (wss.clients.size) await common.sleep(10); })(), 5000, 'clients');
  });

  it('pause stops messages until resume', async () => {
    const { wss, url } = await startWs();
    const conn = next(wss, 'connection');
    const c = client(url);
    await next(c, 'open');
    const [ws] = await conn;
    const got = [];
    ws.on('message', (m) => got.push(m.toString()));
    ws.pause();
    assert.strictEqual(ws.isPaused, true);
    c.send('while paused');
    await common.sleep(300);
    assert.deepStrictEqual(got, []);
    const arrived = next(ws, 'message');
    ws.resume();
    await arrived;
    assert.deepStrictEqual(got, ['while paused']);
  });

  it('a frame sent right behind the handshake (head bytes) arrives after connection', async () => {
    const { wss, port } = await startWs();
    const got = new Promise((resolve) => wss.on('connection', (ws) => ws.on('message', (m) => resolve(m.toString()))));
    const c = await common.rawConnect(port);
    await c.write(Buffer.concat([
      Buffer.from('GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n'),
      frame(1, 'early'),
    ]));
    assert.strictEqual(await common.withTimeout(got, 8000, 'early message'), 'early');
  });
  // Memory per idle socket (docs/websocket.md): once the WebSocket took the
  // connection, the HTTP/1.1 session and tunnel it replaced are freed in
  // the same loop turn, and the output buffer is not kept between sends.
  it('[sluice-only] an open, idle WebSocket keeps no retired HTTP/1.1 session and no output buffer', async function () {
    if (common.isNode) this.skip();
    const { kConn } = common.libInternal('websocket/websocket');
    const { wss, url } = await startWs();
    echo(wss);
    const conn = next(wss, 'connection');
    const c = client(url);
    await next(c, 'open');
    const [ws] = await conn;
    c.send('x'.repeat(3000));
    assert.strictEqual((await next(c, 'message'))[0].length, 3000);
    await new Promise((resolve) => setImmediate(resolve));
    const st = ws[kConn].stats();
    assert.strictEqual(st.retiredSessions, 0);
    assert.strictEqual(st.outputCapacity, 0);
    assert.strictEqual(st.backlog, 0);
    // And it still works after its buffers were freed.
    c.send('again');
    assert.strictEqual((await next(c, 'message'))[0].toString(), 'again');
  });
});
