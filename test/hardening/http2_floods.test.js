'use strict';

// HTTP/2 protections (issue 6, item 3): nghttp2's flood limits stay on in
// sluice's session: PING and SETTINGS floods (outbound ACK queue bound),
// rapid reset (stream reset rate limit), CONTINUATION floods. Each attack
// gets its connection closed, and the server keeps serving others.
// (REFUSED_STREAM beyond maxConcurrentStreams and 431 for header lists are
// in test/http2/streams.test.js and basics.test.js.)

const net = require('node:net');
const common = require('../common');
const h2 = require('../http2/h2common');
const { assert } = common;

const { PREFACE, FRAME, frame, parseFrames, GET_SLASH } = h2;
const CONTINUATION = 9;

async function startH2Server() {
  let streams = 0;
  const { server, port } = await common.startServer((req, res) => res.end('h1'));
  server.on('stream', (stream) => {
    streams++;
    stream.on('error', () => {});
    stream.respond({ ':status': 200 });
    stream.end('h2');
  });
  return { server, port, streams: () => streams };
}

// Writes `frames` after the preface on a raw connection that never reads
// (when `paused`); resolves { closed, frames received, ms } once the server
// closes it or after `ms`.
async function attack(port, frames, { paused = false, ms = 4000 } = {}) {
  const s = common.trackSocket(net.connect(port, '127.0.0.1'));
  const chunks = [];
  s.on('data', (d) => chunks.push(d));
  s.on('error', () => {});
  const closed = new Promise((resolve) => s.once('close', () => resolve(true)));
  await new Promise((resolve) => s.once('connect', resolve));
  if (paused) s.pause();
  const t0 = Date.now();
  s.write(Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0), ...frames]));
  const wasClosed = await Promise.race([closed, common.sleep(ms).then(() => false)]);
  s.destroy();
  return { closed: wasClosed, frames: parseFrames(Buffer.concat(chunks)), ms: Date.now() - t0 };
}

async function expectServing(port) {
  const session = h2.connect(port);
  const r = await h2.request(session, { ':path': '/after' });
  assert.strictEqual(r.body.toString(), 'h2');
  session.close();
}

describe(`hardening: HTTP/2 floods [${common.implName}]`, function () {
  before(function () {
    // node:http has no HTTP/2 on its port: these are sluice's.
    if (common.isNode) this.skip();
  });
  afterEach(common.cleanup);

  it('PING flood from a client that does not read: connection closed', async function () {
    const { port } = await startH2Server();
    const pings = Array.from({ length: 20000 }, () => frame(FRAME.PING, 0, 0, Buffer.alloc(8)));
    const r = await attack(port, pings, { paused: true });
    assert.ok(r.closed, 'the server did not close the flooding connection');
    await expectServing(port);
  });

  it('SETTINGS flood: connection closed', async function () {
    const { port } = await startH2Server();
    const settings = Array.from({ length: 20000 }, () => frame(FRAME.SETTINGS, 0, 0, Buffer.from([0, 3, 0, 0, 0, 100])));
    const r = await attack(port, settings, { paused: true });
    assert.ok(r.closed, 'the server did not close the flooding connection');
    await expectServing(port);
  });

  it('rapid reset (HEADERS + RST_STREAM x 5000): GOAWAY and close before all streams ran', async function () {
    const { port, streams } = await startH2Server();
    const frames = [];
    for (let i = 0; i < 5000; i++) {
      const id = 1 + 2 * i;
      frames.push(frame(FRAME.HEADERS, 0x5, id, GET_SLASH), frame(FRAME.RST_STREAM, 0, id, Buffer.from([0, 0, 0, 8])));
    }
    const r = await attack(port, frames);
    assert.ok(r.closed, 'the server did not close the connection');
    assert.ok(r.frames.some((f) => f.type === FRAME.GOAWAY), 'no GOAWAY');
    assert.ok(streams() < 5000, `all ${streams()} streams were handled`);
    await expectServing(port);
  });

  it('CONTINUATION flood (100,000 empty CONTINUATION frames): GOAWAY, no stream reaches the handler', async function () {
    const { port, streams } = await startH2Server();
    const frames = [frame(FRAME.HEADERS, 0x1, 1, GET_SLASH)];
    for (let i = 0; i < 100000; i++) frames.push(frame(CONTINUATION, 0, 1));
    const r = await attack(port, frames);
    assert.ok(r.closed);
    assert.ok(r.frames.some((f) => f.type === FRAME.GOAWAY), 'no GOAWAY');
    assert.strictEqual(streams(), 0);
    await expectServing(port);
  });

  it('a header block split over 20 CONTINUATION frames is refused (nghttp2 allows 8)', async function () {
    const { port, streams } = await startH2Server();
    // GET / plus a literal header x: <100 bytes> spread over the frames.
    const head = Buffer.concat([GET_SLASH, Buffer.from([0x00, 0x01, 0x78, 0x64])]);
    const frames = [frame(FRAME.HEADERS, 0x1, 1, head)];
    for (let i = 0; i < 20; i++) frames.push(frame(CONTINUATION, i === 19 ? 0x4 : 0, 1, Buffer.alloc(5, 'a')));
    const r = await attack(port, frames);
    assert.ok(r.closed);
    assert.strictEqual(streams(), 0);
    await expectServing(port);
  });
});
