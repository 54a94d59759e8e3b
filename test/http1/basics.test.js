'use strict';

// GET/POST basics with node's http client, fetch and curl; the request
// object's fields (method, url, headers, rawHeaders, httpVersion, socket).

const common = require('../common');
const { assert } = common;

function echoHandler(req, res) {
  const chunks = [];
  req.on('data', (d) => chunks.push(Buffer.from(d)));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const info = {
      method: req.method,
      url: req.url,
      httpVersion: req.httpVersion,
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      bodyLength: body.length,
      body: body.toString('latin1'),
      remoteAddress: req.socket && req.socket.remoteAddress,
      remotePort: req.socket && req.socket.remotePort,
    };
    const out = JSON.stringify(info);
    res.setHeader('Content-Type', 'application/json');
    res.end(out);
  });
}

describe(`http1 basics [${common.implName}]`, function () {
  afterEach(common.cleanup);

  describe('node http client', function () {
    it('GET returns status, headers and body', async function () {
      const { port } = await common.startServer((req, res) => {
        res.setHeader('X-Test', 'yes');
        res.end('hello world');
      });
      const r = await common.httpRequest(port, { path: '/hello' });
      assert.strictEqual(r.statusCode, 200);
      assert.strictEqual(r.statusMessage, 'OK');
      assert.strictEqual(r.headers['x-test'], 'yes');
      assert.strictEqual(r.headers['content-length'], '11');
      assert.strictEqual(r.body.toString(), 'hello world');
    });

    it('POST body reaches the handler', async function () {
      const { port } = await common.startServer(echoHandler);
      const r = await common.httpRequest(port, {
        method: 'POST',
        path: '/upload?x=1&y=2',
        headers: { 'Content-Type': 'text/plain' },
        body: 'some request body',
      });
      const info = JSON.parse(r.body);
      assert.strictEqual(info.method, 'POST');
      assert.strictEqual(info.url, '/upload?x=1&y=2');
      assert.strictEqual(info.body, 'some request body');
      assert.strictEqual(info.headers['content-type'], 'text/plain');
      assert.strictEqual(info.headers['content-length'], '17');
      assert.strictEqual(r.headers['content-type'], 'application/json');
    });

    it('server emits "request" for listeners added with on()', async function () {
      const { server, port } = await common.startServer();
      server.on('request', (req, res) => res.end('via event'));
      const r = await common.httpRequest(port);
      assert.strictEqual(r.body.toString(), 'via event');
    });

    it('PUT, DELETE, PATCH and OPTIONS methods', async function () {
      const { port } = await common.startServer(echoHandler);
      for (const method of ['PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
        const r = await common.httpRequest(port, { method, path: `/m/${method}`, body: (method === 'DELETE' || method === 'OPTIONS') ? undefined : 'x' });
        const info = JSON.parse(r.body);
        assert.strictEqual(info.method, method);
        assert.strictEqual(info.url, `/m/${method}`);
      }
    });

    it('several concurrent requests on separate connections', async function () {
      const { port } = await common.startServer((req, res) => {
        common.setTimer(() => res.end(req.url), Math.floor(Math.random() * 20));
      });
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => common.httpRequest(port, { path: `/${i}` })));
      results.forEach((r, i) => assert.strictEqual(r.body.toString(), `/${i}`));
    });
  });

  describe('fetch', function () {
    it('GET', async function () {
      const { port } = await common.startServer((req, res) => {
        res.setHeader('Content-Type', 'text/plain; charset=utf-8');
        res.end('fetched \u2713');
      });
      const r = await fetch(`http://127.0.0.1:${port}/f`);
      assert.strictEqual(r.status, 200);
      assert.strictEqual(r.headers.get('content-type'), 'text/plain; charset=utf-8');
      assert.strictEqual(await r.text(), 'fetched \u2713');
    });

    it('POST with a body', async function () {
      const { port } = await common.startServer(echoHandler);
      const r = await fetch(`http://127.0.0.1:${port}/post`, {
        method: 'POST',
        body: 'fetch body',
        headers: { 'x-from': 'fetch' },
      });
      assert.strictEqual(r.status, 200);
      const info = await r.json();
      assert.strictEqual(info.method, 'POST');
      assert.strictEqual(info.body, 'fetch body');
      assert.strictEqual(info.headers['x-from'], 'fetch');
    });

    it('POST with a streamed (chunked) body', async function () {
      const { port } = await common.startServer(echoHandler);
      const parts = ['alpha-', 'beta-', 'gamma'];
      const stream = new ReadableStream({
        pull(controller) {
          if (parts.length) controller.enqueue(new TextEncoder().encode(parts.shift()));
          else controller.close();
        },
      });
      const r = await fetch(`http://127.0.0.1:${port}/stream`, { method: 'POST', body: stream, duplex: 'half' });
      const info = await r.json();
      assert.strictEqual(info.body, 'alpha-beta-gamma');
      assert.strictEqual(info.headers['transfer-encoding'], 'chunked');
    });
  });

  describe('curl', function () {
    it('GET', async function () {
      const { url } = await common.startServer((req, res) => {
        res.setHeader('X-Curl', '1');
        res.end('curl says hi');
      });
      const r = await common.curl(['-i', `${url}/c`]);
      assert.strictEqual(r.code, 0, r.stderr);
      const [resp] = common.parseAll(r.stdout);
      assert.strictEqual(resp.statusCode, 200);
      assert.strictEqual(resp.headers['x-curl'], '1');
      assert.strictEqual(resp.body.toString(), 'curl says hi');
    });

    it('POST --data-binary', async function () {
      const { url } = await common.startServer(echoHandler);
      const payload = Buffer.from('curl payload \x00\x01\x02 end', 'latin1');
      const r = await common.curl(['--data-binary', '@-', '-H', 'Content-Type: application/octet-stream', `${url}/p`], { input: payload });
      assert.strictEqual(r.code, 0, r.stderr);
      const info = JSON.parse(r.stdout);
      assert.strictEqual(info.method, 'POST');
      assert.strictEqual(info.body, payload.toString('latin1'));
      assert.strictEqual(info.headers['content-type'], 'application/octet-stream');
    });

    it('HEAD (curl -I)', async function () {
      const { url } = await common.startServer((req, res) => {
        res.setHeader('Content-Type', 'text/plain');
        res.end(req.method === 'HEAD' ? undefined : 'body');
      });
      const r = await common.curl(['-I', `${url}/h`]);
      assert.strictEqual(r.code, 0, r.stderr);
      const [resp] = common.parseAll(r.stdout, { methods: ['HEAD'] });
      assert.strictEqual(resp.statusCode, 200);
      assert.strictEqual(resp.headers['content-type'], 'text/plain');
    });

    it('keeps one connection for several URLs', async function () {
      const ports = new Set();
      const { url } = await common.startServer((req, res) => {
        ports.add(req.socket.remotePort);
        res.end(req.url);
      });
      const r = await common.curl([`${url}/a`, `${url}/b`, `${url}/c`]);
      assert.strictEqual(r.code, 0, r.stderr);
      assert.strictEqual(r.stdout.toString(), '/a/b/c');
      assert.strictEqual(ports.size, 1, 'curl should reuse the keep-alive connection');
    });
  });

  describe('request fields', function () {
    it('method, url, httpVersion, socket.remoteAddress/remotePort', async function () {
      let seen;
      const { port } = await common.startServer((req, res) => {
        seen = {
          method: req.method,
          url: req.url,
          httpVersion: req.httpVersion,
          remoteAddress: req.socket.remoteAddress,
          remotePort: req.socket.remotePort,
        };
        res.end();
      });
      const c = await common.rawConnect(port);
      c.socket.write('GET /path/to/thing?q=%20a&b=c#frag HTTP/1.1\r\nHost: example\r\n\r\n');
      await c.responses(1);
      assert.deepStrictEqual(seen, {
        method: 'GET',
        url: '/path/to/thing?q=%20a&b=c#frag',
        httpVersion: '1.1',
        remoteAddress: '127.0.0.1',
        remotePort: c.socket.localPort,
      });
    });

    it('httpVersion is 1.0 for HTTP/1.0 requests', async function () {
      let version;
      const { port } = await common.startServer((req, res) => {
        version = req.httpVersion;
        res.end('x');
      });
      await common.rawUntilClose(port, 'GET / HTTP/1.0\r\n\r\n');
      assert.strictEqual(version, '1.0');
    });

    it('headers are lower-cased, rawHeaders keep case and order', async function () {
      let seen;
      const { port } = await common.startServer((req, res) => {
        seen = { headers: req.headers, rawHeaders: req.rawHeaders };
        res.end();
      });
      const c = await common.rawConnect(port);
      c.socket.write('GET / HTTP/1.1\r\nHost: h.example\r\nX-Mixed-CASE: Value Kept\r\nACCEPT: */*\r\nx-empty:\r\nX-Spaces:   padded   \r\n\r\n');
      await c.responses(1);
      assert.deepStrictEqual(seen.rawHeaders, [
        'Host', 'h.example',
        'X-Mixed-CASE', 'Value Kept',
        'ACCEPT', '*/*',
        'x-empty', '',
        'X-Spaces', 'padded',
      ]);
      assert.deepStrictEqual(seen.headers, {
        host: 'h.example',
        'x-mixed-case': 'Value Kept',
        accept: '*/*',
        'x-empty': '',
        'x-spaces': 'padded',
      });
    });

    it('duplicate headers are joined as node does', async function () {
      let seen;
      const { port } = await common.startServer((req, res) => {
        seen = { headers: req.headers, rawHeaders: req.rawHeaders };
        res.end();
      });
      const c = await common.rawConnect(port);
      c.socket.write([
        'GET / HTTP/1.1',
        'Host: h',
        'X-Foo: a',
        'x-foo: b',
        'X-FOO: c',
        'Set-Cookie: s1=1',
        'set-cookie: s2=2',
        'Content-Type: text/plain',
        'Content-Type: text/html',
        'Cookie: c1=1',
        'Cookie: c2=2',
        'User-Agent: first',
        'User-Agent: second',
        'Accept: a/b',
        'Accept: c/d',
        '', '',
      ].join('\r\n'));
      await c.responses(1);
      const h = seen.headers;
      assert.strictEqual(h['x-foo'], 'a, b, c');
      assert.deepStrictEqual(h['set-cookie'], ['s1=1', 's2=2']);
      assert.strictEqual(h['content-type'], 'text/plain', 'duplicate content-type keeps the first');
      assert.strictEqual(h.cookie, 'c1=1; c2=2', 'cookie is joined with "; "');
      assert.strictEqual(h['user-agent'], 'first', 'duplicate user-agent keeps the first');
      assert.strictEqual(h.accept, 'a/b, c/d');
      assert.strictEqual(seen.rawHeaders.length, 28);
      assert.deepStrictEqual(seen.rawHeaders.slice(2, 8), ['X-Foo', 'a', 'x-foo', 'b', 'X-FOO', 'c']);
    });

    it('a long URL and many headers', async function () {
      let seen;
      const { port } = await common.startServer((req, res) => {
        seen = req;
        res.end();
      });
      const longPath = '/' + 'p'.repeat(4000) + '?' + 'q=1&'.repeat(500);
      const lines = ['GET ' + longPath + ' HTTP/1.1', 'Host: h'];
      for (let i = 0; i < 100; i++) lines.push(`X-H${i}: v${i}`);
      const c = await common.rawConnect(port);
      c.socket.write(lines.join('\r\n') + '\r\n\r\n');
      const [r] = await c.responses(1);
      assert.strictEqual(r.statusCode, 200);
      assert.strictEqual(seen.url, longPath);
      assert.strictEqual(seen.headers['x-h0'], 'v0');
      assert.strictEqual(seen.headers['x-h99'], 'v99');
      assert.strictEqual(seen.rawHeaders.length, 2 * 101);
    });
  });
});
