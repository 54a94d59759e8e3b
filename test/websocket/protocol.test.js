'use strict';

// RFC 6455 framing rules, byte-exact over raw sockets: what the server
// answers (the close frame's status code) and that it then closes the TCP
// connection; fragmentation with control frames between fragments; input
// split at every byte. Shared: the same bytes against ws on node:http
// (SLUICE_TEST_IMPL=node) give the same codes, except where marked.

const common = require('../common');
const { assert } = common;
const {
  startWs, rawWs, frame, closePayload, terminateClients,
} = require('./helpers');

describe(`WebSocket framing [${common.implName}]`, function () {
  this.timeout(30000);
  let port;
  let messages;
  beforeEach(async () => {
    messages = [];
    const s = await startWs({ maxPayload: 1000 });
    port = s.port;
    s.wss.on('connection', (ws) => {
      ws.on('error', () => {});
      ws.on('message', (m, isBinary) => {
        messages.push([m.toString(), isBinary]);
        ws.send(m, { binary: isBinary });
      });
    });
  });
  afterEach(async () => {
    terminateClients();
    await common.cleanup();
  });

  async function expectClose(bytes, code) {
    const r = await rawWs(port);
    await r.send(bytes);
    const got = await r.closedWith();
    assert.strictEqual(got.code, code, `close code for ${bytes.toString('hex').slice(0, 40)}`);
  }

  it('refuses an unmasked client frame with 1002', async () => {
    await expectClose(frame(1, 'hi', { mask: false }), 1002);
  });

  it('refuses RSV1 without a negotiated extension, RSV2/RSV3, also on control frames, with 1002', async () => {
    await expectClose(frame(1, 'hi', { rsv: 0x40 }), 1002);
    await expectClose(frame(2, 'hi', { rsv: 0x20 }), 1002);
    await expectClose(frame(9, 'p', { rsv: 0x10 }), 1002);
    await expectClose(frame(9, 'p', { rsv: 0x40 }), 1002);
  });

  it('refuses reserved opcodes with 1002', async () => {
    for (const op of [3, 7, 11, 15]) await expectClose(frame(op, 'x'), 1002);
  });

  it('refuses fragmented and oversized control frames with 1002', async () => {
    await expectClose(frame(9, 'p', { fin: false }), 1002);
    await expectClose(frame(9, Buffer.alloc(126)), 1002);
  });

  it('refuses a continuation with no message and a new message inside one with 1002', async () => {
    await expectClose(frame(0, 'x'), 1002);
    await expectClose(Buffer.concat([frame(1, 'a', { fin: false }), frame(1, 'b')]), 1002);
  });

  it('refuses invalid UTF-8 text with 1007, and close payloads that break the rules', async () => {
    await expectClose(frame(1, Buffer.from([0xce, 0xba, 0xe1, 0xbd, 0xb9, 0xcf, 0x83, 0xed, 0xa0, 0x80])), 1007);
    await expectClose(frame(1, Buffer.from([0xc0, 0x80])), 1007);
    await expectClose(frame(8, Buffer.from([3])), 1002);
    await expectClose(frame(8, closePayload(1005)), 1002);
    await expectClose(frame(8, closePayload(999)), 1002);
    await expectClose(frame(8, Buffer.concat([closePayload(1000), Buffer.from([0xff])])), 1007);
  });

  it('refuses a message over maxPayload with 1009, also when only its fragments add up past it', async () => {
    await expectClose(frame(2, Buffer.alloc(1001)), 1009);
    await expectClose(Buffer.concat([frame(2, Buffer.alloc(600), { fin: false }), frame(0, Buffer.alloc(600))]), 1009);
  });

  it('joins fragments, answers a ping between them, and echoes the whole message', async () => {
    const r = await rawWs(port);
    await r.send(Buffer.concat([
      frame(1, 'frag', { fin: false }),
      frame(9, 'between'),
      frame(0, 'men', { fin: false }),
      frame(0, 'ted'),
    ]));
    const f = await r.waitFrames((fs) => fs.length >= 2, 'pong and echo');
    assert.strictEqual(f[0].opcode, 10);
    assert.strictEqual(f[0].payload.toString(), 'between');
    assert.strictEqual(f[1].opcode, 1);
    assert.strictEqual(f[1].payload.toString(), 'fragmented');
    assert.deepStrictEqual(messages, [['fragmented', false]]);
  });

  it('parses frames split at every byte (a 16-bit length too)', async () => {
    const r = await rawWs(port);
    const text = 'é'.repeat(100);  // 200 bytes: a 16-bit length
    const bytes = Buffer.concat([frame(1, text), frame(2, Buffer.alloc(0)), frame(1, 'ok')]);
    r.c.socket.setNoDelay(true);
    for (let i = 0; i < bytes.length; i++) {
      await r.send(bytes.subarray(i, i + 1));
      if (i % 40 === 0) await common.sleep(1);
    }
    const f = await r.waitFrames((fs) => fs.length >= 3, 'three echoes');
    assert.strictEqual(f[0].payload.toString(), text);
    assert.strictEqual(f[1].payload.length, 0);
    assert.strictEqual(f[2].payload.toString(), 'ok');
  });

  it('answers a close frame with the same code and closes the connection', async () => {
    const r = await rawWs(port);
    await r.send(frame(8, closePayload(4321, 'bye')));
    const got = await r.closedWith();
    assert.strictEqual(got.code, 4321);
  });

  it('answers an empty close frame with an empty one', async () => {
    const r = await rawWs(port);
    await r.send(frame(8));
    const got = await r.closedWith();
    assert.strictEqual(got.code, 1005);
  });

  common.sluiceOnly('fails fast: invalid UTF-8 in the first fragment of a text message closes with 1007 before the last', async () => {
    const r = await rawWs(port);
    await r.send(frame(1, Buffer.from([0x61, 0xff]), { fin: false }));
    const got = await r.closedWith();
    assert.strictEqual(got.code, 1007);
  });
});
