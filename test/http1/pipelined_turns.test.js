'use strict';

// Pipelined requests whose responses are not at the front yet, as node:
// every request already read is dispatched even while earlier responses
// are pending, and res.destroy() of a queued response waits for its turn
// (node assigns the socket to a pipelined response only when the ones
// before it have finished), so the earlier responses are still sent whole.
// Shared: also run against node:http.

const common = require('../common');
const { assert } = common;

describe(`http1 pipelined responses and their turn [${common.implName}]`, function () {
  afterEach(common.cleanup);

  it('res.destroy() of a queued response: earlier responses complete, later requests still dispatched, then the close', async function () {
    const urls = [];
    let finishFirst;
    const { port } = await common.startServer((req, res) => {
      urls.push(req.url);
      if (req.url === '/first') {
        res.write('hello ');
        finishFirst = () => res.end('world');
      } else if (req.url === '/second') {
        res.destroy();
        assert.strictEqual(res.destroyed, true);
      } else {
        res.end('third');
        // All three were read in one go: dispatched before the first ends.
        setImmediate(finishFirst);
      }
    });
    const c = await common.rawConnect(port);
    c.socket.write(['/first', '/second', '/third'].map((u) => `GET ${u} HTTP/1.1\r\nHost: h\r\n\r\n`).join(''));
    const data = await c.waitClose(5000);
    assert.deepStrictEqual(urls, ['/first', '/second', '/third']);
    const { responses } = common.parseResponses(data, { ended: true });
    assert.strictEqual(responses.length, 1, data.toString('latin1'));
    assert.strictEqual(responses[0].statusCode, 200);
    assert.strictEqual(responses[0].body.toString(), 'hello world');
  });

  it('res.destroy() of the front response closes at once', async function () {
    const { port } = await common.startServer((req, res) => {
      if (req.url === '/first') res.destroy();
      else res.end('second');
    });
    const c = await common.rawConnect(port);
    c.socket.write('GET /first HTTP/1.1\r\nHost: h\r\n\r\nGET /second HTTP/1.1\r\nHost: h\r\n\r\n');
    const data = await c.waitClose(5000);
    assert.strictEqual(data.length, 0, data.toString('latin1'));
  });
});

// As node's flood protection: while the client does not read, requests are
// parsed only until the output it has not taken reaches the high-water
// mark; reading resumes as it drains. Without it synchronous responses to
// a pipelined flood pile up without bound.
describe(`http1 pipelined flood from a client that does not read [${common.implName}]`, function () {
  afterEach(common.cleanup);

  it('3000 pipelined GETs with 16 KiB responses: dispatch stalls while the client reads nothing, then all arrive', async function () {
    const big = Buffer.alloc(16 * 1024, 'A');
    const COUNT = 3000;
    let dispatched = 0;
    const { port } = await common.startServer((req, res) => {
      dispatched++;
      res.end(big);
    });
    const net = require('node:net');
    const socket = common.trackSocket(net.connect(port, '127.0.0.1'));
    await common.once(socket, 'connect', 5000, 'connect');
    socket.pause();
    socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n'.repeat(COUNT));
    await common.sleep(500);
    const stalled = dispatched;
    await common.sleep(300);
    assert.strictEqual(dispatched, stalled, 'no request dispatched while the client reads nothing');
    assert.ok(stalled < COUNT, `${stalled} of ${COUNT} dispatched`);
    let bytes = 0;
    const done = new Promise((resolve, reject) => {
      socket.on('data', (d) => {
        bytes += d.length;
        if (dispatched === COUNT && bytes >= COUNT * big.length) resolve();
      });
      socket.on('close', () => reject(new Error(`closed after ${dispatched} requests, ${bytes} bytes`)));
    });
    socket.resume();
    await common.withTimeout(done, 15000, 'all responses');
    assert.strictEqual(dispatched, COUNT);
  });
});
