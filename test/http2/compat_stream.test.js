'use strict';

// The compat request and response on HTTP/2 as node's Http2ServerRequest /
// Http2ServerResponse: req.stream / res.stream (one ServerHttp2Stream,
// its events and close()), write() / end() once ended or closed,
// res.socket gone at 'finish', a HEAD response's writeHead() sending the
// head, pseudo-headers in req.headers, req.complete only at 'end', the
// method setter's checks, CONNECT answered 405 with no 'connect'
// listener, res.destroy()'s reset codes and 'finish', setHeader()'s
// checks, and the Http2ServerRequest / Http2ServerResponse options.
// Shared with node:http2 (SLUICE_TEST_IMPL=node).

const http2 = require('node:http2');
const common = require('../common');
const h2 = require('./h2common');

const { assert } = common;
const { startCompat } = h2;

// A request on a new session; resolves { status, body, rstCode } at 'close'.
function fetchOne(port, headers = {}, body) {
  const session = h2.connect(port);
  return common.withTimeout(new Promise((resolve) => {
    const req = session.request({ ':path': '/', ...headers }, { endStream: body === undefined });
    let status;
    const chunks = [];
    req.on('response', (h) => { status = h[':status']; });
    req.on('data', (d) => chunks.push(d));
    req.on('error', () => {});
    req.on('close', () => {
      session.close();
      resolve({ status, body: Buffer.concat(chunks).toString(), rstCode: req.rstCode });
    });
    if (body !== undefined) req.end(body);
  }), 5000, 'the response');
}

