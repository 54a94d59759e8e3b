'use strict';

// Request loggers, unmodified (docs/observability.md): pino-http and morgan
// log sluice's requests as they log node:http's (SLUICE_TEST_IMPL=node runs
// the same assertions against node).

const { Writable } = require('node:stream');
const common = require('../common');

const { assert } = common;


// A destination collecting written lines.
function lines() {
  const out = [];
  const stream = new Writable({
    write(chunk, enc, cb) {
      for (const l of chunk.toString().split('\n')) if (l) out.push(l);
      cb();
    },
  });
  return { out, stream };
}

describe(`request loggers (${common.isNode ? 'node' : 'sluice'})`, () => {
  afterEach(common.cleanup);

  it('pino-http: one line per request with method, url, status and response time', async () => {
    const pino = require('pino');
    const pinoHttp = require('pino-http');
    const { out, stream } = lines();
    const logger = pinoHttp({ logger: pino(stream) });
    const { port } = await common.startServer((req, res) => {
      logger(req, res);
      req.log.info('inside');
      res.statusCode = req.url === '/missing' ? 404 : 200;
      res.setHeader('x-a', '1');
      res.end('hello');
    });
    await common.httpRequest(port, { path: '/p?q=1', headers: { 'user-agent': 'ua/1' } });
    await common.httpRequest(port, { path: '/missing', method: 'POST', body: 'x' });
    await common.sleep(20);
    const records = out.map((l) => JSON.parse(l));
    const done = records.filter((r) => r.msg === 'request completed' || r.msg === 'request errored');
    assert.strictEqual(done.length, 2, out.join('\n'));
    assert.strictEqual(done[0].req.method, 'GET');
    assert.strictEqual(done[0].req.url, '/p?q=1');
    assert.strictEqual(done[0].req.headers['user-agent'], 'ua/1');
    assert.strictEqual(done[0].req.remoteAddress, '127.0.0.1');
    assert.strictEqual(typeof done[0].req.remotePort, 'number');
    assert.strictEqual(done[0].res.statusCode, 200);
    assert.strictEqual(done[0].res.headers['x-a'], '1');
    assert.strictEqual(typeof done[0].responseTime, 'number');
    assert.strictEqual(done[1].req.method, 'POST');
    assert.strictEqual(done[1].res.statusCode, 404);
    // req.log carries the request id into the handler's own lines.
    const inside = records.filter((r) => r.msg === 'inside');
    assert.strictEqual(inside.length, 2);
    assert.strictEqual(inside[0].req.id, done[0].req.id);
  });

  it('morgan: combined and dev-style tokens', async () => {
    const morgan = require('morgan');
    const { out, stream } = lines();
    const combined = morgan('combined', { stream });
    const tiny = morgan(':method :url :status :res[content-length] - :response-time ms', { stream });
    const { port } = await common.startServer((req, res) => {
      combined(req, res, () => tiny(req, res, () => {
        res.statusCode = req.url === '/missing' ? 404 : 200;
        res.setHeader('content-length', 5);
        res.end('hello');
      }));
    });
    await common.httpRequest(port, {
      path: '/a?b=1', headers: { 'user-agent': 'ua/1', referer: 'http://r/' },
    });
    await common.httpRequest(port, { path: '/missing' });
    await common.sleep(20);
    assert.strictEqual(out.length, 4, out.join('\n'));
    assert.match(out[0], /^127\.0\.0\.1 - - \[[^\]]+\] "GET \/a\?b=1 HTTP\/1\.1" 200 5 "http:\/\/r\/" "ua\/1"$/);
    assert.match(out[1], /^GET \/a\?b=1 200 5 - \d+(\.\d+)? ms$/);
    assert.match(out[2], /"GET \/missing HTTP\/1\.1" 404 5/);
    assert.match(out[3], /^GET \/missing 404 5 - /);
  });
});
