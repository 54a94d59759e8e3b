'use strict';

// Server-provoked stream resets (CVE-2025-8671, "MadeYouReset"): a client
// opens a stream, lets the handler start, then sends a frame the server
// must answer with RST_STREAM — and repeats. Per provoking frame kind:
// the session ends with GOAWAY(ENHANCE_YOUR_CALM) past a rate, the
// handler ran for a bounded number of streams, and the server serves other
// clients on. sluice counts these resets itself, so this holds on every
// nghttp2 that Node 20, 22, 24 and 26 carry (CI runs npm test on each).
// [sluice-only]: node:http has no HTTP/2 on its port.

const net = require('node:net');
const common = require('../common');
const h2 = require('../http2/h2common');
const { assert } = common;

const { PREFACE, FRAME, frame, parseFrames, GET_SLASH } = h2;
const ENHANCE_YOUR_CALM = 11;
const ROUNDS = 2000;
const WAVE = 50;
// HPACK: POST (static 3), :scheme http, :path /, :authority "a".
const POST_SLASH = Buffer.from([0x83, 0x86, 0x84, 0x41, 0x01, 0x61]);
const END_STREAM = 0x1;
const END_HEADERS = 0x4;
const PRIORITY = 2;

function u32(n) {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

// Per kind: the frames of one round on stream `id` (its HEADERS, then the
// frame that provokes the reset).
const kinds = {
  'WINDOW_UPDATE with increment 0 on the stream': (id) => [
    frame(FRAME.HEADERS, END_HEADERS, id, POST_SLASH),
    frame(FRAME.WINDOW_UPDATE, 0, id, Buffer.alloc(4)),
  ],
  'DATA beyond the stream window': (id) => [
    frame(FRAME.HEADERS, END_HEADERS, id, POST_SLASH),
    frame(FRAME.DATA, 0, id, Buffer.alloc(64)),  // the window is 16 bytes
  ],
  'DATA on a stream the client ended (half-closed)': (id) => [
    frame(FRAME.HEADERS, END_HEADERS | END_STREAM, id, GET_SLASH),
    frame(FRAME.DATA, 0, id, Buffer.from('x')),
  ],
  'WINDOW_UPDATE overflowing the stream send window': (id) => [
    frame(FRAME.HEADERS, END_HEADERS, id, POST_SLASH),
    frame(FRAME.WINDOW_UPDATE, 0, id, u32(0x7fffffff)),
  ],
  'PRIORITY making the stream depend on itself': (id) => [
    frame(FRAME.HEADERS, END_HEADERS, id, POST_SLASH),
    frame(PRIORITY, 0, id, Buffer.concat([u32(id), Buffer.from([15])])),
  ],
  'trailers with a pseudo-header after the handler started': (id) => [
    frame(FRAME.HEADERS, END_HEADERS, id, POST_SLASH),
    frame(FRAME.HEADERS, END_HEADERS | END_STREAM, id, Buffer.from([0x84])),  // :path /
  ],
};

describe(`hardening: HTTP/2 server-provoked resets (MadeYouReset) [${common.implName}]`, function () {
  before(function () {
    if (common.isNode) this.skip();
  });
  afterEach(common.cleanup);

  for (const [kind, round] of Object.entries(kinds)) {
    it(`${kind}: the session ends (ENHANCE_YOUR_CALM past the budget, or this nghttp2's connection error), bounded handler work, others served`, async function () {
      const { server, port } = await common.startServer({ http2: { initialWindowSize: 16 } });
      let handled = 0;
      server.on('stream', (stream, headers) => {
        stream.on('error', () => {});
        if (headers[':path'] === '/after') {
          stream.respond({ ':status': 200 });
          stream.end('h2');
          return;
        }
        // The provoked streams stay unanswered until their reset.
        handled++;
      });
      const s = common.trackSocket(net.connect(port, '127.0.0.1'));
      const chunks = [];
      s.on('data', (d) => chunks.push(d));
      s.on('error', () => {});
      const closed = new Promise((resolve) => s.once('close', () => resolve(true)));
      await new Promise((resolve) => s.once('connect', resolve));
      // As the attack goes: a wave of streams below the concurrency limit,
      // each reset by the server, then the next wave once the resets came.
      const t0 = Date.now();
      // (The SETTINGS ACK puts the server's window and stream limit in force.)
      s.write(Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0), frame(FRAME.SETTINGS, 0x1, 0)]));
      let sent = 0;
      let wasClosed = false;
      closed.then(() => { wasClosed = true; });
      const rsts = () => parseFrames(Buffer.concat(chunks)).filter((f) => f.type === FRAME.RST_STREAM).length;
      while (!wasClosed && sent < ROUNDS && Date.now() - t0 < 15000) {
        const wave = [];
        for (let i = 0; i < WAVE; i++) wave.push(...round(1 + 2 * (sent + i)));
        sent += WAVE;
        s.write(Buffer.concat(wave));
        const before = Date.now();
        while (!wasClosed && rsts() < sent && Date.now() - before < 2000) await common.sleep(5);
      }
      await Promise.race([closed, common.sleep(3000)]);
      const seconds = (Date.now() - t0) / 1000;
      s.destroy();
      const got = parseFrames(Buffer.concat(chunks));
      const goaway = got.find((f) => f.type === FRAME.GOAWAY);
      const resets = got.filter((f) => f.type === FRAME.RST_STREAM);
      const codes = [...new Set(resets.map((f) => f.payload.readUInt32BE(0)))];
      const what = `${resets.length} resets (codes ${codes}), ${handled} handled, ${sent} sent`;
      if (process.env.SLUICE_TEST_VERBOSE) console.log(kind, what, goaway && goaway.payload.readUInt32BE(4));
      assert.ok(wasClosed, `connection not closed: ${what}`);
      assert.ok(goaway, `no GOAWAY: ${what}`);
      // Where this nghttp2 answers the frame with a connection error, the
      // first one ends the session (nothing to count); where it resets the
      // stream, the session ends with ENHANCE_YOUR_CALM past the budget.
      if (resets.length > 1) assert.strictEqual(goaway.payload.readUInt32BE(4), ENHANCE_YOUR_CALM, what);
      // sluice counts that session's end as a flood refusal (server.metrics()).
      if (resets.length > 1 && common.isSluice) assert.strictEqual(server.metrics().refused['2'].flood, 1, what);
      // The burst (100) and the refill (10/s) over the run, plus one wave.
      assert.ok(handled <= 100 + 10 * seconds + WAVE, `${what} in ${seconds} s`);
      const session = h2.connect(port);
      const r = await h2.request(session, { ':path': '/after' });
      assert.strictEqual(r.body.toString(), 'h2');
    });
  }

  it('a client that provokes a few resets keeps its session', async function () {
    const { server, port } = await common.startServer();
    server.on('stream', (stream) => {
      stream.on('error', () => {});
      if (stream.endAfterHeaders) {
        stream.respond({ ':status': 200 });
        stream.end('ok');
      }
    });
    const s = common.trackSocket(net.connect(port, '127.0.0.1'));
    const chunks = [];
    s.on('data', (d) => chunks.push(d));
    s.on('error', () => {});
    await new Promise((resolve) => s.once('connect', resolve));
    const frames = [];
    for (let i = 0; i < 20; i++) frames.push(...kinds['trailers with a pseudo-header after the handler started'](1 + 2 * i));
    frames.push(frame(FRAME.HEADERS, END_HEADERS | END_STREAM, 41, GET_SLASH));
    s.write(Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0), frame(FRAME.SETTINGS, 0x1, 0), ...frames]));
    await h2.waitFor(() => parseFrames(Buffer.concat(chunks)).some((f) => f.streamId === 41 && f.type === FRAME.DATA), 5000);
    const got = parseFrames(Buffer.concat(chunks));
    assert.strictEqual(got.filter((f) => f.type === FRAME.RST_STREAM).length, 20);
    assert.ok(!got.some((f) => f.type === FRAME.GOAWAY));
  });
});
