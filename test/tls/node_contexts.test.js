'use strict';

// Contexts made by node's own tls.createSecureContext wherever a secure
// server takes a context: addContext (shared with node's
// http2.createSecureServer, which takes them natively), setSecureContext
// (sluice takes a context there too; node takes options only), with the
// context's CA for client certificates, and contexts made before sluice
// was loaded (a child process). sluice reads their credentials from the
// SSL_CTX node keeps (docs/tls.md, "node's contexts"). SNICallback
// answers: sni_callback.test.js.

const tls = require('node:tls');
const common = require('../common');
const { assert } = common;
const { fixtures, startSecure, connect, httpsGet, h2Get } = require('./tls_common');

const describeHandler = (req, res) => res.end(`${req.url} ${req.socket.servername} ${req.httpVersion}`);

const get = (port, servername, alpn) => (alpn === 'h2' ? h2Get : httpsGet)(port, servername);

describe('TLS: contexts made by node\'s tls.createSecureContext', function () {
  afterEach(common.cleanup);

  it('addContext(name, tls.createSecureContext(...)): its certificate for that name, h1 and h2', async function () {
    const f = fixtures();
    const { server, port } = await startSecure({}, describeHandler);
    server.addContext('a.example', tls.createSecureContext({ key: f.sniA.key, cert: f.sniA.cert }));
    server.addContext('*.b.example', tls.createSecureContext({ key: f.sniB.key, cert: f.sniB.cert }));
    assert.deepStrictEqual(await get(port, 'a.example', 'http/1.1'), { cn: 'a.example', body: '/x a.example 1.1' });
    assert.deepStrictEqual(await get(port, 'z.b.example', 'h2'), { cn: 'wild.b.example', body: '/h2 z.b.example 2.0' });
    assert.deepStrictEqual(await get(port, 'localhost', 'h2'), { cn: 'localhost', body: '/h2 localhost 2.0' });
  });

  common.sluiceOnly('setSecureContext(tls.createSecureContext(...)): new connections get its certificate, ALPN stays', async function () {
    const f = fixtures();
    const { server, port } = await startSecure({}, describeHandler);
    const before = await connect(port);
    server.setSecureContext(tls.createSecureContext({ key: f.rotated.key, cert: f.rotated.cert }));
    assert.deepStrictEqual(await get(port, 'localhost', 'h2'), { cn: 'localhost rotated', body: '/h2 localhost 2.0' });
    assert.deepStrictEqual(await get(port, 'localhost', 'http/1.1'), { cn: 'localhost rotated', body: '/x localhost 1.1' });
    assert.strictEqual(before.getPeerCertificate().subject.CN, 'localhost');
    // Options again afterwards: the server's own options still apply.
    server.setSecureContext({ key: f.localhost.key, cert: f.localhost.cert });
    assert.strictEqual((await get(port, 'localhost', 'h2')).cn, 'localhost');
  });

  common.sluiceOnly('setSecureContext with a node context\'s ca: client certificates verify against it', async function () {
    const f = fixtures();
    const who = (req, res) => res.end(String(req.socket.authorized));
    const { server, port } = await startSecure({ requestCert: true, rejectUnauthorized: false }, who);
    const ask = async () => {
      const s = await connect(port, { key: f.client.key, cert: f.client.cert });
      s.write('GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
      let text = '';
      for await (const d of s) text += d;
      return text.split('\r\n\r\n')[1];
    };
    // Without ca: node's context trusts node's root certificates only.
    server.setSecureContext(tls.createSecureContext({ key: f.rotated.key, cert: f.rotated.cert }));
    assert.strictEqual(await ask(), 'false');
    server.setSecureContext(tls.createSecureContext({ key: f.rotated.key, cert: f.rotated.cert, ca: f.ca }));
    assert.strictEqual(await ask(), 'true');
  });

  common.sluiceOnly('contexts node made before sluice was loaded serve: SNICallback, addContext, setSecureContext', async function () {
    const f = fixtures();
    const r = await common.runNodeScript(`
      const tls = require('node:tls');
      const fs = require('node:fs');
      const file = (p) => fs.readFileSync(p);
      const a = tls.createSecureContext({ key: file(${JSON.stringify(f.sniA.keyPath)}), cert: file(${JSON.stringify(f.sniA.certPath)}) });
      const rotated = tls.createSecureContext({ key: file(${JSON.stringify(f.rotated.keyPath)}), cert: file(${JSON.stringify(f.rotated.certPath)}) });
      const sluice = require('.');
      const base = { key: file(${JSON.stringify(f.localhost.keyPath)}), cert: file(${JSON.stringify(f.localhost.certPath)}) };
      const s1 = sluice.createSecureServer({ ...base, SNICallback: (n, cb) => setTimeout(() => cb(null, n === 'a.example' ? a : null), 10) }, (q, s) => s.end('1'));
      const s2 = sluice.createSecureServer(base, (q, s) => s.end('2'));
      s2.addContext('a.example', a);
      s2.setSecureContext(rotated);
      const cn = (port, servername) => new Promise((resolve, reject) => {
        const c = tls.connect({ host: '127.0.0.1', port, servername, ca: file(${JSON.stringify(f.caPath)}) }, () => {
          resolve(c.getPeerCertificate().subject.CN);
          c.end();
        });
        c.on('error', reject);
      });
      s1.listen(0, '127.0.0.1', () => s2.listen(0, '127.0.0.1', async () => {
        const out = [await cn(s1.address().port, 'a.example'), await cn(s2.address().port, 'a.example'),
          await cn(s2.address().port, 'localhost')];
        console.log(JSON.stringify(out));
        s1.close();
        s2.close();
      }));
    `);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.deepStrictEqual(JSON.parse(r.stdout), ['a.example', 'a.example', 'localhost rotated']);
  });
});
