'use strict';

// A client that goes away mid-request: req emits 'aborted' and 'close'
// ('error' only if someone listens), res emits 'close', nothing crashes and
// the server keeps serving.

const crypto = require('node:crypto');
const common = require('../common');
const { assert } = common;

function serverWithUploadProbe() {
  const state = { events: [], received: 0, req: null, res: null };
  let resolveClosed;
  state.closed = new Promise((r) => { resolveClosed = r; });
  let resolveStarted;
  state.started = new Promise((r) => { resolveStarted = r; });
  const handler = (req, res) => {
    if (req.url === '/normal') {
      normalHandler(req, res);
      return;
    }
    state.req = req;
    state.res = res;
    req.on('data', (d) => {
      state.received += d.length;
      if (state.received > 0) resolveStarted();
    });
    req.on('aborted', () => state.events.push('aborted'));
    req.on('end', () => state.events.push('end'));
    req.on('close', () => {
      state.events.push('close');
      resolveClosed();
    });
    res.on('close', () => state.events.push('res close'));
    res.on('finish', () => state.events.push('res finish'));
  };
  return { state, handler };
}

// Answers /normal with the sha256 of the body.
function normalHandler(req, res) {
  const h = crypto.createHash('sha256');
  req.on('data', (d) => h.update(d));
  req.on('end', () => res.end(h.digest('hex')));
}

async function normalRequestWorks(port) {
  const body = crypto.randomBytes(1024 * 1024);
  const r = await common.httpRequest(port, { method: 'POST', path: '/normal', body });
  assert.strictEqual(r.statusCode, 200);
  assert.strictEqual(r.body.toString(), common.sha256(body));
}

