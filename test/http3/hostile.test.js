'use strict';

// Hostile HTTP/3 input beyond quic_client.test.js and loss.test.js, sent
// as raw frames by our client on node's OpenSSL QUIC client
// (test/http3/quic_client.js):
// - header sections over the limit: a HEADERS frame longer than it
//   (skipped unread), ones that decode larger than it from few bytes (a
//   QPACK bomb of one-byte static references, a Huffman string that
//   expands past it), and one just over the advertised
//   SETTINGS_MAX_FIELD_SECTION_SIZE: a 431 the handler never sees, the
//   connection serving on (RFC 9114 §4.2.2); a Huffman string carrying
//   EOS: QPACK_DECOMPRESSION_FAILED (RFC 7541 §5.2);
// - stream-limit abuse: more requests than maxStreams left unfinished
//   (refused with H3_REQUEST_REJECTED, the rest served once they finish,
//   other connections served meanwhile), the transport's stream limit
//   filled with heads that never complete (nothing reaches the handler,
//   the connection is closed as idle), stream credit returned round after
//   round.
// [sluice-only]: node has no HTTP/3 server.

const crypto = require('node:crypto');
const common = require('../common');
const { assert } = common;
const { h3, startH3Server } = require('./h3common');
const { frame, headersFrame, parseFrames, h3Clients, NativeQuicClient } = require('./quic_client');

const run = common.isSluice && h3 ? describe : describe.skip;

const H3 = {
  NO_ERROR: 0x100, REQUEST_REJECTED: 0x10b, MESSAGE: 0x10e, QPACK_DECOMPRESSION_FAILED: 0x200,
};
const SECTION_PREFIX = Buffer.from([0x00, 0x00]);  // Required Insert Count 0, Base 0

// RFC 9204 §4.5.4 field size: name + value + 32.
const fieldsSize = (fields) => {
  let n = 0;
  for (let i = 0; i < fields.length; i += 2) n += Buffer.byteLength(fields[i]) + Buffer.byteLength(fields[i + 1]) + 32;
  return n;
};

function readVarint(buf, off) {
  const len = 1 << (buf[off] >> 6);
  let v = buf[off] & 0x3f;
  for (let i = 1; i < len; i++) v = v * 256 + buf[off + i];
  return [v, off + len];
}

// The server's SETTINGS (its control stream, uni stream 3) as a Map.
function serverSettings(c) {
  const bytes = c.peerUni.get(3);
  if (bytes === undefined || bytes[0] !== 0x00) return null;
  const f = parseFrames(bytes.subarray(1)).find((x) => x.type === 0x4);
  if (f === undefined) return null;
  const m = new Map();
  for (let off = 0; off < f.payload.length;) {
    const [id, o1] = readVarint(f.payload, off);
    const [v, o2] = readVarint(f.payload, o1);
    m.set(id, v);
    off = o2;
  }
  return m;
}

async function until(cond, what) {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > 15000) throw new Error(`timed out waiting for ${what}`);
    await common.sleep(10);
  }
}

