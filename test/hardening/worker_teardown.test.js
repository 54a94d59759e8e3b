'use strict';

// A worker_threads Worker terminated while its sluice server has open
// connections: the environment's teardown finalizes the JS server (the
// listener is released) and libuv then runs the connections' close
// callbacks. No delegate call may follow the release (the delegate is
// gone): this crashed in JsConnection::Detach → napi_delete_reference
// before Connection::OnClosed checked Listener::released().
//
// The addon is loaded in the main thread too, as in most applications.
// (When only the worker loads it, node unloads the addon before those close
// callbacks run: a separate, binding-side issue.)

const common = require('../common');
const { assert } = common;

const describeSluice = common.isNode ? describe.skip : describe;

describeSluice('worker teardown with open connections', function () {
  afterEach(common.cleanup);

  it('terminating a worker whose server has open connections does not crash', async function () {
    this.timeout(30000);
    const script = `
      const path = require('path');
      const root = ${JSON.stringify(common.ROOT)};
      require(root);
      const { Worker } = require('worker_threads');
      const src = \`
        const sluice = require(\${JSON.stringify(root)});
        const net = require('net');
        const { parentPort } = require('worker_threads');
        const s = sluice.createServer((req, res) => { if (req.url === '/answer') res.end('x'); });
        s.listen(0, '127.0.0.1', () => {
          let ready = 0;
          for (let i = 0; i < 5; i++) {
            const c = net.connect(s.address().port, '127.0.0.1', () => {
              c.write(i % 2 ? 'GET / HTTP/1.1\\\\r\\\\nHost: a\\\\r\\\\n\\\\r\\\\n' : 'POST / HTTP/1.1\\\\r\\\\nContent-Length: 9\\\\r\\\\n\\\\r\\\\nab');
              if (++ready === 5) setTimeout(() => parentPort.postMessage('ready'), 30);
            });
          }
        });
      \`;
      (async () => {
        for (let i = 0; i < 10; i++) {
          await new Promise((resolve, reject) => {
            const w = new Worker(src, { eval: true });
            w.on('message', () => w.terminate().then(resolve));
            w.on('error', reject);
          });
        }
        console.log('ok');
      })();
    `;
    const r = await common.runNodeScript(script, { timeout: 25000 });
    assert.strictEqual(r.signal, null, `child died with ${r.signal}: ${r.stderr}`);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(r.stdout, /ok/);
  });
});
