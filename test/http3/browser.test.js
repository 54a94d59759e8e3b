'use strict';

// A real browser over HTTP/3: Debian's chromium, headless, driven by
// puppeteer-core (as test/websocket/browser.test.js drives it), against a
// sluice secure server with http3 — chromium's own QUIC stack and its
// HTTP/3 + QPACK layer against node's OpenSSL 3.5 QUIC server and ours.
//
// One chromium, launched once for the file, with
//   --origin-to-force-quic-on=localhost:<the first server's port>
//       QUIC from the first request, no TCP at all for that origin;
//   --ignore-certificate-errors-spki-list=<sha256 of the test cert's SPKI>
//       computed here from the certificate with node's crypto;
//   --host-resolver-rules=MAP localhost 127.0.0.1
//       the servers listen on 127.0.0.1 only; chromium would try ::1 first
//       and a forced QUIC origin has no TCP to fall back on.
//
// 1. Forced QUIC: a page that pulls CSS, a script, a PNG (the serveStatic
//    middleware), a JSON file (res.respondWithFile), a 1.5 MiB file and a
//    1.25 MiB body written from JS with drain (both checked by sha256 in
//    the page), a 3 MiB fetch() POST the server hashes, cookies (two
//    set-cookie lines, chromium's split cookie field lines joined), a
//    download the page cancels (the server's response must close: chromium
//    sends STOP_SENDING), and 150 concurrent fetches (more than the
//    server's 100 streams per connection), and req.socket's remote
//    address and port (chromium's own UDP socket). HTTP/3
//    is proven from both sides: every request the server saw has
//    httpVersion '3.0', and every performance entry's nextHopProtocol is
//    'h3'.
// 2. Discovery: a second server (not forced): the first load goes over
//    HTTP/2 and carries Alt-Svc; chromium then opens QUIC to the advertised
//    port and the next load is 'h3'. Chromium uses a QUIC alternative only
//    when the certificate chains to a known root, except for the host
//    names listed in --origin-to-force-quic-on (any port): the first
//    server's entry lets localhost's test certificate pass here.
//
// Skipped with the reason on a node without HTTP/3 (sluice.features.http3)
// and without chromium or puppeteer-core. [sluice-only]: node has no
// HTTP/3 server.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');
const common = require('../common');
const { assert } = common;
const { fixtures } = require('../tls/tls_common');

const sha = (b) => crypto.createHash('sha256').update(b).digest('hex');