run('HTTP/3 hostile input: header bombs and stream-limit abuse [sluice-only]', function () {
  this.timeout(30000);
  const { connect } = h3Clients();

  // A server counting the requests its handler sees.
  async function counting(options = {}) {
    const seen = [];
    const s = await startH3Server(options, (req, res) => {
      seen.push(req.url);
      res.end('ok');
    });
    return { ...s, seen };
  }

  async function expect431(c, port, bytes, seen) {
    const r = await common.withTimeout(c.raw(bytes), 10000, 'the answer');
    assert.strictEqual(r.status, 431, JSON.stringify(r));
    assert.strictEqual(r.body.length, 0);
    assert.deepStrictEqual(seen, [], 'the handler never saw it');
    const ok = await common.withTimeout(c.request('GET', '/after', [], null, port), 10000, 'a request after');
    assert.strictEqual(ok.status, 200);
    assert.deepStrictEqual(seen, ['/after']);
    assert.strictEqual(c.closeInfo, null, 'the connection lives on');
  }

  it('a HEADERS frame longer than maxHeaderSize is skipped unread: a 431, and the next request on the connection is served', async function () {
    const limit = 2048;
    const { port, seen } = await counting({ maxHeaderSize: limit });
    const c = await connect(port);
    const f = headersFrame([':method', 'GET', ':scheme', 'https', ':authority', 'localhost', ':path', '/big',
      'x-big', crypto.randomBytes(3000).toString('base64')]);
    assert.ok(f.length > limit && f.length < 4 * limit, `the frame (${f.length} bytes) is over the limit (${limit})`);
    await expect431(c, port, f, seen);
    // Again with a body after it, in a second request on the same
    // connection: dropped, the connection still serves.
    seen.length = 0;
    const post = headersFrame([':method', 'POST', ':scheme', 'https', ':authority', 'localhost', ':path', '/up',
      'x-big', 'q'.repeat(limit * 2)]);
    await expect431(c, port, Buffer.concat([post, frame(0x0, Buffer.alloc(50000, 7))]), seen);
  });

  // The bombs below are HEADERS frames within the limit that decode past
  // it (a frame longer than 4x the limit closes the connection with
  // H3_EXCESSIVE_LOAD, quic_client.test.js).
  async function limitOf(c) {
    await until(() => serverSettings(c) !== null, "the server's SETTINGS");
    return serverSettings(c).get(0x6);
  }

  it('a QPACK bomb: one-byte static references, 100x the limit once decoded, get a 431', async function () {
    const { port, seen } = await counting();
    // The largest static entry reachable with a one-byte indexed line.
    let best = { index: 0, size: 0 };
    for (let i = 0; i < 63; i++) {
      const [n, v] = NativeQuicClient.decodeFieldSection(Buffer.from([0, 0, 0xc0 | i]));
      const size = n.length + v.length + 32;
      if (size > best.size) best = { index: i, size };
    }
    assert.ok(best.size > 100, `entry ${best.index}: ${best.size} bytes`);
    const c = await connect(port);
    const limit = await limitOf(c);
    const block = Buffer.concat([SECTION_PREFIX, Buffer.alloc(limit - 16, 0xc0 | best.index)]);
    await expect431(c, port, frame(0x1, block), seen);
  });

  it('a Huffman string that decodes past the limit (5 bits a byte) gets a 431', async function () {
    const { port, seen } = await counting();
    const c = await connect(port);
    const limit = await limitOf(c);
    const f = headersFrame([':method', 'GET', ':scheme', 'https', ':authority', 'localhost', ':path', '/big',
      'x-big', 'a'.repeat(Math.floor((limit - 64) * 8 / 5))]);
    assert.ok(f.length < limit, `the frame (${f.length} bytes) is within the limit (${limit})`);
    await expect431(c, port, f, seen);
  });

  it('a header section one byte over the advertised SETTINGS_MAX_FIELD_SECTION_SIZE gets a 431; one at it is served', async function () {
    const limit = 2048;
    const { port, seen } = await counting({ maxHeaderSize: limit });
    const c = await connect(port);
    await until(() => serverSettings(c) !== null, "the server's SETTINGS");
    assert.strictEqual(serverSettings(c).get(0x6), limit, 'SETTINGS_MAX_FIELD_SECTION_SIZE');
    const base = [':method', 'GET', ':scheme', 'https', ':authority', 'localhost', ':path', '/at'];
    const pad = (extra) => [...base, 'x-pad', 'p'.repeat(limit - fieldsSize(base) - 'x-pad'.length - 32 + extra)];
    assert.strictEqual(fieldsSize(pad(0)), limit);
    const at = await common.withTimeout(c.raw(headersFrame(pad(0))), 10000, 'at the limit');
    assert.strictEqual(at.status, 200);
    assert.deepStrictEqual(seen, ['/at']);
    seen.length = 0;
    await expect431(c, port, headersFrame(pad(1)), seen);
  });

  it('a 431 with a request body following: the body is dropped, the connection serves on', async function () {
    const { port, seen } = await counting({ maxHeaderSize: 1024 });
    const c = await connect(port);
    const head = headersFrame([':method', 'POST', ':scheme', 'https', ':authority', 'x', ':path', '/up',
      'x-pad', 'a'.repeat(1500)]);
    await expect431(c, port, Buffer.concat([head, frame(0x0, Buffer.alloc(100000, 1)), frame(0x0, Buffer.alloc(10))]), seen);
  });

  it('trailers over the limit: the stream is reset with H3_MESSAGE_ERROR', async function () {
    let aborted = false;
    const { port } = await startH3Server({ maxHeaderSize: 1024 }, (req, res) => {
      req.on('aborted', () => { aborted = true; });
      req.resume();
    });
    const c = await connect(port);
    const r = await common.withTimeout(c.raw(Buffer.concat([
      headersFrame([':method', 'POST', ':scheme', 'https', ':authority', 'x', ':path', '/t']),
      frame(0x0, Buffer.from('body')),
      headersFrame(['x-trailer', 'a'.repeat(1500)]),
    ])), 10000, 'the reset');
    assert.strictEqual(r.reset, H3.MESSAGE, JSON.stringify(r));
    await until(() => aborted, "the handler's 'aborted'");
  });

  it('a trailing HEADERS frame longer than the limit: the stream is reset with H3_MESSAGE_ERROR, the connection serves on', async function () {
    let aborted = false;
    const { port } = await startH3Server({ maxHeaderSize: 1024 }, (req, res) => {
      req.on('aborted', () => { aborted = true; });
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    const c = await connect(port);
    const r = await common.withTimeout(c.raw(Buffer.concat([
      headersFrame([':method', 'POST', ':scheme', 'https', ':authority', 'x', ':path', '/t']),
      frame(0x0, Buffer.from('body')),
      headersFrame(['x-trailer', crypto.randomBytes(2000).toString('base64')]),
    ])), 10000, 'the reset');
    assert.strictEqual(r.reset, H3.MESSAGE, JSON.stringify(r));
    await until(() => aborted, "the handler's 'aborted'");
    const ok = await common.withTimeout(c.request('GET', '/after', [], null, port), 10000, 'a request after');
    assert.strictEqual(ok.status, 200);
    assert.strictEqual(c.closeInfo, null, 'the connection lives on');
  });

  it('a Huffman string carrying EOS: QPACK_DECOMPRESSION_FAILED', async function () {
    const { port, seen } = await counting();
    const c = await connect(port);
    // Literal with static name reference 2 ('age'), a Huffman value of 32
    // one bits: EOS (30 ones) inside.
    c.raw(frame(0x1, Buffer.concat([SECTION_PREFIX, Buffer.from([0x52, 0x84, 0xff, 0xff, 0xff, 0xff])])));
    const info = await common.withTimeout(c.closed, 10000, 'connection close');
    assert.strictEqual(info.code, H3.QPACK_DECOMPRESSION_FAILED, JSON.stringify(info));
    assert.deepStrictEqual(seen, []);
  });

  it('more requests than maxStreams left unfinished: the extra ones refused, others served meanwhile, the rest once finished', async function () {
    const held = [];
    const { port } = await startH3Server({ http3: { maxStreams: 5 } }, (req, res) => {
      held.push(req.url);
      req.resume();
      req.on('end', () => res.end(`done ${req.url}`));
    });
    const c = await connect(port);
    // POST heads without FIN: each request stays open.
    const ps = Array.from({ length: 20 }, (_, i) => c.raw(headersFrame([':method', 'POST', ':scheme', 'https',
      ':authority', 'x', ':path', `/${i}`]), { noFin: true }));
    const settled = new Array(ps.length).fill(null);
    ps.forEach((p, i) => p.then((r) => { settled[i] = r; }));
    await until(() => held.length === 5 && settled.filter((r) => r !== null).length === 15,
      'five requests at the handler, fifteen answered');
    for (const r of settled.filter((x) => x !== null)) assert.strictEqual(r.reset, H3.REQUEST_REJECTED, JSON.stringify(r));
    assert.strictEqual(held.length, 5);
    // Another client is served meanwhile.
    const other = await connect(port);
    const ok = await common.withTimeout(other.request('GET', '/other', [], null, port), 10000, 'another client');
    assert.strictEqual(ok.status, 200);
    // The held ones finish: answered; then the same connection serves on.
    const open = ps.filter((p, i) => settled[i] === null);
    assert.strictEqual(open.length, 5);
    for (const p of open) c.native.write(p.id, Buffer.alloc(0), true);
    const done = await common.withTimeout(Promise.all(open), 10000, 'the held requests');
    for (const r of done) assert.strictEqual(r.status, 200);
    const again = await common.withTimeout(c.request('POST', '/again', [], Buffer.from('x'), port), 10000, 'after');
    assert.strictEqual(again.status, 200);
  });

  it("the transport's stream limit filled with heads that never complete: nothing reaches the handler, the connection is closed as idle", async function () {
    const { server, port, seen } = await counting({ http3: { idleTimeout: 500 } });
    const c = await connect(port);
    // A HEADERS frame announcing 1000 bytes, 3 sent, on every stream the
    // client may open (OpenSSL's limit, 100).
    let n = 0;
    for (;;) {
      const id = c.native.openStream(false);
      if (id < 0) break;
      c.native.write(id, Buffer.from([0x01, 0x43, 0xe8, 0x00, 0x00, 0xd1]), false);
      n++;
    }
    assert.ok(n >= 5 && n <= 1000, `${n} streams`);
    const other = await connect(port);
    const ok = await common.withTimeout(other.request('GET', '/other', [], null, port), 10000, 'another client');
    assert.strictEqual(ok.status, 200);
    // `c` holds every stream it may open, none with a whole head: that is
    // no request in service, so it is closed as idle all the same.
    const info = await common.withTimeout(c.closed, 15000, 'the idle close');
    assert.strictEqual(info.code, H3.NO_ERROR);
    assert.deepStrictEqual(seen, ['/other']);
    await until(() => server._http3.connections() === 0, 'no connection left');
  });

  it('stream credit comes back: three rounds of 100 concurrent requests on one connection', async function () {
    const { port } = await startH3Server({}, (req, res) => setImmediate(() => res.end(req.url)));
    const c = await connect(port);
    for (let round = 0; round < 3; round++) {
      const rs = await common.withTimeout(Promise.all(Array.from({ length: 100 },
        (_, i) => c.request('GET', `/${round}/${i}`, [], null, port))), 20000, `round ${round}`);
      rs.forEach((r, i) => assert.strictEqual(r.body.toString(), `/${round}/${i}`));
    }
  });
});
