'use strict';
// listen({ port, host, reusePort: true }): SO_REUSEPORT before bind, so
// several servers (here: in one process) share a port and the kernel
// spreads new connections across them. sluice-only: node:http has the
// option from Node 22.12 (this suite also runs on Node 20).

const common = require('../common');

const { assert, impl, sluiceOnly } = common;

function listen(server, opts) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts, () => {
      server.removeListener('error', reject);
      resolve(server.address().port);
    });
  });
}

describe('listen({ reusePort })', function () {
  this.timeout(30000);
  afterEach(common.cleanup);

  sluiceOnly('two servers with reusePort share a port and both take connections', async function () {
    const a = common.trackServer(impl.createServer((req, res) => res.end('a')));
    const b = common.trackServer(impl.createServer((req, res) => res.end('b')));
    const port = await listen(a, { port: 0, host: '127.0.0.1', reusePort: true });
    assert.strictEqual(await listen(b, { port, host: '127.0.0.1', reusePort: true }), port);
    const counts = { a: 0, b: 0 };
    for (let i = 0; i < 100; i++) {
      const r = await common.httpRequest(port, { headers: { connection: 'close' } });
      counts[r.body.toString()]++;
    }
    assert.ok(counts.a >= 10 && counts.b >= 10, `uneven: ${JSON.stringify(counts)}`);
    // After one closes, the other takes every new connection.
    await common.closeServer(a);
    for (let i = 0; i < 20; i++) {
      const r = await common.httpRequest(port, { headers: { connection: 'close' } });
      assert.strictEqual(r.body.toString(), 'b');
    }
  });

  sluiceOnly('without reusePort on both, the second listen fails with EADDRINUSE', async function () {
    const a = common.trackServer(impl.createServer((req, res) => res.end('a')));
    const port = await listen(a, { port: 0, host: '127.0.0.1', reusePort: true });
    for (const opts of [{ port, host: '127.0.0.1' }, { port, host: '127.0.0.1', reusePort: false }]) {
      const b = common.trackServer(impl.createServer());
      const err = await listen(b, opts).then(() => null, (e) => e);
      assert.ok(err, 'second listen succeeded');
      assert.strictEqual(err.code, 'EADDRINUSE');
    }
    const c = common.trackServer(impl.createServer());
    const plain = await listen(c, { port: 0, host: '127.0.0.1' });
    const d = common.trackServer(impl.createServer());
    const err = await listen(d, { port: plain, host: '127.0.0.1', reusePort: true }).then(() => null, (e) => e);
    assert.strictEqual(err && err.code, 'EADDRINUSE');
  });

  sluiceOnly('reusePort over IPv6 and the dual-stack default address', async function () {
    const a = common.trackServer(impl.createServer((req, res) => res.end('a')));
    const b = common.trackServer(impl.createServer((req, res) => res.end('b')));
    const port = await listen(a, { port: 0, reusePort: true });
    await listen(b, { port, reusePort: true });
    const r = await common.httpRequest(port, { host: '::1' });
    assert.ok(['a', 'b'].includes(r.body.toString()));
  });

  sluiceOnly('a reusePort that is not a boolean throws ERR_INVALID_ARG_TYPE', function () {
    const a = common.trackServer(impl.createServer());
    assert.throws(() => a.listen({ port: 0, reusePort: 'yes' }), { code: 'ERR_INVALID_ARG_TYPE' });
  });
});
