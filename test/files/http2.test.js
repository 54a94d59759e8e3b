'use strict';

// stream.respondWithFile / respondWithFD on HTTP/2: the native file pipe
// into NO_COPY DATA frames (src/core/http2_pipe_body.*) against node's
// http2 client and curl.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const http2 = require('node:http2');
const common = require('../common');
const h2 = require('../http2/h2common');
const { assert } = common;

const describeSluice = common.isNode ? describe.skip : describe;

const { fdCount, settled } = require('./settled');

describeSluice('http2 respondWithFile', function () {
  let dir;
  let big;
  let bigData;

  before(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-h2files-'));
    big = path.join(dir, 'big.bin');
    bigData = crypto.randomBytes(10 * 1024 * 1024);
    fs.writeFileSync(big, bigData);
  });

  after(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  afterEach(common.cleanup);

  it('a 10 MiB file arrives intact (sha256) with its content-length; offset/length', async function () {
    this.timeout(20000);
    const { server, port } = await common.startServer();
    server.on('stream', (stream, headers) => {
      const range = headers[':path'] === '/range';
      stream.respondWithFile(big, { 'content-type': 'application/octet-stream' },
        range ? { offset: 12345, length: 100000 } : undefined);
    });
    const s = h2.connect(port);
    const r = await h2.request(s, { ':path': '/' }, { timeout: 15000 });
    assert.strictEqual(r.headers[':status'], 200);
    assert.strictEqual(r.headers['content-length'], String(bigData.length));
    assert.strictEqual(r.headers['content-type'], 'application/octet-stream');
    assert.strictEqual(common.sha256(r.body), common.sha256(bigData));
    const part = await h2.request(s, { ':path': '/range' });
    assert.strictEqual(part.headers['content-length'], '100000');
    assert.ok(part.body.equals(bigData.subarray(12345, 12345 + 100000)));
    const c = await common.curl(['--http2-prior-knowledge', `http://127.0.0.1:${port}/`]);
    assert.strictEqual(common.sha256(c.stdout), common.sha256(bigData));
  });

  it('100 concurrent file streams on one session, each intact; a tiny client window too', async function () {
    this.timeout(30000);
    const small = path.join(dir, 'small.bin');
    const smallData = crypto.randomBytes(200 * 1024);
    fs.writeFileSync(small, smallData);
    const { server, port } = await common.startServer();
    server.on('stream', (stream) => stream.respondWithFile(small));
    const s = h2.connect(port);
    const rs = await Promise.all(Array.from({ length: 100 }, () => h2.request(s, {}, { timeout: 25000 })));
    for (const r of rs) assert.ok(r.body.equals(smallData));
    const tiny = h2.connect(port, { settings: { initialWindowSize: 1024 } });
    const t = await h2.request(tiny, {}, { timeout: 25000 });
    assert.ok(t.body.equals(smallData));
  });

  it('respondWithFD leaves the fd open; statCheck adds a header and can cancel', async function () {
    const fd = fs.openSync(big, 'r');
    try {
      const { server, port } = await common.startServer();
      server.on('stream', (stream, headers) => {
        if (headers[':path'] === '/fd') {
          stream.respondWithFD(fd, {}, { length: 1000 });
        } else if (headers[':path'] === '/stat') {
          stream.respondWithFile(big, {}, {
            length: 10,
            statCheck(stat, h) { h['last-modified'] = stat.mtime.toUTCString(); },
          });
        } else {
          stream.respondWithFile(big, {}, {
            statCheck() {
              stream.respond({ ':status': 304 });
              return false;
            },
          });
        }
      });
      const s = h2.connect(port);
      const r = await h2.request(s, { ':path': '/fd' });
      assert.ok(r.body.equals(bigData.subarray(0, 1000)));
      await common.sleep(20);
      assert.ok(fs.fstatSync(fd).isFile(), 'the fd is still open');
      const st = await h2.request(s, { ':path': '/stat' });
      assert.strictEqual(st.headers['last-modified'], fs.statSync(big).mtime.toUTCString());
      assert.strictEqual(st.body.length, 10);
      const cancelled = await h2.request(s, { ':path': '/cancel' });
      assert.strictEqual(cancelled.headers[':status'], 304);
      assert.strictEqual(cancelled.body.length, 0);
    } finally {
      fs.closeSync(fd);
    }
  });

  it('a missing file reaches onError with ENOENT; without onError the stream errors (as node) and is reset', async function () {
    const { server, port } = await common.startServer();
    let seen;
    let streamError;
    server.on('stream', (stream, headers) => {
      stream.on('error', (e) => { streamError = e.code; });
      if (headers[':path'] === '/handled') {
        stream.respondWithFile(path.join(dir, 'nope'), {}, {
          onError(err) {
            seen = err.code;
            stream.respond({ ':status': 404 });
            stream.end();
          },
        });
      } else {
        stream.respondWithFile(path.join(dir, 'nope'));
      }
    });
    const s = h2.connect(port);
    const r = await h2.request(s, { ':path': '/handled' });
    assert.strictEqual(r.headers[':status'], 404);
    assert.strictEqual(seen, 'ENOENT');
    const req = s.request({ ':path': '/default' });
    req.on('error', () => {});
    req.resume();
    await common.once(req, 'close', 5000);
    assert.strictEqual(req.rstCode, http2.constants.NGHTTP2_INTERNAL_ERROR);
    assert.strictEqual(streamError, 'ENOENT');
  });

  it('20 client resets mid-file leak no fd and no buffer, and the next stream works', async function () {
    this.timeout(30000);
    const { server, port } = await common.startServer();
    let closed = 0;
    server.on('stream', (stream) => {
      stream.on('close', () => closed++);
      stream.respondWithFile(big);
    });
    const s = h2.connect(port);
    await h2.request(s, {}, { timeout: 15000 });  // warm-up
    const before = await settled(fdCount());
    for (let i = 0; i < 20; i++) {
      const req = s.request({ ':path': '/' });
      req.on('error', () => {});
      await common.once(req, 'data', 5000, 'first data');
      req.close(http2.constants.NGHTTP2_CANCEL);
      await common.once(req, 'close', 5000);
    }
    const after = await settled(before.fds);
    assert.strictEqual(after.sources, 0, 'native file sources left');
    assert.ok(after.fds <= before.fds, `fd count ${after.fds} > ${before.fds}`);
    assert.strictEqual(after.buffersOutstanding, 0, 'pipe buffers outstanding');
    assert.strictEqual(closed, 21);
    const r = await h2.request(s, {}, { timeout: 15000 });
    assert.strictEqual(common.sha256(r.body), common.sha256(bigData));
  });
});
