'use strict';

// WebSocket messages in requestBufferAllocator memory: on a server with a
// buffer pool, each message is a view of pool memory (copied there from
// the parser, one message after another in the current buffer), released
// with releaseBuffer as request body chunks are; a message larger than
// the pool's buffers, or one that meets a dry pool, is a copy of its own.
// Sending pool memory back (echo) is safe against an immediate release.
// sluice-only: ws has no buffer pool.

const http2 = require('node:http2');
const common = require('../common');
const { assert } = common;
const { client, terminateClients, next, frame, parseFrames } = require('./helpers');
const { isPoolMemory } = common.libInternal('uploads/buffer_pool');

const KiB = 1024;

(common.isNode ? describe.skip : describe)('WebSocket messages in pool memory [sluice-only]', function () {
  this.timeout(30000);
  afterEach(async () => {
    terminateClients();
    await common.cleanup();
  });

  async function start(poolOptions, wsOptions = {}) {
    const sluice = common.impl;
    const pool = sluice.createBufferPool({ bufferSize: 16 * KiB, maxBuffers: 4, poison: true, ...poolOptions });
    const server = sluice.createServer({ requestBufferAllocator: pool.alloc }, (req, res) => res.end('plain'));
    const wss = new sluice.WebSocketServer({ server, ...wsOptions });
    const port = await common.listenLocal(server);
    return { sluice, pool, server, wss, port, url: `ws://127.0.0.1:${port}` };
  }

  const message = (i, n) => Buffer.alloc(n, 97 + (i % 26));

  it('messages are views of pool memory, kept valid until released; releasing returns the buffers', async () => {
    const { sluice, pool, wss, url } = await start();
    const kept = [];
    wss.on('connection', (ws) => ws.on('message', (m, isBinary) => kept.push({ m, isBinary })));
    const c = client(url);
    await next(c, 'open');
    for (let i = 0; i < 20; i++) c.send(message(i, 1000), { binary: i % 2 === 0 });
    await common.withTimeout((async () => { while (kept.length < 20) await common.sleep(5); })(), 8000, '20 messages');
    // 20 × 1000 bytes share two 16 KiB buffers, all still held.
    for (let i = 0; i < 20; i++) {
      assert.ok(isPoolMemory(kept[i].m), `message ${i} in pool memory`);
      assert.ok(kept[i].m.equals(message(i, 1000)), `message ${i} intact`);
      assert.strictEqual(kept[i].isBinary, i % 2 === 0);
    }
    assert.strictEqual(pool.stats().outstanding, 20);
    assert.strictEqual(pool.stats().inUse, 2);
    for (const { m } of kept) sluice.releaseBuffer(m);
    assert.strictEqual(pool.stats().outstanding, 0);
    // The first buffer went back (poisoned); the current one is held for
    // the next messages.
    assert.strictEqual(pool.stats().inUse, 1);
    assert.throws(() => sluice.releaseBuffer(kept[0].m), { code: 'ERR_SLUICE_BUFFER_RELEASED' });
  });

  it('an echo of pool memory released at once arrives intact; big messages and a dry pool get copies', async () => {
    const { sluice, pool, wss, url } = await start({ maxBuffers: 1 });
    const kinds = [];
    const held = [];
    wss.on('connection', (ws) => ws.on('message', (m) => {
      kinds.push(isPoolMemory(m));
      ws.send(m);
      if (m.length === 3 * KiB) held.push(m);  // kept: the pool runs dry
      else sluice.releaseBuffer(m);
    }));
    const c = client(url);
    await next(c, 'open');
    const got = [];
    c.on('message', (m) => got.push(m));
    const sent = [message(0, 3 * KiB), message(1, 3 * KiB), message(2, 20 * KiB), message(3, 3 * KiB),
      message(4, 3 * KiB), message(5, 3 * KiB), message(6, 3 * KiB), message(7, 3 * KiB)];
    for (const m of sent) c.send(m);
    await common.withTimeout((async () => { while (got.length < sent.length) await common.sleep(5); })(), 8000, 'echoes');
    for (let i = 0; i < sent.length; i++) assert.ok(got[i].equals(sent[i]), `echo ${i} intact`);
    // 20 KiB > the 16 KiB buffers: a copy. Five 3 KiB messages fill the
    // one buffer (15 KiB); the sixth meets a dry pool: a copy.
    assert.deepStrictEqual(kinds, [true, true, false, true, true, true, false, false]);
    for (const m of held) sluice.releaseBuffer(m);
    assert.strictEqual(pool.stats().outstanding, 0);
    c.send(message(8, 3 * KiB));
    await common.withTimeout((async () => { while (got.length < sent.length + 1) await common.sleep(5); })(), 8000, 'after');
    assert.strictEqual(kinds[8], true, 'pool memory again once released');
  });

  it('a burst echoed and released at once: no echo reads memory the pool took back', async () => {
    const { sluice, pool, wss, url } = await start({ maxBuffers: 2 });
    wss.on('connection', (ws) => ws.on('message', (m) => {
      ws.send(m);
      sluice.releaseBuffer(m);
    }));
    const c = client(url);
    await next(c, 'open');
    const got = [];
    c.on('message', (m) => got.push(m));
    // One write: the messages arrive together, so buffers fill, are given
    // back (and poisoned) and taken again before the echoes are flushed.
    const sent = [];
    for (let i = 0; i < 24; i++) sent.push(message(i, 3 * KiB));
    c._socket.write(Buffer.concat(sent.map((m) => frame(2, m))));
    await common.withTimeout((async () => { while (got.length < sent.length) await common.sleep(5); })(), 8000, 'echoes');
    for (let i = 0; i < sent.length; i++) assert.ok(got[i].equals(sent[i]), `echo ${i} intact`);
    assert.ok(pool.stats().allocated <= 2);
  });

  it('once no WebSocket that got pool memory is open, the server holds no pool buffer; the next one takes one again', async () => {
    const { sluice, pool, wss, url } = await start();
    const sockets = [];
    wss.on('connection', (ws) => {
      sockets.push(ws);
      ws.on('message', (m) => { ws.send(String(isPoolMemory(m))); sluice.releaseBuffer(m); });
    });
    const a = client(url);
    const b = client(url);
    await Promise.all([next(a, 'open'), next(b, 'open')]);
    a.send(message(0, 100));
    assert.strictEqual(String((await next(a, 'message'))[0]), 'true');
    b.send(message(1, 100));
    assert.strictEqual(String((await next(b, 'message'))[0]), 'true');
    assert.strictEqual(pool.stats().outstanding, 0);
    // Released, but the current buffer stays while its sockets are open.
    assert.strictEqual(pool.stats().inUse, 1);
    a.close();
    await next(sockets[0], 'close');
    await common.sleep(20);
    assert.strictEqual(pool.stats().inUse, 1, 'b still open: the buffer stays');
    b.terminate();
    await next(sockets[1], 'close');
    await common.withTimeout((async () => { while (pool.stats().inUse !== 0) await common.sleep(5); })(), 8000,
      'the buffer back in the pool');
    const c = client(url);
    await next(c, 'open');
    c.send(message(2, 100));
    assert.strictEqual(String((await next(c, 'message'))[0]), 'true');
    assert.strictEqual(pool.stats().inUse, 1);
  });

  it('binaryType arraybuffer gets a copy; over HTTP/2 messages are pool memory too', async () => {
    const { pool, server, wss } = await start();
    const seen = [];
    wss.on('connection', (ws, req) => {
      if (req.httpVersion === '1.1') ws.binaryType = 'arraybuffer';
      ws.on('message', (m) => {
        seen.push([req.httpVersion, m instanceof ArrayBuffer, !(m instanceof ArrayBuffer) && isPoolMemory(m)]);
        ws.send(m);
      });
    });
    const port = server.address().port;
    const c = client(`ws://127.0.0.1:${port}`);
    await next(c, 'open');
    c.send(message(1, 5000));
    const [echo] = await next(c, 'message');
    assert.ok(Buffer.from(echo).equals(message(1, 5000)));

    const session = http2.connect(`http://localhost:${port}`);
    session.on('error', () => {});
    await next(session, 'remoteSettings');
    const stream = session.request({
      ':method': 'CONNECT', ':protocol': 'websocket', ':path': '/', ':scheme': 'http', 'sec-websocket-version': '13',
    });
    let body = Buffer.alloc(0);
    stream.on('data', (d) => { body = Buffer.concat([body, d]); });
    await common.once(stream, 'response', 8000, 'the 200');
    stream.write(frame(2, message(2, 3000)));
    await common.withTimeout((async () => { while (parseFrames(body).frames.length < 1) await common.sleep(5); })(), 8000, 'h2 echo');
    assert.ok(parseFrames(body).frames[0].payload.equals(message(2, 3000)));
    session.destroy();
    assert.deepStrictEqual(seen, [['1.1', true, false], ['2.0', false, true]]);
    assert.ok(pool.stats().outstanding >= 1, 'the HTTP/2 message is a retained view');
  });
});
