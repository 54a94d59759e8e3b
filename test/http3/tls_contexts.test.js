'use strict';

// One certificate configuration for TCP and HTTP/3: for every servername
// the certificate a QUIC client sees over HTTP/3 is the one node's tls
// client sees on the TCP port — with addContext (exact, wildcard, added
// before and after listen), setSecureContext (new handshakes only) and an
// SNICallback (answered at once, later, with the default, with an error).
// Session tickets: a QUIC session resumes with the server's ticket keys
// (the project's client, and Debian's gtlsclient as an independent one),
// not after the keys change, and on another server given the same keys.
// [sluice-only]: node has no HTTP/3 server.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const tls = require('node:tls');
const common = require('../common');
const { assert } = common;
const { h3, haveClient, startH3Server, gtls, sluice } = require('./h3common');
const { h3Clients } = require('./quic_client');
const { fixtures } = require('../tls/tls_common');

const run = common.isSluice && h3 ? describe : describe.skip;

run('HTTP/3 certificates, SNI and session tickets [sluice-only]', function () {
  this.timeout(20000);
  const { client } = h3Clients();

  const ok = (req, res) => res.end(`ok ${req.httpVersion}`);

  async function h3connect(port, opts) {
    const c = client();
    return common.withTimeout(c.connect(port, opts), 10000, `QUIC connect ${JSON.stringify(opts)}`);
  }

  // Over HTTP/3: the certificate served for `servername`, after a request
  // on the connection succeeded. { cn, fp, client }.
  async function h3cert(port, servername, opts = {}) {
    const c = await h3connect(port, { servername, ...opts });
    const r = await common.withTimeout(c.request('GET', '/', [], null, port), 10000, 'GET');
    assert.strictEqual(r.status, 200);
    assert.strictEqual(r.body.toString(), 'ok 3.0');
    const x = new crypto.X509Certificate(c.peerCertificate());
    return { cn: x.subject.replace(/^CN=/, ''), fp: x.fingerprint256, client: c };
  }

  // On the TCP port (node's tls client): { cn, fp }.
  function tcpCert(port, servername) {
    return common.withTimeout(new Promise((resolve, reject) => {
      const s = common.trackSocket(tls.connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false, ALPNProtocols: ['h2'] }, () => {
        const x = s.getPeerX509Certificate();
        s.destroy();
        resolve({ cn: x.subject.replace(/^CN=/, ''), fp: x.fingerprint256 });
      }));
      s.on('error', reject);
    }), 10000, `TLS connect ${servername}`);
  }

  // The same certificate on both transports, with the expected CN.
  async function sameCert(server, servername, cn) {
    const quic = await h3cert(server.http3Address().port, servername);
    const tcp = await tcpCert(server.address().port, servername);
    assert.strictEqual(quic.cn, cn, `HTTP/3 certificate for ${servername}`);
    assert.strictEqual(quic.fp, tcp.fp, `HTTP/3 and TCP certificates for ${servername}`);
    return quic;
  }

  it('req.socket\'s TLS facts as on HTTP/2 over TLS: encrypted, alpnProtocol h3, servername, protocol, cipher, the certificate served, keying material, resumption', async function () {
    const seen = [];
    const { server, port } = await startH3Server({}, (req, res) => {
      const s = req.socket;
      seen.push({
        encrypted: s.encrypted,
        alpn: s.alpnProtocol,
        servername: s.servername,
        protocol: s.getProtocol(),
        cipher: s.getCipher(),
        cert: s.getCertificate(),
        peerCert: s.getPeerCertificate(),
        authorized: s.authorized,
        reused: s.isSessionReused(),
        ekm: s.exportKeyingMaterial(32, 'EXPORTER-test'),
      });
      res.end('ok');
    });
    const first = await h3connect(port, { servername: 'localhost' });
    assert.strictEqual((await common.withTimeout(first.request('GET', '/', [], null, port), 10000, 'GET')).status, 200);
    const session = first.session();
    const again = await h3connect(port, { servername: 'localhost', session });
    assert.strictEqual((await common.withTimeout(again.request('GET', '/', [], null, port), 10000, 'GET')).status, 200);
    const [a, b] = seen;
    assert.strictEqual(a.encrypted, true);
    assert.strictEqual(a.alpn, 'h3');
    assert.strictEqual(a.servername, 'localhost');
    assert.strictEqual(a.protocol, 'TLSv1.3');
    assert.match(a.cipher.name, /^TLS_(AES_128_GCM|AES_256_GCM|CHACHA20_POLY1305)_SHA(256|384)$/);
    assert.strictEqual(a.cipher.version, 'TLSv1.3');
    const served = new crypto.X509Certificate(first.peerCertificate());
    assert.strictEqual(a.cert.fingerprint256, served.fingerprint256, 'getCertificate() is the one the client got');
    assert.deepStrictEqual(a.peerCert, {}, 'no client certificate');
    assert.strictEqual(a.authorized, false);
    assert.ok(Buffer.isBuffer(a.ekm) && a.ekm.length === 32);
    assert.notDeepStrictEqual(a.ekm, b.ekm, 'keying material per connection');
    assert.strictEqual(a.reused, false);
    assert.strictEqual(b.reused, again.isSessionReused(), 'the server and the client agree on resumption');
    assert.strictEqual(b.reused, true);
    assert.strictEqual(server.listenerCount('tlsClientError'), 0);
  });

  it('addContext: exact and wildcard names, before and after listen, as on TCP', async function () {
    const f = fixtures();
    const server = sluice.createSecureServer({ key: f.localhost.key, cert: f.localhost.cert, http3: true }, ok);
    server.addContext('a.example', { key: f.sniA.key, cert: f.sniA.cert });
    await common.listenLocal(server);
    server.addContext('*.b.example', sluice.createSecureContext({ key: f.sniB.key, cert: f.sniB.cert }));
    await sameCert(server, 'localhost', 'localhost');
    await sameCert(server, 'a.example', 'a.example');
    await sameCert(server, 'x.b.example', 'wild.b.example');
    // '*' is one label; no match keeps the default.
    await sameCert(server, 'y.x.b.example', 'localhost');
    await sameCert(server, 'nomatch.example', 'localhost');
    // Later additions win, for new handshakes.
    server.addContext('a.example', { key: f.rotated.key, cert: f.rotated.cert });
    await sameCert(server, 'a.example', 'localhost rotated');
  });

  it('setSecureContext: new HTTP/3 handshakes get the new certificate, an open connection keeps serving', async function () {
    const f = fixtures();
    const { server, port } = await startH3Server({}, ok);
    const before = await sameCert(server, 'localhost', 'localhost');
    server.setSecureContext({ key: f.rotated.key, cert: f.rotated.cert });
    await sameCert(server, 'localhost', 'localhost rotated');
    const r = await common.withTimeout(before.client.request('GET', '/old', [], null, port), 10000, 'GET on the old connection');
    assert.strictEqual(r.status, 200);
    assert.strictEqual(new crypto.X509Certificate(before.client.peerCertificate()).subject, 'CN=localhost');
  });

  it('SNICallback: answers at once and later, the default, an error (tlsClientError, handshake refused)', async function () {
    const f = fixtures();
    const A = sluice.createSecureContext({ key: f.sniA.key, cert: f.sniA.cert });
    const asked = [];
    const server = sluice.createSecureServer({
      key: f.localhost.key, cert: f.localhost.cert, http3: true,
      SNICallback: (name, cb) => {
        asked.push(name);
        if (name === 'a.example') cb(null, A);
        else if (name === 'later.b.example') setTimeout(() => cb(null, { key: f.sniB.key, cert: f.sniB.cert }), 30);
        else if (name === 'bad.example') setImmediate(() => cb(new Error('no certificate for you')));
        else cb(null);
      },
    }, ok);
    const errors = [];
    // (TCP sockets the test's tls client drops right after its handshake
    // may be reported too: only HTTP/3's count here.)
    server.on('tlsClientError', (err, socket) => {
      if (socket.alpnProtocol === 'h3') errors.push([err.message, socket.servername]);
    });
    await common.listenLocal(server);
    await sameCert(server, 'a.example', 'a.example');
    await sameCert(server, 'later.b.example', 'wild.b.example');
    await sameCert(server, 'localhost', 'localhost');
    // Each transport asked once per handshake.
    assert.deepStrictEqual(asked.filter((n) => n === 'later.b.example').length, 2);
    const c = client();
    await assert.rejects(common.withTimeout(c.connect(server.http3Address().port, { servername: 'bad.example' }), 10000, 'refused'),
      /closed before connecting.*"code":336/);  // CRYPTO_ERROR + internal_error (80)
    assert.deepStrictEqual(errors, [['no certificate for you', 'bad.example']]);
    // The endpoint serves on.
    await sameCert(server, 'a.example', 'a.example');
  });

  it('SNICallback not answered: the handshake waits, close() ends it, a late answer does nothing', async function () {
    const f = fixtures();
    let pending = null;
    let asked;
    const askedP = new Promise((resolve) => { asked = resolve; });
    const server = sluice.createSecureServer({
      key: f.localhost.key, cert: f.localhost.cert, http3: true,
      SNICallback: (name, cb) => {
        if (name === 'slow.example') {
          pending = cb;
          asked();
        } else {
          cb(null);
        }
      },
    }, ok);
    await common.listenLocal(server);
    const port = server.http3Address().port;
    const c = client();
    const waiting = c.connect(port, { servername: 'slow.example' }).then(() => 'connected', (e) => e.message);
    await common.withTimeout(askedP, 10000, 'SNICallback asked');
    // Other handshakes (and their requests) go on meanwhile.
    await sameCert(server, 'localhost', 'localhost');
    const closed = new Promise((resolve) => server.once('close', resolve));
    // The waiting connection is closed at once (CONNECTION_REFUSED); 'close'
    // follows QUIC's closing period (3 PTO: ~3 s without an RTT sample),
    // not the handshake's idle timeout (30 s).
    server.close();
    await common.withTimeout(closed, 8000, "'close' with a handshake waiting");
    assert.match(await common.withTimeout(waiting, 10000, 'client'), /closed before connecting/);
    pending(null, { key: f.sniA.key, cert: f.sniA.cert });
  });

  it('session tickets: a QUIC session resumes under the server\'s ticket keys, not after they change', async function () {
    const { server, port } = await startH3Server({}, ok);
    const first = await h3cert(port, 'localhost');
    assert.strictEqual(first.client.isSessionReused(), false);
    const session = first.client.session();
    assert.ok(Buffer.isBuffer(session));
    const again = await h3cert(port, 'localhost', { session });
    assert.strictEqual(again.client.isSessionReused(), true, 'resumed');
    assert.strictEqual(again.fp, first.fp);
    // Another server given these keys resumes the ticket too: the keys are
    // the ones getTicketKeys reports (shared with TCP).
    const other = await startH3Server({}, ok);
    other.server.setTicketKeys(server.getTicketKeys());
    const elsewhere = await h3cert(other.port, 'localhost', { session });
    assert.strictEqual(elsewhere.client.isSessionReused(), true, 'resumed on a server with the same keys');
    // New keys: the old ticket no longer opens, a full handshake follows.
    server.setTicketKeys(crypto.randomBytes(48));
    const after = await h3cert(port, 'localhost', { session });
    assert.strictEqual(after.client.isSessionReused(), false, 'not resumed under new keys');
  });

  (haveClient ? it : it.skip)('session tickets with gtlsclient (ngtcp2 + GnuTLS): another server with the same keys resumes, sending no certificate', async function () {
    const f = fixtures();
    const a = await startH3Server({}, ok);
    const b = await startH3Server({}, ok);
    for (const s of [a.server, b.server]) s.addContext('a.example', { key: f.sniA.key, cert: f.sniA.cert });
    b.server.setTicketKeys(a.server.getTicketKeys());
    const certLen = new crypto.X509Certificate(f.sniA.cert).raw.length;
    const file = path.join(os.tmpdir(), `sluice-h3-session-${process.pid}`);
    const handshakeBytes = async (port) => {
      const r = await gtls(port, ['/'], { quicDump: true, args: ['--sni=a.example', `--session-file=${file}`] });
      assert.strictEqual(r.responses.get('/').status, 200);
      assert.strictEqual(r.responses.get('/').body.toString(), 'ok 3.0');
      // The server's Handshake-level CRYPTO data: EncryptedExtensions,
      // Certificate, CertificateVerify, Finished — or, resumed, no
      // Certificate.
      let n = 0;
      for (const m of r.log.matchAll(/frm rx \d+ Handshake CRYPTO\(0x06\) offset=\d+ len=(\d+)/g)) n += Number(m[1]);
      return n;
    };
    try {
      const full = await handshakeBytes(a.port);
      const resumed = await handshakeBytes(b.port);
      assert.ok(full > certLen, `full handshake ${full} bytes, certificate ${certLen}`);
      assert.ok(resumed < certLen, `resumed handshake ${resumed} bytes, certificate ${certLen}`);
    } finally {
      fs.rmSync(file, { force: true });
    }
  });
});
