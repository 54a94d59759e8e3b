'use strict';

// Certificates: SNI with addContext (exact and wildcard names),
// setSecureContext rotation (a new connection sees the new certificate
// while an open one keeps its own), client certificates required, verified
// and refused, session resumption. Shared with node's secure server.

const { execFile } = require('node:child_process');
const tls = require('node:tls');
const common = require('../common');
const { assert } = common;
const { fixtures, startSecure, connect } = require('./tls_common');

// One HTTP/1.1 request on an open TLS socket; resolves the response text
// once it holds `until`.
function request(s, path, until = /\r\n\r\n[\s\S]*ok/) {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (d) => {
      text += d;
      if (until.test(text)) {
        s.removeListener('data', onData);
        resolve(text);
      }
    };
    s.on('data', onData);
    s.once('error', reject);
    s.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
  });
}

const ok = (req, res) => res.end('ok');

describe('TLS certificates', function () {
  afterEach(common.cleanup);

  it('SNI: addContext serves the certificate for the name (exact and *.)', async function () {
    const f = fixtures();
    const { server, port } = await startSecure({}, ok);
    server.addContext('a.example', { key: f.sniA.key, cert: f.sniA.cert });
    server.addContext('*.b.example', { key: f.sniB.key, cert: f.sniB.cert });
    const cn = async (servername) => {
      const s = await connect(port, { servername });
      const name = s.getPeerCertificate().subject.CN;
      const text = await request(s, '/');
      assert.match(text, /^HTTP\/1\.1 200/);
      s.destroy();
      return name;
    };
    assert.strictEqual(await cn('a.example'), 'a.example');
    assert.strictEqual(await cn('x.b.example'), 'wild.b.example');
    assert.strictEqual(await cn('localhost'), 'localhost');
  });

  it('setSecureContext: new connections get the new certificate, an open one keeps its own', async function () {
    const f = fixtures();
    const { server, port } = await startSecure({}, ok);
    const before = await connect(port);
    assert.strictEqual(before.getPeerCertificate().subject.CN, 'localhost');
    server.setSecureContext({ key: f.rotated.key, cert: f.rotated.cert });
    const after = await connect(port);
    assert.strictEqual(after.getPeerCertificate().subject.CN, 'localhost rotated');
    assert.match(await request(after, '/new'), /^HTTP\/1\.1 200/);
    // The connection made before the rotation still serves requests.
    assert.match(await request(before, '/old'), /^HTTP\/1\.1 200/);
    assert.strictEqual(before.getPeerCertificate().subject.CN, 'localhost');
  });

  describe('client certificates (requestCert, rejectUnauthorized)', function () {
    const who = (req, res) => {
      const s = req.socket;
      const cert = s.getPeerCertificate();
      res.end(JSON.stringify({ authorized: s.authorized, cn: cert && cert.subject ? cert.subject.CN : null, err: s.authorizationError }));
    };

    it('a certificate from the CA is accepted and seen by the handler', async function () {
      const f = fixtures();
      const { port } = await startSecure({ requestCert: true, rejectUnauthorized: true, ca: f.ca }, who);
      const s = await connect(port, { key: f.client.key, cert: f.client.cert });
      const text = await request(s, '/', /\}$/);
      const j = JSON.parse(text.slice(text.indexOf('{')));
      assert.deepStrictEqual([j.authorized, j.cn], [true, 'sluice client']);
    });

    for (const [what, opts] of [['no certificate', {}], ['a certificate from elsewhere', 'stranger']]) {
      it(`${what} is refused`, async function () {
        const f = fixtures();
        const { port } = await startSecure({ requestCert: true, rejectUnauthorized: true, ca: f.ca }, who);
        const extra = opts === 'stranger' ? { key: f.stranger.key, cert: f.stranger.cert } : opts;
        // TLS 1.3: the client finishes its side before the server checks
        // the certificate; the refusal arrives as an alert or a close.
        let s;
        try {
          s = await connect(port, extra);
        } catch (_) {
          return;
        }
        const r = await Promise.race([
          request(s, '/', /\}$/).then(() => 'answered', () => 'refused'),
          new Promise((resolve) => s.once('close', () => resolve('refused'))),
        ]);
        assert.strictEqual(r, 'refused');
      });
    }

    // As node: a certificate that does not verify completes the
    // handshake, then the server destroys the socket (no
    // 'secureConnection', nothing served, no alert; TLS 1.2: before the
    // server's Finished). No certificate at all fails the handshake with an
    // alert (node's SSL_VERIFY_FAIL_IF_NO_PEER_CERT).
    for (const [what, extra] of [['a certificate from elsewhere', 'stranger'], ['no certificate', null]]) {
      for (const version of ['TLSv1.2', 'TLSv1.3']) {
        for (const alpn of ['http/1.1', 'h2']) {
          it(`rejectUnauthorized, ${what}, ${version}, ${alpn}: ${extra ? 'the handshake completes, then the socket is destroyed' : 'the handshake fails with an alert'}`, async function () {
            const f = fixtures();
            let served = 0;
            let secure = 0;
            const { server, port } = await startSecure({ requestCert: true, rejectUnauthorized: true, ca: f.ca },
              (req, res) => { served++; res.end('no'); });
            server.on('secureConnection', () => { secure++; });
            const creds = extra === 'stranger' ? { key: f.stranger.key, cert: f.stranger.cert } : {};
            const s = common.trackSocket(tls.connect({ host: '127.0.0.1', port, ca: f.ca, servername: 'localhost',
              ...creds, maxVersion: version, minVersion: version, ALPNProtocols: [alpn] }));
            let secured = false;
            let error = null;
            let got = '';
            s.on('secureConnect', () => {
              secured = true;
              s.write(alpn === 'h2' ? 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n' : 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
            });
            s.on('data', (d) => { got += d.toString('latin1'); });
            s.on('error', (e) => { error = e; });
            await common.once(s, 'close', 10000, 'the close');
            assert.deepStrictEqual({ served, secure, got }, { served: 0, secure: 0, got: '' });
            // TLS 1.3: the client was done before the server checked its
            // certificate. TLS 1.2: the server closes before its Finished.
            // Never a handshake alert.
            assert.strictEqual(secured, version === 'TLSv1.3');
            if (extra === null) assert.match(String(error && error.code), /^ERR_SSL_/, String(error));
            else if (version === 'TLSv1.2') assert.strictEqual(error && error.code, 'ECONNRESET', String(error));
            else assert.ok(error === null || error.code === 'ECONNRESET', String(error));
          });
        }
      }
    }

    it('rejectUnauthorized: false lets an unverified certificate through, authorized false', async function () {
      const f = fixtures();
      const { port } = await startSecure({ requestCert: true, rejectUnauthorized: false, ca: f.ca }, who);
      const s = await connect(port, { key: f.stranger.key, cert: f.stranger.cert });
      const text = await request(s, '/', /\}$/);
      const j = JSON.parse(text.slice(text.indexOf('{')));
      assert.strictEqual(j.authorized, false);
      assert.strictEqual(j.cn, 'stranger');
      assert.ok(j.err, 'authorizationError set');
    });
  });

  it('session resumption: TLS 1.3 ticket (node client), TLS 1.2 (openssl s_client -reconnect)', async function () {
    const { port } = await startSecure({}, ok);
    const first = await connect(port);
    // TLS 1.3 tickets come after the handshake, with the first response.
    const session = await new Promise((resolve) => {
      first.once('session', resolve);
      request(first, '/').catch(() => {});
    });
    const second = await connect(port, { session });
    assert.strictEqual(second.isSessionReused(), true);
    assert.match(await request(second, '/again'), /^HTTP\/1\.1 200/);
    for (const v of ['-tls1_2']) {
      const out = await new Promise((resolve) => {
        const child = execFile('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, v, '-reconnect',
          '-CAfile', fixtures().caPath, '-servername', 'localhost'], { timeout: 10000 },
        (err, stdout) => resolve(String(stdout)));
        child.stdin.end();
      });
      const reused = (out.match(/^Reused,/mg) || []).length;
      assert.ok(reused >= 4, `${v}: ${reused} of 5 reconnects resumed`);
    }
  });
});
