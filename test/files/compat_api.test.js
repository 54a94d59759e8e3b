'use strict';

// One request handler, both protocols: res.respondWithFile from a
// 'request'-only handler serves HTTP/1.1 clients through the HTTP/1.1 pipe
// sink and HTTP/2 clients (compat req/res) through the HTTP/2 one.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const common = require('../common');
const h2 = require('../http2/h2common');
const { assert } = common;

const maybe = common.isSluice ? describe : describe.skip;

maybe(`res.respondWithFile on both protocols [${common.implName}]`, function () {
  let dir;
  let file;
  let data;

  before(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-compat-file-'));
    file = path.join(dir, 'f.bin');
    data = crypto.randomBytes(3 * 1024 * 1024 + 17);
    fs.writeFileSync(file, data);
  });

  after(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  afterEach(common.cleanup);

  it('one request handler: the same file intact over HTTP/1.1 and HTTP/2 (full, range, HEAD, missing), finish on res', async function () {
    let finished = 0;
    const { port } = await common.startServer((req, res) => {
      res.on('finish', () => finished++);
      const opts = req.url === '/range' ? { offset: 1000, length: 70000 } : {};
      if (req.url === '/missing') res.respondWithFile(path.join(dir, 'nope'));
      else res.respondWithFile(file, { 'x-proto': req.httpVersion }, opts);
    });
    const r1 = await common.httpRequest(port, { path: '/' });
    assert.strictEqual(r1.headers['x-proto'], '1.1');
    assert.strictEqual(r1.headers['content-length'], String(data.length));
    assert.strictEqual(common.sha256(r1.body), common.sha256(data));

    const session = h2.connect(port);
    try {
      const r2 = await h2.request(session, { ':path': '/' });
      assert.strictEqual(r2.headers[':status'], 200);
      assert.strictEqual(r2.headers['x-proto'], '2.0');
      assert.strictEqual(r2.headers['content-length'], String(data.length));
      assert.strictEqual(common.sha256(r2.body), common.sha256(data));
      const r3 = await h2.request(session, { ':path': '/range' });
      assert.strictEqual(r3.headers['content-length'], '70000');
      assert.ok(r3.body.equals(data.subarray(1000, 71000)));
      const r4 = await h2.request(session, { ':path': '/', ':method': 'HEAD' });
      assert.strictEqual(r4.headers[':status'], 200);
      assert.strictEqual(r4.headers['content-length'], String(data.length));
      assert.strictEqual(r4.body.length, 0);
      const r5 = await h2.request(session, { ':path': '/missing' });
      assert.strictEqual(r5.headers[':status'], 404);
    } finally {
      session.close();
    }
    for (let i = 0; i < 50 && finished < 5; i++) await common.sleep(10);
    assert.strictEqual(finished, 5);
  });
});
