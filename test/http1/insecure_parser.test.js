'use strict';

// insecureHTTPParser, as node: the server option (or --insecure-http-parser)
// makes the HTTP/1.1 parser lenient — header values with control
// characters, Transfer-Encoding with Content-Length, a bare LF ending the
// request line — for legacy clients that send them; without it the same
// bytes get 400. Shared: run against node:http with SLUICE_TEST_IMPL=node.

const assert = require('node:assert');
const common = require('../common');

const echoHeaders = (req, res) => {
  let body = '';
  req.setEncoding('latin1');
  req.on('data', (c) => { body += c; });
  req.on('end', () => res.end(JSON.stringify({ headers: req.headers, body })));
};

async function exchange(port, wire) {
  const c = await common.rawUntilClose(port, wire, 5000);
  return c.text;
}

function statusOf(text) {
  return Number(/^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1]);
}

function bodyOf(text) {
  return JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
}

const CONTROL_CHAR = 'GET / HTTP/1.1\r\nHost: h\r\nContent-Type: text/te\x08t\r\nConnection: close\r\n\r\n';
// node's test-http-insecure-parser.js: a missing CRLF joins two lines.
const JOINED = 'GET / HTTP/1.1\r\nContent-Type: text/te\x08t\r\nHost: example.comConnection: close\r\n\r\n';
const TE_AND_CL = 'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\nConnection: close\r\n\r\n' +
  '3\r\nabc\r\n0\r\n\r\n';

describe('insecureHTTPParser', function () {
  it('off (the default): a control character in a header value is 400', async function () {
    const { port } = await common.startServer(echoHeaders);
    assert.strictEqual(statusOf(await exchange(port, CONTROL_CHAR)), 400);
  });

  it('on: the same request is served, the value as sent', async function () {
    const { server, port } = await common.startServer({ insecureHTTPParser: true }, echoHeaders);
    assert.strictEqual(server.insecureHTTPParser, true);
    const text = await exchange(port, CONTROL_CHAR);
    assert.strictEqual(statusOf(text), 200, text);
    assert.strictEqual(bodyOf(text).headers['content-type'], 'text/te\bt');
  });

  it("on: node's own case (a missing CRLF folds Connection into Host's value)", async function () {
    const { port } = await common.startServer({ insecureHTTPParser: true }, (req, res) => {
      res.end(`${req.headers['content-type']}|${req.headers.host}`);
    });
    // The joined line leaves the connection keep-alive: read the answer.
    const c = await common.rawConnect(port);
    c.socket.write(JOINED);
    const [r] = await c.responses(1);
    assert.strictEqual(r.statusCode, 200);
    assert.strictEqual(r.body.toString('latin1'), 'text/te\bt|example.comConnection: close');
    c.socket.destroy();
  });

  it('Transfer-Encoding with Content-Length: 400 strict, chunked body when lenient', async function () {
    const strict = await common.startServer(echoHeaders);
    assert.strictEqual(statusOf(await exchange(strict.port, TE_AND_CL)), 400);
    const lenient = await common.startServer({ insecureHTTPParser: true }, echoHeaders);
    const text = await exchange(lenient.port, TE_AND_CL);
    assert.strictEqual(statusOf(text), 200, text);
    assert.strictEqual(bodyOf(text).body, 'abc');
  });

  it('insecureHTTPParser: false keeps strict parsing; a non-boolean is ERR_INVALID_ARG_TYPE', async function () {
    assert.throws(() => common.impl.createServer({ insecureHTTPParser: 1 }), { code: 'ERR_INVALID_ARG_TYPE' });
    const { server, port } = await common.startServer({ insecureHTTPParser: false }, echoHeaders);
    assert.strictEqual(server.insecureHTTPParser, false);
    assert.strictEqual(statusOf(await exchange(port, CONTROL_CHAR)), 400);
    const plain = common.impl.createServer();
    assert.strictEqual(plain.insecureHTTPParser, undefined);
  });

  it('--insecure-http-parser (NODE_OPTIONS) makes servers lenient unless the option says false', async function () {
    this.timeout(60000);
    const script = `
      const net = require('net');
      const impl = process.env.SLUICE_TEST_IMPL === 'node' ? require('http') : require('./');
      const wire = ${JSON.stringify(CONTROL_CHAR)};
      function ask(server) {
        return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
          const c = net.connect(server.address().port, '127.0.0.1', () => c.write(wire));
          let text = '';
          c.setEncoding('latin1');
          c.on('data', (d) => { text += d; });
          c.on('close', () => { server.close(); resolve(text.slice(9, 12)); });
        }));
      }
      (async () => {
        const a = await ask(impl.createServer((req, res) => res.end('ok')));
        const b = await ask(impl.createServer({ insecureHTTPParser: false }, (req, res) => res.end('ok')));
        console.log(a, b);
      })();
    `;
    const r = await common.runNodeScript(script, {
      timeout: 50000,
      env: { NODE_OPTIONS: '--insecure-http-parser', SLUICE_TEST_IMPL: common.isNode ? 'node' : 'sluice' },
    });
    assert.strictEqual(r.stdout.trim(), '200 400', r.stderr);
  });
});
