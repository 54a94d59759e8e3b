'use strict';

// The parts of node:http's response and server surface that frameworks
// and libraries lean on, byte-exact over raw sockets: removeHeader() of
// the headers the server adds itself (Date, Connection, Content-Length,
// Transfer-Encoding), setHeaders(Headers|Map), the status line writeHead()
// fixes ('unknown' for codes without a phrase; later changes not sent),
// events.captureRejections → 500, res.destroy(err) as a socket error, and
// header names that are Object.prototype's own (constructor, __proto__).
// Shared: every test also runs against node:http (SLUICE_TEST_IMPL=node).

const EventEmitter = require('node:events');
const common = require('../common');
const { assert } = common;

const GET = 'GET / HTTP/1.1\r\nHost: h\r\n\r\n';

function header(r, name) {
  return r.headers[name.toLowerCase()];
}

async function oneResponse(handler, wire = GET) {
  const { port } = await common.startServer(handler);
  const c = await common.rawConnect(port);
  c.socket.write(wire);
  const [r] = await c.responses(1);
  return { r, c, port };
}

// The raw head (status line and header lines) of the first response.
async function rawHead(c) {
  const text = await c.waitFor((cl) => {
    const t = cl.text;
    return t.includes('\r\n\r\n') ? t : null;
  }, 5000, 'a response head');
  return text.slice(0, text.indexOf('\r\n\r\n'));
}

