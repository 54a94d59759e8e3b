'use strict';

// HTTPS and HTTP/2 over TLS on one port, chosen by ALPN, with real
// clients: node's https and http2, fetch (undici with the test CA), curl
// (--http1.1 and --http2 with --cacert), openssl s_client. Shared: the
// same checks run against node's http2.createSecureServer({ allowHTTP1 }).

const https = require('node:https');
const http2 = require('node:http2');
const { execFile } = require('node:child_process');
const common = require('../common');
const { assert } = common;
const { fixtures, startSecure } = require('./tls_common');

function httpsGet(port, path, opts = {}) {
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: '127.0.0.1', port, path, servername: 'localhost', ca: fixtures().ca,
      agent: false, ...opts,
    }, (res) => {
      const chunks = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () => resolve({ res, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

function h2Get(port, path, headers = {}) {
  return new Promise((resolve, reject) => {
    const client = http2.connect(`https://localhost:${port}`, { ca: fixtures().ca });
    client.on('error', reject);
    const req = client.request({ ':path': path, ...headers });
    let head;
    const chunks = [];
    req.on('response', (h) => { head = h; });
    req.on('data', (d) => chunks.push(d));
    req.on('end', () => {
      client.close();
      resolve({ headers: head, body: Buffer.concat(chunks), alpn: client.alpnProtocol });
    });
    req.on('error', reject);
    req.end();
  });
}

// openssl s_client with stdin closed after `input`; resolves its output.
function sClient(port, args, input = '') {
  return new Promise((resolve) => {
    const child = execFile('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-CAfile', fixtures().caPath, ...args],
      { timeout: 8000 }, (err, stdout, stderr) => resolve({ stdout: String(stdout), stderr: String(stderr), err }));
    child.stdin.end(input);
  });
}

function describeHandler(req, res) {
  res.setHeader('content-type', 'application/json');
  const s = req.socket;
  res.end(JSON.stringify({
    httpVersion: req.httpVersion,
    encrypted: !!s.encrypted,
    alpnProtocol: s.alpnProtocol,
    servername: s.servername,
    protocol: s.getProtocol(),
    cipher: s.getCipher(),
  }));
}

describe('TLS: HTTPS and HTTP/2 on one port (ALPN)', function () {
  afterEach(common.cleanup);

  it('node https (no ALPN offered) gets HTTP/1.1, alpnProtocol false', async function () {
    const { port } = await startSecure({}, describeHandler);
    const { res, body } = await httpsGet(port, '/a');
    assert.strictEqual(res.statusCode, 200);
    const j = JSON.parse(body);
    assert.strictEqual(j.httpVersion, '1.1');
    assert.strictEqual(j.alpnProtocol, false);
  });

  it('node https with ALPNProtocols [http/1.1] gets HTTP/1.1 with the TLS facts on req.socket', async function () {
    const { port } = await startSecure({}, describeHandler);
    const { res, body } = await httpsGet(port, '/a', { ALPNProtocols: ['http/1.1'] });
    assert.strictEqual(res.statusCode, 200);
    const j = JSON.parse(body);
    assert.strictEqual(j.httpVersion, '1.1');
    assert.strictEqual(j.encrypted, true);
    assert.strictEqual(j.alpnProtocol, 'http/1.1');
    assert.strictEqual(j.servername, 'localhost');
    assert.strictEqual(j.protocol, 'TLSv1.3');
    assert.strictEqual(j.cipher.version, 'TLSv1.3');
    assert.match(j.cipher.name, /^TLS_/);
  });

  it('node http2 (ALPN h2) gets HTTP/2 on the same port', async function () {
    const { port } = await startSecure({}, describeHandler);
    const r = await h2Get(port, '/b');
    assert.strictEqual(r.alpn, 'h2');
    assert.strictEqual(r.headers[':status'], 200);
    const j = JSON.parse(r.body);
    assert.strictEqual(j.httpVersion, '2.0');
    assert.strictEqual(j.encrypted, true);
    assert.strictEqual(j.alpnProtocol, 'h2');
    assert.strictEqual(j.protocol, 'TLSv1.3');
  });

  it("the 'stream' API over TLS (node http2 client)", async function () {
    const { server, port } = await startSecure({});
    server.on('stream', (stream, headers) => {
      stream.respond({ ':status': 200, 'x-path': headers[':path'] });
      stream.end('stream over tls');
    });
    const r = await h2Get(port, '/s');
    assert.strictEqual(r.headers['x-path'], '/s');
    assert.strictEqual(r.body.toString(), 'stream over tls');
  });

  it('fetch (undici Agent with connect.ca)', async function () {
    const undici = require('undici');  // a devDependency: node's own fetch takes no CA option
    const { port } = await startSecure({}, describeHandler);
    const dispatcher = new undici.Agent({ connect: { ca: fixtures().ca } });
    const r = await undici.fetch(`https://localhost:${port}/f`, { dispatcher });
    assert.strictEqual(r.status, 200);
    const j = await r.json();
    assert.strictEqual(j.encrypted, true);
    assert.strictEqual(j.alpnProtocol, 'http/1.1');
    await dispatcher.close();
  });

  for (const [flag, want, alpn] of [['--http1.1', '1.1', 'http/1.1'], ['--http2', '2.0', 'h2']]) {
    it(`curl ${flag} --cacert: ALPN ${alpn}`, async function () {
      const { port } = await startSecure({}, describeHandler);
      const r = await common.curl([flag, '--cacert', fixtures().caPath, `https://localhost:${port}/c`]);
      assert.strictEqual(r.code, 0, r.stderr);
      const j = JSON.parse(r.stdout);
      assert.strictEqual(j.httpVersion, want);
      assert.strictEqual(j.alpnProtocol, alpn);
    });
  }

  it('a POST body through TLS arrives whole (HTTP/1.1 and HTTP/2)', async function () {
    const body = require('node:crypto').randomBytes(300 * 1024);
    const { port } = await startSecure({}, (req, res) => {
      const h = require('node:crypto').createHash('sha256');
      req.on('data', (d) => h.update(d));
      req.on('end', () => res.end(h.digest('hex')));
    });
    const r1 = await httpsGet(port, '/p', { method: 'POST', body });
    assert.strictEqual(r1.body.toString(), common.sha256(body));
    const r2 = await new Promise((resolve, reject) => {
      const client = http2.connect(`https://localhost:${port}`, { ca: fixtures().ca });
      client.on('error', reject);
      const req = client.request({ ':path': '/p', ':method': 'POST' });
      const chunks = [];
      req.on('data', (d) => chunks.push(d));
      req.on('end', () => { client.close(); resolve(Buffer.concat(chunks)); });
      req.end(body);
    });
    assert.strictEqual(r2.toString(), common.sha256(body));
  });

  it('openssl s_client: ALPN h2 and http/1.1 both ways, SNI seen by the server', async function () {
    const { port } = await startSecure({}, describeHandler);
    const a = await sClient(port, ['-alpn', 'h2,http/1.1', '-servername', 'localhost']);
    assert.match(a.stdout, /ALPN protocol: h2/);
    assert.match(a.stdout, /Verify return code: 0 \(ok\)/);
    const b = await sClient(port, ['-alpn', 'http/1.1', '-servername', 'localhost', '-ign_eof'],
      'GET /o HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    assert.match(b.stdout, /ALPN protocol: http\/1.1/);
    assert.match(b.stdout, /"servername":"localhost"/);
  });

  it('ALPN with no common protocol: no_application_protocol alert and tlsClientError (as node)', async function () {
    const { server, port } = await startSecure({}, describeHandler);
    const seen = common.once(server, 'tlsClientError', 5000);
    const r = await sClient(port, ['-alpn', 'spdy/3']);
    assert.match(r.stdout + r.stderr, /no application protocol/);
    const [err] = await seen;
    assert.strictEqual(err.code, 'ERR_SSL_NO_APPLICATION_PROTOCOL');
  });

  it('allowHTTP1: false refuses an http/1.1-only client, still serves h2', async function () {
    const { server, port } = await startSecure({ allowHTTP1: false }, describeHandler);
    const seen = common.once(server, 'tlsClientError', 5000);
    const r = await common.curl(['--http1.1', '--cacert', fixtures().caPath, `https://localhost:${port}/x`]);
    assert.notStrictEqual(r.code, 0);
    assert.match(r.stderr, /no application protocol/);
    const [err] = await seen;
    assert.strictEqual(err.code, 'ERR_SSL_NO_APPLICATION_PROTOCOL');
    const h = await h2Get(port, '/y');
    assert.strictEqual(h.alpn, 'h2');
  });

  it("'secureConnection' for each connection, with the negotiated protocol", async function () {
    const { server, port } = await startSecure({}, describeHandler);
    const seen = [];
    server.on('secureConnection', (s) => seen.push([s.encrypted, s.alpnProtocol]));
    await httpsGet(port, '/1');
    await h2Get(port, '/2');
    await common.sleep(50);
    assert.deepStrictEqual(seen.sort(), [[true, false], [true, 'h2']]);
  });

  for (const [proto, extra] of [['h2', []], ['http/1.1', ['--h1']]]) {
    it(`h2load over TLS (ALPN ${proto}): 2,000 requests on 10 connections, all 200`, async function () {
      const { port } = await startSecure({}, (req, res) => res.end('h2load'));
      const out = await new Promise((resolve) => {
        execFile('h2load', [...extra, '-n', '2000', '-c', '10', '-m', '10', `https://127.0.0.1:${port}/`],
          { timeout: 30000 }, (err, stdout) => resolve(String(stdout)));
      });
      assert.match(out, new RegExp(`Application protocol: ${proto.replace('/', '\\/')}`), out);
      assert.match(out, /requests: 2000 total, 2000 started, 2000 done, 2000 succeeded/, out);
      assert.match(out, /status codes: 2000 2xx/, out);
    });
  }

  it('a plaintext request on the TLS port: tlsClientError, no answer in clear, server lives', async function () {
    const { server, port } = await startSecure({}, describeHandler);
    const seen = common.once(server, 'tlsClientError', 5000);
    const c = await common.rawConnect(port);
    c.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    const [err] = await seen;
    assert.match(err.code, /^ERR_SSL_/);
    await common.withTimeout(c.closedPromise, 5000, 'close');
    assert.doesNotMatch(c.data.toString('latin1'), /HTTP\/1\.1/);
    const { res } = await httpsGet(port, '/after');
    assert.strictEqual(res.statusCode, 200);
  });
});
