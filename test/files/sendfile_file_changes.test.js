'use strict';

// A file changed while sendfile(2) sends it (cleartext HTTP/1.1,
// src/core/http1/http1_pipe_body.cc). Bytes sendfile hands to the kernel
// reference the page cache, not a copy: a truncation zeroes the partial
// folio at the new end in place, and a rewrite in place shows the new
// bytes. The server checks the file (fstat) before each sendfile chunk and
// after the last one; a file that shrank below the range or was written
// without growing ends the connection with a reset, so a client never
// takes what arrived for a complete body. An append leaves the range alone:
// the announced Content-Length is sent exactly. docs/files.md "sendfile".
//
// How the window is held open: the client reads slowly or pauses (its
// receive buffer and the server's send buffer fill), the server meets
// EAGAIN (the `waits` counter moves) with most of the file still unsent,
// then the test changes the file and the client reads on. The server runs
// on this thread, so nothing is sent while the test changes the file.
// sluice's own: sluice-only.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const common = require('../common');
const { assert } = common;
const { fdCount, settled } = require('./settled');

const describeSluice = common.isSluice ? describe : describe.skip;

const KiB = 1024;
const MiB = 1024 * KiB;
// Larger than the loopback socket buffers a paused reader lets fill.
const N = 24 * MiB;

function sendfileStats() {
  return common.libInternal('common/binding').NativeFile.stats().sendfile;
}

