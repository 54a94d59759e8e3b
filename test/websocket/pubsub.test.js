'use strict';

// [sluice-only] Native pub/sub (ws.subscribe / publish, server.publish /
// subscribers) and the send buffer's explicit backpressure (sent /
// buffered / dropped, the drain), with ws's client and raw sockets.

const common = require('../common');
const { assert } = common;
const {
  startWs, client, terminateClients, next, rawWs,
} = require('./helpers');

const { WS_SENT, WS_BUFFERED, WS_DROPPED, WS_NOT_OPEN } = common.isSluice ?
  common.libInternal('common/binding').constants : {};

(common.isSluice ? describe : describe.skip)('[sluice-only] WebSocket pub/sub and backpressure', function () {
  this.timeout(30000);
  afterEach(async () => {
    terminateClients();
    await common.cleanup();
  });

  // n clients connected and their server sockets; each server socket runs
  // `onConnection(ws)`.
  async function connectMany(wss, url, n, onConnection = () => {}) {
    const sockets = [];
    wss.on('connection', (ws) => {
      ws.on('error', () => {});
      sockets.push(ws);
      onConnection(ws);
    });
    const cs = [];
    for (let i = 0; i < n; i++) cs.push(client(url));
    await Promise.all(cs.map((c) => next(c, 'open')));
    await common.withTimeout((async () => { while (sockets.length < n) await common.sleep(5); })(), 8000, 'connections');
    return { cs, sockets };
  }

  it('server.publish reaches every subscriber once, text and binary, small and large', async () => {
    const { wss, url } = await startWs();
    const { cs, sockets } = await connectMany(wss, url, 20, (ws) => ws.subscribe('news'));
    assert.strictEqual(wss.subscribers('news'), 20);
    assert.deepStrictEqual(sockets[0].topics, ['news']);
    assert.strictEqual(sockets[0].isSubscribed('news'), true);
    assert.strictEqual(sockets[0].isSubscribed('other'), false);
    const big = Buffer.alloc(100000, 7);
    const got = cs.map((c) => new Promise((resolve) => {
      const msgs = [];
      c.on('message', (m, isBinary) => {
        msgs.push([m, isBinary]);
        if (msgs.length === 2) resolve(msgs);
      });
    }));
    assert.strictEqual(wss.publish('news', 'hello all'), 20);
    assert.strictEqual(wss.publish('news', big), 20);
    assert.strictEqual(wss.publish('nobody', 'x'), 0);
    for (const msgs of await common.withTimeout(Promise.all(got), 10000, 'deliveries')) {
      assert.strictEqual(msgs[0][0].toString(), 'hello all');
      assert.strictEqual(msgs[0][1], false);
      assert.ok(msgs[1][0].equals(big));
      assert.strictEqual(msgs[1][1], true);
    }
  });

  it('ws.publish skips the sender; unsubscribe and close take a socket off the topic', async () => {
    const { wss, url } = await startWs();
    const { cs, sockets } = await connectMany(wss, url, 3, (ws) => {
      ws.subscribe('room');
      ws.on('message', (m) => ws.publish('room', m));
    });
    const received = cs.map(() => []);
    cs.forEach((c, i) => c.on('message', (m) => received[i].push(m.toString())));
    const arrived = Promise.all([next(cs[1], 'message'), next(cs[2], 'message')]);
    cs[0].send('from 0');
    await arrived;
    await common.sleep(100);
    assert.deepStrictEqual(received, [[], ['from 0'], ['from 0']]);

    assert.strictEqual(sockets[1].unsubscribe('room'), true);
    assert.strictEqual(sockets[1].unsubscribe('room'), false);
    assert.strictEqual(wss.subscribers('room'), 2);
    const closed = next(sockets[2], 'close');
    cs[2].close();
    await closed;
    assert.strictEqual(wss.subscribers('room'), 1);
    assert.strictEqual(wss.publish('room', 'after'), 1);
    await next(cs[0], 'message');
    // A closed socket's pub/sub calls are harmless no-ops.
    assert.strictEqual(sockets[2].subscribe('room'), false);
    assert.strictEqual(sockets[2].publish('room', 'x'), 0);
    assert.deepStrictEqual(sockets[2].topics, []);
  });

  it('send reports buffered past the high-water mark, dropped past maxBackpressure, and drains', async () => {
    const { wss, port } = await startWs({ maxBackpressure: 1 << 20 });
    const conn = next(wss, 'connection');
    // A raw client that does not read: the kernel buffers fill, then ours.
    const r = await rawWs(port);
    const [ws] = await conn;
    r.c.socket.pause();
    const chunk = Buffer.alloc(64 * 1024, 1);
    const results = [];
    const bufferedDone = [];
    for (let i = 0; i < 400 && results[results.length - 1] !== WS_DROPPED; i++) {
      let settle;
      const done = new Promise((resolve) => { settle = resolve; });
      const res = ws.send(chunk, (err) => settle(err || 'ok'));
      results.push(res);
      if (res === WS_BUFFERED) bufferedDone.push(done);
      if (i % 10 === 9) await common.sleep(5);
    }
    assert.ok(bufferedDone.length > 0, `results ${results}`);
    assert.strictEqual(results[results.length - 1], WS_DROPPED);
    assert.ok(ws.bufferedAmount > 1 << 20, `bufferedAmount ${ws.bufferedAmount}`);
    const dropErr = await new Promise((resolve) => ws.send(chunk, resolve));
    assert.strictEqual(dropErr.code, 'ERR_SLUICE_WS_BACKPRESSURE');
    // The drain: every send that reported buffered calls back (no error)
    // once the client reads and the backlog falls below the high-water mark.
    r.c.socket.resume();
    const outcomes = await common.withTimeout(Promise.all(bufferedDone), 15000, 'drain');
    assert.ok(outcomes.every((o) => o === 'ok'), `outcomes ${outcomes}`);
    await common.withTimeout((async () => { while (ws.bufferedAmount > 0) await common.sleep(10); })(), 15000, 'empty buffer');
    assert.strictEqual(ws.send('ok'), WS_SENT);
    ws.terminate();
    await next(ws, 'close');
    assert.strictEqual(ws.send('late'), WS_NOT_OPEN);
  });
});
