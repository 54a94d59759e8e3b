'use strict';

// node's TLSSocket methods on req.socket of a secure server:
// getCertificate / getX509Certificate / getPeerX509Certificate,
// getSession / getTLSTicket / isSessionReused (resumption by TLS 1.3
// ticket, TLS 1.2 ticket, TLS 1.2 session id: node's client `session`
// option and openssl s_client -reconnect), getSharedSigalgs,
// getEphemeralKeyInfo, exportKeyingMaterial (equal to what the client
// derives). Shared with node's http2.createSecureServer({ allowHTTP1 }).

const tls = require('node:tls');
const http2 = require('node:http2');
const crypto = require('node:crypto');
const { execFile } = require('node:child_process');
const common = require('../common');
const { assert } = common;
const { fixtures, startSecure } = require('./tls_common');

const EKM_CONTEXT = Buffer.from('sluice ekm context');

// What a handler sees of its socket's TLS side.
function tlsFacts(req, res) {
  const s = req.socket;
  const x = s.getX509Certificate();
  const peer = s.getPeerX509Certificate();
  const session = s.getSession();
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({
    cn: s.getCertificate().subject.CN,
    x509: x instanceof crypto.X509Certificate ? x.subject : null,
    peer: peer ? peer.subject : null,
    reused: s.isSessionReused(),
    session: Buffer.isBuffer(session) && session.length > 0,
    ephemeral: s.getEphemeralKeyInfo(),
    sigalgs: s.getSharedSigalgs(),
    ekm: s.exportKeyingMaterial(32, 'EXPORTER-sluice-test', EKM_CONTEXT).toString('hex'),
    ekmNoContext: s.exportKeyingMaterial(16, 'EXPORTER-sluice-test').toString('hex'),
  }));
}

// A TLS client, secure; the sessions the server gives (TLS 1.2: in the
// handshake; TLS 1.3: tickets after it) are pushed onto `sessions`.
function connect(port, opts = {}, sessions = []) {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, ca: fixtures().ca, servername: 'localhost', ALPNProtocols: ['http/1.1'], ...opts });
    common.trackSocket(s);
    s.on('session', (sess) => sessions.push(sess));
    s.once('secureConnect', () => resolve(s));
    s.once('error', reject);
  });
}

// GET / on an open TLS socket; resolves the JSON body.
function getFacts(s) {
  return new Promise((resolve, reject) => {
    let text = '';
    s.setEncoding('latin1');
    s.on('data', (d) => {
      text += d;
      const i = text.indexOf('\r\n\r\n');
      if (i >= 0 && text.endsWith('}')) resolve(JSON.parse(text.slice(i + 4)));
    });
    s.once('error', reject);
    s.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
  });
}

function sClient(port, args) {
  return new Promise((resolve) => {
    const child = execFile('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-CAfile', fixtures().caPath,
      '-servername', 'localhost', ...args], { timeout: 10000 }, (err, stdout) => resolve(String(stdout)));
    child.stdin.end();
  });
}

