'use strict';

// A response ended with no listener owes its 'finish' and 'close'
// (lib/http/response.js finishTick): sluice then emits neither and runs
// no tick for them, unless a listener comes while node would still emit
// them. Whatever a handler can see — listeners added after end() in the
// same run or in a tick queued before end(), the order of the two
// events, end()'s callback, the response's state once the handlers are
// done, pipelined responses that listen beside ones that do not — must
// be what node:http shows. Shared with node:http (SLUICE_TEST_IMPL=node).

const common = require('../common');

const { assert } = common;

// The whole exchange of `text` on a fresh connection the server closes.
async function raw(port, text) {
  return (await common.rawUntilClose(port, text)).text;
}

const immediate = () => new Promise((resolve) => setImmediate(resolve));

describe('http1 response events nobody listened to when it ended', function () {
  afterEach(common.cleanup);

  it("listeners added right after end(): 'finish' then 'close', closed and destroyed by then, in node's place among ticks", async function () {
    const events = [];
    const done = new Promise((resolve) => {
      common.startServer((req, res) => {
        res.end('ok');
        events.push(`sync closed=${res.closed} destroyed=${res.destroyed}`);
        res.on('finish', () => events.push(`finish closed=${res.closed}`));
        process.nextTick(() => events.push('a later tick'));
        res.once('close', () => {
          events.push(`close closed=${res.closed} destroyed=${res.destroyed}`);
          resolve();
        });
      }).then(({ port }) => common.httpRequest(port));
    });
    await done;
    assert.deepStrictEqual(events, [
      'sync closed=false destroyed=false',
      'finish closed=false',
      'a later tick',
      'close closed=true destroyed=true',
    ]);
  });

  it("a 'finish' listener added in a tick queued before end() hears it; prependListener too", async function () {
    const events = [];
    const { port } = await common.startServer((req, res) => {
      process.nextTick(() => {
        res.on('finish', () => events.push('finish'));
        res.prependListener('close', () => events.push('close'));
      });
      res.end('ok');
    });
    await common.httpRequest(port);
    await immediate();
    assert.deepStrictEqual(events, ['finish', 'close']);
  });

  it("a 'close' listener added in a tick queued after end() hears 'close'", async function () {
    const events = [];
    const { port } = await common.startServer((req, res) => {
      res.end('ok');
      process.nextTick(() => res.on('close', () => events.push('close')));
    });
    await common.httpRequest(port);
    await immediate();
    assert.deepStrictEqual(events, ['close']);
  });

  it('end(cb) calls cb once the response finished', async function () {
    let finished;
    const { port } = await common.startServer((req, res) => {
      res.end('ok', () => { finished = res.writableFinished; });
    });
    await common.httpRequest(port);
    await immediate();
    assert.strictEqual(finished, true);
  });

  it('nobody listening: finished, closed and destroyed once the handlers are done; a listener added then hears nothing', async function () {
    let kept;
    const events = [];
    const { port } = await common.startServer((req, res) => {
      kept = res;
      res.end('ok');
    });
    const r = await common.httpRequest(port);
    assert.strictEqual(r.body.toString(), 'ok');
    await immediate();
    assert.strictEqual(kept.writableFinished, true);
    assert.strictEqual(kept.writableEnded, true);
    assert.strictEqual(kept.closed, true);
    assert.strictEqual(kept.destroyed, true);
    kept.on('finish', () => events.push('finish'));
    kept.on('close', () => events.push('close'));
    await immediate();
    await immediate();
    assert.deepStrictEqual(events, []);
  });

  it('an async handler that ends after an await: the state after its microtasks, the next request served', async function () {
    const seen = [];
    const { port } = await common.startServer(async (req, res) => {
      await null;
      res.end(req.url);
      await null;
      setImmediate(() => seen.push(`${req.url} ${res.writableFinished} ${res.closed}`));
    });
    const text = 'GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';
    const out = await raw(port, text);
    assert.strictEqual(out.split('HTTP/1.1 200 OK').length - 1, 2);
    await immediate();
    assert.deepStrictEqual(seen.sort(), ['/a true true', '/b true true']);
  });

  it("http.ServerResponse.prototype.emit wrapped (as tracers do): it sees 'finish' and 'close' of responses nobody listens to", async function () {
    const http = require('node:http');
    const proto = http.ServerResponse.prototype;
    const original = proto.emit;
    const seen = [];
    proto.emit = function (event, ...args) {
      if (event === 'finish' || event === 'close') seen.push(`${this.req.url} ${event}`);
      return original.call(this, event, ...args);
    };
    try {
      const { port } = await common.startServer((req, res) => res.end('ok'));
      await raw(port, 'GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      await immediate();
    } finally {
      proto.emit = original;
    }
    // (sluice emits the 'finish' events of one read's responses before
    // their 'close' events: lazy_request.test.js.)
    assert.deepStrictEqual([...seen].sort(), ['/a close', '/a finish', '/b close', '/b finish']);
    assert.ok(seen.indexOf('/a finish') < seen.indexOf('/a close'), String(seen));
    assert.ok(seen.indexOf('/b finish') < seen.indexOf('/b close'), String(seen));
  });

  it('16 pipelined requests, every other one listening: all answered in order, the listeners hear finish then close', async function () {
    const events = [];
    const { port } = await common.startServer((req, res) => {
      const n = Number(req.url.slice(1));
      res.end(String(n));
      if (n % 2 === 0) {
        res.on('finish', () => events.push(`f${n}`));
        res.on('close', () => events.push(`c${n}`));
      }
    });
    let text = '';
    for (let i = 0; i < 16; i++) text += `GET /${i} HTTP/1.1\r\nHost: x\r\n${i === 15 ? 'Connection: close\r\n' : ''}\r\n`;
    const out = await raw(port, text);
    const bodies = out.split('\r\n\r\n').slice(1).map((s) => s.split('HTTP/1.1')[0]);
    assert.deepStrictEqual(bodies, Array.from({ length: 16 }, (_, i) => String(i)));
    await immediate();
    for (let n = 0; n < 16; n += 2) {
      assert.ok(events.indexOf(`f${n}`) !== -1 && events.indexOf(`f${n}`) < events.indexOf(`c${n}`),
        `f${n} before c${n}: ${events}`);
    }
    assert.strictEqual(events.length, 16);
  });
});
