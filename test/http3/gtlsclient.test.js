'use strict';

// HTTP/3 against Debian's ngtcp2 client (gtlsclient): GET, HEAD and POST
// through the 'stream' and 'request' handlers, 100 concurrent requests,
// Alt-Svc on the TCP protocols, server.close() (GOAWAY), idle timeout,
// and garbage datagrams. [sluice-only]: node has no HTTP/3 server. Skipped
// where node's OpenSSL has no QUIC server (Node 20, 22 before 22.20; see
// features.test.js there) or gtlsclient is missing.

const crypto = require('node:crypto');
const dgram = require('node:dgram');
const http2 = require('node:http2');
const https = require('node:https');
const common = require('../common');
const { assert } = common;
const { h3, haveClient, startH3Server, gtls } = require('./h3common');
const { fixtures } = require('../tls/tls_common');

const run = common.isSluice && h3 && haveClient ? describe : describe.skip;

function sha256(b) { return crypto.createHash('sha256').update(b).digest('hex'); }

run('HTTP/3 with gtlsclient [sluice-only]', function () {
  this.timeout(60000);
  afterEach(() => common.cleanup());

  it('GET through a stream handler: status, headers, body', async function () {
    let got = null;
    const { server, port } = await startH3Server();
    server.on('stream', (stream, headers) => {
      got = headers;
      stream.respond({ ':status': 200, 'content-type': 'text/plain', 'x-h3': 'yes' });
      stream.end(`hello ${headers[':path']}`);
    });
    const { code, responses, log } = await gtls(port, ['/hello']);
    assert.strictEqual(code, 0, log.slice(-2000));
    const r = responses.get('/hello');
    assert.ok(r, log.slice(-2000));
    assert.strictEqual(r.status, 200);
    assert.strictEqual(r.headers['content-type'], 'text/plain');
    assert.strictEqual(r.headers['x-h3'], 'yes');
    assert.ok(r.headers.date, 'date header');
    assert.strictEqual(r.body.toString(), 'hello /hello');
    assert.strictEqual(got[':method'], 'GET');
    assert.strictEqual(got[':scheme'], 'https');
    assert.strictEqual(got[':authority'], `127.0.0.1:${port}`);
    assert.ok(got['user-agent']);
  });

  it("GET through a 'request' handler: httpVersion 3.0, host from :authority", async function () {
    let req0 = null;
    const { port } = await startH3Server({}, (req, res) => {
      req0 = { v: req.httpVersion, major: req.httpVersionMajor, url: req.url, method: req.method, host: req.headers.host };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ url: req.url }));
    });
    const { code, responses, log } = await gtls(port, ['/a/b?c=d']);
    assert.strictEqual(code, 0, log.slice(-2000));
    const r = responses.get('/a/b?c=d');
    assert.strictEqual(r.status, 200);
    assert.strictEqual(r.headers['content-length'], String(r.body.length));
    assert.deepStrictEqual(JSON.parse(r.body.toString()), { url: '/a/b?c=d' });
    assert.deepStrictEqual(req0, { v: '3.0', major: 3, url: '/a/b?c=d', method: 'GET', host: `127.0.0.1:${port}` });
  });

  it('HEAD: the head without a body', async function () {
    const { port } = await startH3Server({}, (req, res) => {
      res.setHeader('content-length', '11');
      res.end(req.method === 'HEAD' ? undefined : 'hello world');
    });
    const { code, responses, log } = await gtls(port, ['/head'], { method: 'HEAD' });
    assert.strictEqual(code, 0, log.slice(-2000));
    const r = responses.get('/head');
    assert.strictEqual(r.status, 200);
    assert.strictEqual(r.headers['content-length'], '11');
    assert.strictEqual(r.body.length, 0);
  });

  it('POST: a 3 MiB body arrives whole (sha256), stream API and compat', async function () {
    const body = crypto.randomBytes(3 * 1024 * 1024 + 17);
    for (const api of ['stream', 'request']) {
      const { server, port } = await startH3Server();
      const onBody = (readable, done) => {
        const h = crypto.createHash('sha256');
        let n = 0;
        readable.on('data', (c) => { h.update(c); n += c.length; });
        readable.on('end', () => done(`${n} ${h.digest('hex')}`));
      };
      if (api === 'stream') {
        server.on('stream', (stream) => onBody(stream, (s) => {
          stream.respond({ ':status': 200 });
          stream.end(s);
        }));
      } else {
        server.on('request', (req, res) => onBody(req, (s) => res.end(s)));
      }
      const { code, responses, log } = await gtls(port, ['/up'], { method: 'POST', data: body });
      assert.strictEqual(code, 0, log.slice(-2000));
      const r = responses.get('/up');
      assert.strictEqual(r.status, 200, api);
      assert.strictEqual(r.body.toString(), `${body.length} ${sha256(body)}`, api);
      await common.cleanup();
    }
  });

  it('a 4 MiB response body in writes with backpressure (drain)', async function () {
    const chunk = crypto.randomBytes(256 * 1024);
    const { port } = await startH3Server({}, (req, res) => {
      let i = 0;
      const more = () => {
        while (i < 16) {
          i++;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end();
      };
      more();
    });
    const { code, responses, log } = await gtls(port, ['/big']);
    assert.strictEqual(code, 0, log.slice(-2000));
    const r = responses.get('/big');
    assert.strictEqual(r.body.length, 16 * chunk.length);
    assert.strictEqual(sha256(r.body), sha256(Buffer.concat(Array(16).fill(chunk))));
  });

  it('100 concurrent requests on one connection', async function () {
    const { port } = await startH3Server({}, (req, res) => {
      // Answered out of order, a tick apart.
      setTimeout(() => res.end(`r${req.url}`), Math.floor(Math.random() * 20));
    });
    const paths = Array.from({ length: 100 }, (_, i) => `/n/${i}`);
    const { code, responses, log } = await gtls(port, paths, { timeout: 50000 });
    assert.strictEqual(code, 0, log.slice(-2000));
    assert.strictEqual(responses.size, 100);
    for (const p of paths) {
      const r = responses.get(p);
      assert.strictEqual(r.status, 200, p);
      assert.strictEqual(r.body.toString(), `r${p}`, p);
    }
  });

  it('Alt-Svc on HTTP/2 and HTTP/1.1 responses; http3Address()', async function () {
    const { server, port, tcpPort } = await startH3Server({}, (req, res) => res.end('x'));
    assert.strictEqual(port, tcpPort, 'same port number by default');
    assert.deepStrictEqual(server.http3Address(), { address: '127.0.0.1', port, family: 'IPv4' });
    const want = `h3=":${port}"; ma=86400`;
    const { ca } = fixtures();
    const h1 = await new Promise((resolve, reject) => {
      https.get({ host: '127.0.0.1', port: tcpPort, path: '/', ca, servername: 'localhost' }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.headers['alt-svc']));
      }).on('error', reject);
    });
    assert.strictEqual(h1, want);
    const client = http2.connect(`https://127.0.0.1:${tcpPort}`, { ca, servername: 'localhost' });
    try {
      const h2 = await new Promise((resolve, reject) => {
        const s = client.request({ ':path': '/' });
        s.on('response', (h) => resolve(h['alt-svc']));
        s.on('error', reject);
        s.resume();
      });
      assert.strictEqual(h2, want);
    } finally {
      client.close();
    }
  });

  it('http3: { altSvc: false } sends no Alt-Svc', async function () {
    const { tcpPort } = await startH3Server({ http3: { altSvc: false } }, (req, res) => res.end('x'));
    const { ca } = fixtures();
    const h1 = await new Promise((resolve, reject) => {
      https.get({ host: '127.0.0.1', port: tcpPort, path: '/', ca, servername: 'localhost' }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.headers['alt-svc']));
      }).on('error', reject);
    });
    assert.strictEqual(h1, undefined);
  });

  it('garbage datagrams are dropped; the endpoint keeps serving', async function () {
    const { port } = await startH3Server({}, (req, res) => res.end('still here'));
    const sock = dgram.createSocket('udp4');
    const sends = [];
    for (let i = 0; i < 200; i++) {
      // Random bytes, then shapes that look like long-header Initials
      // (0xc0 | ..., version 1) with nonsense after.
      const b = crypto.randomBytes(1 + (i * 7) % 1400);
      if (i % 2) {
        b[0] = 0xc0 | (i & 0x3f);
        if (b.length > 5) b.writeUInt32BE(1, 1);
      }
      sends.push(new Promise((resolve) => sock.send(b, port, '127.0.0.1', resolve)));
    }
    await Promise.all(sends);
    sock.close();
    const { code, responses, log } = await gtls(port, ['/after']);
    assert.strictEqual(code, 0, log.slice(-2000));
    assert.strictEqual(responses.get('/after').body.toString(), 'still here');
  });

  it('server.close(): GOAWAY, in-flight requests finish, then close', async function () {
    let release = null;
    const { server, port } = await startH3Server({}, (req, res) => {
      release = () => res.end('finished');
    });
    const run = gtls(port, ['/slow'], { quicDump: true });
    const t0 = Date.now();
    while (release === null && Date.now() - t0 < 20000) await common.sleep(20);
    assert.ok(release, 'request arrived');
    const closed = new Promise((resolve) => server.close(resolve));
    await common.sleep(200);
    release();
    const { code, responses, log } = await run;
    assert.strictEqual(code, 0, log.slice(-2000));
    assert.strictEqual(responses.get('/slow').body.toString(), 'finished');
    // The server's control stream (id 3) after its SETTINGS: GOAWAY
    // (type 0x07, length 1) naming stream 4, the first request not
    // processed.
    assert.match(log, /id=0x3 fin=0 offset=8 len=3 uni=1\nOrdered STREAM data stream_id=0x3\n00000000  07 01 04 /,
      'GOAWAY(4) on the control stream');
    await common.withTimeout(closed, 20000, "server 'close'");
  });

  it('idle timeout: an idle connection is closed by the server', async function () {
    const { server, port } = await startH3Server({ http3: { idleTimeout: 500 } }, (req, res) => res.end('x'));
    // The client stays connected after its response (keep) with an idle
    // timeout of its own of 60 s: it leaves early only if the server
    // closes the connection.
    const t0 = Date.now();
    const { responses, log } = await gtls(port, ['/one'], { keep: true, idle: '60s', timeout: 45000 });
    assert.strictEqual(responses.get('/one').body.toString(), 'x', log.slice(-2000));
    assert.ok(Date.now() - t0 < 40000, `client left after ${Date.now() - t0} ms`);
    assert.match(log, /CONNECTION_CLOSE\(0x1d\)[^\n]*0x100/, 'H3_NO_ERROR close from the server');
    // The connection is gone once its closing period is over.
    const t1 = Date.now();
    while (server._http3.connections() !== 0 && Date.now() - t1 < 10000) await common.sleep(50);
    assert.strictEqual(server._http3.connections(), 0);
  });
});
