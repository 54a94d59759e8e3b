'use strict';

// sluice builds an HTTP/1.1 request's Readable state only when something
// touches it (lib/http/request.js materialize), emits the 'finish' (and then
// the 'close') events of all the responses ended in one run from one tick,
// and keeps the connection's unfinished responses in a list it only moves
// a head index through. Whatever a handler does later — read the body,
// listen, look at a property, pipe — must find the request node:http would
// show at that moment, and pipelined responses must keep node's order.
// Shared with node:http (SLUICE_TEST_IMPL=node).

const net = require('node:net');
const stream = require('node:stream');
const common = require('../common');

const { assert } = common;

function raw(port, text) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    common.trackSocket(socket);
    const chunks = [];
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.end(text);
  });
}

function nextResponse() {
  return new Promise((resolve) => setTimeout(resolve, 20));
}

describe('http1 request built when touched', function () {
  afterEach(common.cleanup);

  it('an untouched GET is a Readable; looked at after its response: complete and not aborted, as node', async function () {
    let seen;
    let kept;
    const { port } = await common.startServer((req, res) => {
      kept = req;
      res.end('ok');
      seen = {
        readable: req instanceof stream.Readable,
        method: req.method,
      };
    });
    const r = await common.httpRequest(port);
    assert.strictEqual(r.body.toString(), 'ok');
    assert.deepStrictEqual(seen, { readable: true, method: 'GET' });
    await nextResponse();
    assert.strictEqual(kept.complete, true);
    assert.strictEqual(kept.aborted, false);
  });

  it('the body read later in the handler: for await, readableEnded, complete', async function () {
    const { port } = await common.startServer(async (req, res) => {
      await nextResponse();
      let body = '';
      for await (const c of req) body += c;
      res.end(`${body}|${req.readableEnded}|${req.complete}`);
    });
    const get = await common.httpRequest(port);
    assert.strictEqual(get.body.toString(), '|true|true');
    const post = await common.httpRequest(port, { method: 'POST', body: 'abc' });
    assert.strictEqual(post.body.toString(), 'abc|true|true');
  });

  it("'end' listened to after the handler ran, then resume(): 'end' then 'close', once each", async function () {
    const events = [];
    const { port } = await common.startServer((req, res) => {
      setImmediate(() => {
        req.on('end', () => events.push('end'));
        req.on('close', () => {
          events.push('close');
          res.end(events.join(','));
        });
        req.resume();
      });
    });
    const r = await common.httpRequest(port);
    assert.strictEqual(r.body.toString(), 'end,close');
  });

  it("on('data') and pipe() of a body, and setEncoding before any read", async function () {
    const { port } = await common.startServer((req, res) => {
      if (req.url === '/pipe') {
        res.setHeader('content-type', 'text/plain');
        req.pipe(res);
        return;
      }
      req.setEncoding('utf8');
      let s = '';
      req.on('data', (c) => { s += typeof c; });
      req.on('end', () => res.end(s));
    });
    const piped = await common.httpRequest(port, { method: 'POST', path: '/pipe', body: 'piped body' });
    assert.strictEqual(piped.body.toString(), 'piped body');
    const dataed = await common.httpRequest(port, { method: 'POST', path: '/d', body: 'x' });
    assert.strictEqual(dataed.body.toString(), 'string');
  });

  it('req.destroy() of an untouched request closes its connection', async function () {
    const { port } = await common.startServer((req) => {
      assert.strictEqual(req.destroyed, false);
      req.destroy();
      assert.strictEqual(req.destroyed, true);
    });
    const text = await raw(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.strictEqual(text, '');
  });

  it("16 pipelined requests: responses in order; each response's 'finish' before its 'close', every 'finish' of the read before the first 'close'", async function () {
    const events = [];
    const { port } = await common.startServer((req, res) => {
      const n = req.url.slice(1);
      res.on('finish', () => events.push(`f${n}`));
      res.on('close', () => events.push(`c${n}`));
      res.end(n);
    });
    let text = '';
    for (let i = 0; i < 16; i++) text += `GET /${i} HTTP/1.1\r\nHost: x\r\n${i === 15 ? 'Connection: close\r\n' : ''}\r\n`;
    const out = await raw(port, text);
    const bodies = common.parseAll(Buffer.from(out, 'latin1')).map((r) => r.body.toString());
    assert.deepStrictEqual(bodies, Array.from({ length: 16 }, (_, i) => String(i)));
    await nextResponse();
    for (let i = 0; i < 16; i++) {
      assert.ok(events.indexOf(`f${i}`) !== -1 && events.indexOf(`f${i}`) < events.indexOf(`c${i}`), events.join(','));
    }
    assert.strictEqual(events.length, 32);
  });

  it('pipelined responses finished out of order still leave in order, and the connection goes on', async function () {
    const held = [];
    const { port } = await common.startServer((req, res) => {
      if (req.url === '/slow') {
        held.push(res);
        return;
      }
      res.end(req.url);
      if (held.length > 0 && req.url === '/2') setImmediate(() => held.shift().end('/slow'));
    });
    const out = await raw(port, 'GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /1 HTTP/1.1\r\nHost: x\r\n\r\n' +
      'GET /2 HTTP/1.1\r\nHost: x\r\n\r\nGET /3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    const bodies = common.parseAll(Buffer.from(out, 'latin1')).map((r) => r.body.toString());
    assert.deepStrictEqual(bodies, ['/slow', '/1', '/2', '/3']);
  });

  it("a 'finish' listener that throws does not lose the other responses' 'finish' and 'close'", async function () {
    const events = [];
    const errors = [];
    const onUncaught = (err) => errors.push(err.message);
    process.prependListener('uncaughtException', onUncaught);
    // mocha's own handler would fail the test: it is kept out meanwhile.
    const mochaHandlers = process.listeners('uncaughtException').filter((l) => l !== onUncaught);
    for (const l of mochaHandlers) process.removeListener('uncaughtException', l);
    try {
      const { port } = await common.startServer((req, res) => {
        const n = req.url.slice(1);
        res.on('finish', () => {
          events.push(`f${n}`);
          if (n === '1') throw new Error('boom');
        });
        res.on('close', () => events.push(`c${n}`));
        res.end(n);
      });
      let text = '';
      for (let i = 0; i < 4; i++) text += `GET /${i} HTTP/1.1\r\nHost: x\r\n${i === 3 ? 'Connection: close\r\n' : ''}\r\n`;
      await raw(port, text);
      await nextResponse();
    } finally {
      process.removeListener('uncaughtException', onUncaught);
      for (const l of mochaHandlers) process.on('uncaughtException', l);
    }
    assert.deepStrictEqual(errors, ['boom']);
    for (let i = 0; i < 4; i++) {
      assert.ok(events.includes(`f${i}`) && events.includes(`c${i}`), events.join(','));
    }
  });
});