describe(`http1 node:http surface [${common.implName}]`, function () {
  afterEach(common.cleanup);

  describe('removeHeader of the headers the server adds', function () {
    it('removeHeader("Date") sends no Date; sendDate = false neither', async function () {
      for (const drop of [(res) => res.removeHeader('Date'), (res) => { res.sendDate = false; }]) {
        const { r } = await oneResponse((req, res) => {
          drop(res);
          assert.strictEqual(res.sendDate, false);
          res.end('x');
        });
        assert.strictEqual(header(r, 'date'), undefined);
        assert.strictEqual(r.body.toString(), 'x');
      }
    });

    it('removeHeader("Connection") sends no Connection and the connection persists', async function () {
      const { port } = await common.startServer((req, res) => {
        res.removeHeader('Connection');
        res.end(req.url);
      });
      const c = await common.rawConnect(port);
      c.socket.write('GET /a HTTP/1.1\r\nHost: h\r\n\r\n');
      const [a] = await c.responses(1);
      assert.strictEqual(header(a, 'connection'), undefined);
      assert.strictEqual(header(a, 'keep-alive'), undefined);
      c.socket.write('GET /b HTTP/1.1\r\nHost: h\r\n\r\n');
      const [, b] = await c.responses(2);
      assert.strictEqual(b.body.toString(), '/b');
      assert.strictEqual(c.closed, false);
    });

    it('removeHeader("Content-Length") makes end(body) chunked', async function () {
      const { r } = await oneResponse((req, res) => {
        res.removeHeader('Content-Length');
        res.end('hello');
      });
      assert.strictEqual(header(r, 'content-length'), undefined);
      assert.strictEqual(header(r, 'transfer-encoding'), 'chunked');
      assert.strictEqual(r.body.toString(), 'hello');
    });

    it('removeHeader("Transfer-Encoding") on a streamed body: no framing, the body ends at the close', async function () {
      const { port } = await common.startServer((req, res) => {
        res.removeHeader('Transfer-Encoding');
        res.write('ab');
        res.end('cd');
      });
      const data = (await common.rawUntilClose(port, GET)).text;
      const head = data.slice(0, data.indexOf('\r\n\r\n')).toLowerCase();
      assert.ok(!head.includes('transfer-encoding'), head);
      assert.ok(!head.includes('content-length'), head);
      assert.strictEqual(data.slice(data.indexOf('\r\n\r\n') + 4), 'abcd');
    });

    it('both removed with end(body): no framing, the body ends at the close', async function () {
      const { port } = await common.startServer((req, res) => {
        res.removeHeader('Content-Length');
        res.removeHeader('Transfer-Encoding');
        res.end('hello');
      });
      const data = (await common.rawUntilClose(port, GET)).text;
      const head = data.slice(0, data.indexOf('\r\n\r\n')).toLowerCase();
      assert.ok(!head.includes('transfer-encoding') && !head.includes('content-length'), head);
      assert.strictEqual(data.slice(data.indexOf('\r\n\r\n') + 4), 'hello');
    });

    it('a removed header set again is sent as set', async function () {
      const { r } = await oneResponse((req, res) => {
        res.removeHeader('Content-Length');
        res.setHeader('Content-Length', 2);
        res.end('ok');
      });
      assert.strictEqual(header(r, 'content-length'), '2');
      assert.strictEqual(r.body.toString(), 'ok');
    });

    it('removeHeader(non-string) throws ERR_INVALID_ARG_TYPE', async function () {
      let code;
      await oneResponse((req, res) => {
        try { res.removeHeader(1); } catch (e) { code = e.code; }
        res.end();
      });
      assert.strictEqual(code, 'ERR_INVALID_ARG_TYPE');
    });
  });

  describe('setHeaders', function () {
    it('takes a Headers (Set-Cookie values kept apart) and a Map', async function () {
      const { r } = await oneResponse((req, res) => {
        const h = new Headers({ 'X-A': '1', 'Content-Type': 'text/plain' });
        h.append('Set-Cookie', 'a=1');
        h.append('Set-Cookie', 'b=2');
        assert.strictEqual(res.setHeaders(h), res);
        res.setHeaders(new Map([['x-b', '2'], ['x-c', ['3', '4']]]));
        res.end('x');
      });
      assert.strictEqual(header(r, 'x-a'), '1');
      assert.strictEqual(header(r, 'content-type'), 'text/plain');
      assert.strictEqual(header(r, 'x-b'), '2');
      const lines = r.rawHeaders;
      const cookies = [];
      const xc = [];
      for (let i = 0; i < lines.length; i += 2) {
        if (lines[i].toLowerCase() === 'set-cookie') cookies.push(lines[i + 1]);
        if (lines[i].toLowerCase() === 'x-c') xc.push(lines[i + 1]);
      }
      assert.deepStrictEqual(cookies, ['a=1', 'b=2']);
      assert.deepStrictEqual(xc, ['3', '4']);
    });

    it('refuses what is not a Headers or Map, and after the head', async function () {
      const codes = [];
      await oneResponse((req, res) => {
        for (const bad of [undefined, null, [['a', 'b']], { a: 'b' }, 'a']) {
          try { res.setHeaders(bad); codes.push('none'); } catch (e) { codes.push(e.code); }
        }
        res.writeHead(200);
        try { res.setHeaders(new Map()); codes.push('none'); } catch (e) { codes.push(e.code); }
        res.end();
      });
      assert.deepStrictEqual(codes, [...Array(5).fill('ERR_INVALID_ARG_TYPE'), 'ERR_HTTP_HEADERS_SENT']);
    });
  });

  describe('the status line', function () {
    it('a code without a phrase is sent as "unknown", and writeHead sets statusMessage', async function () {
      const seen = [];
      const { port } = await common.startServer((req, res) => {
        res.writeHead(Number(req.url.slice(1)));
        seen.push(res.statusMessage);
        res.end();
      });
      const c = await common.rawConnect(port);
      c.socket.write('GET /299 HTTP/1.1\r\nHost: h\r\n\r\nGET /200 HTTP/1.1\r\nHost: h\r\n\r\n' +
        'GET /418 HTTP/1.1\r\nHost: h\r\n\r\n');
      const rs = await c.responses(3);
      assert.deepStrictEqual(rs.map((r) => r.statusMessage), ['unknown', 'OK', "I'm a Teapot"]);
      assert.ok(c.text.startsWith('HTTP/1.1 299 unknown\r\n'), c.text.slice(0, 40));
      assert.deepStrictEqual(seen, ['unknown', 'OK', "I'm a Teapot"]);
    });

    it('an implicit head (end without writeHead) of an unknown code is "unknown" too', async function () {
      const { c } = await oneResponse((req, res) => {
        res.statusCode = 599;
        res.end('x');
      });
      assert.ok((await rawHead(c)).startsWith('HTTP/1.1 599 unknown'), c.text.slice(0, 40));
    });

    it('statusMessage and statusCode changed after writeHead() are not sent', async function () {
      const { c } = await oneResponse((req, res) => {
        res.writeHead(201, 'Made');
        res.statusMessage = 'Changed';
        res.statusCode = 500;
        res.end('x');
      });
      assert.ok((await rawHead(c)).startsWith('HTTP/1.1 201 Made\r\n'), c.text.slice(0, 40));
    });

    it('a statusMessage set before the implicit head is sent', async function () {
      const { c } = await oneResponse((req, res) => {
        res.statusMessage = 'Fine';
        res.write('a');
        res.statusMessage = 'Later';
        res.end('b');
      });
      assert.ok((await rawHead(c)).startsWith('HTTP/1.1 200 Fine\r\n'), c.text.slice(0, 40));
    });
  });

  describe('events.captureRejections', function () {
    let saved;
    beforeEach(function () { saved = EventEmitter.captureRejections; });
    afterEach(function () { EventEmitter.captureRejections = saved; });

    it('a rejected async request listener is answered 500 without the headers it set', async function () {
      EventEmitter.captureRejections = true;
      const { r } = await oneResponse(async (req, res) => {
        res.setHeader('X-Secret', '1');
        throw new Error('handler failed');
      });
      assert.strictEqual(r.statusCode, 500);
      assert.strictEqual(header(r, 'x-secret'), undefined);
      assert.strictEqual(r.body.toString(), 'Internal Server Error');
    });

    it('after the head was sent, the response is destroyed', async function () {
      EventEmitter.captureRejections = true;
      const { port } = await common.startServer(async (req, res) => {
        res.writeHead(200, { 'Content-Length': 10 });
        res.write('part');
        await common.sleep(5);
        throw new Error('handler failed');
      });
      const data = (await common.rawUntilClose(port, GET)).text;
      assert.ok(data.startsWith('HTTP/1.1 200 OK'), data);
      assert.ok(data.endsWith('part'), data);
    });
  });

  describe('res.destroy(err)', function () {
    it("destroys the socket with err: the server's clientError hears it, res emits only close", async function () {
      const events = [];
      const err = new Error('boom');
      const { server, port } = await common.startServer((req, res) => {
        res.on('error', (e) => events.push(`res error ${e.message}`));
        res.on('close', () => events.push('res close'));
        res.destroy(err);
      });
      const heard = new Promise((resolve) => {
        server.on('clientError', (e, socket) => {
          events.push(`clientError ${e === err}`);
          resolve(socket);
        });
      });
      await common.rawUntilClose(port, GET);
      const socket = await common.withTimeout(heard, 3000, 'clientError');
      assert.strictEqual(typeof socket.destroy, 'function');
      await common.sleep(20);
      assert.deepStrictEqual(events.sort(), ['clientError true', 'res close']);
    });

    it('without clientError listeners nothing is thrown and the connection closes', async function () {
      const { port } = await common.startServer((req, res) => {
        res.destroy(new Error('boom'));
      });
      const c = await common.rawUntilClose(port, GET);
      assert.strictEqual(c.text, '');
    });
  });

  describe('header names of Object.prototype', function () {
    it('req.headers keeps "constructor" as an own value and drops "__proto__", as node', async function () {
      let seen;
      await oneResponse((req, res) => {
        const h = req.headers;
        seen = {
          plain: Object.getPrototypeOf(h) === Object.prototype,
          constructor: h.constructor,
          ownProto: Object.prototype.hasOwnProperty.call(h, '__proto__'),
          keys: Object.keys(h),
          distinctProto: Object.getPrototypeOf(req.headersDistinct),
          distinctConstructor: req.headersDistinct.constructor,
          raw: req.rawHeaders.length,
        };
        res.end();
      }, 'GET / HTTP/1.1\r\nHost: h\r\nconstructor: x\r\n__proto__: y\r\nConstructor: z\r\n' +
         'toString: t\r\nhasOwnProperty: o\r\n\r\n');
      assert.deepStrictEqual(seen, {
        plain: true,
        constructor: 'x, z',
        ownProto: false,
        keys: ['host', 'constructor', 'tostring', 'hasownproperty'],
        distinctProto: null,
        distinctConstructor: ['x', 'z'],
        raw: 12,
      });
    });

    it('res.setHeader("__proto__") and ("constructor") are ordinary headers', async function () {
      let names;
      const { r } = await oneResponse((req, res) => {
        res.setHeader('__proto__', 'a');
        res.setHeader('constructor', 'b');
        names = res.getHeaderNames();
        assert.strictEqual(Object.getPrototypeOf(res.getHeaders()), null);
        assert.strictEqual(res.hasHeader('constructor'), true);
        res.end();
      });
      assert.deepStrictEqual(names, ['__proto__', 'constructor']);
      const raw = r.rawHeaders;
      assert.strictEqual(raw[raw.indexOf('constructor') + 1], 'b');
      assert.strictEqual(raw[raw.indexOf('__proto__') + 1], 'a');
    });
  });
});
