'use strict';

// The native access log (docs/observability.md): nginx's combined format
// and JSON lines, written off the main thread; a stalled disk (a FIFO
// nobody reads) drops and counts lines while requests keep being answered.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const common = require('../common');

const { assert } = common;


let dir;

// The file's lines once it has `n` of them (the writer thread is async).
async function linesOf(file, n) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'latin1') : '';
    const lines = text.split('\n').filter(Boolean);
    if (lines.length >= n || Date.now() > deadline) return lines;
    await common.sleep(20);
  }
}

function handler(req, res) {
  res.statusCode = req.url.startsWith('/missing') ? 404 : 200;
  res.end('hello');
}

describe('native access log', () => {
  afterEach(common.cleanup);
  beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-log-')); });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  if (common.isNode) return;  // sluice's own option

  it('combined: nginx\'s line for each response, escaped', async () => {
    const file = path.join(dir, 'access.log');
    const { port } = await common.startServer({ accessLog: file }, handler);
    await common.httpRequest(port, {
      path: '/a?b=1', headers: { referer: 'http://r/', 'user-agent': 'ua "quoted"' },
    });
    await common.httpRequest(port, { path: '/missing', method: 'POST', body: 'x' });
    const lines = await linesOf(file, 2);
    assert.strictEqual(lines.length, 2, lines.join('\n'));
    assert.match(lines[0],
      /^127\.0\.0\.1 - - \[\d\d\/[A-Z][a-z]{2}\/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}\] "GET \/a\?b=1 HTTP\/1\.1" 200 5 "http:\/\/r\/" "ua \\x22quoted\\x22"$/);
    assert.match(lines[1], /"POST \/missing HTTP\/1\.1" 404 5 "-" "-"$/);
  });

  it('json: one object per line; metrics count the lines', async () => {
    const file = path.join(dir, 'access.jsonl');
    const { server, port } = await common.startServer({ accessLog: { path: file, format: 'json' } }, handler);
    await common.httpRequest(port, { path: '/j', headers: { 'user-agent': 'ua/\u00e9' } });
    const lines = await linesOf(file, 1);
    const rec = JSON.parse(lines[0]);
    assert.strictEqual(rec.method, 'GET');
    assert.strictEqual(rec.url, '/j');
    assert.strictEqual(rec.protocol, 'HTTP/1.1');
    assert.strictEqual(rec.status, 200);
    assert.strictEqual(rec.body_bytes, 5);
    assert.strictEqual(rec.remote_addr, '127.0.0.1');
    // Each byte as the character of that code (latin1), as node's req.headers.
    assert.strictEqual(rec.user_agent, 'ua/\u00e9');
    assert.strictEqual(rec.referer, '');
    assert.ok(rec.duration_ms >= 0);
    assert.match(rec.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.deepStrictEqual(server.metrics().accessLog, { written: 1, dropped: 0 });
  });

  it('file bodies (sendfile and the pooled reads) count their bytes', async () => {
    const body = path.join(dir, 'body.bin');
    fs.writeFileSync(body, Buffer.alloc(200000, 7));
    for (const sendfile of [true, false]) {
      const file = path.join(dir, `access-${sendfile}.jsonl`);
      const { port } = await common.startServer({ accessLog: { path: file, format: 'json' }, sendfile },
        (req, res) => res.respondWithFile(body));
      const r = await common.httpRequest(port, { path: '/f' });
      assert.strictEqual(r.body.length, 200000);
      const rec = JSON.parse((await linesOf(file, 1))[0]);
      assert.deepStrictEqual([rec.status, rec.body_bytes], [200, 200000], `sendfile ${sendfile}`);
    }
  });

  it('HTTP/2: a line per response, DATA payload bytes as body bytes', async () => {
    const http2 = require('node:http2');
    const file = path.join(dir, 'access.log');
    const { port } = await common.startServer({ accessLog: file }, (req, res) => {
      if (req.url === '/big') res.end(Buffer.alloc(70000, 1));  // several DATA frames
      else handler(req, res);
    });
    const session = http2.connect(`http://127.0.0.1:${port}`);
    common.trackSocket(session);
    const get = (p, headers) => new Promise((resolve, reject) => {
      const req = session.request({ ':path': p, ...headers });
      let n = 0;
      req.on('data', (c) => { n += c.length; });
      req.on('end', () => resolve(n));
      req.on('error', reject);
    });
    assert.strictEqual(await get('/a?x=1', { 'user-agent': 'h2/1', referer: 'http://r/' }), 5);
    assert.strictEqual(await get('/missing'), 5);
    assert.strictEqual(await get('/big'), 70000);
    await new Promise((r) => session.close(r));
    const lines = await linesOf(file, 3);
    assert.strictEqual(lines.length, 3, lines.join('\n'));
    assert.match(lines[0], /^127\.0\.0\.1 - - \[[^\]]+\] "GET \/a\?x=1 HTTP\/2\.0" 200 5 "http:\/\/r\/" "h2\/1"$/);
    assert.match(lines[1], /"GET \/missing HTTP\/2\.0" 404 5 "-" "-"$/);
    assert.match(lines[2], /"GET \/big HTTP\/2\.0" 200 70000 /);
  });

  it('a stalled disk: lines dropped and counted, responses not held back', async () => {
    const fifo = path.join(dir, 'stalled');
    execFileSync('mkfifo', [fifo]);
    // A reader that does not read: the writer thread blocks once the pipe
    // (64 KiB) is full.
    const reader = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    try {
      const { server, port } = await common.startServer(
        { accessLog: { path: fifo, bufferSize: 8192 } }, handler);
      const ua = 'u'.repeat(1000);
      const n = 200;
      let raw = '';
      for (let i = 0; i < n; i++) {
        raw += `GET /${i} HTTP/1.1\r\nHost: a\r\nUser-Agent: ${ua}\r\n${i === n - 1 ? 'Connection: close\r\n' : ''}\r\n`;
      }
      const started = Date.now();
      const client = await common.rawConnect(port);
      client.write(raw);
      await common.withTimeout(client.closedPromise, 10000, 'responses');
      assert.strictEqual(common.parseResponses(client.data).responses.length, n);
      assert.ok(Date.now() - started < 8000);
      const m = server.metrics().accessLog;
      assert.ok(m.dropped > 0, JSON.stringify(m));
      assert.ok(m.dropped < n);
      // Drain the pipe: the writer gets through what it had queued.
      const buf = Buffer.alloc(1 << 16);
      let got = 0;
      const deadline = Date.now() + 5000;
      while (Date.now() < deadline) {
        let k = 0;
        try {
          k = fs.readSync(reader, buf);
        } catch (err) {
          if (err.code !== 'EAGAIN') throw err;
        }
        got += k;
        const now = server.metrics().accessLog;
        if (now.written + now.dropped === n && k === 0) break;
        if (k === 0) await common.sleep(10);
      }
      const final = server.metrics().accessLog;
      assert.strictEqual(final.written + final.dropped, n, JSON.stringify(final));
      assert.ok(got >= final.written * 1000);
    } finally {
      fs.closeSync(reader);
    }
  });

  it('a bad option or an unopenable path throws', () => {
    const sluice = require(common.ROOT);
    assert.throws(() => sluice.createServer({ accessLog: { path: '/x', format: 'nginx' } }),
      { code: 'ERR_INVALID_ARG_VALUE' });
    assert.throws(() => sluice.createServer({ accessLog: path.join(dir, 'no/such/dir/log') }),
      { code: 'ENOENT', syscall: 'open' });
  });
});
