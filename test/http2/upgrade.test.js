'use strict';

// h2c upgrade from HTTP/1.1 (RFC 7540 3.2): curl --http2 and nghttp -u;
// requests that cannot switch are served as HTTP/1.1.

const { execFile } = require('node:child_process');
const common = require('../common');
const { assert } = common;

const describeSluice = common.isNode ? describe.skip : describe;

function nghttpUpgrade(url) {
  return new Promise((resolve, reject) => {
    execFile('nghttp', ['-u', '-v', url], { timeout: 10000 }, (err, stdout) => {
      if (err && typeof err.code !== 'number') return reject(err);
      resolve(stdout.toString());
    });
  });
}

describeSluice('http2 h2c upgrade', function () {
  afterEach(common.cleanup);

  it('curl --http2: 101, then the request is answered over HTTP/2 (compat handler)', async function () {
    const { port } = await common.startServer((req, res) => {
      res.setHeader('x-url', req.url);
      res.end(`v${req.httpVersion} ${req.method} host=${req.headers.host}`);
    });
    const r = await common.curl(['--http2', '-i', `http://127.0.0.1:${port}/up?x=1`]);
    assert.strictEqual(r.code, 0, r.stderr);
    const out = r.stdout.toString();
    assert.match(out, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
    assert.match(out, /\r\nHTTP\/2 200 ?\r\n/);
    assert.match(out, /x-url: \/up\?x=1/);
    assert.match(out, new RegExp(`v2\\.0 GET host=127\\.0\\.0\\.1:${port}$`));
  });

  it("nghttp -u: the upgraded request reaches 'stream' as stream 1 with pseudo-headers", async function () {
    const { server, port } = await common.startServer();
    let seen;
    server.on('stream', (stream, headers) => {
      seen = { id: stream.id, headers };
      stream.respond({ ':status': 200 });
      stream.end('upgraded');
    });
    const out = await nghttpUpgrade(`http://127.0.0.1:${port}/s`);
    assert.match(out, /HTTP Upgrade success/);
    assert.match(out, /recv \(stream_id=1\) :status: 200/);
    assert.strictEqual(seen.id, 1);
    assert.strictEqual(seen.headers[':method'], 'GET');
    assert.strictEqual(seen.headers[':path'], '/s');
    assert.strictEqual(seen.headers[':scheme'], 'http');
    assert.strictEqual(seen.headers.upgrade, undefined);
    assert.strictEqual(seen.headers['http2-settings'], undefined);
  });

  it('requests that cannot switch stay HTTP/1.1: a body, or a bad HTTP2-Settings', async function () {
    const { port } = await common.startServer((req, res) => {
      common.collect(req).then((b) => res.end(`v${req.httpVersion} ${b.length}`));
    });
    const post = await common.curl(['--http2', '--data-binary', 'hello', `http://127.0.0.1:${port}/`]);
    assert.strictEqual(post.stdout.toString(), 'v1.1 5');
    const c = await common.rawConnect(port);
    c.socket.write('GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, HTTP2-Settings\r\n' +
      'Upgrade: h2c\r\nHTTP2-Settings: !!notbase64!!\r\n\r\n');
    const [r] = await c.responses(1);
    assert.strictEqual(r.statusCode, 200);
    assert.strictEqual(r.body.toString(), 'v1.1 0');
  });
});
