'use strict';

// Writing a pool chunk to the response and releasing it at once (the echo
// idiom): the response must carry the bytes the chunk had when written,
// even though the pool reuses the memory for the next read before the
// native writer has sent it. HTTP/1.1 and HTTP/2, chunks large enough to
// be sent by reference (≥ 2 KiB), with poison on so reuse is visible.

const crypto = require('node:crypto');
const http2 = require('node:http2');
const common = require('../common');
const { assert } = common;

const sluice = common.impl;
const KiB = 1024;

function echoHandler(req, res) {
  req.on('data', (chunk) => {
    res.write(chunk);
    sluice.releaseBuffer(chunk);
  });
  req.on('end', () => res.end());
}

describe(`uploads: write a pool chunk, then release it [${common.implName}]`, function () {
  afterEach(common.cleanup);
  this.timeout(30000);

  common.sluiceOnly('HTTP/1.1: a 2 MiB echo through maxBuffers: 4 comes back intact', async function () {
    const pool = sluice.createBufferPool({ bufferSize: 16 * KiB, maxBuffers: 4, poison: true });
    const { port } = await common.startServer({ requestBufferAllocator: pool.alloc }, echoHandler);
    const body = crypto.randomBytes(2048 * KiB);
    const r = await common.httpRequest(port, { method: 'POST', path: '/echo', body, timeout: 20000 });
    assert.strictEqual(r.statusCode, 200);
    assert.strictEqual(r.body.length, body.length);
    assert.strictEqual(common.sha256(r.body), common.sha256(body));
  });

  common.sluiceOnly('HTTP/2 (compat API): an echo of HTTP/1-sized chunks written from pool memory comes back intact', async function () {
    // An HTTP/1.1 upload's pool chunks written into an HTTP/2 response
    // (a proxy-like handler): the HTTP/2 writer holds chunks by reference
    // too.
    const pool = sluice.createBufferPool({ bufferSize: 16 * KiB, maxBuffers: 4, poison: true });
    const pending = [];
    const { port } = await common.startServer({ requestBufferAllocator: pool.alloc }, (req, res) => {
      if (req.httpVersion === '2.0') { pending.push(res); return; }
      const h2res = pending.shift();
      req.on('data', (chunk) => { h2res.write(chunk); sluice.releaseBuffer(chunk); });
      req.on('end', () => { h2res.end(); res.end('ok'); });
    });
    const client = http2.connect(`http://127.0.0.1:${port}`);
    try {
      const got = [];
      const done = new Promise((resolve, reject) => {
        const s = client.request({ ':path': '/' });
        s.on('data', (c) => got.push(c));
        s.on('end', resolve);
        s.on('error', reject);
        s.end();
      });
      while (pending.length === 0) await common.sleep(5);
      const body = crypto.randomBytes(1024 * KiB);
      const r = await common.httpRequest(port, { method: 'POST', path: '/up', body, timeout: 20000 });
      assert.strictEqual(r.statusCode, 200);
      await done;
      assert.strictEqual(common.sha256(Buffer.concat(got)), common.sha256(body));
    } finally {
      client.close();
    }
  });
});