describe('TLS socket methods', function () {
  afterEach(common.cleanup);

  it('certificates, sigalgs, ephemeral key info, keying material equal to the client\'s (HTTP/1.1)', async function () {
    const f = fixtures();
    const { port } = await startSecure({ requestCert: true, rejectUnauthorized: true, ca: f.ca }, tlsFacts);
    const s = await connect(port, { key: f.client.key, cert: f.client.cert });
    const j = await getFacts(s);
    assert.strictEqual(j.cn, 'localhost');
    assert.strictEqual(j.x509, 'CN=localhost');
    assert.strictEqual(j.peer, 'CN=sluice client');
    assert.strictEqual(j.reused, false);
    assert.strictEqual(j.session, true);
    assert.strictEqual(j.ephemeral, null);
    assert.ok(j.sigalgs.includes('ECDSA+SHA256'), j.sigalgs.join());
    assert.strictEqual(j.ekm, s.exportKeyingMaterial(32, 'EXPORTER-sluice-test', EKM_CONTEXT).toString('hex'));
    assert.strictEqual(j.ekmNoContext, s.exportKeyingMaterial(16, 'EXPORTER-sluice-test').toString('hex'));
    assert.notStrictEqual(j.ekm.slice(0, 32), j.ekmNoContext);
  });

  it('the same over HTTP/2 (compat req.socket), no client certificate', async function () {
    const { port } = await startSecure({}, tlsFacts);
    const client = http2.connect(`https://localhost:${port}`, { ca: fixtures().ca });
    after(() => client.destroy());
    const j = await new Promise((resolve, reject) => {
      const req = client.request({ ':path': '/' });
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (d) => { body += d; });
      req.on('end', () => resolve(JSON.parse(body)));
      req.on('error', reject);
    });
    assert.strictEqual(j.cn, 'localhost');
    assert.strictEqual(j.peer, null);
    assert.strictEqual(j.ekm, client.socket.exportKeyingMaterial(32, 'EXPORTER-sluice-test', EKM_CONTEXT).toString('hex'));
    client.close();
  });

  it('exportKeyingMaterial checks its arguments as node', async function () {
    let thrown = null;
    const { port } = await startSecure({}, (req, res) => {
      const s = req.socket;
      thrown = [];
      for (const args of [[-1, 'x'], [16, 5], [16, 'x', 'not a buffer']]) {
        try { s.exportKeyingMaterial(...args); thrown.push(null); } catch (e) { thrown.push(e.code); }
      }
      res.end('ok');
    });
    const s = await connect(port);
    s.write('GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    await new Promise((resolve) => s.once('end', resolve).resume());
    assert.deepStrictEqual(thrown, ['ERR_OUT_OF_RANGE', 'ERR_INVALID_ARG_TYPE', 'ERR_INVALID_ARG_TYPE']);
  });

  // node keeps no session cache of its own (its 'newSession' /
  // 'resumeSession' events are the store), so session ids resume on
  // sluice only (OpenSSL's internal cache, docs/tls.md).
  for (const [what, opts, test] of [
    ['TLS 1.3 ticket', {}, it],
    ['TLS 1.2 ticket', { maxVersion: 'TLSv1.2' }, it],
    ['TLS 1.2 session id (tickets off by secureOptions)', { maxVersion: 'TLSv1.2', secureOptions: crypto.constants.SSL_OP_NO_TICKET }, common.sluiceOnly],
  ]) {
    test(`resumption, ${what}: the client's session option, isSessionReused() on both sides`, async function () {
      const client = {};
      const { port } = await startSecure(opts, tlsFacts);
      const sessions = [];
      const first = await connect(port, client, sessions);
      const j1 = await getFacts(first);
      assert.strictEqual(j1.reused, false);
      await common.withTimeout((async () => { while (sessions.length === 0) await new Promise((r) => setTimeout(r, 5)); })(), 5000, 'session');
      const second = await connect(port, { ...client, session: sessions[sessions.length - 1] });
      assert.strictEqual(second.isSessionReused(), true);
      const j2 = await getFacts(second);
      assert.strictEqual(j2.reused, true);
      assert.strictEqual(j2.cn, 'localhost');
    });
  }

  common.sluiceOnly('openssl s_client -reconnect resumes TLS 1.2 by session id (tickets off)', async function () {
    const { port } = await startSecure({ maxVersion: 'TLSv1.2', secureOptions: crypto.constants.SSL_OP_NO_TICKET }, tlsFacts);
    const out = await sClient(port, ['-tls1_2', '-reconnect', '-no_ticket']);
    const reused = (out.match(/^Reused,/mg) || []).length;
    assert.ok(reused >= 4, `${reused} of 5 reconnects resumed`);
  });

  // A session from a first connection to `port` (TLS 1.2 or 1.3).
  async function sessionFrom(port, opts = {}) {
    const sessions = [];
    const s = await connect(port, opts, sessions);
    await getFacts(s);
    await common.withTimeout((async () => { while (sessions.length === 0) await new Promise((r) => setTimeout(r, 5)); })(), 5000, 'session');
    s.destroy();
    return sessions[sessions.length - 1];
  }

  async function resumes(port, session, opts = {}) {
    const s = await connect(port, { ...opts, session });
    const reused = s.isSessionReused();
    s.destroy();
    return reused;
  }

  it('getTicketKeys / setTicketKeys: 48 bytes; new keys end old tickets, keys moved to another server resume there', async function () {
    const a = await startSecure({ sessionIdContext: 'tickets' }, tlsFacts);
    const b = await startSecure({ sessionIdContext: 'tickets' }, tlsFacts);
    const keys = a.server.getTicketKeys();
    assert.ok(Buffer.isBuffer(keys) && keys.length === 48);
    assert.notDeepStrictEqual(b.server.getTicketKeys(), keys);
    for (const version of ['TLSv1.3', 'TLSv1.2']) {
      const opts = { maxVersion: version };
      const session = await sessionFrom(a.port, opts);
      assert.strictEqual(await resumes(a.port, session, opts), true, version);
      assert.strictEqual(await resumes(b.port, session, opts), false, version);
      b.server.setTicketKeys(keys);
      assert.deepStrictEqual(b.server.getTicketKeys(), keys);
      assert.strictEqual(await resumes(b.port, session, opts), true, `${version} after setTicketKeys`);
      b.server.setTicketKeys(crypto.randomBytes(48));
    }
    a.server.setTicketKeys(crypto.randomBytes(48));
    const session = await sessionFrom(b.port);
    assert.strictEqual(await resumes(a.port, session), false);
  });

  common.sluiceOnly('ticket keys interoperate with node: a node server resumes sluice\'s tickets and sluice resumes node\'s', async function () {
    // Node 22 (22.23.5) and 24 (24.22.3) resume neither way, TLS 1.2 or
    // 1.3: their sessions carry a 32-byte context derived from the
    // sessionIdContext string instead of the string (docs/tls.md), and
    // OpenSSL refuses a session from another context. Node 20 and 26
    // interoperate (tested).
    if (['22', '24'].includes(process.versions.node.split('.')[0])) this.skip();
    const f = fixtures();
    const nodeServer = http2.createSecureServer({ key: f.localhost.key, cert: f.localhost.cert, allowHTTP1: true, sessionIdContext: 'tickets' },
      (req, res) => res.end('node'));
    const nodePort = await common.listenLocal(nodeServer);
    after(() => nodeServer.close());
    const sluice = await startSecure({ sessionIdContext: 'tickets' }, tlsFacts);
    nodeServer.setTicketKeys(sluice.server.getTicketKeys());
    for (const version of ['TLSv1.3', 'TLSv1.2']) {
      const opts = { maxVersion: version };
      assert.strictEqual(await resumes(nodePort, await sessionFrom(sluice.port, opts), opts), true, `${version} sluice -> node`);
    }
    sluice.server.setTicketKeys(crypto.randomBytes(48));
    nodeServer.setTicketKeys(crypto.randomBytes(48));
    sluice.server.setTicketKeys(nodeServer.getTicketKeys());
    for (const version of ['TLSv1.3', 'TLSv1.2']) {
      const opts = { maxVersion: version };
      const sessions = [];
      const s = await connect(nodePort, opts, sessions);
      s.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await common.withTimeout((async () => { while (sessions.length === 0) await new Promise((r) => setTimeout(r, 5)); })(), 5000, 'node session');
      s.destroy();
      assert.strictEqual(await resumes(sluice.port, sessions[sessions.length - 1], opts), true, `${version} node -> sluice`);
    }
  });

  common.sluiceOnly('setTicketKeys takes 48 bytes only', async function () {
    const { server } = await startSecure({}, tlsFacts);
    assert.throws(() => server.setTicketKeys(Buffer.alloc(47)), { code: 'ERR_INVALID_ARG_VALUE' });
    assert.throws(() => server.setTicketKeys('x'.repeat(48)), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => common.impl.createSecureServer({ key: fixtures().localhost.key, cert: fixtures().localhost.cert, ticketKeys: Buffer.alloc(16) }),
      { code: 'ERR_INVALID_ARG_VALUE' });
  });
});