// A w x h RGB PNG (filter 0 on every row), pixels from `px(x, y)`.
function png(w, h, px) {
  const crcTable = [];
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    crcTable.push(c >>> 0);
  }
  const crc = (b) => {
    let c = 0xffffffff;
    for (const x of b) c = crcTable[(c ^ x) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const c = Buffer.alloc(4);
    c.writeUInt32BE(crc(td));
    return Buffer.concat([len, td, c]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8;  // bit depth
  ihdr[9] = 2;  // RGB
  const raw = Buffer.alloc((w * 3 + 1) * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) raw.set(px(x, y), y * (w * 3 + 1) + 1 + x * 3);
  }
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

const UPLOAD_BYTES = 3 * 1024 * 1024;
const STREAMED = { chunk: 64 * 1024, count: 20 };  // 1.25 MiB written with drain
const CONCURRENT = 150;

// The page's script: everything it checks, returned to the test as one
// object (the hashes it must match come in the query of its own URL).
function appJs() {
  /* eslint-disable no-undef */
  const check = async (want) => {
    const hex = async (buf) => [...new Uint8Array(await crypto.subtle.digest('SHA-256', buf))]
      .map((b) => b.toString(16).padStart(2, '0')).join('');
    const out = {};
    await new Promise((r) => (document.readyState === 'complete' ? r() : addEventListener('load', r)));
    out.background = getComputedStyle(document.body).backgroundColor;
    const img = document.getElementById('logo');
    out.image = { complete: img.complete, width: img.naturalWidth, height: img.naturalHeight };
    const pixel = document.createElement('canvas');
    pixel.width = img.naturalWidth;
    pixel.height = img.naturalHeight;
    pixel.getContext('2d').drawImage(img, 0, 0);
    out.image.pixel = [...pixel.getContext('2d').getImageData(5, 9, 1, 1).data];

    const big = await fetch('/big.bin');
    out.big = { status: big.status, sha: await hex(await big.arrayBuffer()) };
    const streamed = await fetch('/streamed');
    out.streamed = { status: streamed.status, sha: await hex(await streamed.arrayBuffer()) };
    out.json = await (await fetch('/data.json')).json();

    // Cookies: two from one response (two set-cookie field lines), one
    // from the page; chromium may send them back as separate cookie
    // field lines (RFC 9114 4.2.1), which the server joins with '; '.
    await fetch('/set-cookies');
    document.cookie = 'page=3; path=/';
    out.cookie = await (await fetch('/cookies', { cache: 'no-store' })).text();

    // A download cancelled after two chunks: chromium resets the stream,
    // the server's response closes, the connection serves on.
    const ctl = new AbortController();
    const endless = await fetch('/endless', { signal: ctl.signal });
    const reader = endless.body.getReader();
    out.endlessChunks = ((await reader.read()).done ? 0 : 1) + ((await reader.read()).done ? 0 : 1);
    ctl.abort();

    const body = new Uint8Array(want.uploadBytes);
    for (let i = 0; i < body.length; i += 65536) crypto.getRandomValues(body.subarray(i, i + 65536));
    const up = await fetch('/upload', { method: 'POST', body, headers: { 'content-type': 'application/octet-stream' } });
    out.upload = { status: up.status, sent: await hex(body), server: await up.json() };

    const many = await Promise.all(Array.from({ length: want.concurrent }, async (_, i) => {
      const r = await fetch(`/echo?i=${i}`, { cache: 'no-store' });
      return r.status === 200 && (await r.text()) === `echo ${i}`;
    }));
    out.concurrentOk = many.filter(Boolean).length;

    out.protocols = performance.getEntries()
      .filter((e) => e.entryType === 'navigation' || e.entryType === 'resource')
      .map((e) => [new URL(e.name).pathname, e.nextHopProtocol]);
    return out;
  };
  /* eslint-enable no-undef */
  return `window.h3Check = ${check.toString()};`;
}

const PAGE = `<!doctype html><meta charset="utf-8"><title>sluice over HTTP/3</title>
<link rel="stylesheet" href="/style.css">
<script src="/app.js"></script>
<body><h1>sluice over HTTP/3</h1><img id="logo" src="/logo.png" alt="logo">`;

// The application: static files (the serveStatic middleware) from `dir`,
// and routes: / (the page), /app.js, /data.json (res.respondWithFile),
// /streamed (written in chunks with drain), /upload (hashed), /echo.
// `seen` gets { httpVersion, method, url } of every request.
function makeApp(sluice, dir, seen) {
  const statics = sluice.serveStatic(dir);
  const streamedBody = crypto.randomBytes(STREAMED.chunk * STREAMED.count);
  const app = (req, res) => {
    const entry = { httpVersion: req.httpVersion, method: req.method, url: req.url, status: 0 };
    seen.push(entry);
    res.on('finish', () => { entry.status = res.statusCode; });
    const url = new URL(req.url, 'https://x');
    if (url.pathname === '/') {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      return res.end(PAGE);
    }
    if (url.pathname === '/app.js') {
      res.setHeader('content-type', 'text/javascript');
      return res.end(appJs());
    }
    if (url.pathname === '/data.json') {
      return res.respondWithFile(path.join(dir, 'private', 'data.json'), { 'content-type': 'application/json' });
    }
    if (url.pathname === '/streamed') {
      res.setHeader('content-type', 'application/octet-stream');
      res.setHeader('content-length', streamedBody.length);
      let i = 0;
      const more = () => {
        while (i < STREAMED.count) {
          const piece = streamedBody.subarray(i * STREAMED.chunk, (i + 1) * STREAMED.chunk);
          i++;
          if (!res.write(piece)) return res.once('drain', more);
        }
        return res.end();
      };
      return more();
    }
    if (url.pathname === '/upload' && req.method === 'POST') {
      const h = crypto.createHash('sha256');
      let bytes = 0;
      req.on('data', (c) => {
        h.update(c);
        bytes += c.length;
        sluice.releaseBuffer(c);
      });
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ bytes, sha: h.digest('hex'), httpVersion: req.httpVersion }));
      });
      return undefined;
    }
    if (url.pathname === '/set-cookies') {
      res.setHeader('set-cookie', ['one=1; Path=/; Secure', 'two=2; Path=/; Secure']);
      return res.end();
    }
    if (url.pathname === '/cookies') {
      app.cookieFields = req.rawHeaders.filter((x, i) => i % 2 === 0 && x.toLowerCase() === 'cookie').length;
      res.setHeader('cache-control', 'no-store');
      return res.end(req.headers.cookie || '');
    }
    if (url.pathname === '/endless') {
      // Written until the client goes away; 'close' while unfinished
      // (writableFinished false).
      res.setHeader('content-type', 'application/octet-stream');
      const chunk = Buffer.alloc(64 * 1024, 'x');
      let written = 0;
      const more = () => {
        while (!res.destroyed && written < 256 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) return res.once('drain', more);
        }
        return undefined;
      };
      res.on('close', () => app.endlessClosed({ finished: res.writableFinished, written }));
      return more();
    }
    if (url.pathname === '/whoami') {
      const so = req.socket;
      res.setHeader('content-type', 'application/json');
      res.setHeader('cache-control', 'no-store');
      return res.end(JSON.stringify({ httpVersion: req.httpVersion, remoteAddress: so.remoteAddress,
        remotePort: so.remotePort, remoteFamily: so.remoteFamily }));
    }
    if (url.pathname === '/echo') {
      res.setHeader('content-type', 'text/plain');
      res.setHeader('cache-control', 'no-store');
      return res.end(`echo ${url.searchParams.get('i')}`);
    }
    return statics(req, res, () => {
      res.statusCode = 404;
      res.end('not found');
    });
  };
  app.streamedSha = sha(streamedBody);
  app.endlessClose = new Promise((resolve) => { app.endlessClosed = resolve; });
  return app;
}

