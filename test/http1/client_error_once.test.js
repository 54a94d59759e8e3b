'use strict';

// A 'clientError' listener that answers a timeout (408) or bad input (400)
// itself, node's way: server.on('clientError', (err, socket) =>
// socket.end('HTTP/1.1 408 ...')). Whatever the listener does and however
// long it takes, the connection gets exactly one clientError and one
// response: the deadlines that fired, and those still armed for the same
// request, must not produce a second 408 on top of the listener's answer.
// Each test reads every byte until the server closes.
//
// node:http (SLUICE_TEST_IMPL=node) sends one response in the same cases
// but emits more clientErrors, which the node rows below record: an
// HPE_INVALID_EOF_STATE when the client closes after a timeout answer, and
// a timeout (the listener then answers again) after a parse error on a head
// that never completed. sluice reports one error per connection: after it
// nothing is parsed, and the listener's answer is the only one
// (docs/api.md, "clientError").

const common = require('../common');
const { assert } = common;

const TIMEOUT = 'ERR_HTTP_REQUEST_TIMEOUT';
const R408 = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n';
const R400 = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n';

// The clientError codes seen: sluice's, or node's documented extra ones.
function expectCodes(codes, sluice, node = sluice) {
  const want = common.isNode ? node : sluice;
  assert.strictEqual(codes.length, want.length, `clientError codes ${codes}`);
  want.forEach((w, i) => (w instanceof RegExp ? assert.match(codes[i], w) : assert.strictEqual(codes[i], w)));
}

async function exchange(port, input, ms = 4000) {
  const c = await common.rawConnect(port);
  c.socket.write(input);
  const data = await c.waitClose(ms);
  // Anything emitted late would show up here.
  await common.sleep(100);
  return common.parseAll(data).map((r) => r.statusCode);
}

describe(`http1: one answer per clientError [${common.implName}]`, function () {
  afterEach(common.cleanup);

  function serverWith(options, onClientError, handler = (req, res) => res.end('no')) {
    return common.startServer(options, handler).then((s) => {
      s.codes = [];
      s.server.on('clientError', (err, socket) => {
        s.codes.push(err.code);
        onClientError(err, socket);
      });
      return s;
    });
  }

  it('headersTimeout: the listener ends the socket with its 408 at once', async function () {
    // Both deadlines pass at nearly the same time.
    const s = await serverWith({ headersTimeout: 200, requestTimeout: 220 },
                               (err, socket) => socket.end(R408));
    const statuses = await exchange(s.port, 'GET / HTTP/1.1\r\nHost: h\r\n');
    assert.deepStrictEqual(statuses, [408]);
    expectCodes(s.codes, [TIMEOUT], [TIMEOUT, 'HPE_INVALID_EOF_STATE']);
  });

  it('headersTimeout: the listener writes its 408 and ends the socket only later', async function () {
    // requestTimeout passes while the listener still holds the socket open.
    const s = await serverWith({ headersTimeout: 200, requestTimeout: 300 }, (err, socket) => {
      socket.write(R408);
      common.setTimer(() => socket.end(), 700);
    });
    const statuses = await exchange(s.port, 'GET / HTTP/1.1\r\nHost: h\r\n');
    assert.deepStrictEqual(statuses, [408]);
    expectCodes(s.codes, [TIMEOUT], [TIMEOUT, 'HPE_INVALID_EOF_STATE']);
  });

  it('requestTimeout on an incomplete body: the listener answers 408, ending later', async function () {
    const s = await serverWith({ headersTimeout: 200, requestTimeout: 300 }, (err, socket) => {
      socket.write(R408);
      common.setTimer(() => socket.end(), 600);
    }, (req) => req.resume());  // the handler never answers
    const statuses = await exchange(s.port, 'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nab');
    assert.deepStrictEqual(statuses, [408]);
    expectCodes(s.codes, [TIMEOUT], [TIMEOUT, 'HPE_INVALID_EOF_STATE']);
  });

  it('bad input: the listener ends the socket with its 400 at once', async function () {
    const s = await serverWith({ headersTimeout: 200, requestTimeout: 300 },
                               (err, socket) => socket.end(R400));
    const statuses = await exchange(s.port, 'GET / HTTP/1.1\r\nHost: h\r\nBad Header: x\r\n\r\n');
    assert.deepStrictEqual(statuses, [400]);
    expectCodes(s.codes, [/^HPE_/]);
  });

  it('bad input in an unfinished head: the listener writes 400, ends after headersTimeout passed', async function () {
    // The head never completes, so headersTimeout (and requestTimeout)
    // pass while the listener holds the socket: no 408 may follow the 400.
    const s = await serverWith({ headersTimeout: 200, requestTimeout: 300 }, (err, socket) => {
      socket.write(R400);
      common.setTimer(() => socket.end(), 700);
    });
    const statuses = await exchange(s.port, 'GET / HTTP/1.1\r\nHost: h\r\nBad Header: x\r\n');
    // node: the timeout's clientError makes the listener write again.
    assert.deepStrictEqual(statuses, common.isNode ? [400, 400] : [400]);
    expectCodes(s.codes, [/^HPE_/], [/^HPE_/, TIMEOUT]);
  });

  it('bad input: a listener that does nothing leaves no second answer either', async function () {
    // node leaves such a socket open until the client goes; sluice closes
    // it after its linger time. Either way: no response at all, one event.
    const s = await serverWith({ headersTimeout: 200, requestTimeout: 300 }, () => {});
    const c = await common.rawConnect(s.port);
    c.socket.write('GET / HTTP/1.1\r\nHost: h\r\nBad Header: x\r\n');
    await common.sleep(800);
    c.destroy();
    assert.strictEqual(c.len, 0, `received ${JSON.stringify(c.text)}`);
    expectCodes(s.codes, [/^HPE_/], [/^HPE_/, TIMEOUT]);
  });
  it('a request that closes the connection is no client error', async function () {
    // HTTP/1.0, HTTP/0.9 and Connection: close, answered synchronously: the
    // connection ends after the response, and nothing is wrong with the
    // input (sluice once reported HPE_CB_MESSAGE_COMPLETE for each).
    const s = await serverWith({}, (err, socket) => socket.destroy(),
                               (req, res) => res.end('ok'));
    for (const input of ['GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n',
                         'GET / HTTP/1.0\r\n\r\n', 'GET /\r\n\r\n']) {
      const c = await common.rawConnect(s.port);
      c.socket.write(input);
      const data = await c.waitClose(2000);
      assert.match(data.toString('latin1'), /^HTTP\/1\.1 200 [^]*ok$/);
    }
    expectCodes(s.codes, []);
  });
});
