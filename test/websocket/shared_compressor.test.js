'use strict';

// [sluice-only] perMessageDeflate.sharedCompressor: every deflate client is
// answered server_no_context_takeover, and a published message at or over
// the threshold is deflated once into one compressed frame (RSV1) for all
// of them, while subscribers without deflate get the plain frame. Checked
// with ws's client (with and without permessage-deflate on one topic: the
// exact bytes), raw sockets (RSV1 on the wire, the response header, each
// compressed frame inflating from a fresh context), and per-socket sends
// of shared-mode connections. ws has no shared compressor (nor pub/sub).

const crypto = require('node:crypto');
const zlib = require('node:zlib');
const common = require('../common');
const { assert } = common;
const {
  startWs, client, terminateClients, next, rawWs, frame,
} = require('./helpers');

// A compressed server frame's payload inflated by a fresh inflater (RFC
// 7692 7.2.2: the tail appended), with a window of `windowBits`.
function inflateFresh(payload, windowBits = 15) {
  return zlib.inflateRawSync(Buffer.concat([payload, Buffer.from([0, 0, 0xff, 0xff])]),
    { finishFlush: zlib.constants.Z_SYNC_FLUSH, windowBits });
}

// `n` bytes of compressible text (a repeated sentence with a counter).
function compressible(n, tag = '') {
  let s = '';
  for (let i = 0; s.length < n; i++) s += `${tag}line ${i % 10}: the quick brown fox jumps over the lazy dog. `;
  return s.slice(0, n);
}

