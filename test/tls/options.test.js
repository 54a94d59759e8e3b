'use strict';

// node's TLS options that map onto OpenSSL context settings: secureOptions
// (SSL_OP_* bits), secureProtocol (a method name fixing the versions),
// dhparam ('auto' or PEM parameters: DHE suites), crl (client certificates
// checked against revocation lists), sessionIdContext (TLS 1.2 sessions
// resume only where the context matches). Shared with node's secure
// server; the refusals that are sluice's own are marked.

const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const { execFileSync, execFile } = require('node:child_process');
const common = require('../common');
const { assert } = common;
const { fixtures, startSecure, connect } = require('./tls_common');

let extra = null;

// An RSA certificate (DHE suites need one), DH parameters (RFC 7919
// ffdhe2048: no slow generation), and a client certificate the test CA
// has revoked with its CRL. Made once, next to tls_common's fixtures.
function extras() {
  if (extra) return extra;
  const f = fixtures();
  const dir = path.join(f.dir, 'options');
  fs.mkdirSync(dir, { recursive: true });
  const run = (args) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  run(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'rsa.key', '-out', 'rsa.pem', '-days', '2',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1']);
  run(['genpkey', '-genparam', '-algorithm', 'DH', '-pkeyopt', 'group:ffdhe2048', '-out', 'dh.pem']);
  run(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'revoked.key',
    '-out', 'revoked.csr', '-subj', '/CN=revoked client']);
  fs.writeFileSync(path.join(dir, 'revoked.ext'), 'extendedKeyUsage=clientAuth\n');
  run(['x509', '-req', '-in', 'revoked.csr', '-CA', path.join(f.dir, 'ca.pem'), '-CAkey', path.join(f.dir, 'ca.key'),
    '-CAcreateserial', '-out', 'revoked.pem', '-days', '2', '-extfile', 'revoked.ext']);
  fs.writeFileSync(path.join(dir, 'ca.cnf'), '[ca]\ndefault_ca=d\n[d]\ndatabase=index.txt\ndefault_md=sha256\ndefault_crl_days=2\n');
  fs.writeFileSync(path.join(dir, 'index.txt'), '');
  const ca = ['-config', 'ca.cnf', '-keyfile', path.join(f.dir, 'ca.key'), '-cert', path.join(f.dir, 'ca.pem')];
  run(['ca', ...ca, '-revoke', 'revoked.pem']);
  run(['ca', ...ca, '-gencrl', '-out', 'crl.pem']);
  const read = (n) => fs.readFileSync(path.join(dir, n));
  extra = {
    rsa: { key: read('rsa.key'), cert: read('rsa.pem'), certPath: path.join(dir, 'rsa.pem') },
    dh: read('dh.pem'),
    revoked: { key: read('revoked.key'), cert: read('revoked.pem') },
    crl: read('crl.pem'),
  };
  return extra;
}

