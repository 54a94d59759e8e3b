'use strict';

// HTTP/3 over a lossy path and under hostile datagrams. A UDP relay in the
// test (node:dgram) sits between our OpenSSL QUIC client
// (test/http3/quic_client.js) and the server: it drops a fixed share of
// datagrams in both directions and holds some back to deliver them after
// the next one (reordering), from a seeded generator so a failure repeats.
// Bodies of 1 MiB and more must arrive whole (sha256). Garbage, truncated
// Initials and random bytes sent straight to the server's port must neither
// crash nor stall it: the endpoint keeps serving. [sluice-only]

const crypto = require('node:crypto');
const dgram = require('node:dgram');
const common = require('../common');
const { assert } = common;
const { h3, startH3Server } = require('./h3common');
const { H3Client } = require('./quic_client');
const { startRelay, relayFixtures, rng } = require('./relay');

const run = common.isSluice && h3 ? describe : describe.skip;

const sha = (b) => crypto.createHash('sha256').update(b).digest('hex');

run('HTTP/3 over a lossy, reordering path and under hostile datagrams [sluice-only]', function () {
  this.timeout(120000);
  const { clients, relays } = relayFixtures();

  async function connect(port) {
    const c = new H3Client();
    clients.push(c);
    return c.connect(port);
  }

  const bodies = new Map([
    ['/a', crypto.randomBytes(1024 * 1024)],
    ['/b', crypto.randomBytes(1536 * 1024 + 7)],
  ]);
  const serve = (req, res) => {
    const b = bodies.get(req.url);
    if (!b) { res.statusCode = 404; res.end(); return; }
    if (req.method === 'POST') {
      const h = crypto.createHash('sha256');
      req.on('data', (d) => h.update(d));
      req.on('end', () => res.end(h.digest('hex')));
      return;
    }
    res.end(b);
  };

  it('GETs of 1 MiB+ bodies with 5 % of datagrams dropped and some reordered arrive whole', async function () {
    const { port } = await startH3Server({}, serve);
    const relay = await startRelay(port, { drop: 0.05, reorder: 0.05, seed: 7 });
    relays.push(relay);
    const c = await common.withTimeout(connect(relay.port), 30000, 'handshake through the relay');
    const rs = await common.withTimeout(Promise.all([
      c.request('GET', '/a', [], null, port),
      c.request('GET', '/b', [], null, port),
      c.request('GET', '/a', [], null, port),
    ]), 90000, 'responses through the relay');
    for (const [r, p] of rs.map((r, i) => [r, ['/a', '/b', '/a'][i]])) {
      assert.strictEqual(r.status, 200, `${p}: ${JSON.stringify(r.reset || r.closed || '')}`);
      assert.strictEqual(r.body.length, bodies.get(p).length, p);
      assert.strictEqual(sha(r.body), sha(bodies.get(p)), p);
    }
    // The path really was lossy and reordering (not a pass-through).
    assert(relay.stats.dropped > 10, JSON.stringify(relay.stats));
    assert(relay.stats.reordered > 10, JSON.stringify(relay.stats));
  });

  it('a 1 MiB upload over the lossy path arrives whole', async function () {
    const { port } = await startH3Server({}, serve);
    const relay = await startRelay(port, { drop: 0.05, reorder: 0.05, seed: 99 });
    relays.push(relay);
    const c = await common.withTimeout(connect(relay.port), 30000, 'handshake through the relay');
    const body = bodies.get('/a');
    const r = await common.withTimeout(c.request('POST', '/a', ['content-length', String(body.length)], body, port),
      90000, 'upload through the relay');
    assert.strictEqual(r.status, 200);
    assert.strictEqual(r.body.toString(), sha(body));
    assert(relay.stats.dropped > 10, JSON.stringify(relay.stats));
  });

  it('an Initial flood from many source ports to unvalidated addresses: the server sends at most 3x what it received', async function () {
    const { port } = await startH3Server({}, serve);
    const n = 20;
    const rs = [];
    for (let i = 0; i < n; i++) {
      const relay = await startRelay(port, { blackholeDown: true });
      relays.push(relay);
      rs.push(relay);
      const c = new H3Client();
      clients.push(c);
      c.connect(relay.port).catch(() => {});
    }
    // Let the clients retransmit their Initials and the server answer.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    let up = 0;
    let down = 0;
    for (const r of rs) {
      up += r.stats.upBytes;
      down += r.stats.downBytes;
      // RFC 9000 §8.1: before validation, at most three times the bytes received.
      assert(r.stats.downBytes <= 3 * r.stats.upBytes, JSON.stringify(r.stats));
    }
    assert(up > 0 && down > 0, `up ${up} down ${down}`);
    // The endpoint still serves a client on a validated path.
    const c = await common.withTimeout(connect(port), 20000, 'handshake after the flood');
    const r = await common.withTimeout(c.request('GET', '/a', [], null, port), 30000, 'GET after the flood');
    assert.strictEqual(sha(r.body), sha(bodies.get('/a')));
  });

  it('garbage, truncated Initials and random datagrams to the port: the endpoint keeps serving', async function () {
    const { port } = await startH3Server({}, serve);
    const sock = dgram.createSocket('udp4');
    await new Promise((resolve) => sock.bind(0, '127.0.0.1', resolve));
    const rand = rng(4242);
    const bytes = (n) => Buffer.from(Array.from({ length: n }, () => Math.floor(rand() * 256)));
    const datagrams = [
      Buffer.alloc(0),
      Buffer.from([0xc0]),
      // A long header, QUIC v1, cut in the connection id lengths.
      Buffer.from([0xc3, 0x00, 0x00, 0x00, 0x01, 0x08]),
      // A long header Initial with lengths that point past the datagram.
      Buffer.concat([Buffer.from([0xc3, 0x00, 0x00, 0x00, 0x01, 0x14]), bytes(20), Buffer.from([0x14]), bytes(20),
        Buffer.from([0x00, 0x7f, 0xff]), bytes(30)]),
      // A padded 1200-byte Initial of garbage after a valid-looking header.
      Buffer.concat([Buffer.from([0xc3, 0x00, 0x00, 0x00, 0x01, 0x08]), bytes(8), Buffer.from([0x08]), bytes(8),
        Buffer.from([0x00, 0x44, 0x9e]), bytes(1200 - 27)]),
      // An unknown version (version negotiation territory).
      Buffer.concat([Buffer.from([0xc0, 0x1a, 0x2a, 0x3a, 0x4a, 0x08]), bytes(8), Buffer.from([0x08]), bytes(1185)]),
      // Short headers for connections that do not exist.
      Buffer.concat([Buffer.from([0x40]), bytes(60)]),
      Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'),
    ];
    for (let i = 0; i < 300; i++) datagrams.push(bytes(1 + Math.floor(rand() * 1400)));
    for (const d of datagrams) sock.send(d, port, '127.0.0.1');
    // And the same again while a real connection is up and busy.
    const c = await common.withTimeout(connect(port), 20000, 'handshake after garbage');
    const p = c.request('GET', '/a', [], null, port);
    for (const d of datagrams) sock.send(d, port, '127.0.0.1');
    const r = await common.withTimeout(p, 30000, 'GET during garbage');
    sock.close();
    assert.strictEqual(r.status, 200);
    assert.strictEqual(sha(r.body), sha(bodies.get('/a')));
    const c2 = await common.withTimeout(connect(port), 20000, 'a new connection afterwards');
    const r2 = await common.withTimeout(c2.request('GET', '/b', [], null, port), 30000, 'GET afterwards');
    assert.strictEqual(sha(r2.body), sha(bodies.get('/b')));
  });
});
