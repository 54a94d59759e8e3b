'use strict';

// The stream idioms with a buffer pool over HTTP/2, without a single
// releaseBuffer call: a 4 MiB upload through a pool of 8 buffers must
// complete intact through pipe(file), stream.pipeline(…, file), a
// Transform, for await and resume() — on the ServerHttp2Stream ('stream' event) and
// on the compat request ('request' event). Same contract as HTTP/1.1
// (http1_stream_idioms.test.js, docs/uploads.md): a plain Writable
// destination releases each chunk in its write callback (which here also
// credits the stream's flow-control window), others get copies.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const stream = require('node:stream');
const common = require('../common');
const h2 = require('../http2/h2common');
const { assert } = common;

const sluice = common.impl;
const KiB = 1024;
const MiB = 1024 * KiB;

const BUF = 64 * KiB + 64;
function smallPool() {
  return sluice.createBufferPool({ bufferSize: BUF, maxBuffers: 8 });
}

function tmpFile(name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-h2-idioms-'));
  return path.join(dir, name);
}

async function waitInUseZero(pool) {
  const t0 = Date.now();
  while (pool.stats().inUse !== 0) {
    if (Date.now() - t0 > 3000) throw new Error(`pool inUse stuck: ${JSON.stringify(pool.stats())}`);
    await common.sleep(10);
  }
}

// A server whose handler gets (body readable, reply(text)) for each
// request, through the stream API or the compat API.
async function server(api, options, handler) {
  if (api === 'compat') {
    return common.startServer(options, (req, res) => handler(req, (text) => res.end(text)));
  }
  const s = await common.startServer(options, null);
  s.server.on('stream', (st) => handler(st, (text) => {
    st.respond({ ':status': 200 });
    st.end(text);
  }));
  return s;
}

async function upload(port, body) {
  const r = await h2.request(h2.connect(port), { ':method': 'POST', ':path': '/up' }, { body, timeout: 20000 });
  assert.strictEqual(r.headers[':status'], 200, `status ${r.headers[':status']}: ${r.body}`);
  return r.body.toString();
}

describe(`uploads: HTTP/2 stream idioms with a buffer pool [${common.implName}]`, function () {
  afterEach(common.cleanup);
  this.timeout(30000);

  for (const api of ['stream', 'compat']) {
    common.sluiceOnly(`${api}: pipe(fs.createWriteStream(f)) of a 4 MiB upload through maxBuffers: 8 completes`, async function () {
      const pool = smallPool();
      const file = tmpFile('pipe.bin');
      let zeroCopy = 0;
      // Windows within the pool (8 x 64 KiB): the client is held back by
      // flow control before the pool runs dry (a dry pool means copies).
      const http2 = { initialWindowSize: 256 * KiB, connectionWindowSize: 384 * KiB };
      const { port } = await server(api, { requestBufferAllocator: pool.alloc, http2 }, (body, reply) => {
        body.on('data', (c) => { if (c.buffer.byteLength === BUF) zeroCopy += c.length; });
        const out = fs.createWriteStream(file);
        body.pipe(out);
        out.on('finish', () => reply('stored'));
      });
      const body = crypto.randomBytes(4 * MiB);
      assert.strictEqual(await upload(port, body), 'stored');
      assert.strictEqual(common.sha256(fs.readFileSync(file)), common.sha256(body));
      // The pipe released each chunk once written (else the windows stay
      // shut, or with larger windows the pool runs dry and the rest
      // arrives as copies).
      assert.ok(zeroCopy >= 0.9 * body.length, `${zeroCopy} of ${body.length} bytes were pool views`);
      await common.cleanup();
      await waitInUseZero(pool);
    });

    common.sluiceOnly(`${api}: stream.pipeline(body, fs.createWriteStream(f)) completes`, async function () {
      const pool = smallPool();
      const file = tmpFile('pipeline.bin');
      const { port } = await server(api, { requestBufferAllocator: pool.alloc }, (body, reply) => {
        stream.pipeline(body, fs.createWriteStream(file), (err) => reply(err ? `error ${err.code}` : 'stored'));
      });
      const body = crypto.randomBytes(4 * MiB);
      assert.strictEqual(await upload(port, body), 'stored');
      assert.strictEqual(common.sha256(fs.readFileSync(file)), common.sha256(body));
      await common.cleanup();
      await waitInUseZero(pool);
    });

    common.sluiceOnly(`${api}: stream.pipeline through a Transform that keeps some chunks stays intact`, async function () {
      const pool = smallPool();
      const kept = [];
      const { port } = await server(api, { requestBufferAllocator: pool.alloc }, (body, reply) => {
        const h = crypto.createHash('sha256');
        const pass = new stream.Transform({
          transform(chunk, enc, cb) {
            if (kept.length < 4) kept.push(chunk);  // held past its write
            cb(null, chunk);
          },
        });
        const sink = new stream.Writable({ write(chunk, enc, cb) { h.update(chunk); cb(); } });
        stream.pipeline(body, pass, sink, (err) => reply(err ? `error ${err.code}` : h.digest('hex')));
      });
      const body = crypto.randomBytes(4 * MiB);
      assert.strictEqual(await upload(port, body), common.sha256(body));
      const start = Buffer.concat(kept);
      assert.ok(start.length > 0);
      assert.ok(body.subarray(0, start.length).equals(start), 'a chunk kept by the Transform changed');
      await common.cleanup();
      await waitInUseZero(pool);
    });

    common.sluiceOnly(`${api}: resume() without a 'data' listener discards a 4 MiB upload: each chunk goes back as it is dropped (none left to the collector)`, async function () {
      const pool = smallPool();
      const http2 = { initialWindowSize: 256 * KiB, connectionWindowSize: 384 * KiB };
      const { port } = await server(api, { requestBufferAllocator: pool.alloc, http2 }, (body, reply) => {
        body.resume();
        body.on('end', () => reply('discarded'));
      });
      const body = crypto.randomBytes(4 * MiB);
      assert.strictEqual(await upload(port, body), 'discarded');
      assert.strictEqual(pool.stats().reclaimed, 0);
      await common.cleanup();
      await waitInUseZero(pool);
    });

    common.sluiceOnly(`${api}: for await of a 4 MiB upload completes; collected chunks stay intact`, async function () {
      const pool = smallPool();
      const { port } = await server(api, { requestBufferAllocator: pool.alloc }, async (body, reply) => {
        const chunks = [];
        for await (const chunk of body) chunks.push(chunk);
        reply(common.sha256(Buffer.concat(chunks)));
      });
      const body = crypto.randomBytes(4 * MiB);
      assert.strictEqual(await upload(port, body), common.sha256(body));
      await common.cleanup();
      await waitInUseZero(pool);
    });
  }
});
