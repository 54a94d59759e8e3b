'use strict';

// A real browser: Debian's chromium, headless, driven by puppeteer-core,
// loads a page from the server under test and talks WebSocket to the same
// origin: text (with non-ASCII), a 70 KB text, 100 KB binary, and a close
// from the server with a code and reason. Two endpoints: /deflate (server
// offers permessage-deflate; chromium always asks for it) and /plain
// (server declines it). Rows:
//
//   ws on node:http           ws://   HTTP/1.1
//   ws on node:https          wss://  HTTP/1.1
//   sluice.WebSocketServer    ws://   HTTP/1.1              [sluice-only]
//   sluice.WebSocketServer    wss://  HTTP/1.1 (chromium --disable-http2)
//   sluice.WebSocketServer    wss://  HTTP/2, RFC 8441: the page is on h2 and
//                                     chromium opens the WebSocket as an
//                                     extended CONNECT stream when the server
//                                     sent SETTINGS_ENABLE_CONNECT_PROTOCOL
//
// Which path a WebSocket took is read on the server (the upgrade request's
// httpVersion) and in the page (the navigation's nextHopProtocol).
// Skipped with the reason when /usr/bin/chromium or puppeteer-core is
// missing; the sluice rows until sluice exports WebSocketServer.

const http = require('node:http');
const https = require('node:https');
const common = require('../common');
const { assert } = common;
const { testCert, sluiceMissing } = require('./conformance/servers');

const PAGE = `<!doctype html><meta charset="utf-8"><title>sluice ws</title><script>
window.wsCheck = async (path) => {
  const ws = new WebSocket(location.origin.replace(/^http/, 'ws') + path);
  ws.binaryType = 'arraybuffer';
  const queue = [];
  let wake = null;
  ws.onmessage = (e) => { queue.push(e.data); if (wake) wake(); };
  const closed = new Promise((r) => { ws.onclose = (e) => r({ code: e.code, reason: e.reason, wasClean: e.wasClean }); });
  await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = () => reject(new Error('WebSocket error before open')); });
  const next = () => (queue.length ? Promise.resolve(queue.shift())
    : new Promise((r) => { wake = () => { wake = null; r(queue.shift()); }; }));
  const out = { extensions: ws.extensions, protocol: performance.getEntriesByType('navigation')[0].nextHopProtocol, ok: [] };
  ws.send('héllo wörld ✓');
  out.ok.push((await next()) === 'héllo wörld ✓');
  const text = 'κόσμε '.repeat(12000);
  ws.send(text);
  out.ok.push((await next()) === text);
  const bin = new Uint8Array(100000);
  for (let i = 0; i < bin.length; i++) bin[i] = (i * 7) & 255;
  ws.send(bin);
  const back = new Uint8Array(await next());
  out.ok.push(back.length === bin.length && back.every((x, i) => x === bin[i]));
  ws.send('close-me');
  out.close = await closed;
  return out;
};
</script>`;

// An app answering the page, with two WebSocket servers routed by path:
// noServer ones the app's 'upgrade' listener hands requests to (HTTP/1.1
// only), or with `attached`, ones made with { server, path } (sluice routes
// HTTP/2 extended CONNECTs to them by path). `seen` collects, per accepted
// WebSocket, the request's httpVersion and the negotiated extensions.
function makeApp(createServer, WebSocketServer, seen, attached = false) {
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(PAGE);
  });
  const where = (p) => (attached ? { server, path: p } : { noServer: true });
  const endpoints = {
    '/deflate': new WebSocketServer({ ...where('/deflate'), perMessageDeflate: { threshold: 0 } }),
    '/plain': new WebSocketServer({ ...where('/plain'), perMessageDeflate: false }),
  };
  for (const [p, wss] of Object.entries(endpoints)) {
    wss.on('connection', (ws, req) => {
      seen.push({ path: p, httpVersion: req.httpVersion, extensions: ws.extensions });
      ws.on('message', (m, isBinary) => {
        if (!isBinary && m.toString() === 'close-me') ws.close(4001, 'bye from the server');
        else ws.send(m, { binary: isBinary });
      });
      ws.on('error', () => {});
    });
  }
  if (!attached) {
    server.on('upgrade', (req, socket, head) => {
      const wss = endpoints[new URL(req.url, 'http://x').pathname];
      if (!wss) return socket.destroy();
      wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
    });
  }
  server.closeWebSockets = () => {
    for (const wss of Object.values(endpoints)) {
      for (const c of wss.clients) c.terminate();
      wss.close();
    }
  };
  return server;
}

