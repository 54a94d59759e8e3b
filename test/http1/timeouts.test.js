'use strict';

// headersTimeout and requestTimeout -> 408 and close (small configured
// values); slow clients cannot keep a request alive by trickling bytes.

const common = require('../common');
const { assert } = common;

async function expect408(c, minMs, maxMs, t0) {
  const data = await c.waitClose(maxMs + 2000);
  const ms = Date.now() - t0;
  const rs = common.parseAll(data);
  assert.strictEqual(rs.length, 1, `expected one response, got ${JSON.stringify(data.toString('latin1'))}`);
  assert.strictEqual(rs[0].statusCode, 408);
  assert.ok(ms >= minMs, `408 after ${ms} ms, expected at least ${minMs}`);
  assert.ok(ms <= maxMs, `408 after ${ms} ms, expected at most ${maxMs}`);
}

describe(`http1 timeouts [${common.implName}]`, function () {
  afterEach(common.cleanup);

  it('headersTimeout: incomplete headers get 408 and close', async function () {
    const { port } = await common.startServer({ headersTimeout: 500, requestTimeout: 2000 }, (req, res) => res.end('no'));
    const c = await common.rawConnect(port);
    const t0 = Date.now();
    c.socket.write('GET / HTTP/1.1\r\nHost: h\r\nX-Partial: ');
    await expect408(c, 400, 1500, t0);
  });

  it('headersTimeout: trickling header bytes does not extend it', async function () {
    const { port } = await common.startServer({ headersTimeout: 500, requestTimeout: 2000 }, (req, res) => res.end('no'));
    const c = await common.rawConnect(port);
    const t0 = Date.now();
    c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n');
    let i = 0;
    const tick = async () => {
      while (!c.closed && Date.now() - t0 < 3000) {
        c.socket.write(`X-${i++}: v\r\n`);
        await common.sleep(50);
      }
    };
    const trickling = tick();
    await expect408(c, 400, 1500, t0);
    await trickling;
  });

  it('headersTimeout: a connection that sends nothing gets 408 and close (as node)', async function () {
    const { port } = await common.startServer({ headersTimeout: 500, requestTimeout: 2000 }, (req, res) => res.end('no'));
    const c = await common.rawConnect(port);
    await expect408(c, 400, 1500, Date.now());
  });

  it('requestTimeout: an incomplete body gets 408 and close', async function () {
    let gotRequest = false;
    const { port } = await common.startServer({ headersTimeout: 300, requestTimeout: 600 }, (req, res) => {
      gotRequest = true;
      req.resume();
      req.on('end', () => res.end('no'));
    });
    const c = await common.rawConnect(port);
    const t0 = Date.now();
    c.socket.write('POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\nonly some');
    await expect408(c, 500, 1800, t0);
    assert.strictEqual(gotRequest, true);
  });

  it('requestTimeout: trickling body bytes does not extend it', async function () {
    const { port } = await common.startServer({ headersTimeout: 300, requestTimeout: 600 }, (req, res) => {
      req.resume();
      req.on('end', () => res.end('no'));
    });
    const c = await common.rawConnect(port);
    const t0 = Date.now();
    c.socket.write('POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1000\r\n\r\n');
    const trickling = (async () => {
      while (!c.closed && Date.now() - t0 < 3000) {
        c.socket.write('x');
        await common.sleep(50);
      }
    })();
    await expect408(c, 500, 1800, t0);
    await trickling;
  });

  it('requests completed in time are not affected, and the timer restarts per request', async function () {
    const { port } = await common.startServer({ headersTimeout: 400, requestTimeout: 400, keepAliveTimeout: 5000 }, (req, res) => {
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    const c = await common.rawConnect(port);
    for (let i = 0; i < 4; i++) {
      c.socket.write('POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nab');
      await common.sleep(100);
      c.socket.write('cd');
      const rs = await c.responses(i + 1);
      assert.strictEqual(rs[i].statusCode, 200);
      await common.sleep(150);
    }
    assert.strictEqual(c.closed, false);
  });

  it('a slow handler is not cut off by requestTimeout once the request is complete', async function () {
    const { port } = await common.startServer({ headersTimeout: 200, requestTimeout: 300 }, (req, res) => {
      req.resume();
      req.on('end', () => common.setTimer(() => res.end('slow but fine'), 700));
    });
    const c = await common.rawConnect(port);
    c.socket.write('POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nok');
    const [r] = await c.responses(1, {}, 3000);
    assert.strictEqual(r.statusCode, 200);
    assert.strictEqual(r.body.toString(), 'slow but fine');
  });

  it('clientError is emitted for a timeout with code ERR_HTTP_REQUEST_TIMEOUT', async function () {
    const codes = [];
    const { server, port } = await common.startServer({ headersTimeout: 300, requestTimeout: 1000 }, (req, res) => res.end('no'));
    server.on('clientError', (err, socket) => {
      codes.push(err.code);
      if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
        socket.end('HTTP/1.1 408 Request Timeout\r\nX-From: listener\r\nConnection: close\r\n\r\n');
      } else {
        socket.destroy();
      }
    });
    const c = await common.rawConnect(port);
    c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n');
    const data = await c.waitClose(3000);
    const rs = common.parseAll(data);
    assert.strictEqual(rs.length, 1);
    assert.strictEqual(rs[0].statusCode, 408);
    assert.strictEqual(rs[0].headers['x-from'], 'listener');
    assert.strictEqual(codes[0], 'ERR_HTTP_REQUEST_TIMEOUT');
  });

  it('the server keeps serving after timing out a connection', async function () {
    const { port } = await common.startServer({ headersTimeout: 300, requestTimeout: 600 }, (req, res) => res.end('fine'));
    const c = await common.rawConnect(port);
    c.socket.write('GET / HTTP/1.1\r\n');
    await c.waitClose(3000);
    const r = await common.httpRequest(port);
    assert.strictEqual(r.body.toString(), 'fine');
  });
});

describe(`http1 timeouts set after creation [${common.implName}]`, function () {
  afterEach(common.cleanup);

  it('server.keepAliveTimeout / headersTimeout assigned after listen apply to new connections', async function () {
    const { server, port } = await common.startServer({}, (req, res) => res.end('ok'));
    server.keepAliveTimeout = 400;
    server.headersTimeout = 600;
    assert.strictEqual(server.keepAliveTimeout, 400);
    assert.strictEqual(server.headersTimeout, 600);
    // Idle after a response: closed by keepAliveTimeout.
    let c = await common.rawConnect(port);
    let t0 = Date.now();
    c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
    const data = await c.waitClose(5000);
    let ms = Date.now() - t0;
    assert.strictEqual(common.parseAll(data)[0].statusCode, 200);
    assert.ok(ms >= 300 && ms <= 2500, `closed after ${ms} ms`);
    // Incomplete headers: 408 from the new headersTimeout.
    c = await common.rawConnect(port);
    t0 = Date.now();
    c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n');
    await expect408(c, 400, 2500, t0);
  });
});
