'use strict';

// sluice.features.http3: true where node's OpenSSL carries the QUIC server
// API (OpenSSL 3.5: Node >= 22.20, 24, 26), false with a reason elsewhere
// (Node 20, 22 before 22.20) — where the addon still loads (its QUIC
// references are weak) and serves HTTP/1.1 and HTTP/2 over TLS as ever.

const http2 = require('node:http2');
const common = require('../common');
const { assert } = common;
const { fixtures } = require('../tls/tls_common');

const maybe = common.isSluice ? describe : describe.skip;

// OpenSSL 3.5 or later, as node reports the one it runs.
function opensslHasQuicServer() {
  const m = /^(\d+)\.(\d+)/.exec(process.versions.openssl);
  return Number(m[1]) > 3 || (Number(m[1]) === 3 && Number(m[2]) >= 5);
}

maybe('sluice.features.http3 [sluice-only]', function () {
  const sluice = require('../..');
  afterEach(() => common.cleanup());

  it(`is ${opensslHasQuicServer()} on this node (OpenSSL ${process.versions.openssl})`, function () {
    assert.strictEqual(sluice.features.http3, opensslHasQuicServer());
    if (sluice.features.http3) {
      assert.strictEqual(sluice.features.http3Reason, null);
    } else {
      assert.match(sluice.features.http3Reason, /OpenSSL/);
      assert.match(sluice.features.http3Reason, /3\.5/);
    }
  });

  it('without QUIC: http3 is refused with the reason; TLS HTTP/2 and HTTP/1.1 still serve', async function () {
    if (sluice.features.http3) this.skip();
    const { localhost, ca } = fixtures();
    assert.throws(() => sluice.createSecureServer({ key: localhost.key, cert: localhost.cert, http3: true }),
      (e) => e.code === 'ERR_SLUICE_HTTP3_UNAVAILABLE' && /OpenSSL/.test(e.message));
    const server = sluice.createSecureServer({ key: localhost.key, cert: localhost.cert },
      (req, res) => res.end(`v${req.httpVersion}`));
    const port = await common.listenLocal(server);
    const client = http2.connect(`https://127.0.0.1:${port}`, { ca, servername: 'localhost' });
    try {
      const body = await new Promise((resolve, reject) => {
        const s = client.request({ ':path': '/' });
        let b = '';
        s.setEncoding('utf8');
        s.on('data', (c) => { b += c; });
        s.on('end', () => resolve(b));
        s.on('error', reject);
      });
      assert.strictEqual(body, 'v2.0');
    } finally {
      client.close();
    }
    const r = await common.curl(['-sk', '--http1.1', `https://127.0.0.1:${port}/`]);
    assert.strictEqual(r.stdout.toString(), 'v1.1');
  });

  it('http3 option: bad values are refused with ERR_INVALID_ARG_*', function () {
    if (!sluice.features.http3) this.skip();
    const { localhost } = fixtures();
    const mk = (http3) => sluice.createSecureServer({ key: localhost.key, cert: localhost.cert, http3 });
    assert.throws(() => mk('yes'), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => mk({ idleTimeout: -1 }), { code: 'ERR_INVALID_ARG_VALUE' });
    assert.throws(() => mk({ port: 70000 }), { code: 'ERR_SOCKET_BAD_PORT' });
  });
});
