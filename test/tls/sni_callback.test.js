'use strict';

// SNICallback(servername, cb) as node's: the handshake waits at the
// ClientHello until cb answers — at once or later (setTimeout), with a
// context for the name, nothing (the default certificate) or an error
// ('tlsClientError' with that error). A callback that never answers is cut
// by handshakeTimeout, a client that leaves while it waits is reported
// gone, and a late answer to a closed connection does nothing. Clients:
// node's tls / https / http2, openssl s_client -servername. Shared with
// node's http2.createSecureServer; the contexts are node's own
// (tls.createSecureContext) on both, as node's docs and ACME or
// multi-tenant libraries make them, even per handshake inside the
// callback. sluice reads their credentials from the SSL_CTX node keeps.

const tls = require('node:tls');
const { execFile } = require('node:child_process');
const common = require('../common');
const { assert } = common;
const { fixtures, startSecure, httpsGet, h2Get } = require('./tls_common');

const createContext = tls.createSecureContext;

// A TLS client for `servername` (none when null); resolves
// { cn, alpn, socket } once secure, rejects on error.
function handshake(port, servername, extra = {}) {
  return new Promise((resolve, reject) => {
    const opts = { host: '127.0.0.1', port, ca: fixtures().ca, ALPNProtocols: ['h2', 'http/1.1'], ...extra };
    if (servername !== null) opts.servername = servername;
    else opts.checkServerIdentity = () => undefined;
    const s = tls.connect(opts);
    common.trackSocket(s);
    s.once('secureConnect', () => resolve({ cn: s.getPeerCertificate().subject.CN, alpn: s.alpnProtocol, socket: s }));
    s.once('error', reject);
  });
}

function sClient(port, servername) {
  return new Promise((resolve) => {
    const child = execFile('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-CAfile', fixtures().caPath,
      '-servername', servername, '-alpn', 'http/1.1', '-ign_eof'], { timeout: 8000 },
    (err, stdout) => resolve(String(stdout)));
    child.stdin.end(`GET /s HTTP/1.1\r\nHost: ${servername}\r\nConnection: close\r\n\r\n`);
  });
}

async function waitFor(cond) {
  while (!cond()) await new Promise((resolve) => setTimeout(resolve, 5));
}

const describeHandler = (req, res) => res.end(`${req.url} ${req.socket.servername} ${req.httpVersion}`);

