'use strict';

// listen(path) / listen({ path }) on a Unix domain socket (behind nginx a
// common setup), as node:http: the address is the path, requests arrive
// over it, a path in use is EADDRINUSE, close() removes the socket file.
// Shared: also run against node:http.

const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const common = require('../common');
const { assert } = common;

function socketPath() {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-unix-')), 's.sock');
}

function listen(server, ...args) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(...args, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
}

function get(socket, urlPath, agent) {
  return new Promise((resolve, reject) => {
    http.get({ socketPath: socket, path: urlPath, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ res, body }));
    }).on('error', reject);
  });
}

describe(`http1 listen on a Unix domain socket [${common.implName}]`, function () {
  afterEach(common.cleanup);

  for (const form of ['listen(path)', 'listen({ path })']) {
    it(`${form}: address() is the path and requests are served over it`, async function () {
      const file = socketPath();
      const seen = [];
      const server = common.trackServer(common.impl.createServer((req, res) => {
        seen.push([req.url, req.socket.remoteAddress]);
        res.end(`hello ${req.url}`);
      }));
      await listen(server, form === 'listen(path)' ? file : { path: file });
      assert.strictEqual(server.address(), file);
      assert.ok(fs.statSync(file).isSocket());
      const agent = new http.Agent({ keepAlive: true });
      try {
        const a = await get(file, '/a', agent);
        const b = await get(file, '/b', agent);
        assert.strictEqual(a.res.statusCode, 200);
        assert.strictEqual(a.body, 'hello /a');
        assert.strictEqual(b.body, 'hello /b');
        assert.deepStrictEqual(seen, [['/a', undefined], ['/b', undefined]]);
      } finally {
        agent.destroy();
      }
    });
  }

  it('a raw pipelined exchange is byte-exact over the socket', async function () {
    const file = socketPath();
    const server = common.trackServer(common.impl.createServer((req, res) => res.end(req.url)));
    await listen(server, file);
    const socket = common.trackSocket(net.connect(file));
    const chunks = [];
    socket.on('data', (d) => chunks.push(d));
    socket.write('GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n');
    await new Promise((resolve) => socket.on('close', resolve));
    const { responses } = common.parseResponses(Buffer.concat(chunks), { ended: true });
    assert.deepStrictEqual(responses.map((r) => r.body.toString()), ['/1', '/2']);
  });

  it('a path in use is EADDRINUSE with the path as address; close() removes the file', async function () {
    const file = socketPath();
    const first = common.trackServer(common.impl.createServer((req, res) => res.end()));
    await listen(first, file);
    const second = common.trackServer(common.impl.createServer((req, res) => res.end()));
    const err = await listen(second, file).then(() => null, (e) => e);
    assert.ok(err, 'the second listen succeeded');
    assert.strictEqual(err.code, 'EADDRINUSE');
    assert.strictEqual(err.syscall, 'listen');
    assert.strictEqual(err.address, file);
    assert.strictEqual(err.port, -1);  // as net reports a path
    await new Promise((resolve) => first.close(resolve));
    assert.strictEqual(fs.existsSync(file), false);
  });

  it('a numeric string is a port, not a path', async function () {
    const server = common.trackServer(common.impl.createServer((req, res) => res.end('p')));
    await listen(server, '0', '127.0.0.1');
    assert.strictEqual(typeof server.address().port, 'number');
  });
});
