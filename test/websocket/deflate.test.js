'use strict';

// permessage-deflate (RFC 7692) against ws's client, shared with ws's
// server on node:http: negotiation (context takeover, window bits, as ws
// offers and accepts them), compressed echo both ways, the threshold, a
// compression bomb refused at maxPayload with 1009, bad offers refused.

const zlib = require('node:zlib');
const common = require('../common');
const { assert } = common;
const {
  startWs, client, terminateClients, next, rawWs, frame, parseFrames,
} = require('./helpers');

describe(`WebSocket permessage-deflate [${common.implName}]`, function () {
  this.timeout(30000);
  afterEach(async () => {
    terminateClients();
    await common.cleanup();
  });

  // A server frame's payload, inflated when RSV1 says it is compressed.
  function inflate(f) {
    if (!(f.rsv & 0x40)) return f.payload;
    return zlib.inflateRawSync(Buffer.concat([f.payload, Buffer.from([0, 0, 0xff, 0xff])]),
      { finishFlush: zlib.constants.Z_SYNC_FLUSH });
  }

  function echo(wss) {
    wss.on('connection', (ws) => {
      ws.on('error', () => {});
      ws.on('message', (m, isBinary) => ws.send(m, { binary: isBinary }));
    });
  }

  it('negotiates with ws\'s default offer and echoes compressed text and binary', async () => {
    const { wss, url } = await startWs({ perMessageDeflate: { threshold: 0 } });
    echo(wss);
    const c = client(url, undefined, { perMessageDeflate: true });
    const upgrade = next(c, 'upgrade');
    await next(c, 'open');
    const [res] = await upgrade;
    assert.match(res.headers['sec-websocket-extensions'], /^permessage-deflate/);
    assert.strictEqual(c.extensions, 'permessage-deflate');
    const text = 'compress me '.repeat(5000);
    const bin = Buffer.alloc(300000);
    for (let i = 0; i < bin.length; i++) bin[i] = (i % 251) ^ (i >> 9);
    const got = [];
    const done = new Promise((resolve) => c.on('message', (m, b) => {
      got.push([m, b]);
      if (got.length === 4) resolve();
    }));
    c.send(text);
    c.send(bin);
    c.send('x');
    c.send(text);  // context takeover: the second copy compresses to little
    await common.withTimeout(done, 15000, 'echoes');
    assert.strictEqual(got[0][0].toString(), text);
    assert.ok(got[1][0].equals(bin));
    assert.strictEqual(got[2][0].toString(), 'x');
    assert.strictEqual(got[3][0].toString(), text);
  });

  it('honours no_context_takeover and max_window_bits from both sides', async () => {
    const { wss, url } = await startWs({
      perMessageDeflate: { threshold: 0, serverNoContextTakeover: true, clientNoContextTakeover: true, serverMaxWindowBits: 10 },
    });
    echo(wss);
    const c = client(url, undefined, { perMessageDeflate: { clientMaxWindowBits: 11 } });
    const upgrade = next(c, 'upgrade');
    await next(c, 'open');
    const ext = (await upgrade)[0].headers['sec-websocket-extensions'];
    assert.match(ext, /server_no_context_takeover/);
    assert.match(ext, /client_no_context_takeover/);
    assert.match(ext, /server_max_window_bits=10/);
    for (let i = 0; i < 3; i++) {
      const m = `round ${i} `.repeat(3000);
      c.send(m);
      assert.strictEqual((await next(c, 'message'))[0].toString(), m);
    }
  });

  it('sends messages under the threshold uncompressed (RSV1 clear), over it compressed', async () => {
    // (ws applies its threshold only without context takeover.)
    const { wss, port } = await startWs({ perMessageDeflate: { threshold: 100, serverNoContextTakeover: true } });
    echo(wss);
    const r = await rawWs(port, '/', 'Sec-WebSocket-Extensions: permessage-deflate\r\n');
    assert.match(r.head, /Sec-WebSocket-Extensions: permessage-deflate/i);
    await r.send(frame(1, 'short'));
    await r.send(frame(1, 'long '.repeat(100)));
    const f = await r.waitFrames((fs) => fs.length >= 2, 'two echoes');
    assert.strictEqual(f[0].rsv, 0);
    assert.strictEqual(f[0].payload.toString(), 'short');
    assert.strictEqual(f[1].rsv, 0x40);
    assert.strictEqual(inflate(f[1]).toString(), 'long '.repeat(100));
  });

  it('inflates a compressed client frame; a bomb over maxPayload closes with 1009', async () => {
    const { wss, port } = await startWs({ perMessageDeflate: true, maxPayload: 64 * 1024 });
    echo(wss);
    const deflate = (b) => {
      const d = zlib.deflateRawSync(b, { finishFlush: zlib.constants.Z_SYNC_FLUSH });
      return d.subarray(0, d.length - 4);
    };
    const r = await rawWs(port, '/', 'Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n');
    await r.send(frame(1, deflate(Buffer.from('hello deflate')), { rsv: 0x40 }));
    const f = await r.waitFrames((fs) => fs.length >= 1, 'echo');
    assert.strictEqual(inflate(f[0]).toString(), 'hello deflate');
    const bomb = deflate(Buffer.alloc(10 * 1024 * 1024));
    assert.ok(bomb.length < 64 * 1024);
    await r.send(frame(2, bomb, { rsv: 0x40 }));
    assert.strictEqual((await r.closedWith()).code, 1009);
  });

  it('refuses invalid compressed text (UTF-8 checked after inflation) with 1007', async () => {
    const { wss, port } = await startWs({ perMessageDeflate: true });
    echo(wss);
    const d = zlib.deflateRawSync(Buffer.from([0x61, 0xff, 0x62]), { finishFlush: zlib.constants.Z_SYNC_FLUSH });
    const r = await rawWs(port, '/', 'Sec-WebSocket-Extensions: permessage-deflate\r\n');
    await r.send(frame(1, d.subarray(0, d.length - 4), { rsv: 0x40 }));
    assert.strictEqual((await r.closedWith()).code, 1007);
  });

  it('refuses a malformed extension offer with 400; without perMessageDeflate the offer is declined', async () => {
    const { port } = await startWs({ perMessageDeflate: true });
    const c = await common.rawConnect(port);
    await c.write('GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n' +
      'Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits=99\r\n\r\n');
    assert.match((await c.waitClose()).toString(), /^HTTP\/1\.1 400 [^]*Invalid or unacceptable Sec-WebSocket-Extensions header/);

    const plain = await startWs({ perMessageDeflate: false });
    echo(plain.wss);
    const r = await rawWs(plain.port, '/', 'Sec-WebSocket-Extensions: permessage-deflate\r\n');
    assert.doesNotMatch(r.head, /Sec-WebSocket-Extensions/i);
    // RSV1 is then a protocol error.
    await r.send(frame(1, 'x', { rsv: 0x40 }));
    assert.strictEqual((await r.closedWith()).code, 1002);
    void parseFrames;
  });
});
