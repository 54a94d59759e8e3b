'use strict';

// A client that ends its side mid-request gets node's client error
// (HPE_INVALID_EOF_STATE; 400 without a clientError listener), and
// req.socket.writableEnded turns true once a response closes the
// connection (HTTP/1.0). Shared: also run against node:http.

const net = require('node:net');
const common = require('../common');
const { assert } = common;

describe(`http1 EOF mid-request and socket state [${common.implName}]`, function () {
  afterEach(common.cleanup);

  it('EOF inside the head: clientError HPE_INVALID_EOF_STATE, nothing dispatched', async function () {
    const { port, server } = await common.startServer(() => assert.fail('no request'));
    const heard = new Promise((resolve) => server.on('clientError', (err, socket) => {
      socket.destroy();
      resolve(err);
    }));
    const c = common.trackSocket(net.connect(port, '127.0.0.1'));
    c.end('GET / HTTP/1.1\r\nContent-Length:');
    const err = await common.withTimeout(heard, 5000, 'clientError');
    assert.strictEqual(err.code, 'HPE_INVALID_EOF_STATE');
    assert.match(err.message, /^Parse Error/);
  });

  it('EOF inside the head without a clientError listener: 400 and the close', async function () {
    const { port } = await common.startServer(() => assert.fail('no request'));
    const c = await common.rawConnect(port);
    c.socket.end('GET / HTTP/1.1\r\nHost: h\r\nX-Partial: ab');
    await c.waitClose(5000);
    assert.ok(c.text.startsWith('HTTP/1.1 400 Bad Request\r\n'), c.text);
  });

  it("HTTP/1.0: req.socket.writableEnded is true at the response's 'finish'", async function () {
    const seen = new Promise((resolve) => {
      common.startServer((req, res) => {
        res.on('finish', () => resolve(req.socket.writableEnded));
        assert.strictEqual(req.socket.writableEnded, false);
        res.end('x');
      }).then(({ port }) => common.rawUntilClose(port, 'GET / HTTP/1.0\r\n\r\n'));
    });
    assert.strictEqual(await common.withTimeout(seen, 5000, 'finish'), true);
  });
});

describe(`http1 'aborted' on a complete request [${common.implName}]`, function () {
  afterEach(common.cleanup);

  it("a GET whose response had not finished hears 'aborted' when its connection closes", async function () {
    let server;
    const aborted = new Promise((resolve) => {
      common.startServer((req, res) => {
        req.on('aborted', () => resolve(req.aborted));
        res.write('hello', () => server.closeAllConnections());
      }).then((s) => {
        server = s.server;
        return common.rawConnect(s.port);
      }).then((c) => c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n'));
    });
    assert.strictEqual(await common.withTimeout(aborted, 5000, "'aborted'"), true);
  });
});
