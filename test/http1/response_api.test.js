'use strict';

// The res API: status, headers, writeHead, write/end, events, framing
// (Content-Length vs chunked), header injection, Set-Cookie, 204/304/HEAD,
// trailers, backpressure.

const crypto = require('node:crypto');
const http = require('node:http');
const common = require('../common');
const { assert } = common;

// GET `path` over a raw socket and return the single parsed response.
async function rawGet(port, path = '/', method = 'GET') {
  const c = await common.rawConnect(port);
  c.socket.write(`${method} ${path} HTTP/1.1\r\nHost: h\r\n\r\n`);
  const [r] = await c.responses(1, { methods: [method] });
  c.destroy();
  return r;
}

function headerLines(r) {
  const out = [];
  for (let i = 0; i < r.rawHeaders.length; i += 2) out.push([r.rawHeaders[i].toLowerCase(), r.rawHeaders[i + 1]]);
  return out;
}

describe(`http1 response API [${common.implName}]`, function () {
  afterEach(common.cleanup);

  describe('status', function () {
    it('defaults to 200 OK', async function () {
      const errs = common.handlerErrors();
      const { port } = await common.startServer(errs.wrap((req, res) => {
        assert.strictEqual(res.statusCode, 200);
        res.end();
      }));
      const r = await rawGet(port);
      errs.check();
      assert.strictEqual(r.statusCode, 200);
      assert.strictEqual(r.statusMessage, 'OK');
    });

    it('statusCode sets the code with its standard reason phrase', async function () {
      const { port } = await common.startServer((req, res) => {
        res.statusCode = Number(req.url.slice(1));
        res.end();
      });
      for (const [code, msg] of [[201, 'Created'], [404, 'Not Found'], [500, 'Internal Server Error'], [418, "I'm a Teapot"]]) {
        const r = await rawGet(port, `/${code}`);
        assert.strictEqual(r.statusCode, code);
        assert.strictEqual(r.statusMessage, msg);
      }
    });

    it('statusMessage overrides the reason phrase', async function () {
      const { port } = await common.startServer((req, res) => {
        res.statusCode = 299;
        res.statusMessage = 'Custom Reason';
        res.end();
      });
      const r = await rawGet(port);
      assert.strictEqual(r.statusCode, 299);
      assert.strictEqual(r.statusMessage, 'Custom Reason');
      const r2 = await common.httpRequest(port);
      assert.strictEqual(r2.statusMessage, 'Custom Reason');
    });

    it('writeHead(status, message, headers) and writeHead(status, headers)', async function () {
      const { port } = await common.startServer((req, res) => {
        if (req.url === '/msg') res.writeHead(404, 'Nowhere', { 'X-A': 'a', 'Content-Type': 'text/x' });
        else res.writeHead(202, { 'X-B': 'b' });
        res.end('body');
      });
      const r1 = await rawGet(port, '/msg');
      assert.strictEqual(r1.statusCode, 404);
      assert.strictEqual(r1.statusMessage, 'Nowhere');
      assert.strictEqual(r1.headers['x-a'], 'a');
      assert.strictEqual(r1.headers['content-type'], 'text/x');
      assert.strictEqual(r1.body.toString(), 'body');
      const r2 = await rawGet(port, '/other');
      assert.strictEqual(r2.statusCode, 202);
      assert.strictEqual(r2.statusMessage, 'Accepted');
      assert.strictEqual(r2.headers['x-b'], 'b');
    });

    it('writeHead returns res (chainable)', async function () {
      const errs = common.handlerErrors();
      const { port } = await common.startServer(errs.wrap((req, res) => {
        const ret = res.writeHead(200, { 'X-Chain': '1' });
        assert.strictEqual(ret, res);
        ret.end('chained');
      }));
      const r = await rawGet(port);
      errs.check();
      assert.strictEqual(r.body.toString(), 'chained');
    });
  });

  describe('headers', function () {
    it('setHeader/getHeader/getHeaders/hasHeader/removeHeader/getHeaderNames', async function () {
      const errs = common.handlerErrors();
      const { port } = await common.startServer(errs.wrap((req, res) => {
        assert.strictEqual(res.setHeader('X-One', '1'), res, 'setHeader returns res');
        res.setHeader('x-two', 2);
        res.setHeader('X-Arr', ['a', 'b']);
        res.setHeader('X-Gone', 'soon');
        assert.strictEqual(res.getHeader('x-one'), '1');
        assert.strictEqual(res.getHeader('X-ONE'), '1');
        assert.strictEqual(res.getHeader('x-two'), 2);
        assert.deepStrictEqual(res.getHeader('x-arr'), ['a', 'b']);
        assert.strictEqual(res.getHeader('x-missing'), undefined);
        assert.strictEqual(res.hasHeader('X-Gone'), true);
        assert.strictEqual(res.hasHeader('x-gone'), true);
        res.removeHeader('X-GONE');
        assert.strictEqual(res.hasHeader('x-gone'), false);
        assert.strictEqual(res.getHeader('x-gone'), undefined);
        res.setHeader('X-One', 'one');
        assert.deepStrictEqual({ ...res.getHeaders() }, { 'x-one': 'one', 'x-two': 2, 'x-arr': ['a', 'b'] });
        assert.deepStrictEqual(res.getHeaderNames(), ['x-one', 'x-two', 'x-arr']);
        assert.strictEqual(res.headersSent, false);
        res.end('h');
      }));
      const r = await rawGet(port);
      errs.check();
      assert.strictEqual(r.headers['x-one'], 'one');
      assert.strictEqual(r.headers['x-two'], '2');
      assert.deepStrictEqual(r.headers['x-arr'], ['a', 'b']);
      assert.strictEqual(r.headers['x-gone'], undefined);
    });

    it('header name case given to setHeader is kept on the wire', async function () {
      const { port } = await common.startServer((req, res) => {
        res.setHeader('X-CamelCase-Name', 'v');
        res.end();
      });
      const r = await rawGet(port);
      assert.ok(r.rawHeaders.includes('X-CamelCase-Name'), `raw headers: ${r.rawHeaders}`);
    });

    it('writeHead with a raw [name, value, ...] array', async function () {
      const { port } = await common.startServer((req, res) => {
        res.writeHead(200, ['X-A', '1', 'X-B', '2', 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2']);
        res.end('raw');
      });
      const r = await rawGet(port);
      assert.strictEqual(r.headers['x-a'], '1');
      assert.strictEqual(r.headers['x-b'], '2');
      assert.deepStrictEqual(r.headers['set-cookie'], ['a=1', 'b=2']);
      assert.strictEqual(r.body.toString(), 'raw');
    });

    it('writeHead headers are merged with setHeader ones, writeHead winning', async function () {
      const { port } = await common.startServer((req, res) => {
        res.setHeader('X-Set', 'from-set');
        res.setHeader('X-Both', 'from-set');
        res.writeHead(200, { 'X-Both': 'from-writeHead', 'X-Head': 'h' });
        res.end();
      });
      const r = await rawGet(port);
      assert.strictEqual(r.headers['x-set'], 'from-set');
      assert.strictEqual(r.headers['x-both'], 'from-writeHead');
      assert.strictEqual(r.headers['x-head'], 'h');
    });

    it('Set-Cookie arrays produce separate header lines', async function () {
      const { port } = await common.startServer((req, res) => {
        res.setHeader('Set-Cookie', ['a=1; Path=/', 'b=2; HttpOnly', 'c=3']);
        res.end();
      });
      const r = await rawGet(port);
      const cookies = headerLines(r).filter(([n]) => n === 'set-cookie').map(([, v]) => v);
      assert.deepStrictEqual(cookies, ['a=1; Path=/', 'b=2; HttpOnly', 'c=3']);
      const r2 = await common.httpRequest(port);
      assert.deepStrictEqual(r2.headers['set-cookie'], ['a=1; Path=/', 'b=2; HttpOnly', 'c=3']);
    });

    it('a Date header is sent', async function () {
      const { port } = await common.startServer((req, res) => res.end());
      const r = await rawGet(port);
      assert.ok(r.headers.date, 'no Date header');
      const d = Date.parse(r.headers.date);
      assert.ok(Math.abs(d - Date.now()) < 5000, `bad Date ${r.headers.date}`);
      assert.match(r.headers.date, /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
    });

    it('setHeader after the headers were sent throws ERR_HTTP_HEADERS_SENT', async function () {
      let err;
      const { port } = await common.startServer((req, res) => {
        res.writeHead(200);
        res.write('x');
        try {
          res.setHeader('X-Late', '1');
        } catch (e) {
          err = e;
        }
        res.end();
      });
      await rawGet(port);
      assert.ok(err, 'setHeader did not throw');
      assert.strictEqual(err.code, 'ERR_HTTP_HEADERS_SENT');
    });
  });

  describe('header injection', function () {
    const badValues = ['a\r\nX-Injected: 1', 'a\nb', 'a\rb', 'a\0b'];
    const badNames = ['X-Bad\r\nX-Injected', 'X-Bad\n', 'X-Bad\r', 'X\0Bad'];

    it('setHeader with CR/LF/NUL in a value throws ERR_INVALID_CHAR', async function () {
      const results = [];
      const { port } = await common.startServer((req, res) => {
        for (const v of badValues) {
          try {
            res.setHeader('X-Value', v);
            results.push(null);
          } catch (e) {
            results.push(e);
          }
        }
        res.end('safe');
      });
      const r = await rawGet(port);
      assert.strictEqual(results.length, badValues.length);
      results.forEach((e, i) => {
        assert.ok(e instanceof Error, `no throw for ${JSON.stringify(badValues[i])}`);
        assert.strictEqual(e.code, 'ERR_INVALID_CHAR', `value ${JSON.stringify(badValues[i])}`);
      });
      assert.strictEqual(r.headers['x-injected'], undefined);
      assert.strictEqual(r.headers['x-value'], undefined);
      assert.strictEqual(r.body.toString(), 'safe');
    });

    it('setHeader with CR/LF/NUL in a name throws (ERR_INVALID_CHAR or ERR_INVALID_HTTP_TOKEN)', async function () {
      const results = [];
      const { port } = await common.startServer((req, res) => {
        for (const n of badNames) {
          try {
            res.setHeader(n, 'v');
            results.push(null);
          } catch (e) {
            results.push(e);
          }
        }
        res.end('safe');
      });
      const r = await rawGet(port);
      results.forEach((e, i) => {
        assert.ok(e instanceof Error, `no throw for ${JSON.stringify(badNames[i])}`);
        assert.ok(['ERR_INVALID_CHAR', 'ERR_INVALID_HTTP_TOKEN'].includes(e.code), `name ${JSON.stringify(badNames[i])}: code ${e.code}`);
      });
      assert.strictEqual(r.headers['x-injected'], undefined);
      assert.strictEqual(r.body.toString(), 'safe');
    });

    it('writeHead with an injected value (object and raw array) throws ERR_INVALID_CHAR', async function () {
      const results = {};
      const { port } = await common.startServer((req, res) => {
        try {
          if (req.url === '/obj') res.writeHead(200, { 'X-Value': 'a\r\nX-Injected: 1' });
          else res.writeHead(200, ['X-Value', 'a\r\nX-Injected: 1']);
          results[req.url] = null;
        } catch (e) {
          results[req.url] = e;
        }
        if (!res.headersSent) res.writeHead(500, { 'X-Recovered': 'yes' });
        res.end('after');
      });
      for (const path of ['/obj', '/arr']) {
        const r = await rawGet(port, path);
        const e = results[path];
        assert.ok(e instanceof Error, `writeHead ${path} did not throw`);
        assert.strictEqual(e.code, 'ERR_INVALID_CHAR');
        assert.strictEqual(r.headers['x-injected'], undefined);
        assert.ok(!/X-Injected/i.test(r.raw.toString('latin1')), 'injected header reached the wire');
      }
    });
  });

  describe('framing', function () {
    it('Content-Length when the whole body is known at end()', async function () {
      const { port } = await common.startServer((req, res) => {
        if (req.url === '/str') res.end('hello');
        else if (req.url === '/utf8') res.end('\u20ac\u20ac');
        else if (req.url === '/buf') res.end(Buffer.alloc(1000, 7));
        else res.end();
      });
      const cases = { '/str': 5, '/utf8': 6, '/buf': 1000, '/empty': 0 };
      for (const [path, len] of Object.entries(cases)) {
        const r = await rawGet(port, path);
        assert.strictEqual(r.headers['content-length'], String(len), path);
        assert.strictEqual(r.headers['transfer-encoding'], undefined, path);
        assert.strictEqual(r.body.length, len, path);
      }
    });

    it('chunked when the body is written before end()', async function () {
      const { port } = await common.startServer(async (req, res) => {
        res.write('one,');
        res.write(Buffer.from('two,'));
        await common.sleep(5);
        res.end('three');
      });
      const r = await rawGet(port);
      assert.strictEqual(r.headers['transfer-encoding'], 'chunked');
      assert.strictEqual(r.headers['content-length'], undefined);
      assert.strictEqual(r.chunked, true);
      assert.strictEqual(r.body.toString(), 'one,two,three');
    });

    it('an explicit Content-Length with write() is not chunked', async function () {
      const { port } = await common.startServer((req, res) => {
        res.setHeader('Content-Length', 10);
        res.write('01234');
        res.end('56789');
      });
      const r = await rawGet(port);
      assert.strictEqual(r.headers['content-length'], '10');
      assert.strictEqual(r.headers['transfer-encoding'], undefined);
      assert.strictEqual(r.body.toString(), '0123456789');
    });

    it('write(string, encoding) and end(string, encoding)', async function () {
      const { port } = await common.startServer((req, res) => {
        res.write('68656c6c6f', 'hex');
        res.end('IHdvcmxk', 'base64');
      });
      const r = await rawGet(port);
      assert.strictEqual(r.body.toString(), 'hello world');
    });

    it('a 256 KiB body from end(Buffer) arrives intact', async function () {
      const body = crypto.randomBytes(256 * 1024);
      const { port } = await common.startServer((req, res) => res.end(body));
      const r = await rawGet(port);
      assert.strictEqual(r.headers['content-length'], String(body.length));
      assert.ok(r.body.equals(body));
      const r2 = await common.httpRequest(port);
      assert.ok(r2.body.equals(body));
    });

    it('204 and 304 never carry a body, even when one is passed to end()', async function () {
      const errs = common.handlerErrors();
      const { port } = await common.startServer(errs.wrap((req, res) => {
        if (req.url === '/204') {
          res.writeHead(204);
          res.end();
        } else if (req.url === '/204body') {
          res.statusCode = 204;
          res.end('must not be sent');
        } else if (req.url === '/304') {
          res.writeHead(304, { ETag: '"x"' });
          res.end();
        } else if (req.url === '/304body') {
          res.statusCode = 304;
          res.end('must not be sent');
        } else {
          res.end('last');
        }
      }));
      const c = await common.rawConnect(port);
      c.socket.write(['/204', '/204body', '/304', '/304body', '/last'].map((p) => `GET ${p} HTTP/1.1\r\nHost: h\r\n\r\n`).join(''));
      const rs = await c.responses(5);
      await common.sleep(50);
      errs.check();
      const all = common.parseAll(c.data, { ended: false });
      assert.deepStrictEqual(all.map((r) => r.statusCode), [204, 204, 304, 304, 200]);
      for (const r of all.slice(0, 4)) {
        assert.strictEqual(r.headers['transfer-encoding'], undefined, `${r.statusCode} with transfer-encoding`);
      }
      for (const r of all.slice(0, 2)) {
        assert.ok(r.headers['content-length'] === undefined || r.headers['content-length'] === '0');
      }
      assert.ok(!c.text.includes('must not be sent'));
      assert.strictEqual(rs[4].body.toString(), 'last');
    });

    it('HEAD never sends a body, and keeps an explicit Content-Length', async function () {
      const { port } = await common.startServer((req, res) => {
        if (req.url === '/explicit') {
          res.setHeader('Content-Length', 11);
          res.end(req.method === 'HEAD' ? undefined : 'hello world');
        } else if (req.url === '/stream') {
          res.write('streamed ');
          res.end('body');
        } else {
          res.end('hello world');
        }
      });
      const c = await common.rawConnect(port);
      c.socket.write('HEAD /explicit HTTP/1.1\r\nHost: h\r\n\r\n' +
                     'HEAD /implicit HTTP/1.1\r\nHost: h\r\n\r\n' +
                     'HEAD /stream HTTP/1.1\r\nHost: h\r\n\r\n' +
                     'GET /implicit HTTP/1.1\r\nHost: h\r\n\r\n');
      const methods = ['HEAD', 'HEAD', 'HEAD', 'GET'];
      await c.responses(4, { methods });
      await common.sleep(50);
      const rs = common.parseAll(c.data, { methods, ended: false });
      assert.strictEqual(rs.length, 4);
      assert.strictEqual(rs[0].headers['content-length'], '11');
      assert.ok(!c.text.includes('hello world\r\n') && !c.text.includes('streamed'), 'a HEAD response carried a body');
      assert.strictEqual(rs[3].body.toString(), 'hello world');
      // node's client agrees
      const r = await common.httpRequest(port, { method: 'HEAD', path: '/explicit' });
      assert.strictEqual(r.headers['content-length'], '11');
      assert.strictEqual(r.body.length, 0);
    });

    it('trailers from addTrailers() arrive on a chunked response', async function () {
      const { port } = await common.startServer((req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/plain', Trailer: 'X-Checksum, X-Other' });
        res.write('payload ');
        res.write('data');
        res.addTrailers({ 'X-Checksum': 'abc123', 'X-Other': 'o' });
        res.end();
      });
      const r = await common.httpRequest(port);
      assert.strictEqual(r.body.toString(), 'payload data');
      assert.strictEqual(r.headers['transfer-encoding'], 'chunked');
      assert.deepStrictEqual({ ...r.trailers }, { 'x-checksum': 'abc123', 'x-other': 'o' });
      const raw = await rawGet(port);
      assert.strictEqual(raw.trailers['x-checksum'], 'abc123');
    });
  });

  describe('state and events', function () {
    it('headersSent, writableEnded, writableFinished, finish then close', async function () {
      const errs = common.handlerErrors();
      const log = [];
      let done;
      const finished = new Promise((r) => { done = r; });
      const { port } = await common.startServer(errs.wrap((req, res) => {
        assert.strictEqual(res.headersSent, false);
        assert.strictEqual(res.writableEnded, false);
        res.on('finish', errs.wrap(() => {
          log.push('finish');
          assert.strictEqual(res.writableFinished, true);
        }));
        res.on('close', () => {
          log.push('close');
          done();
        });
        res.writeHead(200);
        assert.strictEqual(res.headersSent, true, 'headersSent after writeHead');
        res.write('a');
        assert.strictEqual(res.headersSent, true);
        assert.strictEqual(res.writableEnded, false);
        res.end('b', errs.wrap(() => log.push('end-cb')));
        assert.strictEqual(res.writableEnded, true);
        log.push('ended');
      }));
      const r = await common.httpRequest(port);
      await common.withTimeout(finished, 2000, "res 'close'");
      errs.check();
      assert.strictEqual(r.body.toString(), 'ab');
      assert.strictEqual(log[0], 'ended');
      assert.ok(log.indexOf('finish') > 0 && log.indexOf('close') > log.indexOf('finish'), `order: ${log}`);
      assert.ok(log.includes('end-cb'), `end callback not called: ${log}`);
    });

    it('headersSent becomes true after the first write()', async function () {
      const seen = [];
      const { port } = await common.startServer((req, res) => {
        seen.push(res.headersSent);
        res.write('x');
        seen.push(res.headersSent);
        res.end();
      });
      await rawGet(port);
      assert.deepStrictEqual(seen, [false, true]);
    });

    it('flushHeaders() sends the headers before the body', async function () {
      let release;
      const { port } = await common.startServer((req, res) => {
        res.setHeader('X-Early', 'yes');
        res.flushHeaders();
        release = () => res.end('late body');
      });
      const r = await new Promise((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port, agent: false }, (res) => {
          assert.strictEqual(res.headers['x-early'], 'yes');
          let body = '';
          res.on('data', (d) => { body += d; });
          res.on('end', () => resolve(body));
          // headers arrived while the handler still holds the body
          release();
        });
        req.on('socket', common.trackSocket);
        req.on('error', reject);
      });
      assert.strictEqual(r, 'late body');
    });

    it('a write() that returned false is followed by "drain" even when the socket took everything at once', async function () {
      let ret;
      let drained = false;
      const { port } = await common.startServer((req, res) => {
        ret = res.write(Buffer.alloc(100000, 97));
        if (ret) {
          res.end();
          return;
        }
        res.on('drain', () => {
          drained = true;
          res.end();
        });
      });
      const c = await common.rawConnect(port);
      c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
      try {
        const [r] = await c.responses(1, {}, 2000);
        assert.strictEqual(r.body.length, 100000);
      } catch (e) {
        assert.ok(!(ret === false && !drained), `write() returned false and no 'drain' followed (client got ${c.len} bytes)`);
        throw e;
      }
    });

    it('write() returns false under a slow reader and "drain" follows', async function () {
      this.timeout(10000);
      const chunk = Buffer.alloc(1024 * 1024, 'x');
      const total = 32; // MiB: far more than the kernel buffers of a paused reader hold
      const stats = { written: 0, falses: 0, drains: 0, ended: false };
      const { port } = await common.startServer((req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
        const pump = () => {
          while (stats.written < total) {
            stats.written++;
            if (!res.write(chunk)) {
              stats.falses++;
              res.once('drain', () => {
                stats.drains++;
                pump();
              });
              return;
            }
          }
          stats.ended = true;
          res.end();
        };
        pump();
      });
      const c = await common.rawConnect(port);
      c.socket.pause();
      c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
      await common.sleep(400);
      assert.ok(stats.falses > 0, `write() never returned false (${stats.written} MiB written)`);
      assert.ok(stats.written < total, `the server wrote all ${total} MiB to a reader that reads nothing`);
      assert.strictEqual(stats.ended, false);
      c.socket.resume();
      const [r] = await c.responses(1, {}, 8000);
      assert.ok(stats.drains > 0, "no 'drain' event");
      assert.strictEqual(stats.ended, true);
      assert.strictEqual(r.body.length, total * chunk.length);
    });
  });
});

describe(`http1 response stream semantics [${common.implName}]`, function () {
  afterEach(common.cleanup);

  it("write after end: the callback gets ERR_STREAM_WRITE_AFTER_END, no 'error' once closed; closed/destroyed at 'close'; instanceof node's classes", async () => {
    const seen = {};
    const done = new Promise((resolve) => {
      common.startServer({}, (req, res) => {
        seen.instance = req instanceof http.IncomingMessage && res instanceof http.ServerResponse;
        res.on('error', () => { seen.error = true; });
        res.on('close', () => {
          seen.atClose = { closed: res.closed, destroyed: res.destroyed, finished: res.writableFinished };
          setImmediate(() => res.write('late', (err) => { seen.err = err && err.code; resolve(); }));
        });
        res.end('ok');
      }).then(({ port }) => common.httpRequest(port));
    });
    await done;
    await common.sleep(10);
    assert.deepStrictEqual(seen, {
      instance: true,
      atClose: { closed: true, destroyed: true, finished: true },
      err: 'ERR_STREAM_WRITE_AFTER_END',
    });
  });
});
