'use strict';

// Non-regular files behind respondWithFile / respondWithFD: FIFOs, sockets,
// character devices. They are opened with O_NONBLOCK and read on the loop
// thread when readable (src/core/body/file_source.h), so no threadpool
// thread ever waits on them; regular file responses keep flowing beside
// any number of slow FIFOs. The HTTP/2 cases node:http2 shares run against
// node:http2 too (SLUICE_TEST_IMPL=node); the rest are sluice-only.
//
// FIFO writers here open the FIFO O_RDWR|O_NONBLOCK in this process: the
// open never waits and the writer exists before the response starts (a
// writer that comes after a reader saw "no writer" is too late: that
// response has ended).

const fs = require('node:fs');
const os = require('node:os');
const net = require('node:net');
const path = require('node:path');
const http2 = require('node:http2');
const { execFileSync } = require('node:child_process');
const common = require('../common');
const h2 = require('../http2/h2common');
const { assert } = common;

const { O_RDWR, O_NONBLOCK, O_RDONLY } = fs.constants;

const { fdCount, settled } = require('./settled');

// The status flags of one of our fds (octal in /proc/self/fdinfo).
function fdFlags(fd) {
  const m = /flags:\s*([0-7]+)/.exec(fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'latin1'));
  return parseInt(m[1], 8);
}

// One FIFO writer: the fd is O_RDWR so it never waits to open; closing it
// is the EOF the reader sees.
function fifoWriter(p) {
  const fd = fs.openSync(p, O_RDWR | O_NONBLOCK);
  let closed = false;
  return {
    fd,
    write(b) { return fs.writeSync(fd, b); },
    close() {
      if (!closed) fs.closeSync(fd);
      closed = true;
    },
  };
}

// A raw HTTP/1.1 GET: resolves the parsed response (chunked body decoded)
// once it is complete.
function rawGet(port, p, timeout = 20000) {
  return common.withTimeout(new Promise((resolve, reject) => {
    const s = common.trackSocket(net.connect(port, '127.0.0.1'));
    let buf = Buffer.alloc(0);
    let done = false;
    s.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      const r = common.parseResponses(buf);
      if (r.responses.length) {
        done = true;
        resolve(r.responses[0]);
        s.destroy();
      }
    });
    s.on('error', reject);
    s.on('close', () => {
      if (!done) reject(new Error(`closed before a whole response: ${buf.toString('latin1').slice(0, 300)}`));
    });
    s.write(`GET ${p} HTTP/1.1\r\nHost: a\r\n\r\n`);
  }), timeout, `raw GET ${p}`);
}