describe('TLS: SNICallback', function () {
  afterEach(common.cleanup);

  // a.example at once, *.b.example after a timer, anything else the default.
  function sniServer(extra = {}) {
    const f = fixtures();
    const a = createContext({ key: f.sniA.key, cert: f.sniA.cert });
    const b = createContext({ key: f.sniB.key, cert: f.sniB.cert });
    const names = [];
    const SNICallback = (name, cb) => {
      names.push(name);
      if (name === 'a.example') cb(null, a);
      else if (/\.b\.example$/.test(name)) setTimeout(() => cb(null, b), 30);
      else cb(null);
    };
    return { names, options: { SNICallback, ...extra } };
  }

  it('serves the context the callback gives, sync and async, several names (node tls, https, http2)', async function () {
    const { names, options } = sniServer();
    const { port } = await startSecure(options, describeHandler);
    assert.strictEqual((await handshake(port, 'a.example')).cn, 'a.example');
    assert.strictEqual((await handshake(port, 'x.b.example')).cn, 'wild.b.example');
    assert.strictEqual((await handshake(port, 'localhost')).cn, 'localhost');
    const h1 = await httpsGet(port, 'y.b.example');
    assert.deepStrictEqual(h1, { cn: 'wild.b.example', body: '/x y.b.example 1.1' });
    const h2 = await h2Get(port, 'a.example');
    assert.deepStrictEqual(h2, { cn: 'a.example', body: '/h2 a.example 2.0' });
    // Handshakes in parallel, each waiting for its own answer.
    const many = await Promise.all(['a.example', 'p.b.example', 'localhost', 'q.b.example']
      .map((n) => handshake(port, n).then((r) => r.cn)));
    assert.deepStrictEqual(many, ['a.example', 'wild.b.example', 'localhost', 'wild.b.example']);
    assert.deepStrictEqual(names.slice(0, 6), ['a.example', 'x.b.example', 'localhost', 'y.b.example', 'a.example', 'a.example'].slice(0, 5).concat(names[5]));
    assert.ok(names.includes('q.b.example'));
  });

  it('openssl s_client -servername: the certificate and the response for each name', async function () {
    const { options } = sniServer();
    const { port } = await startSecure(options, describeHandler);
    const a = await sClient(port, 'a.example');
    assert.match(a, /subject=.*CN\s*=\s*a\.example/);
    assert.match(a, /Verify return code: 0 \(ok\)/);
    assert.match(a, /\/s a\.example 1\.1/);
    const b = await sClient(port, 'z.b.example');
    assert.match(b, /subject=.*CN\s*=\s*wild\.b\.example/);
    assert.match(b, /\/s z\.b\.example 1\.1/);
  });

  it('no server name: the callback is not called, the default certificate is served', async function () {
    const { names, options } = sniServer();
    const { port } = await startSecure(options, describeHandler);
    const r = await handshake(port, null);
    assert.strictEqual(r.cn, 'localhost');
    assert.deepStrictEqual(names, []);
  });

  it('cb(err): tlsClientError with that error, the client sees the handshake fail, the server keeps serving', async function () {
    const boom = new Error('no such tenant');
    boom.code = 'E_TENANT';
    const { port, server } = await startSecure({
      SNICallback: (name, cb) => (name === 'bad.example' ? setImmediate(() => cb(boom)) : cb(null)),
    }, describeHandler);
    const seen = common.once(server, 'tlsClientError', 5000);
    await assert.rejects(handshake(port, 'bad.example'));
    const [err, socket] = await seen;
    assert.strictEqual(err, boom);
    assert.ok(socket, 'the socket is passed');
    assert.strictEqual((await handshake(port, 'localhost')).cn, 'localhost');
  });

  it('a callback that never answers is cut by handshakeTimeout; a late answer does nothing', async function () {
    const calls = [];
    const { port, server } = await startSecure({
      handshakeTimeout: 300,
      SNICallback: (name, cb) => { calls.push(cb); },
    }, describeHandler);
    const seen = common.once(server, 'tlsClientError', 5000);
    const client = handshake(port, 'a.example');
    client.catch(() => {});
    const [err] = await seen;
    assert.strictEqual(err.code, 'ERR_TLS_HANDSHAKE_TIMEOUT');
    await assert.rejects(client);
    calls[0](null, createContext({ key: fixtures().sniA.key, cert: fixtures().sniA.cert }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The server is fine: a handshake that gets its answer completes.
    const ok = handshake(port, 'localhost');
    await common.withTimeout(waitFor(() => calls.length === 2), 2000, 'second SNICallback');
    calls[1](null);
    assert.strictEqual((await ok).cn, 'localhost');
  });

  it('the client leaves while the callback waits: tlsClientError ECONNRESET, a late answer does nothing', async function () {
    let pending = null;
    const { port, server } = await startSecure({
      SNICallback: (name, cb) => { pending = cb; },
    }, describeHandler);
    const seen = common.once(server, 'tlsClientError', 5000);
    const s = tls.connect({ host: '127.0.0.1', port, servername: 'a.example', ca: fixtures().ca });
    s.on('error', () => {});
    await common.withTimeout(waitFor(() => pending !== null), 5000, 'SNICallback');
    s.destroy();
    const [err] = await seen;
    assert.strictEqual(err.code, 'ECONNRESET');
    pending(null, createContext({ key: fixtures().sniA.key, cert: fixtures().sniA.cert }));
    await new Promise((resolve) => setTimeout(resolve, 50));
  });

  it('node\'s idiom: cb(null, tls.createSecureContext(...)) made per handshake, at once or after a delay, h1 and h2 by ALPN', async function () {
    const f = fixtures();
    const SNICallback = (name, cb) => {
      const pair = name === 'a.example' ? f.sniA : f.sniB;
      const answer = () => cb(null, tls.createSecureContext({ key: pair.key, cert: pair.cert }));
      if (name.startsWith('late.')) setTimeout(answer, 40);
      else answer();
    };
    const { port } = await startSecure({ SNICallback }, describeHandler);
    assert.deepStrictEqual(await httpsGet(port, 'a.example'), { cn: 'a.example', body: '/x a.example 1.1' });
    assert.deepStrictEqual(await h2Get(port, 'a.example'), { cn: 'a.example', body: '/h2 a.example 2.0' });
    assert.deepStrictEqual(await httpsGet(port, 'late.b.example'), { cn: 'wild.b.example', body: '/x late.b.example 1.1' });
    assert.deepStrictEqual(await h2Get(port, 'late.b.example'), { cn: 'wild.b.example', body: '/h2 late.b.example 2.0' });
    const alpn = await Promise.all([
      handshake(port, 'a.example', { ALPNProtocols: ['http/1.1'] }),
      handshake(port, 'late.b.example', { ALPNProtocols: ['h2'] }),
    ]);
    assert.deepStrictEqual(alpn.map((r) => [r.cn, r.alpn]), [['a.example', 'http/1.1'], ['wild.b.example', 'h2']]);
  });

  it('an answer with the native half of node\'s context (ctx.context), as node accepts it', async function () {
    const f = fixtures();
    const ctx = tls.createSecureContext({ key: f.sniA.key, cert: f.sniA.cert });
    const { port } = await startSecure({ SNICallback: (name, cb) => setImmediate(() => cb(null, ctx.context)) }, describeHandler);
    assert.deepStrictEqual(await h2Get(port, 'a.example'), { cn: 'a.example', body: '/h2 a.example 2.0' });
  });

  common.sluiceOnly('sluice.createSecureContext() results (and their .context) serve as well', async function () {
    const f = fixtures();
    const ours = common.impl.createSecureContext({ key: f.sniA.key, cert: f.sniA.cert });
    assert.ok(ours instanceof tls.SecureContext);
    const { port, server } = await startSecure({ SNICallback: (name, cb) => cb(null, ours) }, describeHandler);
    assert.strictEqual((await handshake(port, 'a.example')).cn, 'a.example');
    server._SNICallback = (name, cb) => cb(null, ours.context);
    assert.strictEqual((await handshake(port, 'a.example')).cn, 'a.example');
  });

  common.sluiceOnly('a closed node context (SecureContext#close) fails that handshake with ERR_SLUICE_TLS_CONTEXT', async function () {
    const f = fixtures();
    const ctx = tls.createSecureContext({ key: f.sniA.key, cert: f.sniA.cert });
    ctx.context.close();
    const { port, server } = await startSecure({
      SNICallback: (name, cb) => cb(null, name === 'a.example' ? ctx : undefined),
    }, describeHandler);
    const seen = common.once(server, 'tlsClientError', 5000);
    await assert.rejects(handshake(port, 'a.example'));
    const [err] = await seen;
    assert.strictEqual(err.code, 'ERR_SLUICE_TLS_CONTEXT');
    assert.strictEqual((await handshake(port, 'localhost')).cn, 'localhost');
  });

  common.sluiceOnly('SNICallback must be a function: ERR_INVALID_ARG_TYPE', function () {
    assert.throws(() => common.impl.createSecureServer({ SNICallback: 'nope' }), { code: 'ERR_INVALID_ARG_TYPE' });
  });
});