describe(`http1 client aborts [${common.implName}]`, function () {
  afterEach(common.cleanup);

  it('client resets (RST) mid-upload: req emits aborted and close; the next request is served', async function () {
    const { state, handler } = serverWithUploadProbe();
    const { port } = await common.startServer(handler);
    const c = await common.rawConnect(port);
    c.socket.write(`POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: ${10 * 1024 * 1024}\r\n\r\n`);
    c.socket.write(crypto.randomBytes(256 * 1024));
    await common.withTimeout(state.started, 2000, 'first body bytes');
    c.socket.resetAndDestroy();
    await common.withTimeout(state.closed, 2000, "req 'close'");
    await common.sleep(20);
    assert.ok(state.events.includes('aborted'), `events: ${state.events}`);
    assert.ok(!state.events.includes('end'), `events: ${state.events}`);
    assert.ok(state.events.indexOf('aborted') < state.events.indexOf('close'), `events: ${state.events}`);
    assert.ok(state.events.includes('res close'), `res did not emit close: ${state.events}`);
    assert.ok(!state.events.includes('res finish'), `events: ${state.events}`);
    assert.strictEqual(state.req.complete, false);
    await normalRequestWorks(port);
  });

  it('client closes (FIN) mid-upload: req emits aborted and close', async function () {
    const { state, handler } = serverWithUploadProbe();
    const { port } = await common.startServer(handler);
    const c = await common.rawConnect(port);
    c.socket.write('POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: 100000\r\n\r\n');
    c.socket.write(Buffer.alloc(5000, 1));
    await common.withTimeout(state.started, 2000, 'first body bytes');
    c.socket.end();
    await common.withTimeout(state.closed, 2000, "req 'close'");
    assert.ok(state.events.includes('aborted'), `events: ${state.events}`);
    assert.ok(!state.events.includes('end'), `events: ${state.events}`);
    await normalRequestWorks(port);
  });

  it('req emits error (ECONNRESET) only when someone listens', async function () {
    const errors = [];
    let closedCount = 0;
    let resolveBoth;
    const both = new Promise((r) => { resolveBoth = r; });
    const { port } = await common.startServer((req, res) => {
      if (req.url === '/listen') req.on('error', (e) => errors.push(e));
      req.on('data', () => {});
      req.on('close', () => {
        if (++closedCount === 2) resolveBoth();
      });
    });
    for (const path of ['/listen', '/nolisten']) {
      const c = await common.rawConnect(port);
      c.socket.write(`POST ${path} HTTP/1.1\r\nHost: h\r\nContent-Length: 1000\r\n\r\nabc`);
      await common.sleep(50);
      c.socket.resetAndDestroy();
    }
    await common.withTimeout(both, 2000, "both reqs' close");
    await common.sleep(20);
    assert.strictEqual(errors.length, 1);
    assert.ok(errors[0] instanceof Error);
    assert.strictEqual(errors[0].code, 'ECONNRESET');
  });

  it('a client that resets while req is paused: after resume() req emits close, not end', async function () {
    const events = [];
    let closed;
    const closedP = new Promise((r) => { closed = r; });
    let theReq;
    const { port } = await common.startServer((req) => {
      theReq = req;
      req.pause();
      req.on('data', () => {});
      req.on('end', () => events.push('end'));
      req.on('aborted', () => events.push('aborted'));
      req.on('close', () => {
        events.push('close');
        closed();
      });
    });
    const c = await common.rawConnect(port);
    c.socket.write(`POST / HTTP/1.1\r\nHost: h\r\nContent-Length: ${4 * 1024 * 1024}\r\n\r\n`);
    c.socket.write(Buffer.alloc(2 * 1024 * 1024));
    await common.sleep(100);
    c.socket.resetAndDestroy();
    await common.sleep(100);
    theReq.resume();
    await common.withTimeout(closedP, 2000, "req 'close'");
    assert.ok(!events.includes('end'), `events: ${events}`);
    assert.ok(events.includes('aborted'), `events: ${events}`);
  });

  it('a client that goes away before the response: res emits close without finish; writes do not throw', async function () {
    const events = [];
    let resClosed;
    const resClosedP = new Promise((r) => { resClosed = r; });
    const errs = common.handlerErrors();
    const { port } = await common.startServer(errs.wrap((req, res) => {
      if (req.url === '/normal') {
        normalHandler(req, res);
        return;
      }
      res.on('finish', () => events.push('finish'));
      res.on('close', errs.wrap(() => {
        events.push('close');
        // writing to a response whose client is gone must not throw
        res.write('late');
        res.end('later');
        resClosed();
      }));
      // keep the response open
      res.write('started');
    }));
    const c = await common.rawConnect(port);
    c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
    await c.waitFor((x) => x.text.includes('started'), 2000, 'first chunk');
    c.socket.resetAndDestroy();
    await common.withTimeout(resClosedP, 2000, "res 'close'");
    assert.deepStrictEqual(events, ['close']);
    errs.check();
    await normalRequestWorks(port);
  });

  it('a client that resets while a large response is being written: no crash, server keeps serving', async function () {
    const big = crypto.randomBytes(16 * 1024 * 1024);
    let resClosed;
    const resClosedP = new Promise((r) => { resClosed = r; });
    const { port } = await common.startServer((req, res) => {
      if (req.url === '/normal') {
        normalHandler(req, res);
        return;
      }
      res.on('close', () => resClosed());
      res.on('error', () => {});
      res.end(big);
    });
    const c = await common.rawConnect(port);
    c.socket.write('GET /big HTTP/1.1\r\nHost: h\r\n\r\n');
    await c.waitFor((x) => x.len > 100000, 2000, 'part of the body');
    c.socket.resetAndDestroy();
    await common.withTimeout(resClosedP, 3000, "res 'close'");
    await normalRequestWorks(port);
  });

  it('a client that resets in the middle of the headers: no request event, server keeps serving', async function () {
    let requests = 0;
    const { port } = await common.startServer((req, res) => {
      requests++;
      req.resume();
      req.on('end', () => res.end(common.sha256(Buffer.alloc(0))));
    });
    const c = await common.rawConnect(port);
    c.socket.write('GET / HTTP/1.1\r\nHost: h\r\nX-Half: ');
    await common.sleep(50);
    c.socket.resetAndDestroy();
    await common.sleep(50);
    assert.strictEqual(requests, 0);
    const r = await common.httpRequest(port, { method: 'POST', path: '/normal', body: '' });
    assert.strictEqual(r.statusCode, 200);
  });

  it('many aborted uploads in a row leave the server healthy', async function () {
    this.timeout(15000);
    let closes = 0;
    const { port } = await common.startServer((req, res) => {
      if (req.url === '/normal') {
        normalHandler(req, res);
        return;
      }
      req.on('data', () => {});
      req.on('close', () => closes++);
    });
    const chunk = crypto.randomBytes(64 * 1024);
    await Promise.all(Array.from({ length: 30 }, async (_, i) => {
      const c = await common.rawConnect(port);
      c.socket.write(`POST /abort HTTP/1.1\r\nHost: h\r\nContent-Length: 1000000\r\n\r\n`);
      c.socket.write(chunk);
      await common.sleep(20 + (i % 5) * 5);
      if (i % 2) c.socket.resetAndDestroy();
      else c.socket.destroy();
    }));
    const t0 = Date.now();
    while (closes < 30 && Date.now() - t0 < 3000) await common.sleep(20);
    assert.strictEqual(closes, 30);
    await normalRequestWorks(port);
  });
});