describe('http2 compat: req.stream / res.stream and node\'s compat semantics', function () {
  this.timeout(10000);
  afterEach(() => common.cleanup());

  it('req.stream is res.stream, a ServerHttp2Stream of the request', async function () {
    const seen = {};
    const port = await startCompat((req, res) => {
      const s = res.stream;
      seen.same = req.stream === s;
      seen.id = s.id;
      seen.method = s.sentHeaders === undefined && req.stream.session !== undefined;
      s.on('close', () => { seen.closed = true; });
      res.end('ok');
    });
    const r = await fetchOne(port);
    assert.strictEqual(r.status, 200);
    assert.strictEqual(r.body, 'ok');
    await common.sleep(50);
    assert.deepStrictEqual(seen, { same: true, id: 1, method: true, closed: true });
  });

  it('res.stream.close(0): the response written so far is delivered; later writes hear ERR_HTTP2_INVALID_STREAM', async function () {
    let done;
    const errs = new Promise((resolve) => { done = resolve; });
    const port = await startCompat((req, res) => {
      res.write('part');
      res.on('error', () => done(['error']));
      res.stream.close(0, () => {
        res.write('late', (err) => {
          res.end('x', () => done([err && err.code, res.write('more')]));
        });
      });
    });
    const r = await fetchOne(port);
    assert.strictEqual(r.status, 200);
    assert.strictEqual(r.body, 'part');
    assert.deepStrictEqual(await common.withTimeout(errs, 3000), ['ERR_HTTP2_INVALID_STREAM', false]);
  });

  it('write() after end() tells its callback, with no \'error\'; end() again only calls back', async function () {
    const got = [];
    const port = await startCompat((req, res) => {
      res.on('error', () => got.push('error'));
      res.end('a');
      res.write('b', (err) => got.push(err.code));
      res.end(() => got.push('end cb'));
    });
    const r = await fetchOne(port);
    assert.strictEqual(r.body, 'a');
    await common.sleep(30);
    assert.deepStrictEqual(got.sort(), ['ERR_STREAM_WRITE_AFTER_END', 'end cb']);
  });

  it('res.stream.destroy() before writeHead(): the handler\'s writes do not throw', async function () {
    let threw = null;
    const port = await startCompat((req, res) => {
      req.stream.destroy();
      try {
        res.writeHead(200);
        res.write('a');
        res.end('b');
      } catch (err) {
        threw = err;
      }
    });
    const r = await fetchOne(port);
    assert.strictEqual(r.status, undefined);
    assert.strictEqual(threw, null);
  });

  it('res.socket is undefined at \'finish\'; res.stream is still there', async function () {
    const seen = {};
    const port = await startCompat((req, res) => {
      seen.before = res.socket !== undefined && res.socket === res.connection;
      res.on('finish', () => {
        seen.atFinish = res.socket;
        seen.stream = res.stream !== undefined;
      });
      res.end();
    });
    await fetchOne(port);
    await common.sleep(30);
    assert.deepStrictEqual(seen, { before: true, atFinish: undefined, stream: true });
  });

  it('a HEAD response: writeHead() sends the head and the stream ends; end() later calls back', async function () {
    let ended;
    const endCalled = new Promise((resolve) => { ended = resolve; });
    const port = await startCompat((req, res) => {
      res.writeHead(200, { foo: 'bar' });
      assert.strictEqual(res.writableEnded, false);
      res.stream.on('close', () => res.end(() => ended(true)));
    });
    const r = await fetchOne(port, { ':method': 'HEAD' });
    assert.strictEqual(r.status, 200);
    assert.strictEqual(await common.withTimeout(endCalled, 3000), true);
  });

  it('req.headers and req.rawHeaders carry the pseudo-headers; req.authority, req.scheme', async function () {
    let seen;
    const port = await startCompat((req, res) => {
      seen = {
        method: req.headers[':method'], path: req.headers[':path'], scheme: req.scheme,
        authority: req.authority, raw: req.rawHeaders[req.rawHeaders.indexOf(':method') + 1], x: req.headers['x-a'],
      };
      res.end();
    });
    await fetchOne(port, { ':path': '/p?q=1', 'x-a': '1' });
    assert.deepStrictEqual(seen, {
      method: 'GET', path: '/p?q=1', scheme: 'http', authority: `127.0.0.1:${port}`,
      raw: 'GET', x: '1',
    });
  });

  it('req.complete is false until the body was read to its end', async function () {
    const seen = [];
    const port = await startCompat((req, res) => {
      seen.push(req.complete);
      req.on('data', () => seen.push(req.complete));
      req.on('end', () => {
        seen.push(req.complete);
        res.end();
      });
    });
    await fetchOne(port, { ':method': 'POST' }, 'body');
    assert.deepStrictEqual(seen, [false, false, true]);
  });

  it('req.method may be set, to a non-empty string only', async function () {
    const seen = [];
    const port = await startCompat((req, res) => {
      req.method = 'POST';
      seen.push(req.method);
      for (const bad of ['  ', true]) {
        try {
          req.method = bad;
        } catch (err) {
          seen.push(err.code);
        }
      }
      res.end();
    });
    await fetchOne(port);
    assert.deepStrictEqual(seen, ['POST', 'ERR_INVALID_ARG_VALUE', 'ERR_INVALID_ARG_TYPE']);
  });

  it('CONNECT: \'connect\' when listened to, else 405 without \'request\'', async function () {
    let requests = 0;
    let connects = 0;
    const port = await startCompat(() => { requests++; }, {});
    const r = await fetchOne(port, { ':method': 'CONNECT', ':authority': 'example.test:443', ':path': undefined });
    assert.strictEqual(r.status, 405);
    const port2 = await startCompat(() => { requests++; }, {
      connect: (req, res) => {
        connects++;
        assert.strictEqual(req.headers[':method'], 'CONNECT');
        res.writeHead(200);
        res.end();
      },
    });
    const r2 = await fetchOne(port2, { ':method': 'CONNECT', ':authority': 'example.test:443', ':path': undefined });
    assert.strictEqual(r2.status, 200);
    assert.deepStrictEqual({ requests, connects }, { requests: 0, connects: 1 });
  });

  it('res.destroy(): the stream is reset (NO_ERROR; INTERNAL_ERROR with an error), \'finish\' then \'close\'', async function () {
    const logs = [];
    const port = await startCompat((req, res) => {
      const log = [];
      logs.push(log);
      res.on('error', () => log.push('error'));
      res.on('finish', () => log.push('finish'));
      res.on('close', () => log.push('close'));
      res.destroy(req.url === '/err' ? new Error('boom') : undefined);
    });
    const plain = await fetchOne(port);
    const failed = await fetchOne(port, { ':path': '/err' });
    assert.deepStrictEqual([plain.status, plain.rstCode], [undefined, http2.constants.NGHTTP2_NO_ERROR]);
    assert.deepStrictEqual([failed.status, failed.rstCode], [undefined, http2.constants.NGHTTP2_INTERNAL_ERROR]);
    await common.sleep(30);
    assert.deepStrictEqual(logs, [['finish', 'close'], ['finish', 'close']]);
  });

  it('setHeader(): a name that is not a string, a value that is null or undefined, Connection; removeHeader(\'date\')', async function () {
    const seen = [];
    const port = await startCompat((req, res) => {
      for (const [name, value] of [[undefined, 'v'], ['x-a', null], ['x-a', undefined]]) {
        try {
          res.setHeader(name, value);
        } catch (err) {
          seen.push(err.code);
        }
      }
      res.removeHeader('Date');
      seen.push(res.sendDate);
      // Dropped when set (HTTP/2 has no Connection field).
      res.setHeader('Connection', 'close');
      seen.push(res.getHeader('connection'));
      res.end();
    });
    await fetchOne(port);
    assert.deepStrictEqual(seen,
      ['ERR_INVALID_ARG_TYPE', 'ERR_HTTP2_INVALID_HEADER_VALUE', 'ERR_HTTP2_INVALID_HEADER_VALUE', false, undefined]);
  });

  it('the Http2ServerRequest / Http2ServerResponse options: classes extending node:http2\'s', async function () {
    class MyRequest extends http2.Http2ServerRequest {
      agent() { return this.headers['user-agent']; }
    }
    class MyResponse extends http2.Http2ServerResponse {
      status(code) {
        this.statusCode = code;
        return this;
      }
    }
    let seen;
    const port = await startCompat((req, res) => {
      seen = [req instanceof MyRequest, res instanceof MyResponse, req.agent()];
      res.status(203).end('ok');
    }, {}, { Http2ServerRequest: MyRequest, Http2ServerResponse: MyResponse });
    const r = await fetchOne(port, { 'user-agent': 'ua-1' });
    assert.strictEqual(r.status, 203);
    assert.deepStrictEqual(seen, [true, true, 'ua-1']);
  });

  it('createServer: options.settings that is not an object', function () {
    const create = (o) => (common.isNode ? http2.createServer(o) : common.impl.createServer(o));
    for (const [bad, shown] of [[1, 'type number (1)'], [null, 'null']]) {
      assert.throws(() => create({ settings: bad }), {
        code: 'ERR_INVALID_ARG_TYPE',
        message: `The "options.settings" property must be of type object. Received ${shown}`,
      });
    }
  });

  common.sluiceOnly('node:http2\'s Http1IncomingMessage / Http1ServerResponse options serve HTTP/1.1 requests', async function () {
    const http = require('node:http');
    class MyReq extends http.IncomingMessage {
      tag() { return 'req'; }
    }
    class MyRes extends http.ServerResponse {
      tag() { return 'res'; }
    }
    const { port } = await common.startServer({ Http1IncomingMessage: MyReq, Http1ServerResponse: MyRes },
      (req, res) => res.end(`${req.tag()} ${res.tag()}`));
    const body = await common.withTimeout(new Promise((resolve, reject) => {
      http.get({ port, host: '127.0.0.1', agent: false }, (r) => {
        let b = '';
        r.setEncoding('utf8');
        r.on('data', (d) => { b += d; });
        r.on('end', () => resolve(b));
      }).on('error', reject);
    }), 5000, 'the HTTP/1.1 response');
    assert.strictEqual(body, 'req res');
  });

  common.sluiceOnly('an app that re-parents req/res (Express style) keeps the compat members', async function () {
    const app = (req, res) => {
      Object.setPrototypeOf(req, app.request);
      Object.setPrototypeOf(res, app.response);
      res.end(JSON.stringify([req.method, req.headers[':path'], req.complete, res.statusMessage,
        typeof res.stream.close]));
    };
    app.request = Object.create(require('http').IncomingMessage.prototype);
    app.response = Object.create(require('http').ServerResponse.prototype);
    const port = await startCompat(app);
    const r = await fetchOne(port, { ':path': '/x' });
    assert.deepStrictEqual(JSON.parse(r.body), ['GET', '/x', false, '', 'function']);
  });
});

