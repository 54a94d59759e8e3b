'use strict';

// Expect: 100-continue — `checkContinue` when listened to, otherwise an
// automatic `100 Continue` (as node does).

const http = require('node:http');
const crypto = require('node:crypto');
const common = require('../common');
const { assert } = common;

function echoLength(req, res) {
  const h = crypto.createHash('sha256');
  let n = 0;
  req.on('data', (d) => {
    n += d.length;
    h.update(d);
  });
  req.on('end', () => res.end(`${n}:${h.digest('hex')}`));
}

const CONTINUE_RE = /^HTTP\/1\.1 100 Continue\r\n\r\n/;

describe(`http1 expect 100-continue [${common.implName}]`, function () {
  afterEach(common.cleanup);

  it('without a checkContinue listener, 100 Continue is sent automatically (raw socket)', async function () {
    const { port } = await common.startServer(echoLength);
    const body = crypto.randomBytes(5000);
    const c = await common.rawConnect(port);
    c.socket.write(`POST /up HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n`);
    await c.waitFor((x) => /\r\n\r\n/.test(x.text), 2000, '100 Continue');
    assert.match(c.text, CONTINUE_RE);
    assert.strictEqual(c.text, 'HTTP/1.1 100 Continue\r\n\r\n', 'nothing but the interim response before the body');
    c.socket.write(body);
    const [r] = await c.responses(1);
    assert.strictEqual(r.statusCode, 200);
    assert.strictEqual(r.body.toString(), `${body.length}:${common.sha256(body)}`);
    const all = common.parseResponses(c.data).responses;
    assert.deepStrictEqual(all.map((x) => x.statusCode), [100, 200]);
  });

  it('with curl (Expect: 100-continue)', async function () {
    const { url } = await common.startServer(echoLength);
    const body = crypto.randomBytes(200000);
    const t0 = Date.now();
    const r = await common.curl(['-v', '--expect100-timeout', '5', '-H', 'Expect: 100-continue', '--data-binary', '@-', `${url}/curl`], { input: body });
    const ms = Date.now() - t0;
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(r.stderr, /< HTTP\/1\.1 100 Continue/);
    assert.strictEqual(r.stdout.toString(), `${body.length}:${common.sha256(body)}`);
    assert.ok(ms < 3000, `curl took ${ms} ms: it probably waited for a 100 Continue that never came`);
  });

  it('node http client receives "continue" and then sends the body', async function () {
    const { port } = await common.startServer(echoLength);
    const body = Buffer.from('sent after continue');
    const got = await new Promise((resolve, reject) => {
      let continued = false;
      const req = http.request({
        host: '127.0.0.1', port, method: 'POST', path: '/', agent: false,
        headers: { Expect: '100-continue', 'Content-Length': body.length },
      }, (res) => {
        let s = '';
        res.on('data', (d) => { s += d; });
        res.on('end', () => resolve({ continued, status: res.statusCode, body: s }));
      });
      req.on('socket', common.trackSocket);
      req.on('continue', () => {
        continued = true;
        req.end(body);
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    assert.deepStrictEqual(got, { continued: true, status: 200, body: `${body.length}:${common.sha256(body)}` });
  });

  it('checkContinue listener: called instead of "request", writeContinue() lets the body come', async function () {
    const events = [];
    const { server, port } = await common.startServer((req, res) => {
      events.push('request');
      res.end('wrong');
    });
    server.on('checkContinue', (req, res) => {
      events.push(`checkContinue ${req.url} ${req.headers.expect}`);
      res.writeContinue();
      echoLength(req, res);
    });
    const body = crypto.randomBytes(3000);
    const c = await common.rawConnect(port);
    c.socket.write(`PUT /cc HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n`);
    await c.waitFor((x) => CONTINUE_RE.test(x.text), 2000, '100 Continue');
    c.socket.write(body);
    const [r] = await c.responses(1);
    assert.strictEqual(r.body.toString(), `${body.length}:${common.sha256(body)}`);
    assert.deepStrictEqual(events, ['checkContinue /cc 100-continue']);
  });

  it('checkContinue listener: no 100 Continue unless writeContinue() is called', async function () {
    let pending;
    const { server, port } = await common.startServer((req, res) => res.end('wrong'));
    server.on('checkContinue', (req, res) => {
      pending = { req, res };
    });
    const c = await common.rawConnect(port);
    c.socket.write('POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n');
    await common.sleep(150);
    assert.ok(pending, 'checkContinue not emitted');
    assert.strictEqual(c.text, '', 'no bytes before writeContinue()');
    pending.res.writeContinue();
    await c.waitFor((x) => CONTINUE_RE.test(x.text), 2000, '100 Continue');
    c.socket.write('abc');
    echoLength(pending.req, pending.res);
    const [r] = await c.responses(1);
    assert.strictEqual(r.body.toString(), `3:${common.sha256(Buffer.from('abc'))}`);
  });

  it('checkContinue listener may refuse with 417 without reading the body', async function () {
    const { server, port } = await common.startServer((req, res) => res.end('wrong'));
    server.on('checkContinue', (req, res) => {
      res.writeHead(417, { Connection: 'close' });
      res.end('too big');
    });
    const c = await common.rawConnect(port);
    c.socket.write('POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 1000000\r\n\r\n');
    const [r] = await c.responses(1);
    assert.strictEqual(r.statusCode, 417);
    assert.strictEqual(r.body.toString(), 'too big');
    assert.ok(!/100 Continue/.test(c.text), 'a 100 Continue was sent');
    await c.waitClose(2000);
  });

  it('curl with a checkContinue listener that accepts', async function () {
    const { server, url } = await common.startServer((req, res) => res.end('wrong'));
    let called = 0;
    server.on('checkContinue', (req, res) => {
      called++;
      res.writeContinue();
      echoLength(req, res);
    });
    const body = crypto.randomBytes(100000);
    const r = await common.curl(['-v', '--expect100-timeout', '5', '-H', 'Expect: 100-continue', '--data-binary', '@-', url], { input: body });
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(r.stderr, /< HTTP\/1\.1 100 Continue/);
    assert.strictEqual(r.stdout.toString(), `${body.length}:${common.sha256(body)}`);
    assert.strictEqual(called, 1);
  });

  it('an unknown expectation is answered 417 Expectation Failed (as node)', async function () {
    let requests = 0;
    const { port } = await common.startServer((req, res) => {
      requests++;
      res.end('wrong');
    });
    const c = await common.rawConnect(port);
    c.socket.write('POST / HTTP/1.1\r\nHost: h\r\nExpect: something-else\r\nContent-Length: 0\r\n\r\n');
    const [r] = await c.responses(1);
    assert.strictEqual(r.statusCode, 417);
    assert.strictEqual(requests, 0);
  });
});