describeSluice('[sluice-only] sendfile of a file that changes while it is sent', function () {
  this.timeout(60000);
  let dir;

  before(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-sendfile-chg-'));
  });
  after(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });
  afterEach(async function () {
    await common.cleanup();
  });

  async function start() {
    const server = common.impl.createServer({}, (req, res) => {
      const m = /^\/rwf\/(.*)$/.exec(req.url);
      if (m) {
        res.respondWithFile(path.join(dir, m[1]), { 'content-type': 'application/octet-stream' });
        return;
      }
      res.statusCode = 404;
      res.end('miss');
    });
    server.serveStatic('/s', dir);
    return common.listenLocal(server);
  }

  // Resolves once sendfile waits for the socket (most of the body not yet
  // handed to the kernel); `before`: the counters before the request.
  async function untilBlocked(before) {
    const deadline = Date.now() + 20000;
    for (;;) {
      const now = sendfileStats();
      if (now.waits > before.waits) {
        const handed = now.bytes - before.bytes;
        assert.ok(handed < N / 2, `${handed} bytes already handed to the kernel: the window is not open`);
        return;
      }
      if (Date.now() > deadline) assert.fail(`sendfile never waited: ${JSON.stringify({ before, now })}`);
      await common.sleep(5);
    }
  }

  // A raw client that pauses (keep-alive unless told), for byte-exact checks.
  async function pausedResponse(port, via, name, keepAlive) {
    const before = sendfileStats();
    const c = await common.rawConnect(port);
    c.socket.pause();
    c.write(`GET ${via}${name} HTTP/1.1\r\nHost: x\r\n${keepAlive ? '' : 'Connection: close\r\n'}\r\n`);
    await untilBlocked(before);
    return c;
  }

  // curl reading slowly: it tells a reset (exit 56, "Connection reset by
  // peer") from a clean end cut short (exit 18) or a whole body (0). A
  // libuv client may not: after a partial read, an EPOLLHUP (which a
  // received RST sets) is taken for EOF without reading the error.
  async function slowCurl(port, via, name, change) {
    const before = sendfileStats();
    const p = common.curl(['--http1.1', '--limit-rate', '4M', '-D', '-', `http://127.0.0.1:${port}${via}${name}`], { timeout: 30000 });
    await untilBlocked(before);
    change();
    const r = await p;
    const headEnd = r.stdout.indexOf('\r\n\r\n');
    return { code: r.code, stderr: r.stderr, head: r.stdout.subarray(0, headEnd).toString('latin1'), body: r.stdout.subarray(headEnd + 4) };
  }

  it('rewritten in place with the same length (fs.writeFileSync): a reset, never a full-length body of mixed bytes', async function () {
    const port = await start();
    const fds = fdCount();
    const name = 'rewritten.bin';
    for (const via of ['/s/', '/rwf/']) {
      const old = crypto.randomBytes(N);
      fs.writeFileSync(path.join(dir, name), old);
      const r = await slowCurl(port, via, name, () => fs.writeFileSync(path.join(dir, name), crypto.randomBytes(N)));
      assert.match(r.head, new RegExp(`Content-Length: ${N}`, 'i'));
      assert.ok(r.body.length < N, `${via}: a full-length body (${r.body.length} bytes) of mixed old and new bytes (curl exit ${r.code})`);
      assert.strictEqual(r.code, 56, `${via}: not a reset: ${r.stderr}`);
      // What did arrive was handed over before the rewrite: the old bytes.
      assert.ok(r.body.equals(old.subarray(0, r.body.length)), `${via}: bytes other than the old file's`);
    }
    const s = await settled(fds);
    assert.strictEqual(s.sources, 0);
  });

  it('truncated below the range: a reset; the bytes up to the new end are the file\'s', async function () {
    const port = await start();
    const fds = fdCount();
    const name = 'truncated.bin';
    const cut = MiB + 1000;  // not on a page boundary: the partial page is zeroed in place
    for (const via of ['/s/', '/rwf/']) {
      const full = crypto.randomBytes(N);
      fs.writeFileSync(path.join(dir, name), full);
      const r = await slowCurl(port, via, name, () => fs.truncateSync(path.join(dir, name), cut));
      assert.match(r.head, new RegExp(`Content-Length: ${N}`, 'i'));
      assert.ok(r.body.length < N, `${via}: ${r.body.length} bytes`);
      assert.strictEqual(r.code, 56, `${via}: not a reset: ${r.stderr}`);
      const keep = Math.min(r.body.length, cut);
      assert.ok(r.body.subarray(0, keep).equals(full.subarray(0, keep)), `${via}: wrong bytes before the new end`);
      // Past the new end: bytes handed over before the cut, possibly
      // zeroed by it (docs/files.md), never anything else.
      for (let i = cut; i < r.body.length; i++) {
        if (r.body[i] !== 0 && r.body[i] !== full[i]) assert.fail(`${via}: byte ${i} is neither the file's nor zero`);
      }
    }
    const s = await settled(fds);
    assert.strictEqual(s.sources, 0);
  });

  it('appended to while sent: exactly the announced Content-Length, the old bytes, and the connection stays usable', async function () {
    const port = await start();
    const fds = fdCount();
    const name = 'grows.bin';
    for (const via of ['/s/', '/rwf/']) {
      const full = crypto.randomBytes(N);
      fs.writeFileSync(path.join(dir, name), full);
      const c = await pausedResponse(port, via, name, true);
      fs.appendFileSync(path.join(dir, name), crypto.randomBytes(3 * MiB + 5));
      c.socket.resume();
      const [res] = await c.responses(1, {}, 20000);
      assert.strictEqual(res.statusCode, 200);
      assert.strictEqual(res.headers['content-length'], String(N));
      assert.strictEqual(res.body.length, N);
      assert.strictEqual(common.sha256(res.body), common.sha256(full), `${via}: the announced range, unchanged`);
      // Framing exact: a second request on the connection gets the file as
      // it is now.
      c.write(`GET ${via}${name} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      const data = await c.waitClose(20000);
      assert.strictEqual(c.error, null);
      const all = common.parseResponses(data, { ended: true }).responses;
      assert.strictEqual(all.length, 2);
      assert.strictEqual(all[1].headers['content-length'], String(N + 3 * MiB + 5));
      assert.ok(all[1].body.equals(fs.readFileSync(path.join(dir, name))), `${via}: the second response`);
    }
    const s = await settled(fds);
    assert.strictEqual(s.sources, 0);
  });
});