const run = common.isSluice ? describe : describe.skip;

run('HTTP/3 from a real browser (chromium, puppeteer-core) [sluice-only]', function () {
  this.timeout(60000);
  let sluice;
  let dir;
  let browser = null;
  let forced;      // { server, port, seen, app }: the origin chromium must use QUIC for
  const files = {};

  before(async function () {
    sluice = require('../..');
    const why = (!sluice.features.http3 && `no HTTP/3 on this node: ${sluice.features.http3Reason}`) ||
      common.chromiumMissing();
    if (why) {
      console.log(`      skipped: ${why}`);
      this.skip();
    }
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-h3browser-'));
    files['/style.css'] = Buffer.from('body { background-color: rgb(1, 2, 3); color: white; }\n');
    files['/logo.png'] = png(16, 12, (x, y) => [x * 16, y * 20, 200]);
    files['/big.bin'] = crypto.randomBytes(1536 * 1024);
    for (const [p, data] of Object.entries(files)) fs.writeFileSync(path.join(dir, p), data);
    fs.mkdirSync(path.join(dir, 'private'));
    fs.writeFileSync(path.join(dir, 'private', 'data.json'), JSON.stringify({ served: 'respondWithFile', n: 42 }));

    const { localhost } = fixtures();
    forced = await startApp();
    const spki = crypto.createHash('sha256')
      .update(new crypto.X509Certificate(localhost.cert).publicKey.export({ type: 'spki', format: 'der' }))
      .digest('base64');
    browser = await common.launchChromium([
      `--origin-to-force-quic-on=localhost:${forced.port}`,
      `--ignore-certificate-errors-spki-list=${spki}`,
      '--host-resolver-rules=MAP localhost 127.0.0.1',
    ]);
  });

  after(async () => {
    if (browser) await browser.closeAndClean();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  afterEach(common.cleanup);

  // A sluice server with http3 (TCP and UDP on one port number) serving
  // makeApp; its own cleanup is common.cleanup's.
  async function startApp(options = {}) {
    const { localhost } = fixtures();
    const seen = [];
    const app = makeApp(sluice, dir, seen);
    const server = sluice.createSecureServer({ key: localhost.key, cert: localhost.cert, http3: true, ...options }, app);
    const port = await common.listenLocal(server);
    assert.strictEqual(server.http3Address().port, port);
    return { server, port, seen, app };
  }

  it('forced QUIC: a page, its CSS, script, image, files, streamed body, upload, cookies, a cancelled download and 150 fetches, all over h3', async function () {
    // `forced` was started before the browser: its port is in the flags.
    const { port, seen, app } = forced;
    const page = await browser.newPage();
    try {
      const res = await page.goto(`https://localhost:${port}/`, { timeout: 20000, waitUntil: 'load' });
      assert.strictEqual(res.status(), 200);
      const out = await page.evaluate((want) => window.h3Check(want), { uploadBytes: UPLOAD_BYTES, concurrent: CONCURRENT });

      assert.strictEqual(out.background, 'rgb(1, 2, 3)', 'the stylesheet applied');
      assert.deepStrictEqual(out.image, { complete: true, width: 16, height: 12, pixel: [80, 180, 200, 255] }, 'the PNG decoded');
      assert.deepStrictEqual(out.big, { status: 200, sha: sha(files['/big.bin']) }, '1.5 MiB static file');
      assert.deepStrictEqual(out.streamed, { status: 200, sha: app.streamedSha }, 'body written with drain');
      assert.deepStrictEqual(out.json, { served: 'respondWithFile', n: 42 });
      assert.strictEqual(out.upload.status, 200);
      assert.deepStrictEqual(out.upload.server, { bytes: UPLOAD_BYTES, sha: out.upload.sent, httpVersion: '3.0' }, 'the upload the server hashed');
      assert.strictEqual(out.concurrentOk, CONCURRENT, 'concurrent fetches answered');
      assert.deepStrictEqual(out.cookie.split('; ').sort(), ['one=1', 'page=3', 'two=2'], `cookies back: ${out.cookie}`);
      assert.strictEqual(out.endlessChunks, 2);
      const endless = await common.withTimeout(app.endlessClose, 10000, 'the cancelled response\'s close');
      assert.strictEqual(endless.finished, false, 'the cancelled response did not finish');
      assert.ok(endless.written < 256 * 1024 * 1024, 'the server stopped writing');

      // The browser's side: every navigation and resource entry is h3.
      const wanted = ['/', '/style.css', '/app.js', '/logo.png', '/big.bin', '/streamed', '/data.json', '/upload',
        '/set-cookies', '/cookies', '/endless'];
      const byPath = new Map(out.protocols);
      for (const p of wanted) assert.strictEqual(byPath.get(p), 'h3', `${p}: nextHopProtocol ${byPath.get(p)}`);
      const notH3 = out.protocols.filter(([, proto]) => proto !== 'h3');
      assert.deepStrictEqual(notH3, [], 'every entry h3');
      // The server's side: every request came in over HTTP/3.
      const urls = new Set(seen.map((s) => new URL(s.url, 'https://x').pathname));
      for (const p of wanted) assert.ok(urls.has(p), `the server saw ${p}`);
      assert.strictEqual(seen.filter((s) => s.url.startsWith('/echo')).length, CONCURRENT);
      assert.deepStrictEqual(seen.filter((s) => s.httpVersion !== '3.0'), [], 'every request over HTTP/3');
      assert.ok(app.cookieFields >= 1);

      // req.socket over h3 names chromium's own UDP socket: its QUIC
      // sockets are connected, so /proc/net/udp lists each with the
      // server's port as its remote end.
      const who = await page.evaluate(() => fetch('/whoami').then((r) => r.json()));
      assert.strictEqual(who.httpVersion, '3.0');
      assert.strictEqual(who.remoteAddress, '127.0.0.1');
      assert.strictEqual(who.remoteFamily, 'IPv4');
      const hex = (n) => n.toString(16).toUpperCase().padStart(4, '0');
      const chromiumPorts = fs.readFileSync('/proc/net/udp', 'utf8').split('\n').slice(1)
        .map((l) => l.trim().split(/\s+/)).filter((f) => f[2] === `0100007F:${hex(port)}`)
        .map((f) => parseInt(f[1].split(':')[1], 16));
      assert.ok(chromiumPorts.includes(who.remotePort),
        `remotePort ${who.remotePort} is one of chromium's sockets to the server (${chromiumPorts})`);
    } finally {
      await page.close().catch(() => {});
    }
  });

  it('Alt-Svc discovery: the first load over HTTP/2, the next over h3', async function () {
    const { port, seen } = await startApp();
    const page = await browser.newPage();
    try {
      const first = await page.goto(`https://localhost:${port}/`, { timeout: 20000, waitUntil: 'load' });
      assert.strictEqual(first.status(), 200);
      assert.strictEqual(first.headers()['alt-svc'], `h3=":${port}"; ma=86400`);
      const proto1 = await page.evaluate(() => performance.getEntriesByType('navigation')[0].nextHopProtocol);
      assert.strictEqual(proto1, 'h2', 'the first load: HTTP/2 (nothing known of QUIC yet)');
      // The page itself came over HTTP/2 (its subresources may already
      // race the new QUIC connection).
      assert.deepStrictEqual([seen[0].httpVersion, seen[0].url], ['2.0', '/']);
      const firstRequests = seen.length;
      // The next navigation goes over QUIC once chromium has it; it opens
      // the connection in the background after the Alt-Svc, so a load may
      // still race it (bounded, no fixed sleep: each load is a round trip).
      let proto = null;
      for (let i = 0; i < 10 && proto !== 'h3'; i++) {
        const r = await page.reload({ timeout: 20000, waitUntil: 'load' });
        assert.ok(r.status() === 200 || r.status() === 304, `reload status ${r.status()}`);
        proto = await page.evaluate(() => performance.getEntriesByType('navigation')[0].nextHopProtocol);
      }
      assert.strictEqual(proto, 'h3', 'a later load over HTTP/3 (Alt-Svc)');
      const later = seen.slice(firstRequests);
      assert.ok(later.some((s) => s.httpVersion === '3.0' && s.url === '/'), 'the server saw the page over HTTP/3');
    } finally {
      await page.close().catch(() => {});
    }
  });
});
