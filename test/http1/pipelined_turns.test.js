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
