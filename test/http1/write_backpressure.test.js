'use strict';

// Backpressure as node reports it: res.socket.writableHighWaterMark (the
// server's highWaterMark option) is what res.writableHighWaterMark says,
// and a write of more than that returns false, sets writableNeedDrain and
// is followed by 'drain', even on a keep-alive connection's second
// response after a double end() (node's test-http-outgoing-end-cork).
// Shared: also run against node:http.

const http = require('node:http');
const common = require('../common');
const { assert } = common;

// GETs `path` on `agent`; resolves with the body's length.
function get(port, agent, path) {
  return new Promise((resolve, reject) => {
    http.get({ port, host: '127.0.0.1', path, agent }, (res) => {
      let n = 0;
      res.on('data', (d) => { n += d.length; });
      res.on('end', () => resolve(n));
    }).on('error', reject);
  });
}

describe(`http1 write backpressure as node reports it [${common.implName}]`, function () {
  afterEach(common.cleanup);

  for (const highWaterMark of [undefined, 4096]) {
    it(`a write past res.socket.writableHighWaterMark returns false, then 'drain' (highWaterMark ${highWaterMark})`, async function () {
      const facts = [];
      const { port } = await common.startServer(highWaterMark ? { highWaterMark } : {}, (req, res) => {
        if (req.url === '/first') {
          // Ended twice (the second end() is a no-op), as node's test does.
          res.end('first');
          facts.push(['corked', res.writableCorked]);
          res.end();
          return;
        }
        const hwm = res.socket.writableHighWaterMark;
        facts.push(['hwm', hwm, res.writableHighWaterMark]);
        const ret = res.write(Buffer.alloc(hwm + 100));
        facts.push(['write', ret, res.writableNeedDrain]);
        res.once('drain', () => {
          facts.push(['drain', res.writableNeedDrain]);
          res.end();
        });
      });
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        assert.strictEqual(await get(port, agent, '/first'), 5);
        const n = await common.withTimeout(get(port, agent, '/big'), 5000, 'the big response');
        const [, hwm, resHwm] = facts.find((f) => f[0] === 'hwm');
        assert.strictEqual(typeof hwm, 'number');
        assert.ok(hwm > 0);
        if (highWaterMark) assert.strictEqual(hwm, highWaterMark);
        assert.strictEqual(resHwm, hwm);
        assert.strictEqual(n, hwm + 100);
        assert.deepStrictEqual(facts.filter((f) => f[0] !== 'hwm'),
          [['corked', 0], ['write', false, true], ['drain', false]]);
      } finally {
        agent.destroy();
      }
    });
  }
});