describe(`non-regular files: FIFOs, sockets, devices [${common.implName}]`, function () {
  let dir;
  let n = 0;
  const writers = [];
  let regular;
  let regularData;

  const mkfifo = () => {
    const p = path.join(dir, `fifo${n++}`);
    execFileSync('mkfifo', [p]);
    return p;
  };
  const writer = (p) => {
    const w = fifoWriter(p);
    writers.push(w);
    return w;
  };

  before(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-fifo-'));
    regular = path.join(dir, 'regular.bin');
    regularData = Buffer.alloc(200 * 1024, 'r');
    fs.writeFileSync(regular, regularData);
  });

  after(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  afterEach(async function () {
    for (const w of writers.splice(0)) w.close();
    await common.cleanup();
  });

  it('stream.respondWithFile on a FIFO with a writer streams its bytes as they come, without content-length', async function () {
    const fifo = mkfifo();
    const w = writer(fifo);
    const { port } = await h2.startH2((stream) => {
      stream.respondWithFile(fifo, { 'content-type': 'text/plain' });
    });
    const s = h2.connect(port);
    const req = s.request({ ':path': '/' });
    const [headers] = await common.once(req, 'response', 5000);
    assert.strictEqual(headers[':status'], 200);
    assert.strictEqual(headers['content-length'], undefined);
    const chunks = [];
    req.on('data', (d) => chunks.push(d));
    const ended = common.once(req, 'end', 5000);
    w.write('hello ');
    // The first bytes arrive before the writer is done.
    while (chunks.length === 0) await common.sleep(10);
    assert.strictEqual(Buffer.concat(chunks).toString(), 'hello ');
    w.write('world');
    await common.sleep(50);
    w.close();
    await ended;
    assert.strictEqual(Buffer.concat(chunks).toString(), 'hello world');
  });

  it('offset/length on a FIFO fail with ERR_HTTP2_SEND_FILE_NOSEEK, a directory with ERR_HTTP2_SEND_FILE (onError)', async function () {
    const fifo = mkfifo();
    writer(fifo);
    const seen = {};
    const { port } = await h2.startH2((stream, headers) => {
      const p = headers[':path'];
      const target = p === '/dir' ? dir : fifo;
      const opts = p === '/length' ? { length: 3 } : p === '/offset' ? { offset: 1 } : {};
      stream.respondWithFile(target, {}, {
        ...opts,
        onError(err) {
          seen[p] = err.code;
          stream.respond({ ':status': 500 });
          stream.end();
        },
      });
    });
    const s = h2.connect(port);
    for (const p of ['/offset', '/length', '/dir']) {
      const r = await h2.request(s, { ':path': p });
      assert.strictEqual(r.headers[':status'], 500, p);
    }
    assert.deepStrictEqual(seen, {
      '/offset': 'ERR_HTTP2_SEND_FILE_NOSEEK',
      '/length': 'ERR_HTTP2_SEND_FILE_NOSEEK',
      '/dir': 'ERR_HTTP2_SEND_FILE',
    });
  });

  it('without onError a missing file or a directory emits \'error\' on the stream and resets it INTERNAL_ERROR', async function () {
    const errors = {};
    const { port } = await h2.startH2((stream, headers) => {
      const p = headers[':path'];
      stream.on('error', (e) => { errors[p] = e.code; });
      stream.respondWithFile(p === '/dir' ? dir : path.join(dir, 'nope'));
    });
    const s = h2.connect(port);
    for (const p of ['/missing', '/dir']) {
      const req = s.request({ ':path': p });
      req.on('error', () => {});
      req.resume();
      await common.once(req, 'close', 5000);
      assert.strictEqual(req.rstCode, http2.constants.NGHTTP2_INTERNAL_ERROR, p);
    }
    assert.deepStrictEqual(errors, { '/missing': 'ENOENT', '/dir': 'ERR_HTTP2_SEND_FILE' });
  });

  common.sluiceOnly('a FIFO with no writer ends at once: empty 200 on HTTP/1.1, HTTP/2 and compat (node:http2 waits in open() for a writer)', async function () {
    const fifo = mkfifo();
    const before = fdCount();
    const { port } = await common.startServer((req, res) => res.respondWithFile(fifo));
    const { port: port2 } = await h2.startH2((stream) => stream.respondWithFile(fifo));
    const t0 = Date.now();
    const r1 = await rawGet(port, '/');
    assert.strictEqual(r1.statusCode, 200);
    assert.strictEqual(r1.headers['transfer-encoding'], 'chunked');
    assert.strictEqual(r1.body.length, 0);
    const r2 = await h2.request(h2.connect(port2), { ':path': '/' });
    assert.strictEqual(r2.headers[':status'], 200);
    assert.strictEqual(r2.body.length, 0);
    const r3 = await h2.request(h2.connect(port), { ':path': '/' });  // compat
    assert.strictEqual(r3.headers[':status'], 200);
    assert.strictEqual(r3.body.length, 0);
    assert.ok(Date.now() - t0 < 3000);
    await common.cleanup();
    const st = await settled(before);
    assert.strictEqual(st.sources, 0);
  });

  common.sluiceOnly('HTTP/1.1: a FIFO response is chunked, its head leaves before the first byte is written', async function () {
    const fifo = mkfifo();
    const w = writer(fifo);
    const { port } = await common.startServer((req, res) => {
      res.setHeader('content-type', 'text/plain');
      res.respondWithFile(fifo);
    });
    const s = common.trackSocket(net.connect(port, '127.0.0.1'));
    s.write('GET / HTTP/1.1\r\nHost: a\r\n\r\n');
    let buf = '';
    s.on('data', (d) => { buf += d.toString('latin1'); });
    while (!buf.includes('\r\n\r\n')) await common.sleep(10);
    assert.match(buf, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(buf, /transfer-encoding: chunked/i);
    assert.doesNotMatch(buf, /content-length/i);
    w.write('abc');
    while (!buf.endsWith('3\r\nabc\r\n')) await common.sleep(10);
    w.write('defg');
    w.close();
    while (!buf.endsWith('0\r\n\r\n')) await common.sleep(10);
    assert.ok(buf.endsWith('\r\n\r\n3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n'), buf);
    // The connection stays usable (the writer is gone now: an empty body).
    buf = '';
    s.write('GET / HTTP/1.1\r\nHost: a\r\n\r\n');
    while (!buf.endsWith('0\r\n\r\n')) await common.sleep(10);
    assert.match(buf, /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n0\r\n\r\n$/);
  });

  common.sluiceOnly('compression and HEAD: a FIFO of text goes through the native compressor (gzip, HTTP/1.1; br, HTTP/2 compat); HEAD ends without reading', async function () {
    const zlib = require('node:zlib');
    const fifo = mkfifo();
    const text = 'sluice compresses what a FIFO gives it. '.repeat(2000);
    const { port } = await common.startServer({ compression: true }, (req, res) => {
      res.setHeader('content-type', 'text/plain');
      res.respondWithFile(fifo);
    });
    // Writes all of `data` (a FIFO holds 64 KiB: wait for the reader).
    const writeAll = async (w, data) => {
      let buf = Buffer.from(data);
      while (buf.length) {
        try {
          buf = buf.subarray(w.write(buf));
        } catch (e) {
          if (e.code !== 'EAGAIN') throw e;
          await common.sleep(5);
        }
      }
    };
    const w1 = writer(fifo);
    const got1 = common.httpRequest(port, { headers: { 'accept-encoding': 'gzip' } });
    await writeAll(w1, text);
    w1.close();
    const r1 = await got1;
    assert.strictEqual(r1.headers['content-encoding'], 'gzip');
    assert.strictEqual(zlib.gunzipSync(r1.body).toString(), text);
    const w2 = writer(fifo);
    const got2 = h2.request(h2.connect(port), { ':path': '/', 'accept-encoding': 'br' });
    await writeAll(w2, text);
    w2.close();
    const r2 = await got2;
    assert.strictEqual(r2.headers['content-encoding'], 'br');
    assert.strictEqual(zlib.brotliDecompressSync(r2.body).toString(), text);
    // HEAD: the head, no body; the FIFO's bytes are left for its next
    // reader (the FIFO lives on while the writer holds it).
    const w3 = writer(fifo);
    w3.write('left');
    const r3 = await common.httpRequest(port, { method: 'HEAD' });
    assert.strictEqual(r3.statusCode, 200);
    assert.strictEqual(r3.body.length, 0);
    const got4 = common.httpRequest(port);
    await common.sleep(50);
    w3.close();
    assert.strictEqual((await got4).body.toString(), 'left');
  });

  common.sluiceOnly('16 concurrent FIFO responses with slow writers (HTTP/1.1, HTTP/2, compat; respondWithFile and respondWithFD) leave regular file responses flowing', async function () {
    this.timeout(30000);
    const before = fdCount();
    const fifos = [];
    const { port } = await common.startServer((req, res) => {
      const [, kind, i] = req.url.split('/');
      if (kind === 'fifo') res.respondWithFile(fifos[Number(i)].path);
      else if (kind === 'fd') res.respondWithFD(fifos[Number(i)].readFd);
      else res.respondWithFile(regular);
    });
    const { port: port2 } = await h2.startH2((stream, headers) => {
      const [, kind, i] = headers[':path'].split('/');
      if (kind === 'fifo') stream.respondWithFile(fifos[Number(i)].path);
      else if (kind === 'fd') stream.respondWithFD(fifos[Number(i)].readFd);
      else stream.respondWithFile(regular);
    });
    const responses = [];
    const s1 = h2.connect(port);   // compat
    const s2 = h2.connect(port2);  // stream API
    for (let i = 0; i < 16; i++) {
      const p = mkfifo();
      const f = { path: p, w: writer(p), sent: '' };
      fifos.push(f);
      let done;
      const kind = i % 4;
      if (kind === 0 && i % 8 === 4) {
        // res.respondWithFD on HTTP/1.1.
        f.readFd = fs.openSync(p, O_RDONLY | O_NONBLOCK);
        done = rawGet(port, `/fd/${i}`).then((r) => r.body);
      } else if (kind === 0) {
        done = rawGet(port, `/fifo/${i}`).then((r) => r.body);
      } else if (kind === 1) {
        done = h2.request(s1, { ':path': `/fifo/${i}` }, { timeout: 20000 }).then((r) => r.body);
      } else if (kind === 2) {
        done = h2.request(s2, { ':path': `/fifo/${i}` }, { timeout: 20000 }).then((r) => r.body);
      } else {
        // respondWithFD: the caller's fd (left open) on the FIFO.
        f.readFd = fs.openSync(p, O_RDONLY | O_NONBLOCK);
        done = h2.request(s2, { ':path': `/fd/${i}` }, { timeout: 20000 }).then((r) => r.body);
      }
      let settledFlag = false;
      done.then(() => { settledFlag = true; }, () => { settledFlag = true; });
      responses.push({ done, isSettled: () => settledFlag });
    }
    // Slow writers: a byte each per 50 ms.
    const tick = setInterval(() => {
      for (const f of fifos) {
        f.w.write('x');
        f.sent += 'x';
      }
    }, 50);
    try {
      await common.sleep(200);
      // 24 regular responses, both protocols, while all 16 FIFOs are open.
      const t0 = Date.now();
      const regulars = [];
      for (let i = 0; i < 8; i++) {
        regulars.push(common.httpRequest(port, { path: '/regular' }).then((r) => r.body));
        regulars.push(h2.request(s1, { ':path': '/regular' }).then((r) => r.body));
        regulars.push(h2.request(s2, { ':path': '/regular' }).then((r) => r.body));
      }
      for (const b of await Promise.all(regulars)) assert.ok(b.equals(regularData));
      assert.ok(Date.now() - t0 < 8000);
      assert.ok(responses.every((r) => !r.isSettled()), 'the FIFO responses are still streaming');
    } finally {
      clearInterval(tick);
    }
    for (const f of fifos) {
      f.w.write('END');
      f.sent += 'END';
      f.w.close();
    }
    const bodies = await Promise.all(responses.map((r) => r.done));
    for (let i = 0; i < 16; i++) assert.strictEqual(bodies[i].toString(), fifos[i].sent, `fifo ${i}`);
    for (const f of fifos) {
      if (f.readFd !== undefined) {
        // Left open by respondWithFD (fstat throws EBADF otherwise).
        fs.fstatSync(f.readFd);
        fs.closeSync(f.readFd);
      }
    }
    await common.cleanup();
    const st = await settled(before);
    assert.strictEqual(st.sources, 0);
    assert.ok(st.fds <= before, `fds ${st.fds} > ${before}`);
  });

  common.sluiceOnly('backpressure: a client that does not read stops the reads; the FIFO fills and its writer gets EAGAIN; no byte is lost', async function () {
    this.timeout(20000);
    const fifo = mkfifo();
    const w = writer(fifo);
    const { port } = await h2.startH2((stream) => stream.respondWithFile(fifo));
    // A small connection and stream window: the client does not read.
    const s = h2.connect(port, { settings: { initialWindowSize: 65535 } });
    const req = s.request({ ':path': '/' });
    req.pause();
    await common.once(req, 'response', 5000);
    const chunk = Buffer.alloc(16384, 'p');
    let written = 0;
    let idleSince = Date.now();
    const hash = require('node:crypto').createHash('sha256');
    while (Date.now() - idleSince < 500) {
      let wrote = false;
      try {
        const k = w.write(chunk);
        hash.update(chunk.subarray(0, k));
        written += k;
        wrote = true;
      } catch (e) {
        if (e.code !== 'EAGAIN') throw e;
      }
      if (wrote) idleSince = Date.now();
      else await common.sleep(20);
      assert.ok(written < 32 * 1024 * 1024, 'the server kept reading with nobody sending');
    }
    // Pipe (64 KiB) + read-ahead (2 x 128 KiB) + what the windows and
    // the socket buffers hold: nowhere near the 32 MiB we tried.
    assert.ok(written < 8 * 1024 * 1024, `${written} bytes taken`);
    w.close();
    const body = await common.collect(req.resume());
    assert.strictEqual(body.length, written);
    assert.strictEqual(common.sha256(body), hash.digest('hex'));
  });

  common.sluiceOnly('character devices and sockets: /dev/null ends at once, /dev/zero streams until the client resets (no leak), a socket fd streams its peer\'s bytes', async function () {
    this.timeout(20000);
    const before = fdCount();
    let devNullFd;
    let sockFd;
    const { port } = await h2.startH2((stream, headers) => {
      const p = headers[':path'];
      if (p === '/null') stream.respondWithFile('/dev/null');
      else if (p === '/nullfd') stream.respondWithFD(devNullFd);
      else if (p === '/zero') stream.respondWithFile('/dev/zero');
      else if (p === '/sock') stream.respondWithFD(sockFd);
    });
    const s = h2.connect(port);
    // /dev/null: EOF at once; the caller's blocking fd is left open and
    // blocking (its O_NONBLOCK was set for the read and put back).
    devNullFd = fs.openSync('/dev/null', 'r');
    assert.strictEqual(fdFlags(devNullFd) & O_NONBLOCK, 0);
    for (const p of ['/null', '/nullfd']) {
      const r = await h2.request(s, { ':path': p });
      assert.strictEqual(r.headers[':status'], 200);
      assert.strictEqual(r.body.length, 0);
    }
    const binding = common.libInternal('common/binding');
    while (binding.NativeFile.stats().sources !== 0) await common.sleep(10);
    assert.strictEqual(fdFlags(devNullFd) & O_NONBLOCK, 0, 'O_NONBLOCK restored');
    fs.closeSync(devNullFd);
    // /dev/zero: an endless body; the client takes 3 MiB and resets.
    const req = s.request({ ':path': '/zero' });
    let got = 0;
    req.on('data', (d) => {
      got += d.length;
      if (got >= 3 * 1024 * 1024 && !req.destroyed) req.close(http2.constants.NGHTTP2_CANCEL);
    });
    req.on('error', () => {});
    await common.once(req, 'close', 10000);
    assert.ok(got >= 3 * 1024 * 1024);
    // A TCP socket's fd (node watches that fd: the core polls a dup).
    const peerP = new Promise((resolve) => {
      const srv = net.createServer((c) => resolve(c));
      common.trackServer(srv);
      srv.listen(0, '127.0.0.1', () => {
        const c = common.trackSocket(net.connect(srv.address().port, '127.0.0.1'));
        c.on('connect', () => {
          c.pause();
          sockFd = c._handle.fd;
        });
      });
    });
    const peer = common.trackSocket(await peerP);
    while (sockFd === undefined) await common.sleep(5);
    const sreq = s.request({ ':path': '/sock' });
    const body = common.collect(sreq);
    await common.once(sreq, 'response', 5000);
    peer.write('through a ');
    await common.sleep(30);
    peer.end('socket');
    assert.strictEqual((await body).toString(), 'through a socket');
    await common.cleanup();
    const st = await settled(before);
    assert.strictEqual(st.sources, 0);
  });
});
