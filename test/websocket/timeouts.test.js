'use strict';

// [sluice-only] The session's own deadlines (options beyond ws):
// idleTimeout pings a silent peer and closes it when it stays silent;
// closeTimeout ends a close handshake the peer never answers.

const common = require('../common');
const { assert } = common;
const { startWs, rawWs, frame, next } = require('./helpers');

(common.isSluice ? describe : describe.skip)('[sluice-only] WebSocket idle and close timeouts', function () {
  this.timeout(30000);
  afterEach(common.cleanup);

  it('idleTimeout: a silent peer gets a ping, and is closed after a second silent period', async () => {
    const { wss, port } = await startWs({ idleTimeout: 300 });
    const conn = next(wss, 'connection');
    const r = await rawWs(port);
    const [ws] = await conn;
    const f = await r.waitFrames((fs) => fs.some((x) => x.opcode === 9), 'a ping', 8000);
    assert.strictEqual(f[0].opcode, 9);
    const [code] = await next(ws, 'close', 8000);
    assert.strictEqual(code, 1006);
    await r.c.waitClose(8000);
  });

  it('idleTimeout: a peer that answers stays open', async () => {
    const { wss, port } = await startWs({ idleTimeout: 300 });
    const conn = next(wss, 'connection');
    const r = await rawWs(port);
    const [ws] = await conn;
    let closed = false;
    ws.on('close', () => { closed = true; });
    let pings = 0;
    const t0 = Date.now();
    while (Date.now() - t0 < 1500) {
      const n = r.frames().filter((x) => x.opcode === 9).length;
      if (n > pings) {
        pings = n;
        await r.send(frame(10));
      }
      await common.sleep(20);
    }
    assert.ok(pings >= 1, 'pinged');
    assert.strictEqual(closed, false);
  });

  it('closeTimeout: the connection goes when the peer never answers the close frame', async () => {
    const { wss, port } = await startWs({ closeTimeout: 300 });
    const conn = next(wss, 'connection');
    const r = await rawWs(port);
    const [ws] = await conn;
    ws.close(1000, 'bye');
    const [code] = await next(ws, 'close', 8000);
    assert.strictEqual(code, 1006);
    const f = r.frames();
    assert.strictEqual(f[0].opcode, 8);
    assert.strictEqual(f[0].payload.readUInt16BE(0), 1000);
  });
});