// Resolves whether the TLS server on `port` sends SETTINGS_ENABLE_CONNECT_PROTOCOL over h2.
function enablesConnectProtocol(port) {
  const session = require('node:http2').connect(`https://localhost:${port}`, { rejectUnauthorized: false });
  session.on('error', () => {});
  return common.withTimeout(new Promise((resolve) => {
    session.once('remoteSettings', (s) => resolve(!!s.enableConnectProtocol));
    session.once('close', () => resolve(false));
  }), 10000, 'HTTP/2 SETTINGS').finally(() => session.destroy());
}

const browsers = {};
async function browser(http2) {
  const key = http2 ? 'h2' : 'h1';
  if (browsers[key]) return browsers[key];
  const b = await common.launchChromium(['--ignore-certificate-errors', ...(http2 ? [] : ['--disable-http2'])],
    { acceptInsecureCerts: true });
  browsers[key] = b;
  return b;
}

const rows = [
  { name: 'ws on node:http, ws://', make: (seen) => makeApp(http.createServer, require('ws').WebSocketServer, seen), scheme: 'http', expect: 'http/1.1' },
  { name: 'ws on node:https, wss://', make: (seen) => makeApp((h) => https.createServer(testCert(), h), require('ws').WebSocketServer, seen), scheme: 'https', expect: 'http/1.1' },
  { name: 'sluice.WebSocketServer, ws://', sluice: true, scheme: 'http', expect: 'http/1.1',
    make: (seen, s) => makeApp(s.createServer, s.WebSocketServer, seen) },
  { name: 'sluice.WebSocketServer, wss:// on HTTP/1.1 (chromium --disable-http2)', sluice: true, scheme: 'https', expect: 'http/1.1',
    make: (seen, s) => makeApp((h) => s.createSecureServer(testCert(), h), s.WebSocketServer, seen) },
  { name: 'sluice.WebSocketServer, wss:// on HTTP/2 (RFC 8441)', sluice: true, scheme: 'https', expect: 'h2',
    make: (seen, s) => makeApp((h) => s.createSecureServer(testCert(), h), s.WebSocketServer, seen, true) },
];

describe('WebSocket from a real browser (chromium, puppeteer-core)', function () {
  this.timeout(120000);
  afterEach(common.cleanup);
  after(async () => {
    for (const b of Object.values(browsers)) await b.closeAndClean();
  });

  for (const row of rows) {
    it(`${row.name}: with and without permessage-deflate${row.sluice ? ' [sluice-only]' : ''}`, async function () {
      const why = common.chromiumMissing() || (row.sluice && (common.isNode ? 'sluice-only' : sluiceMissing()));
      if (why) {
        console.log(`      skipped: ${why}`);
        this.skip();
      }
      const seen = [];
      const server = row.make(seen, row.sluice ? require('../..') : null);
      const port = await common.listenLocal(server);
      if (row.expect === 'h2') {
        // Chromium takes RFC 8441 only from a server that sent
        // SETTINGS_ENABLE_CONNECT_PROTOCOL; without it it opens a second,
        // HTTP/1.1 connection. An attached WebSocketServer turns it on.
        const rfc8441 = await enablesConnectProtocol(port);
        if (!rfc8441) server.closeWebSockets();
        assert.ok(rfc8441, 'the server sends SETTINGS_ENABLE_CONNECT_PROTOCOL');
      }
      const b = await browser(row.expect === 'h2');
      const page = await b.newPage();
      try {
        // localhost: the certificate's name, and a secure context for wss.
        const res = await page.goto(`${row.scheme}://localhost:${port}/`, { timeout: 30000 });
        assert.strictEqual(res.status(), 200);
        for (const p of ['/deflate', '/plain']) {
          const out = await page.evaluate((x) => window.wsCheck(x), p);
          assert.deepStrictEqual(out.ok, [true, true, true], `${p}: echoes`);
          assert.deepStrictEqual(out.close, { code: 4001, reason: 'bye from the server', wasClean: true });
          assert.strictEqual(out.extensions.includes('permessage-deflate'), p === '/deflate', `${p}: extensions "${out.extensions}"`);
          assert.strictEqual(out.protocol, row.expect, 'the page\'s protocol');
        }
        assert.strictEqual(seen.length, 2);
        for (const s of seen) {
          assert.strictEqual(s.httpVersion, row.expect === 'h2' ? '2.0' : '1.1',
            `${s.path} came in over HTTP/${s.httpVersion}${row.expect === 'h2' ? ' (not RFC 8441)' : ''}`);
          assert.strictEqual(s.extensions.includes('permessage-deflate'), s.path === '/deflate');
        }
      } finally {
        await page.close().catch(() => {});
        server.closeWebSockets();
      }
    });
  }
});
