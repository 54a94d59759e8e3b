'use strict';

// HTTP/2 (h2c, prior knowledge) basics with node's http2 client, curl and
// raw frames: the 'stream' API, the request/response compat path, both
// protocols on one port, uploads and request-body flow control.

const common = require('../common');
const h2 = require('./h2common');
const { assert } = common;

const describeSluice = common.isNode ? describe.skip : describe;

describeSluice('http2 basics', function () {
  afterEach(common.cleanup);

  it("'stream': respond + end reaches node's http2 client with status, headers, date", async function () {
    const { server, port } = await common.startServer();
    let seen;
    server.on('stream', (stream, headers, flags) => {
      seen = { headers, flags, id: stream.id };
      stream.respond({ ':status': 201, 'content-type': 'text/plain', 'x-multi': ['a', 'b'] });
      stream.end('hello ' + headers[':path']);
    });
    const s = h2.connect(port);
    const r = await h2.request(s, { ':path': '/p?q=1', 'x-req': 'yes' });
    assert.strictEqual(r.headers[':status'], 201);
    assert.strictEqual(r.headers['content-type'], 'text/plain');
    assert.strictEqual(r.headers['x-multi'], 'a, b');
    assert.match(r.headers.date, /GMT$/);
    assert.strictEqual(r.body.toString(), 'hello /p?q=1');
    assert.strictEqual(seen.headers[':method'], 'GET');
    assert.strictEqual(seen.headers[':path'], '/p?q=1');
    assert.strictEqual(seen.headers[':scheme'], 'http');
    assert.strictEqual(seen.headers['x-req'], 'yes');
    assert.strictEqual(seen.flags & 1, 1, 'END_STREAM flag on a bodiless request');
    assert.strictEqual(seen.id, 1);
  });

  it('stream.write with backpressure, end and the close event', async function () {
    const { server, port } = await common.startServer();
    const events = [];
    server.on('stream', (stream) => {
      stream.on('close', () => events.push('close'));
      stream.respond({ ':status': 200 });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      let i = 0;
      const pump = () => {
        while (i < 64) {
          i++;
          if (!stream.write(chunk)) {
            events.push('false');
            stream.once('drain', pump);
            return;
          }
        }
        stream.end();
      };
      pump();
    });
    const s = h2.connect(port);
    const r = await h2.request(s);
    assert.strictEqual(r.body.length, 64 * 64 * 1024);
    assert.ok(r.body.every((b) => b === 0x78));
    await common.sleep(20);
    assert.ok(events.includes('false'), 'write() reported backpressure at least once');
    assert.strictEqual(events[events.length - 1], 'close');
  });

  it('curl --http2-prior-knowledge: GET and POST', async function () {
    const { server, port } = await common.startServer();
    server.on('stream', async (stream, headers) => {
      const body = await common.collect(stream);
      stream.respond({ ':status': 200, 'x-method': headers[':method'] });
      stream.end(`${headers[':method']} ${body.length}`);
    });
    const get = await common.curl(['--http2-prior-knowledge', '-i', `http://127.0.0.1:${port}/`]);
    assert.strictEqual(get.code, 0, get.stderr);
    assert.match(get.stdout.toString(), /^HTTP\/2 200/);
    assert.match(get.stdout.toString(), /x-method: GET/);
    assert.match(get.stdout.toString(), /GET 0$/);
    const post = await common.curl(['--http2-prior-knowledge', '--data-binary', '@-', `http://127.0.0.1:${port}/`],
      { input: Buffer.alloc(100000, 'p') });
    assert.strictEqual(post.code, 0, post.stderr);
    assert.strictEqual(post.stdout.toString(), 'POST 100000');
  });

  it('a request-only handler serves an HTTP/2 client with req/res (httpVersion 2.0)', async function () {
    const errors = common.handlerErrors();
    const { port } = await common.startServer(errors.wrap((req, res) => {
      const chunks = [];
      req.on('data', (d) => chunks.push(d));
      req.on('end', () => {
        const info = {
          httpVersion: req.httpVersion,
          method: req.method,
          url: req.url,
          headers: req.headers,
          body: Buffer.concat(chunks).toString(),
          remoteAddress: req.socket.remoteAddress,
          // node's Http2ServerRequest has no joinDuplicateHeaders.
          joinUndefined: req.joinDuplicateHeaders === undefined,
        };
        res.setHeader('Content-Type', 'application/json');
        res.setHeader('Connection', 'keep-alive');  // dropped: not HTTP/2
        res.writeHead(202, { 'X-Extra': '1' });
        res.write(JSON.stringify(info).slice(0, 5));
        res.end(JSON.stringify(info).slice(5));
      });
    }));
    const s = h2.connect(port);
    const r = await h2.request(s, { ':method': 'POST', ':path': '/up?x=1', 'x-h': 'v' }, { body: 'payload' });
    errors.check();
    assert.strictEqual(r.headers[':status'], 202);
    assert.strictEqual(r.headers['content-type'], 'application/json');
    assert.strictEqual(r.headers['x-extra'], '1');
    assert.strictEqual(r.headers.connection, undefined);
    const info = JSON.parse(r.body);
    assert.strictEqual(info.httpVersion, '2.0');
    assert.strictEqual(info.joinUndefined, true);
    assert.strictEqual(info.method, 'POST');
    assert.strictEqual(info.url, '/up?x=1');
    assert.strictEqual(info.body, 'payload');
    assert.strictEqual(info.headers['x-h'], 'v');
    assert.strictEqual(info.headers.host, `127.0.0.1:${port}`);
    // As node's compat: the pseudo-headers are in req.headers.
    assert.strictEqual(info.headers[':method'], 'POST');
    assert.strictEqual(info.headers[':path'], '/up?x=1');
    assert.strictEqual(info.remoteAddress, '127.0.0.1');
  });

  it('compat: res.end(body) with no explicit status and HEAD without body', async function () {
    const { port } = await common.startServer((req, res) => {
      res.end('x'.repeat(10));
    });
    const s = h2.connect(port);
    const r = await h2.request(s);
    assert.strictEqual(r.headers[':status'], 200);
    assert.strictEqual(r.headers['content-length'], '10');
    assert.strictEqual(r.body.toString(), 'x'.repeat(10));
    const head = await h2.request(s, { ':method': 'HEAD' });
    assert.strictEqual(head.headers[':status'], 200);
    assert.strictEqual(head.headers['content-length'], undefined, 'no length invented for HEAD');
    assert.strictEqual(head.body.length, 0);
  });

  it('compat: 204 and 304 carry no body and no content-length', async function () {
    const { port } = await common.startServer((req, res) => {
      res.statusCode = req.url === '/204' ? 204 : 304;
      res.end();
    });
    const s = h2.connect(port);
    for (const status of [204, 304]) {
      const r = await h2.request(s, { ':path': `/${status}` });
      assert.strictEqual(r.headers[':status'], status);
      assert.strictEqual(r.headers['content-length'], undefined);
      assert.strictEqual(r.body.length, 0);
    }
  });

  it('HTTP/1.1 and HTTP/2 on the same port', async function () {
    const { port } = await common.startServer((req, res) => res.end(`v${req.httpVersion}`));
    const s = h2.connect(port);
    const [a, b, c] = await Promise.all([
      h2.request(s),
      common.httpRequest(port),
      common.curl(['--http2-prior-knowledge', `http://127.0.0.1:${port}/`]),
    ]);
    assert.strictEqual(a.body.toString(), 'v2.0');
    assert.strictEqual(b.body.toString(), 'v1.1');
    assert.strictEqual(c.stdout.toString(), 'v2.0');
    // A POST whose method shares the preface's first letter is HTTP/1.1.
    const p = await common.httpRequest(port, { method: 'POST', body: 'x' });
    assert.strictEqual(p.body.toString(), 'v1.1');
  });

  it('the preface split byte by byte across reads is still HTTP/2', async function () {
    const { server, port } = await common.startServer();
    server.on('stream', (stream) => {
      stream.respond();
      stream.end('ok');
    });
    const c = await common.rawConnect(port);
    for (const byte of h2.PREFACE) {
      await c.write(Buffer.from([byte]));
      await common.sleep(2);
    }
    await c.write(h2.frame(h2.FRAME.SETTINGS, 0, 0));
    await c.write(h2.frame(h2.FRAME.HEADERS, 0x5, 1, h2.GET_SLASH));
    const frames = await c.waitFor((cl) => {
      const f = h2.parseFrames(cl.data);
      return f.some((x) => x.type === h2.FRAME.DATA && x.streamId === 1 && (x.flags & 1)) ? f : null;
    }, 5000, 'DATA with END_STREAM on stream 1');
    assert.strictEqual(frames[0].type, h2.FRAME.SETTINGS, 'the server speaks first with SETTINGS');
    const data = frames.filter((x) => x.type === h2.FRAME.DATA && x.streamId === 1);
    assert.strictEqual(Buffer.concat(data.map((x) => x.payload)).toString(), 'ok');
  });

  it('an 8 MiB upload arrives intact (sha256), stream API and compat', async function () {
    this.timeout(30000);
    const payload = require('node:crypto').randomBytes(8 * 1024 * 1024);
    const digest = common.sha256(payload);
    const { server, port } = await common.startServer((req, res) => {
      common.collect(req).then((b) => res.end(`${b.length} ${common.sha256(b)}`));
    });
    const s = h2.connect(port);
    const compat = await h2.request(s, { ':method': 'PUT' }, { body: payload });
    assert.strictEqual(compat.body.toString(), `${payload.length} ${digest}`);
    server.on('stream', (stream) => {
      common.collect(stream).then((b) => {
        stream.respond({ ':status': 200 });
        stream.end(`${b.length} ${common.sha256(b)}`);
      });
    });
    const viaStream = await h2.request(s, { ':method': 'PUT' }, { body: payload });
    assert.strictEqual(viaStream.body.toString(), `${payload.length} ${digest}`);
  });

  it('a paused request stream backpressures its sender (window follows consumption)', async function () {
    this.timeout(20000);
    const { server, port } = await common.startServer();
    let serverStream;
    const got = new Promise((resolve) => {
      server.on('stream', (stream) => {
        serverStream = stream;
        stream.pause();
        resolve();
      });
    });
    const s = h2.connect(port);
    const req = s.request({ ':method': 'POST', ':path': '/' });
    req.on('error', () => {});
    const chunk = Buffer.alloc(64 * 1024, 1);
    let written = 0;
    const total = 16 * 1024 * 1024;
    const writeMore = () => {
      while (written < total) {
        written += chunk.length;
        if (!req.write(chunk)) return;
      }
      req.end();
    };
    req.on('drain', writeMore);
    writeMore();
    await got;
    await common.sleep(500);
    const buffered = serverStream.readableLength;
    // At most the stream window (1 MiB) plus a frame in flight.
    assert.ok(buffered <= 1024 * 1024 + 64 * 1024, `server buffered ${buffered} bytes while paused`);
    assert.ok(req.writableLength + buffered < total, 'the client was held back');
    let n = 0;
    serverStream.on('data', (d) => { n += d.length; });
    serverStream.resume();
    await common.once(serverStream, 'end', 15000);
    assert.strictEqual(n, total);
    serverStream.respond();
    serverStream.end();
  });
});
