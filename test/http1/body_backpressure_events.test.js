'use strict';

// A request body nobody reads, as node's server handles it: when the
// request's buffer fills, the server pauses the socket ('pause' on
// req.socket); when the response finishes the request is dumped — the
// socket resumes ('resume'), the rest of the body is discarded, the
// request still emits 'end' then 'close', and the connection goes on to
// the next request. Shared: also run against node:http.

const common = require('../common');
const { assert } = common;

describe(`http1 unread body: socket 'pause' / 'resume' and the dump [${common.implName}]`, function () {
  afterEach(common.cleanup);

  it("an unread body pauses the socket; res.end() dumps it: 'resume', 'end', 'close', next request served", async function () {
    const events = [];
    let paused;
    const pausedP = new Promise((resolve) => { paused = resolve; });
    const { port } = await common.startServer((req, res) => {
      if (req.method === 'GET') {
        res.end('next');
        return;
      }
      events.push('request');
      res.writeHead(200, { 'Content-Length': '4' });
      res.flushHeaders();
      req.on('end', () => events.push('end'));
      req.on('close', () => events.push('close'));
      req.socket.on('pause', () => {
        events.push('pause');
        paused();
      });
      req.socket.on('resume', () => events.push('resume'));
      pausedP.then(() => res.end('done'));
    });
    const total = 512 * 1024;
    const c = await common.rawConnect(port);
    c.socket.write(`POST / HTTP/1.1\r\nHost: h\r\nContent-Length: ${total}\r\n\r\n`);
    c.socket.write(Buffer.alloc(256 * 1024, 'x'));
    await common.withTimeout(pausedP, 5000, "socket 'pause'");
    await c.responses(1);
    c.socket.write(Buffer.alloc(total - 256 * 1024, 'y'));
    c.socket.write('GET /next HTTP/1.1\r\nHost: h\r\n\r\n');
    const rs = await c.responses(2);
    assert.strictEqual(rs[0].body.toString(), 'done');
    assert.strictEqual(rs[1].body.toString(), 'next');
    await c.waitFor(() => events.includes('close'), 5000, "the request's 'close'");
    assert.deepStrictEqual(events, ['request', 'pause', 'resume', 'end', 'close']);
  });
});