// One request on an open TLS socket: the response text, or 'refused'
// when the server closes or fails it (a TLS 1.3 client learns of a
// refused certificate only after its side of the handshake).
function request(s) {
  return new Promise((resolve) => {
    let text = '';
    s.on('data', (d) => { text += d; });
    s.once('end', () => resolve(text || 'refused'));
    s.once('error', () => resolve('refused'));
    s.once('close', () => resolve(text || 'refused'));
    s.write('GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
  });
}

function sClient(port, args) {
  return new Promise((resolve) => {
    const child = execFile('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, ...args], { timeout: 8000 },
      (err, stdout, stderr) => resolve(String(stdout) + String(stderr)));
    child.stdin.end();
  });
}

const ok = (req, res) => res.end('ok');

describe('TLS options: secureOptions, secureProtocol, dhparam, crl, sessionIdContext', function () {
  afterEach(common.cleanup);

  it('secureOptions: SSL_OP_NO_TLSv1_3 leaves TLS 1.2; a TLS 1.3-only client is refused', async function () {
    const { port } = await startSecure({ secureOptions: crypto.constants.SSL_OP_NO_TLSv1_3 }, ok);
    const s = await connect(port);
    assert.strictEqual(s.getProtocol(), 'TLSv1.2');
    assert.match(await request(s), /^HTTP\/1\.1 200/);
    await assert.rejects(connect(port, { minVersion: 'TLSv1.3' }));
  });

  it('secureProtocol: TLSv1_2_method fixes the version at TLS 1.2', async function () {
    const { port } = await startSecure({ secureProtocol: 'TLSv1_2_method' }, ok);
    const s = await connect(port);
    assert.strictEqual(s.getProtocol(), 'TLSv1.2');
    await assert.rejects(connect(port, { minVersion: 'TLSv1.3' }));
    const t = await startSecure({ secureProtocol: 'TLS_method' }, ok);
    assert.strictEqual((await connect(t.port)).getProtocol(), 'TLSv1.3');
  });

  it('secureProtocol: node\'s errors for unknown methods and version conflicts', function () {
    const make = common.isSluice ? common.impl.createSecureServer : require('node:http2').createSecureServer;
    const f = fixtures();
    assert.throws(() => make({ key: f.localhost.key, cert: f.localhost.cert, secureProtocol: 'bogus_method' }),
      { code: 'ERR_TLS_INVALID_PROTOCOL_METHOD' });
    assert.throws(() => make({ key: f.localhost.key, cert: f.localhost.cert, secureProtocol: 'TLSv1_2_method', minVersion: 'TLSv1.3' }),
      { code: 'ERR_TLS_PROTOCOL_VERSION_CONFLICT' });
  });

  common.sluiceOnly('secureProtocol: a client method is refused (ERR_TLS_INVALID_PROTOCOL_METHOD)', function () {
    const f = fixtures();
    assert.throws(() => common.impl.createSecureServer({ key: f.localhost.key, cert: f.localhost.cert, secureProtocol: 'TLSv1_2_client_method' }),
      { code: 'ERR_TLS_INVALID_PROTOCOL_METHOD' });
  });

  it('dhparam: DHE suites only with it ("auto" or PEM parameters), openssl s_client -cipher DHE-RSA-…', async function () {
    const x = extras();
    const args = ['-tls1_2', '-cipher', 'DHE-RSA-AES128-GCM-SHA256', '-CAfile', x.rsa.certPath, '-servername', 'localhost'];
    const base = { key: x.rsa.key, cert: x.rsa.cert };
    const none = await startSecure(base, ok);
    assert.doesNotMatch(await sClient(none.port, args), /Server Temp Key: DH/);
    for (const dhparam of ['auto', x.dh]) {
      const { port } = await startSecure({ ...base, dhparam }, ok);
      const out = await sClient(port, args);
      assert.match(out, /Server Temp Key: DH, 2048 bits/);
      assert.match(out, /Cipher is DHE-RSA-AES128-GCM-SHA256/);
    }
  });

  it('crl: a revoked client certificate is refused, a valid one accepted', async function () {
    const f = fixtures();
    const x = extras();
    const { port } = await startSecure({ requestCert: true, rejectUnauthorized: true, ca: f.ca, crl: x.crl },
      (req, res) => res.end(`cn=${req.socket.getPeerCertificate().subject.CN}`));
    const good = await connect(port, { key: f.client.key, cert: f.client.cert });
    assert.match(await request(good), /cn=sluice client/);
    let r = 'refused';
    try {
      r = await request(await connect(port, { key: x.revoked.key, cert: x.revoked.cert }));
    } catch (_) { /* refused during the handshake */ }
    assert.strictEqual(r, 'refused');
  });

  it('sessionIdContext: TLS 1.2 tickets resume across servers sharing ticketKeys only with the same context', async function () {
    const ticketKeys = crypto.randomBytes(48);
    const opts = (sessionIdContext) => ({ ticketKeys, sessionIdContext, maxVersion: 'TLSv1.2' });
    const a = await startSecure(opts('shared'), ok);
    const b = await startSecure(opts('shared'), ok);
    const c = await startSecure(opts('other'), ok);
    const first = await connect(a.port);
    const session = first.getSession();
    first.destroy();
    assert.ok(session, 'a TLS 1.2 session');
    const onB = await connect(b.port, { session });
    assert.strictEqual(onB.isSessionReused(), true);
    const onC = await connect(c.port, { session });
    assert.strictEqual(onC.isSessionReused(), false);
  });
});
