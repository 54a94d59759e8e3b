'use strict';

// Hostile TLS clients: garbage instead of a ClientHello, a truncated
// ClientHello, TLS 1.0/1.1 against the default minVersion, a client that
// stalls mid-handshake (handshakeTimeout), 1,000 handshakes started and
// abandoned. Each ends in 'tlsClientError' and a closed connection, the
// server keeps serving. Shared with node's secure server (sluice-only
// where node exposes nothing to compare: the connection count).

const net = require('node:net');
const tls = require('node:tls');
const https = require('node:https');
const { execFile } = require('node:child_process');
const common = require('../common');
const { assert } = common;
const { fixtures, startSecure } = require('./tls_common');

let clientHello = null;

// The first flight of node's TLS client (a real ClientHello), captured
// once by a plain TCP server.
async function getClientHello() {
  if (clientHello) return clientHello;
  const srv = net.createServer();
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const got = new Promise((resolve) => srv.once('connection', (s) => s.once('data', (d) => { resolve(d); s.destroy(); })));
  const c = tls.connect({ port: srv.address().port, host: '127.0.0.1', servername: 'localhost', rejectUnauthorized: false });
  c.on('error', () => {});
  clientHello = await got;
  c.destroy();
  srv.close();
  return clientHello;
}

function alive(port) {
  return new Promise((resolve, reject) => {
    https.get({ host: '127.0.0.1', port, servername: 'localhost', ca: fixtures().ca, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    }).on('error', reject);
  });
}

const ok = (req, res) => res.end('ok');

describe('TLS: hostile clients', function () {
  afterEach(common.cleanup);

  it('garbage instead of a ClientHello: tlsClientError, connection closed', async function () {
    const { server, port } = await startSecure({}, ok);
    const seen = common.once(server, 'tlsClientError', 5000);
    const c = await common.rawConnect(port);
    c.socket.write(Buffer.alloc(600, 0x41));
    const [err] = await seen;
    assert.match(err.code, /^ERR_SSL_/);
    await common.withTimeout(c.closedPromise, 5000, 'close');
    assert.strictEqual(await alive(port), 200);
  });

  it('a truncated ClientHello, then the client leaves: tlsClientError ECONNRESET', async function () {
    const hello = await getClientHello();
    const { server, port } = await startSecure({}, ok);
    const seen = common.once(server, 'tlsClientError', 5000);
    const c = await common.rawConnect(port);
    c.socket.end(hello.subarray(0, 40));
    const [err] = await seen;
    assert.strictEqual(err.code, 'ECONNRESET');
    assert.strictEqual(await alive(port), 200);
  });

  for (const v of ['-tls1', '-tls1_1']) {
    it(`a TLS ${v === '-tls1' ? '1.0' : '1.1'} client against the default minVersion (TLSv1.2) is refused`, async function () {
      const { server, port } = await startSecure({}, ok);
      const seen = common.once(server, 'tlsClientError', 5000);
      const out = await new Promise((resolve) => {
        const child = execFile('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, v, '-cipher', 'DEFAULT@SECLEVEL=0'],
          { timeout: 8000 }, (err, stdout, stderr) => resolve(String(stdout) + String(stderr)));
        child.stdin.end();
      });
      assert.match(out, /alert protocol version|no protocols available|unsupported protocol/i);
      const [err] = await seen;
      assert.match(err.code, /^ERR_SSL_(UNSUPPORTED_PROTOCOL|NO_PROTOCOLS_AVAILABLE|VERSION_TOO_LOW)$/);
    });
  }

  it('a client stalling mid-handshake is cut at handshakeTimeout', async function () {
    const hello = await getClientHello();
    const { server, port } = await startSecure({ handshakeTimeout: 300 }, ok);
    const seen = common.once(server, 'tlsClientError', 5000);
    const t0 = Date.now();
    const c = await common.rawConnect(port);
    c.socket.write(hello.subarray(0, hello.length - 10));
    const [err] = await seen;
    assert.strictEqual(err.code, 'ERR_TLS_HANDSHAKE_TIMEOUT');
    assert.ok(Date.now() - t0 >= 250, `cut after ${Date.now() - t0} ms`);
    await common.withTimeout(c.closedPromise, 5000, 'close');
  });

  it('1,000 handshakes started and abandoned: every connection freed, server serves on', async function () {
    this.timeout(60000);
    const hello = await getClientHello();
    const { server, port } = await startSecure({}, ok);
    let errors = 0;
    server.on('tlsClientError', () => { errors++; });
    for (let batch = 0; batch < 10; batch++) {
      await Promise.all(Array.from({ length: 100 }, (_, i) => new Promise((resolve) => {
        const s = net.connect(port, '127.0.0.1', () => {
          // Half of them send part of a ClientHello, half the whole one.
          s.write(i % 2 ? hello : hello.subarray(0, 100));
          setTimeout(() => s.destroy(), 5);
        });
        s.on('error', () => {});
        s.on('close', resolve);
      })));
    }
    const t0 = Date.now();
    while (errors < 1000 && Date.now() - t0 < 10000) await common.sleep(20);
    assert.strictEqual(errors, 1000, `${errors} tlsClientError events`);
    if (common.isSluice) {
      while (server._connections > 0 && Date.now() - t0 < 10000) await common.sleep(20);
      assert.strictEqual(server._connections, 0);
    }
    assert.strictEqual(await alive(port), 200);
  });
});
