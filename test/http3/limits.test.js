'use strict';

// HTTP/3 limits as on TCP, each under a flood of handshakes that never
// complete (our clients behind relays that never deliver the server's
// replies: test/http3/relay.js) while a legitimate client still gets
// through: address validation (Retry: no state for an unvalidated
// address), handshakeTimeout ('tlsClientError' ERR_TLS_HANDSHAKE_TIMEOUT
// with the client's address), maxHandshakes, maxConnectionsPerAddress.
// [sluice-only]

const os = require('node:os');
const common = require('../common');
const { assert } = common;
const { h3, sluice } = require('./h3common');
const { H3Client } = require('./quic_client');
const { startRelay, relayFixtures } = require('./relay');
const { fixtures } = require('../tls/tls_common');

const run = common.isSluice && h3 ? describe : describe.skip;
const haveIPv6 = Object.values(os.networkInterfaces()).flat().some((i) => i.family === 'IPv6' && i.address === '::1');

run('HTTP/3 limits under handshake floods [sluice-only]', function () {
  this.timeout(30000);
  const { clients, relays } = relayFixtures();

  async function server(options, host = '127.0.0.1') {
    const { localhost } = fixtures();
    // A short closeGrace: the flooding clients vanish without closing.
    const http3 = { closeGrace: 100, ...(options.http3 === true ? {} : options.http3) };
    const s = sluice.createSecureServer({ key: localhost.key, cert: localhost.cert, ...options, http3 },
      (req, res) => res.end(`hi ${req.socket.remoteAddress}`));
    common.trackServer(s);
    await new Promise((resolve, reject) => {
      s.once('error', reject);
      s.listen(0, host, resolve);
    });
    return { server: s, port: s.http3Address().port };
  }

  function client() {
    const c = new H3Client();
    clients.push(c);
    return c;
  }

  // n handshakes that never complete (the server's replies are dropped);
  // resolves the relays.
  async function flood(port, n) {
    const rs = [];
    for (let i = 0; i < n; i++) {
      const relay = await startRelay(port, { blackholeDown: true });
      relays.push(relay);
      rs.push(relay);
      client().connect(relay.port).catch(() => {});
    }
    return rs;
  }

  async function legitimate(port, opts) {
    const c = await common.withTimeout(client().connect(port, opts), 10000, 'legitimate handshake');
    const r = await common.withTimeout(c.request('GET', '/', [], null, port), 10000, 'legitimate GET');
    assert.strictEqual(r.status, 200);
    return { c, body: r.body.toString() };
  }

  it('address validation (the default Retry): a flood of unvalidated Initials leaves no connection state', async function () {
    const { server: s, port } = await server({ http3: true });
    const rs = await flood(port, 20);
    await common.sleep(1000);
    assert.ok(rs.every((r) => r.stats.up > 0 && r.stats.down > 0), 'each flooding client got a Retry');
    assert.strictEqual(s._http3.connections(), 0);
    assert.strictEqual(s._http3.handshakes(), 0);
    await legitimate(port);
  });

  it("handshakeTimeout: stalled handshakes are cut ('tlsClientError' with the client's address); a client gets through", async function () {
    const { server: s, port } = await server({ handshakeTimeout: 300, http3: { addressValidation: false } });
    const errors = [];
    s.on('tlsClientError', (err, socket) => errors.push({ code: err.code, address: socket.remoteAddress, port: socket.remotePort, alpn: socket.alpnProtocol }));
    const t0 = Date.now();
    const rs = await flood(port, 10);
    await common.withTimeout((async () => {
      while (new Set(errors.map((e) => e.port)).size < rs.length) await common.sleep(20);
    })(), 5000, 'every stalled handshake cut');
    const took = Date.now() - t0;
    assert.ok(took < 3000, `cut after ${took} ms`);
    for (const e of errors) {
      assert.strictEqual(e.code, 'ERR_TLS_HANDSHAKE_TIMEOUT');
      assert.strictEqual(e.address, '127.0.0.1');
      assert.strictEqual(e.alpn, 'h3');
    }
    // Each error names a flooding client's port (the relays' sockets).
    assert.deepStrictEqual([...new Set(errors.map((e) => e.port))].sort(), rs.map((r) => r.backPort).sort());
    await legitimate(port);
  });

  it('maxHandshakes: never more handshakes in progress than the bound; a client gets through once one is cut', async function () {
    const { server: s, port } = await server({ handshakeTimeout: 500, http3: { addressValidation: false, maxHandshakes: 3 } });
    s.on('tlsClientError', () => {});
    await flood(port, 12);
    let most = 0;
    for (let i = 0; i < 40; i++) {
      most = Math.max(most, s._http3.handshakes());
      await common.sleep(25);
    }
    assert.strictEqual(most, 3);
    // The flood keeps retransmitting: a client may be refused while the
    // bound is full; it gets in within a few handshake timeouts.
    const t0 = Date.now();
    for (;;) {
      const c = client();
      try {
        await common.withTimeout(c.connect(port), 3000, 'handshake');
        const r = await common.withTimeout(c.request('GET', '/', [], null, port), 3000, 'GET');
        if (r.status === 200) break;
      } catch (err) {
        if (Date.now() - t0 > 10000) throw err;
      }
    }
  });

  it('maxConnectionsPerAddress: a third connection from 127.0.0.1 is refused; another address is served', async function () {
    const host = haveIPv6 ? '::' : '127.0.0.1';
    const { port } = await server({ http3: { maxConnectionsPerAddress: 2 } }, host);
    const a = await legitimate(port);
    const b = await legitimate(port);
    const third = client();
    const closed = await common.withTimeout(third.connect(port).then(() => third.closed, () => third.closed), 5000, 'third refused');
    // CONNECTION_CLOSE: an application close before the handshake is done
    // travels as APPLICATION_ERROR (RFC 9000 §10.2.3).
    assert.deepStrictEqual([closed.code, closed.transport], [0xc, true], JSON.stringify(closed));
    if (haveIPv6) {
      const v6 = await legitimate(port, { host: '::1' });
      assert.strictEqual(v6.body, 'hi ::1');
    }
    // One of the two leaves: 127.0.0.1 may connect again.
    a.c.close();
    await common.withTimeout(a.c.closed, 5000, 'first client closed');
    const t0 = Date.now();
    for (;;) {
      try {
        await legitimate(port);
        break;
      } catch (err) {
        if (Date.now() - t0 > 5000) throw err;
        await common.sleep(100);
      }
    }
    assert.ok(b.c.closeInfo === null, 'the second client stays connected');
  });
});
