'use strict';

// The client's address over HTTP/3: req.socket.remoteAddress / remotePort
// / remoteFamily and address() / localPort, as HTTP/1.1 and HTTP/2 give
// them, on IPv4, IPv6 and dual-stack endpoints, with gtlsclient (whose log
// names its own port) and our client, with and without address
// validation. OpenSSL 3.5 has no getter for it: the endpoint's network
// BIO matches each datagram's destination connection ID to a connection
// (docs/http3.md, "The client's address"). [sluice-only]

const https = require('node:https');
const os = require('node:os');
const common = require('../common');
const { assert } = common;
const { h3, haveClient, gtls, sluice } = require('./h3common');
const { h3Clients } = require('./quic_client');
const { fixtures } = require('../tls/tls_common');

const run = common.isSluice && h3 ? describe : describe.skip;
const haveIPv6 = Object.values(os.networkInterfaces()).flat().some((i) => i.family === 'IPv6' && i.address === '::1');

// A server on `host` whose handlers answer with what req.socket says.
async function addressServer(host, h3opts = {}) {
  const { localhost } = fixtures();
  const server = sluice.createSecureServer({ key: localhost.key, cert: localhost.cert, http3: h3opts },
    (req, res) => {
      const s = req.socket;
      res.end(JSON.stringify({
        v: req.httpVersion, remoteAddress: s.remoteAddress, remotePort: s.remotePort,
        remoteFamily: s.remoteFamily, address: s.address(), localPort: s.localPort,
      }));
    });
  common.trackServer(server);
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  return { server, port: server.http3Address().port };
}

// gtlsclient's own UDP port, from its "Sent packet: local=[ip]:port" lines.
function gtlsLocalPort(log) {
  const m = /Sent packet: local=\[[^\]]*\]:(\d+)/.exec(log);
  return m ? Number(m[1]) : null;
}

async function gtlsAt(host, port, opts = {}) {
  const r = await gtls(port, ['/a'], { ...opts, args: [...(opts.args || [])], host });
  assert.strictEqual(r.code, 0, r.log.slice(-2000));
  return { body: JSON.parse(r.responses.get('/a').body.toString()), clientPort: gtlsLocalPort(r.log) };
}

// What the TCP side of the same server reports for a client connecting to
// `connectHost` (HTTP/2 over TLS, node's client).
function overTcp(connectHost, port) {
  return new Promise((resolve, reject) => {
    https.get({ host: connectHost, port, path: '/', ca: fixtures().ca, servername: 'localhost', agent: false }, (res) => {
      let b = '';
      res.on('data', (d) => { b += d; });
      res.on('end', () => resolve(JSON.parse(b)));
    }).on('error', reject);
  });
}

run('HTTP/3: the client address on req.socket [sluice-only]', function () {
  this.timeout(30000);
  const { connect } = h3Clients();

  (haveClient ? it : it.skip)('IPv4 (gtlsclient): remoteAddress, remotePort (its own port), remoteFamily, address()', async function () {
    const { port } = await addressServer('127.0.0.1');
    const { body, clientPort } = await gtlsAt('127.0.0.1', port);
    assert.strictEqual(body.v, '3.0');
    assert.strictEqual(body.remoteAddress, '127.0.0.1');
    assert.strictEqual(body.remoteFamily, 'IPv4');
    assert.ok(clientPort > 0, 'gtlsclient logged its port');
    assert.strictEqual(body.remotePort, clientPort);
    assert.deepStrictEqual(body.address, { address: '127.0.0.1', family: 'IPv4', port });
    assert.strictEqual(body.localPort, port);
  });

  it('IPv4 (our client): the same facts; two clients, two ports', async function () {
    const { port } = await addressServer('127.0.0.1');
    const seen = [];
    for (let i = 0; i < 2; i++) {
      const c = await connect(port);
      const r = await c.request('GET', '/', [], null, port);
      const body = JSON.parse(r.body.toString());
      assert.strictEqual(body.remoteAddress, '127.0.0.1');
      assert.strictEqual(body.remoteFamily, 'IPv4');
      assert.ok(Number.isInteger(body.remotePort) && body.remotePort > 0 && body.remotePort !== port, String(body.remotePort));
      seen.push(body.remotePort);
    }
    assert.notStrictEqual(seen[0], seen[1]);
  });

  (haveClient ? it : it.skip)('without address validation (no Retry): known all the same', async function () {
    const { port } = await addressServer('127.0.0.1', { addressValidation: false });
    const { body, clientPort } = await gtlsAt('127.0.0.1', port);
    assert.strictEqual(body.remoteAddress, '127.0.0.1');
    assert.strictEqual(body.remotePort, clientPort);
  });

  (haveIPv6 ? it : it.skip)('IPv6 (::1): gtlsclient and our client', async function () {
    const { port } = await addressServer('::1');
    if (haveClient) {
      const { body, clientPort } = await gtlsAt('::1', port);
      assert.strictEqual(body.remoteAddress, '::1');
      assert.strictEqual(body.remoteFamily, 'IPv6');
      assert.strictEqual(body.remotePort, clientPort);
      assert.deepStrictEqual(body.address, { address: '::1', family: 'IPv6', port });
    }
    const c = await connect(port, { host: '::1' });
    const r = await c.request('GET', '/', [], null, port);
    const body = JSON.parse(r.body.toString());
    assert.strictEqual(body.remoteAddress, '::1');
    assert.strictEqual(body.remoteFamily, 'IPv6');
  });

  (haveIPv6 ? it : it.skip)('dual-stack (::): an IPv4 client as TCP reports it, an IPv6 one as ::1', async function () {
    const { port } = await addressServer('::');
    const tcp4 = await overTcp('127.0.0.1', port);
    const c4 = await connect(port);
    const b4 = JSON.parse((await c4.request('GET', '/', [], null, port)).body.toString());
    assert.strictEqual(b4.remoteAddress, tcp4.remoteAddress);  // '::ffff:127.0.0.1', as node's
    assert.strictEqual(b4.remoteFamily, tcp4.remoteFamily);
    const c6 = await connect(port, { host: '::1' });
    const b6 = JSON.parse((await c6.request('GET', '/', [], null, port)).body.toString());
    assert.strictEqual(b6.remoteAddress, '::1');
    assert.strictEqual(b6.remoteFamily, 'IPv6');
    if (haveClient) {
      const { body, clientPort } = await gtlsAt('127.0.0.1', port);
      assert.strictEqual(body.remoteAddress, tcp4.remoteAddress);
      assert.strictEqual(body.remotePort, clientPort);
    }
  });
});
