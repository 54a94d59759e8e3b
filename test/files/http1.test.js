'use strict';

// res.respondWithFile / res.respondWithFD on HTTP/1.1: the native file
// pipe (src/core/file_source.*, src/core/http1_pipe_body.*) against real
// clients (node's http client, curl, raw sockets).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const http = require('node:http');
const common = require('../common');
const { assert } = common;

const maybe = common.isSluice ? describe : describe.skip;

const { fdCount, settled } = require('./settled');

maybe(`http1 respondWithFile [${common.implName}]`, function () {
  let dir;
  let big;        // 10 MiB of random bytes
  let bigData;
  let small;      // 1000 bytes of text
  let smallData;
  let empty;

  before(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-files-'));
    big = path.join(dir, 'big.bin');
    bigData = crypto.randomBytes(10 * 1024 * 1024);
    fs.writeFileSync(big, bigData);
    small = path.join(dir, 'small.txt');
    smallData = Buffer.from('0123456789'.repeat(100));
    fs.writeFileSync(small, smallData);
    empty = path.join(dir, 'empty.txt');
    fs.writeFileSync(empty, '');
  });

  after(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  afterEach(common.cleanup);

  it('a 10 MiB file arrives intact (sha256) with the right Content-Length (node http client and curl)', async function () {
    const { port } = await common.startServer((req, res) => {
      res.respondWithFile(big, { 'content-type': 'application/octet-stream' });
    });
    const r = await common.httpRequest(port, { path: '/big', timeout: 15000 });
    assert.strictEqual(r.statusCode, 200);
    assert.strictEqual(r.headers['content-length'], String(bigData.length));
    assert.strictEqual(r.headers['content-type'], 'application/octet-stream');
    assert.strictEqual(r.headers['transfer-encoding'], undefined);
    assert.strictEqual(common.sha256(r.body), common.sha256(bigData));
    const c = await common.curl(['-o', '-', '-D', path.join(dir, 'curl-head.txt'), `http://127.0.0.1:${port}/big`], { timeout: 15000 });
    assert.strictEqual(c.code, 0, c.stderr);
    assert.strictEqual(common.sha256(c.stdout), common.sha256(bigData));
    assert.match(fs.readFileSync(path.join(dir, 'curl-head.txt'), 'latin1'), /content-length: 10485760\r\n/i);
  });

  it('offset and length select a range; Content-Length is the range; length is clamped to the end', async function () {
    const ranges = {
      '/a': { offset: 1000, length: 5000 },
      '/b': { offset: bigData.length - 10 },
      '/c': { offset: 123, length: 10 * 1024 * 1024 },  // past the end
      '/d': { length: 0 },
      '/e': { offset: 777777, length: 300000 },
    };
    const { port } = await common.startServer((req, res) => {
      res.respondWithFile(big, {}, ranges[req.url]);
    });
    for (const [p, o] of Object.entries(ranges)) {
      const start = o.offset || 0;
      const end = Math.min(bigData.length, o.length === undefined ? bigData.length : start + o.length);
      const want = bigData.subarray(start, end);
      const r = await common.httpRequest(port, { path: p });
      assert.strictEqual(r.statusCode, 200, p);
      assert.strictEqual(r.headers['content-length'], String(want.length), p);
      assert.ok(r.body.equals(want), `${p}: body differs`);
    }
  });

  it('an empty file answers Content-Length: 0', async function () {
    const { port } = await common.startServer((req, res) => res.respondWithFile(empty));
    const r = await common.httpRequest(port, { path: '/' });
    assert.strictEqual(r.statusCode, 200);
    assert.strictEqual(r.headers['content-length'], '0');
    assert.strictEqual(r.body.length, 0);
  });

  it('HEAD gets the head with the file\'s Content-Length and no body (raw socket, a GET follows on the same connection)', async function () {
    const { port } = await common.startServer((req, res) => res.respondWithFile(small, { 'content-type': 'text/plain' }));
    const c = await common.rawConnect(port);
    c.socket.write('HEAD /x HTTP/1.1\r\nHost: h\r\n\r\nGET /y HTTP/1.1\r\nHost: h\r\n\r\n');
    const rs = await c.responses(2, { methods: ['HEAD', 'GET'] });
    assert.strictEqual(rs[0].statusCode, 200);
    assert.strictEqual(rs[0].headers['content-length'], String(smallData.length));
    assert.strictEqual(rs[0].body.length, 0);
    assert.ok(rs[1].body.equals(smallData));
    c.destroy();
  });

  it('the user\'s statusCode and headers are kept; statCheck sees the stat and may add headers (last-modified from stat.mtime)', async function () {
    let seen;
    const { port } = await common.startServer((req, res) => {
      res.statusCode = 203;
      res.setHeader('x-before', 'yes');
      res.respondWithFile(small, { 'content-type': 'text/plain' }, {
        statCheck(stat, headers) {
          seen = { isFile: stat.isFile(), size: stat.size, mtime: stat.mtime, ct: headers['content-type'] };
          headers['last-modified'] = stat.mtime.toUTCString();
          headers['x-added'] = 'by statCheck';
        },
      });
    });
    const r = await common.httpRequest(port, { path: '/' });
    assert.strictEqual(r.statusCode, 203);
    assert.strictEqual(r.headers['x-before'], 'yes');
    assert.strictEqual(r.headers['x-added'], 'by statCheck');
    assert.strictEqual(r.headers['content-type'], 'text/plain');
    assert.strictEqual(r.headers['content-length'], String(smallData.length));
    assert.ok(r.body.equals(smallData));
    assert.strictEqual(seen.isFile, true);
    assert.strictEqual(seen.size, smallData.length);
    assert.strictEqual(seen.ct, 'text/plain');
    assert.ok(seen.mtime instanceof Date);
    assert.strictEqual(r.headers['last-modified'], fs.statSync(small).mtime.toUTCString());
  });

  it('statCheck returning false cancels: the handler answers itself (304) and the fd is closed', async function () {
    const { port } = await common.startServer((req, res) => {
      res.respondWithFile(big, {}, {
        statCheck(stat) {
          res.writeHead(304, { etag: `"${stat.size}"` });
          res.end();
          return false;
        },
      });
    });
    const r = await common.httpRequest(port, { path: '/' });
    assert.strictEqual(r.statusCode, 304);
    assert.strictEqual(r.headers.etag, `"${bigData.length}"`);
    const st = await settled(Infinity);
    assert.strictEqual(st.sources, 0);
  });

  it('a missing file reaches onError with ENOENT (the handler answers)', async function () {
    let got;
    const { port } = await common.startServer((req, res) => {
      res.respondWithFile(path.join(dir, 'nope'), {}, {
        onError(err) {
          got = err;
          res.statusCode = err.code === 'ENOENT' ? 404 : 500;
          res.end('custom');
        },
      });
    });
    const r = await common.httpRequest(port, { path: '/' });
    assert.strictEqual(r.statusCode, 404);
    assert.strictEqual(r.body.toString(), 'custom');
    assert.strictEqual(got.code, 'ENOENT');
    assert.strictEqual(got.syscall, 'open');
    assert.strictEqual(got.path, path.join(dir, 'nope'));
    assert.ok(got.errno < 0);
  });

  it('without onError: a missing file answers 404, a directory 500, and the connection keeps serving', async function () {
    const { port } = await common.startServer((req, res) => {
      if (req.url === '/missing') res.respondWithFile(path.join(dir, 'nope'));
      else if (req.url === '/dir') res.respondWithFile(dir);
      else res.end('ok');
    });
    const c = await common.rawConnect(port);
    c.socket.write('GET /missing HTTP/1.1\r\nHost: h\r\n\r\nGET /dir HTTP/1.1\r\nHost: h\r\n\r\nGET /ok HTTP/1.1\r\nHost: h\r\n\r\n');
    const rs = await c.responses(3);
    assert.deepStrictEqual(rs.map((x) => x.statusCode), [404, 500, 200]);
    assert.strictEqual(rs[0].headers['content-length'], '0');
    assert.strictEqual(rs[2].body.toString(), 'ok');
    c.destroy();
  });

  it('argument validation throws synchronously (bad offset, bad options, after headers were sent)', async function () {
    const errors = [];
    const { port } = await common.startServer((req, res) => {
      for (const fn of [
        () => res.respondWithFile(small, {}, { offset: -1 }),
        () => res.respondWithFile(small, {}, { length: 1.5 }),
        () => res.respondWithFile(small, {}, { statCheck: 1 }),
        () => res.respondWithFile(42),
        () => res.respondWithFD('x'),
      ]) {
        try { fn(); errors.push(null); } catch (e) { errors.push(e.code); }
      }
      res.writeHead(200);
      try { res.respondWithFile(small); } catch (e) { errors.push(e.code); }
      res.end('done');
    });
    const twice = [];
    const { port: port2 } = await common.startServer((req, res) => {
      res.respondWithFile(small);
      try { res.respondWithFile(small); } catch (e) { twice.push(e.code); }
    });
    const r2 = await common.httpRequest(port2, { path: '/' });
    assert.ok(r2.body.equals(smallData));
    assert.deepStrictEqual(twice, ['ERR_HTTP_HEADERS_SENT']);
    const r = await common.httpRequest(port, { path: '/' });
    assert.strictEqual(r.body.toString(), 'done');
    assert.deepStrictEqual(errors, ['ERR_OUT_OF_RANGE', 'ERR_OUT_OF_RANGE', 'ERR_INVALID_ARG_VALUE',
      'ERR_INVALID_ARG_TYPE', 'ERR_INVALID_ARG_TYPE', 'ERR_HTTP_HEADERS_SENT']);
  });

  it('20 client resets mid-file leak no fd and no buffer, and the next request works', async function () {
    this.timeout(30000);
    let started = 0;
    let closed = 0;
    let finished = 0;
    const { port } = await common.startServer((req, res) => {
      started++;
      res.on('close', () => closed++);
      res.on('finish', () => finished++);
      res.respondWithFile(big);
    });
    // One warm-up request so lazily opened process fds (epoll, threadpool
    // pipes) exist before counting.
    await common.httpRequest(port, { path: '/' , timeout: 15000 });
    const before = await settled(fdCount());
    for (let i = 0; i < 20; i++) {
      const c = await common.rawConnect(port);
      c.socket.write('GET /big HTTP/1.1\r\nHost: h\r\n\r\n');
      // Stop reading after the first bytes: the server is then blocked on
      // backpressure in the middle of the file when the reset arrives.
      await c.waitFor((x) => x.len > 0, 5000, 'first bytes');
      c.socket.pause();
      await common.sleep(i % 4 === 0 ? 30 : 2);
      c.socket.resetAndDestroy();
      await c.waitClose();
    }
    const after = await settled(before.fds);
    assert.strictEqual(after.sources, 0, 'native file sources left');
    // (<=: the warm-up's client socket may still have been open before)
    assert.ok(after.fds <= before.fds, `fd count ${after.fds} > ${before.fds}`);
    assert.strictEqual(after.buffersOutstanding, 0, 'pipe buffers outstanding');
    assert.strictEqual(started, 21);
    assert.strictEqual(closed, 21);
    assert.strictEqual(finished, 1, 'the resets came mid-file (no finish)');
    const r = await common.httpRequest(port, { path: '/', timeout: 15000 });
    assert.strictEqual(common.sha256(r.body), common.sha256(bigData));
  });

  it('a slow reader gets all of a 10 MiB file while the server holds only a few pipe buffers (backpressure, resumed on write completion)', async function () {
    this.timeout(30000);
    const binding = common.libInternal('common/binding');
    const { port } = await common.startServer((req, res) => res.respondWithFile(big));
    const c = await common.rawConnect(port);
    let maxOut = 0;
    const probe = setInterval(() => {
      maxOut = Math.max(maxOut, binding.NativeFile.stats().buffersOutstanding);
    }, 5);
    try {
      c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
      // Read in bursts with pauses: the kernel buffers fill, the writer's
      // backlog stops the pump, completions restart it.
      const pacer = setInterval(() => {
        if (c.socket.isPaused()) c.socket.resume(); else c.socket.pause();
      }, 15);
      try {
        const [r] = await c.responses(1, {}, 25000);
        assert.strictEqual(r.headers['content-length'], String(bigData.length));
        assert.strictEqual(common.sha256(r.body), common.sha256(bigData));
      } finally {
        clearInterval(pacer);
        c.socket.resume();
      }
    } finally {
      clearInterval(probe);
    }
    // read_ahead (2) + the writer's bound (2 x 128 KiB) + one in the source.
    assert.ok(maxOut <= 6, `${maxOut} pipe buffers were out at once`);
    c.destroy();
  });

  it('pipelined requests mixing file and normal responses come back in order', async function () {
    const { port } = await common.startServer((req, res) => {
      const [, kind, arg] = req.url.split('/');
      if (kind === 'file') {
        res.respondWithFile(big, { 'x-i': arg }, { offset: Number(arg) * 1000, length: 100000 + Number(arg) });
      } else if (kind === 'small') {
        res.setHeader('x-i', arg);
        res.respondWithFile(small);
      } else {
        // Normal responses finish out of order (later ones first; i < 24).
        common.setTimer(() => {
          res.setHeader('x-i', arg);
          res.end(`text ${arg}`);
        }, (24 - Number(arg)) * 3);
      }
    });
    const reqs = [];
    for (let i = 0; i < 24; i++) {
      const kind = ['file', 'text', 'small', 'text', 'file', 'head'][i % 6];
      reqs.push(kind === 'head' ? { method: 'HEAD', url: `/file/${i}` } : { method: 'GET', url: `/${kind}/${i}` });
    }
    const c = await common.rawConnect(port);
    c.socket.write(reqs.map((r) => `${r.method} ${r.url} HTTP/1.1\r\nHost: h\r\n\r\n`).join(''));
    const rs = await c.responses(reqs.length, { methods: reqs.map((r) => r.method) }, 15000);
    rs.forEach((r, i) => {
      const [, kind, arg] = reqs[i].url.split('/');
      assert.strictEqual(r.headers['x-i'], String(i), `response ${i} out of order`);
      if (reqs[i].method === 'HEAD') {
        assert.strictEqual(r.headers['content-length'], String(100000 + i));
        assert.strictEqual(r.body.length, 0);
      } else if (kind === 'file') {
        assert.ok(r.body.equals(bigData.subarray(i * 1000, i * 1000 + 100000 + i)), `file body ${i}`);
      } else if (kind === 'small') {
        assert.ok(r.body.equals(smallData), `small body ${i}`);
      } else {
        assert.strictEqual(r.body.toString(), `text ${arg}`);
      }
    });
    c.destroy();
  });

  it('respondWithFD sends the file and leaves the fd open (number and FileHandle)', async function () {
    const fd = fs.openSync(big, 'r');
    const handle = await fs.promises.open(small, 'r');
    try {
      let finished = 0;
      const { port } = await common.startServer((req, res) => {
        res.on('finish', () => finished++);
        if (req.url === '/fd') res.respondWithFD(fd, {}, { offset: 5, length: 70000 });
        else res.respondWithFD(handle);
      });
      const r1 = await common.httpRequest(port, { path: '/fd' });
      assert.ok(r1.body.equals(bigData.subarray(5, 70005)));
      const r2 = await common.httpRequest(port, { path: '/fh' });
      assert.ok(r2.body.equals(smallData));
      // Twice on the same fd: positional reads do not move anything.
      const r3 = await common.httpRequest(port, { path: '/fd' });
      assert.ok(r3.body.equals(bigData.subarray(5, 70005)));
      for (let i = 0; i < 50 && finished < 3; i++) await common.sleep(10);
      assert.strictEqual(finished, 3);
      assert.strictEqual(fs.fstatSync(fd).size, bigData.length, 'fd still open');
      const again = Buffer.alloc(10);
      fs.readSync(fd, again, 0, 10, 0);
      assert.ok(again.equals(bigData.subarray(0, 10)));
      assert.strictEqual((await handle.stat()).size, smallData.length, 'FileHandle still open');
    } finally {
      fs.closeSync(fd);
      await handle.close();
    }
  });

  it('keep-alive: many file responses in a row on one connection; res emits finish and close', async function () {
    const events = [];
    const { port } = await common.startServer((req, res) => {
      res.on('finish', () => events.push('finish'));
      res.on('close', () => events.push('close'));
      res.respondWithFile(req.url === '/big' ? big : small);
    });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const sockets = new Set();
      for (let i = 0; i < 8; i++) {
        const p = i % 3 === 0 ? '/big' : '/small';
        const r = await common.httpRequest(port, { path: p, agent, timeout: 15000 });
        sockets.add(r.res.socket);
        assert.strictEqual(common.sha256(r.body), common.sha256(p === '/big' ? bigData : smallData));
      }
      assert.strictEqual(sockets.size, 1, 'one connection');
      await common.sleep(20);
      assert.strictEqual(events.filter((e) => e === 'finish').length, 8);
      assert.strictEqual(events.filter((e) => e === 'close').length, 8);
    } finally {
      agent.destroy();
    }
  });

  it('a small file\'s head and body leave in one write (the connection\'s flush count)', async function () {
    let conn;
    const { port } = await common.startServer((req, res) => {
      const sym = Object.getOwnPropertySymbols(res.socket).find((x) => x.description === 'sluice.conn');
      conn = res.socket[sym];
      res.respondWithFile(small);
    });
    const c = await common.rawConnect(port);
    const N = 20;
    for (let i = 0; i < N; i++) {
      c.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
      const rs = await c.responses(i + 1);
      assert.ok(rs[i].body.equals(smallData));
    }
    const { flushes } = conn.stats();
    assert.ok(flushes <= N + 1, `${flushes} writes for ${N} responses`);
    c.destroy();
  });

  it('50 concurrent 1 MiB ranges on 50 connections all arrive intact; no buffer stays out', async function () {
    this.timeout(30000);
    const { port } = await common.startServer((req, res) => {
      const i = Number(req.url.slice(1));
      res.respondWithFile(big, {}, { offset: i * 150000, length: 1 << 20 });
    });
    const rs = await Promise.all(Array.from({ length: 50 }, (_, i) =>
      common.httpRequest(port, { path: `/${i}`, timeout: 20000 })));
    rs.forEach((r, i) => {
      const want = bigData.subarray(i * 150000, Math.min(bigData.length, i * 150000 + (1 << 20)));
      assert.ok(r.body.equals(want), `body ${i}`);
    });
    const st = await settled(Infinity);
    assert.strictEqual(st.sources, 0);
    assert.strictEqual(st.buffersOutstanding, 0);
  });
});
