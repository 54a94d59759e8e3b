'use strict';

// A closed server listens again, as net.Server allows (node's
// test-http-agent does it): after its 'close', and while keep-alive
// connections of its first life are still open. Shared: also run against
// node:http.

const http = require('node:http');
const common = require('../common');
const { assert } = common;

function listen(server) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.removeListener('error', reject);
      resolve(server.address().port);
    });
  });
}

describe(`http1 listen after close [${common.implName}]`, function () {
  afterEach(common.cleanup);

  it('listens again after its close completed and serves', async function () {
    const server = common.trackServer(common.impl.createServer((req, res) => res.end(req.url)));
    const port1 = await listen(server);
    assert.strictEqual((await common.httpRequest(port1, { path: '/a' })).body.toString(), '/a');
    await new Promise((resolve) => server.close(resolve));
    assert.strictEqual(server.listening, false);
    const port2 = await listen(server);
    assert.strictEqual(server.listening, true);
    assert.strictEqual((await common.httpRequest(port2, { path: '/b' })).body.toString(), '/b');
  });

  it('listens again while a keep-alive connection of its first life is open', async function () {
    const server = common.trackServer(common.impl.createServer((req, res) => res.end(req.url)));
    const port1 = await listen(server);
    const agent = new http.Agent({ keepAlive: true });
    try {
      // The agent keeps the socket open (idle) past the response.
      const first = await common.httpRequest(port1, { path: '/a', agent });
      assert.strictEqual(first.body.toString(), '/a');
      server.close();
      const port2 = await listen(server);
      const second = await common.httpRequest(port2, { path: '/b' });
      assert.strictEqual(second.body.toString(), '/b');
    } finally {
      agent.destroy();
    }
  });

  it('a listen while listening is an error, the server keeps serving', async function () {
    const server = common.trackServer(common.impl.createServer((req, res) => res.end('x')));
    const port = await listen(server);
    const err = await new Promise((resolve) => {
      server.once('error', resolve);
      try {
        server.listen(0, '127.0.0.1');
      } catch (e) {
        resolve(e);  // node throws ERR_SERVER_ALREADY_LISTEN synchronously
      }
    });
    assert.ok(err instanceof Error);
    assert.strictEqual((await common.httpRequest(port)).body.toString(), 'x');
  });
});