(common.isSluice ? describe : describe.skip)('[sluice-only] WebSocket shared compressor for publish', function () {
  this.timeout(30000);
  afterEach(async () => {
    terminateClients();
    await common.cleanup();
  });

  // Server sockets as they connect, subscribed to `topic`.
  function collect(wss, topic) {
    const sockets = [];
    wss.on('connection', (ws) => {
      ws.on('error', () => {});
      ws.subscribe(topic);
      sockets.push(ws);
    });
    return sockets;
  }
  async function waitSockets(sockets, n) {
    await common.withTimeout((async () => { while (sockets.length < n) await common.sleep(5); })(), 8000, 'connections');
  }
  // The next `n` messages of ws client `c`: [[data, isBinary], ...].
  function messages(c, n) {
    return common.withTimeout(new Promise((resolve) => {
      const got = [];
      c.on('message', (m, isBinary) => {
        got.push([m, isBinary]);
        if (got.length === n) resolve(got);
      });
    }), 10000, `${n} messages`);
  }

  it('ws clients with and without permessage-deflate on one topic all get the exact bytes', async () => {
    const { wss, url } = await startWs({ perMessageDeflate: { sharedCompressor: true } });
    const sockets = collect(wss, 'feed');
    const deflating = [];
    const plain = [];
    for (let i = 0; i < 4; i++) {
      deflating.push(client(url, undefined, { perMessageDeflate: true }));
      plain.push(client(url));
    }
    const all = [...deflating, ...plain];
    await Promise.all(all.map((c) => next(c, 'open')));
    await waitSockets(sockets, all.length);
    for (const c of deflating) {
      assert.strictEqual(c.extensions, 'permessage-deflate');
      // ws's client keeps the accepted parameters here.
      assert.strictEqual(c._extensions['permessage-deflate'].params.server_no_context_takeover, true);
    }
    for (const c of plain) assert.strictEqual(c.extensions, '');

    const sent = [
      [compressible(4096), false],                               // large text
      [Buffer.from(compressible(3000, 'bin ')), true],           // large binary
      ['small text', false],                                     // under the threshold
      [Buffer.from([0, 1, 2, 3, 255]), true],                    // small binary
      [crypto.randomBytes(100000), true],                        // large, not compressible
      [compressible(2048, 'uncompressed '), false, { compress: false }],
      ['', false],                                               // empty
    ];
    const got = all.map((c) => messages(c, sent.length));
    for (const [data, , opts] of sent) assert.strictEqual(wss.publish('feed', data, opts), all.length);
    for (const msgs of await Promise.all(got)) {
      msgs.forEach(([m, isBinary], i) => {
        assert.strictEqual(isBinary, sent[i][1], `message ${i} type`);
        assert.ok(m.equals(Buffer.from(sent[i][0])), `message ${i} bytes`);
      });
    }

    // ws.publish from a deflate subscriber: everyone else, compressed or not.
    const big = compressible(5000, 'from a socket ');
    // Which client is which server socket: ask each to echo its index.
    const byClient = await Promise.all(all.map(async (c, i) => {
      const arrived = common.withTimeout(new Promise((resolve) => {
        for (const s of sockets) s.once('message', (m) => { if (m.toString() === `who ${i}`) resolve(s); });
      }), 8000, 'the marker');
      c.send(`who ${i}`);
      return arrived;
    }));
    const sender = byClient[0];
    assert.strictEqual(sender.extensions, 'permessage-deflate');
    const arrivals = all.slice(1).map((c) => next(c, 'message'));
    let echoed = false;
    deflating[0].on('message', () => { echoed = true; });
    assert.strictEqual(sender.publish('feed', big), all.length - 1);
    for (const p of arrivals) assert.strictEqual((await p)[0].toString(), big);
    assert.strictEqual(echoed, false);
  });

  it('a raw client sees RSV1 on the published frame over the threshold, server_no_context_takeover in the answer', async () => {
    const { wss, port } = await startWs({ perMessageDeflate: { sharedCompressor: true, threshold: 1024 } });
    const sockets = collect(wss, 't');
    const d = await rawWs(port, '/', 'Sec-WebSocket-Extensions: permessage-deflate\r\n');
    const p = await rawWs(port, '/');
    await waitSockets(sockets, 2);
    assert.match(d.head, /Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover\r\n/i);
    assert.doesNotMatch(p.head, /Sec-WebSocket-Extensions/i);

    const text = compressible(4096);
    const bin = Buffer.from(compressible(1024, 'b'));
    assert.strictEqual(wss.publish('t', text), 2);
    assert.strictEqual(wss.publish('t', 'x'.repeat(1023)), 2);       // one under the threshold
    assert.strictEqual(wss.publish('t', bin), 2);                    // at the threshold
    assert.strictEqual(wss.publish('t', text, { compress: false }), 2);
    const df = await d.waitFrames((f) => f.length >= 4, 'four frames (deflate)');
    const pf = await p.waitFrames((f) => f.length >= 4, 'four frames (plain)');

    assert.deepStrictEqual(df.map((f) => [f.rsv, f.opcode, f.fin]),
      [[0x40, 1, true], [0, 1, true], [0x40, 2, true], [0, 1, true]]);
    assert.ok(df[0].payload.length < text.length / 4, `compressed on the wire: ${df[0].payload.length}`);
    assert.strictEqual(inflateFresh(df[0].payload).toString(), text);
    assert.strictEqual(df[1].payload.toString(), 'x'.repeat(1023));
    assert.ok(inflateFresh(df[2].payload).equals(bin));
    assert.strictEqual(df[3].payload.toString(), text);

    assert.deepStrictEqual(pf.map((f) => [f.rsv, f.opcode]), [[0, 1], [0, 1], [0, 2], [0, 1]]);
    assert.strictEqual(pf[0].payload.toString(), text);
    assert.ok(pf[2].payload.equals(bin));
  });

  it('without sharedCompressor published messages stay uncompressed', async () => {
    const { wss, port } = await startWs({ perMessageDeflate: { threshold: 0 } });
    const sockets = collect(wss, 't');
    const d = await rawWs(port, '/', 'Sec-WebSocket-Extensions: permessage-deflate\r\n');
    await waitSockets(sockets, 1);
    assert.doesNotMatch(d.head, /server_no_context_takeover/);
    assert.strictEqual(wss.publish('t', compressible(4096)), 1);
    const [f] = await d.waitFrames((fs) => fs.length >= 1, 'the frame');
    assert.strictEqual(f.rsv, 0);
    assert.strictEqual(f.payload.toString(), compressible(4096));
  });

  it('per-socket sends of a shared-mode connection inflate each from a fresh context', async () => {
    const { wss, port } = await startWs({ perMessageDeflate: { sharedCompressor: true, threshold: 0 } });
    const sockets = collect(wss, 't');
    const d = await rawWs(port, '/', 'Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n');
    await waitSockets(sockets, 1);
    const text = compressible(2000);
    sockets[0].send(text);
    wss.publish('t', text);
    sockets[0].send(text);
    sockets[0].send(Buffer.from('binary too'));
    const f = await d.waitFrames((fs) => fs.length >= 4, 'four frames');
    for (const x of f) assert.strictEqual(x.rsv, 0x40);
    // No context takeover: the same message deflates to the same bytes
    // whoever (socket or hub) deflated it, and whatever came before.
    assert.ok(f[0].payload.equals(f[1].payload));
    assert.ok(f[0].payload.equals(f[2].payload));
    for (const x of f.slice(0, 3)) assert.strictEqual(inflateFresh(x.payload).toString(), text);
    assert.strictEqual(inflateFresh(f[3].payload).toString(), 'binary too');

    // The connection still inflates what the client compresses.
    let echoed;
    sockets[0].on('message', (m) => { echoed = m.toString(); });
    const c = zlib.deflateRawSync(Buffer.from(text), { finishFlush: zlib.constants.Z_SYNC_FLUSH });
    await d.send(frame(1, c.subarray(0, c.length - 4), { rsv: 0x40 }));
    await common.withTimeout((async () => { while (echoed === undefined) await common.sleep(5); })(), 8000, 'the message');
    assert.strictEqual(echoed, text);
  });

  it('a client that limits server_max_window_bits below the shared window gets the plain published frame', async () => {
    const { wss, port } = await startWs({ perMessageDeflate: { sharedCompressor: true, threshold: 0 } });
    const sockets = collect(wss, 't');
    const d = await rawWs(port, '/', 'Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits=10\r\n');
    await waitSockets(sockets, 1);
    assert.match(d.head, /server_max_window_bits=10/);
    assert.match(d.head, /server_no_context_takeover/);
    const text = compressible(8000);
    assert.strictEqual(wss.publish('t', text), 1);
    sockets[0].send(text);
    const f = await d.waitFrames((fs) => fs.length >= 2, 'two frames');
    // The hub deflates with a 2^15 window: not for this client.
    assert.strictEqual(f[0].rsv, 0);
    assert.strictEqual(f[0].payload.toString(), text);
    // Its own sends are compressed within the 2^10 window it asked for.
    assert.strictEqual(f[1].rsv, 0x40);
    assert.strictEqual(inflateFresh(f[1].payload, 10).toString(), text);
  });

  it('the server\'s serverMaxWindowBits sizes the shared window for every deflate client', async () => {
    const { wss, port } = await startWs({ perMessageDeflate: { sharedCompressor: true, threshold: 0, serverMaxWindowBits: 10 } });
    const sockets = collect(wss, 't');
    const d = await rawWs(port, '/', 'Sec-WebSocket-Extensions: permessage-deflate\r\n');
    await waitSockets(sockets, 1);
    assert.match(d.head, /server_max_window_bits=10/);
    const text = compressible(8000);
    wss.publish('t', text);
    const [f] = await d.waitFrames((fs) => fs.length >= 1, 'the frame');
    assert.strictEqual(f.rsv, 0x40);
    assert.strictEqual(inflateFresh(f.payload, 10).toString(), text);
  });

  it('refuses sharedCompressor with serverNoContextTakeover: false', () => {
    assert.throws(() => new common.impl.WebSocketServer({
      noServer: true, perMessageDeflate: { sharedCompressor: true, serverNoContextTakeover: false },
    }), TypeError);
  });
});