describe('http2 stream.respondWithFile / respondWithFD: option checks as node\'s', function () {
  this.timeout(10000);
  afterEach(() => common.cleanup());

  it('wrong types, a 204 status, and what statCheck is told', async function () {
    const seen = [];
    const fs = require('fs');
    const fd = fs.openSync(__filename, 'r');
    const { port } = await h2.startH2((stream) => {
      const tryIt = (fn) => {
        try {
          fn();
          seen.push('no throw');
        } catch (err) {
          seen.push(`${err.code}: ${err.message}`);
        }
      };
      tryIt(() => stream.respondWithFile(__filename, {}, { offset: true }));
      tryIt(() => stream.respondWithFile(__filename, {}, { length: null }));
      tryIt(() => stream.respondWithFile(__filename, {}, { statCheck: 1 }));
      tryIt(() => stream.respondWithFD(true));
      tryIt(() => stream.respondWithFile(__filename, { ':status': 204 }));
      // (node's respondWithFile calls statCheck without the options; its
      // respondWithFD with them.)
      stream.respondWithFD(fd, {}, {
        offset: 2, length: 5, statCheck: (stat, headers, options) => { seen.push(options); },
      });
    });

    const session = h2.connect(port);
    let r;
    try {
      r = await h2.request(session);
    } finally {
      fs.closeSync(fd);
    }
    assert.strictEqual(r.body.toString(), fs.readFileSync(__filename, 'latin1').slice(2, 7));
    assert.deepStrictEqual(seen, [
      "ERR_INVALID_ARG_VALUE: The property 'options.offset' is invalid. Received true",
      "ERR_INVALID_ARG_VALUE: The property 'options.length' is invalid. Received null",
      "ERR_INVALID_ARG_VALUE: The property 'options.statCheck' is invalid. Received 1",
      'ERR_INVALID_ARG_TYPE: The "fd" argument must be of type number or an instance of FileHandle. ' +
        'Received type boolean (true)',
      'ERR_HTTP2_PAYLOAD_FORBIDDEN: Responses with 204 status must not have a payload',
      { offset: 2, length: 5 },
    ]);
  });
});
