'use strict';

// WebSockets over HTTP/2 (RFC 8441 extended CONNECT) on a sluice server's
// h2c and TLS (ALPN h2) sessions, with node's own http2 client writing
// masked frames by hand: echo, fragments, ping/pong, the close handshake,
// permessage-deflate, maxPayload, pub/sub across HTTP/1.1 and HTTP/2,
// refusals with their status, resets and the session going, and the other
// streams of the session (a GET, a non-WebSocket CONNECT) still served.
// sluice-only: ws on node:http has no HTTP/2.

const http2 = require('node:http2');
const zlib = require('node:zlib');
const common = require('../common');
const { assert } = common;
const { fixtures } = require('../tls/tls_common');
const { client, terminateClients, next, frame, closePayload, parseFrames } = require('./helpers');

const OP = { cont: 0, text: 1, binary: 2, close: 8, ping: 9, pong: 10 };

const sessions = new Set();

// A server (h2c, or TLS with ALPN h2 + http/1.1) whose plain requests are
// answered, with a WebSocketServer on it. Resolves { server, wss, port,
// connect() → an http2 session that has the server's SETTINGS }.
async function start(tls, wsOptions = {}, serverOptions = {}) {
  const sluice = common.impl;
  const handler = (req, res) => res.end(`plain ${req.method} ${req.url} ${req.httpVersion}`);
  const f = tls ? fixtures() : null;
  const server = tls ?
    sluice.createSecureServer({ key: f.localhost.key, cert: f.localhost.cert, ...serverOptions }, handler) :
    sluice.createServer(serverOptions, handler);
  const wss = wsOptions === null ? null : new sluice.WebSocketServer({ server, ...wsOptions });
  const port = await common.listenLocal(server);
  const connect = async () => {
    const s = http2.connect(`${tls ? 'https' : 'http'}://localhost:${port}`, tls ? { ca: f.ca } : {});
    s.on('error', () => {});
    sessions.add(s);
    await next(s, 'remoteSettings');
    return s;
  };
  return { server, wss, port, connect };
}

// An extended CONNECT on `session`: { stream, status(), headers, send(buf),
// frames(), waitFrames(pred), ended (the server's END_STREAM), closed
// (the stream's close, resolves its rstCode) }.
function open(session, path = '/', headers = {}) {
  const stream = session.request({
    ':method': 'CONNECT', ':protocol': 'websocket', ':path': path, ':scheme': 'http',
    'sec-websocket-version': '13', ...headers,
  });
  stream.on('error', () => {});
  let data = Buffer.alloc(0);
  const waiters = new Set();
  const check = () => {
    for (const w of waiters) {
      const frames = parseFrames(data).frames;
      if (w.pred(frames)) {
        waiters.delete(w);
        w.resolve(frames);
      }
    }
  };
  stream.on('data', (d) => {
    data = Buffer.concat([data, d]);
    check();
  });
  const c = {
    stream,
    response: common.once(stream, 'response', 8000, 'the response').then(([h]) => h),
    ended: common.once(stream, 'end', 8000, 'END_STREAM'),
    closed: common.once(stream, 'close', 8000, 'the stream\'s close').then(() => stream.rstCode),
    send: (b) => stream.write(b),
    frames: () => parseFrames(data).frames,
    body: () => data,
    waitFrames: (pred, what = 'frames') => common.withTimeout(new Promise((resolve) => {
      waiters.add({ pred, resolve });
      check();
    }), 8000, what),
  };
  c.ended.catch(() => {});
  c.closed.catch(() => {});
  return c;
}

// The frames of `c` once there are n of them.
const nFrames = (c, n) => c.waitFrames((f) => f.length >= n, `${n} frames`);

// A GET on `session` → [status, body].
async function get(session, path) {
  const r = session.request({ ':path': path });
  const [h] = await common.once(r, 'response', 8000, 'GET response');
  const body = (await common.collect(r)).toString();
  return [h[':status'], body];
}

// permessage-deflate as a client does it (RFC 7692 7.2.1): raw deflate,
// sync flush, the trailing 00 00 ff ff removed; and back.
function deflate(buf) {
  const d = zlib.deflateRawSync(buf, { finishFlush: zlib.constants.Z_SYNC_FLUSH });
  return d.subarray(0, d.length - 4);
}
function inflate(buf) {
  return zlib.inflateRawSync(Buffer.concat([buf, Buffer.from([0, 0, 0xff, 0xff])]),
    { finishFlush: zlib.constants.Z_SYNC_FLUSH });
}

function echo(wss, onWs) {
  wss.on('connection', (ws, req) => {
    ws.on('error', () => {});
    ws.on('message', (m, isBinary) => ws.send(m, { binary: isBinary }));
    if (onWs) onWs(ws, req);
  });
}

(common.isNode ? describe.skip : describe)('WebSockets over HTTP/2 (RFC 8441) [sluice-only]', function () {
  this.timeout(30000);
  afterEach(async () => {
    for (const s of sessions) s.destroy();
    sessions.clear();
    terminateClients();
    await common.cleanup();
  });

  for (const tls of [false, true]) {
    const name = tls ? 'TLS h2' : 'h2c';

    it(`${name}: echoes text, binary and a fragmented message; ping/pong; the close handshake; a GET on the same session`, async () => {
      const { wss, connect } = await start(tls);
      const seen = [];
      const closes = [];
      echo(wss, (ws, req) => {
        seen.push({ method: req.method, url: req.url, httpVersion: req.httpVersion, host: req.headers.host,
          readyState: ws.readyState, protocol: ws.protocol, extensions: ws.extensions });
        ws.on('ping', (d) => seen.push({ ping: d.toString() }));
        ws.on('close', (code, reason) => closes.push([code, reason.toString()]));
      });
      const session = await connect();
      assert.strictEqual(session.remoteSettings.enableConnectProtocol, true);
      const c = open(session, '/chat?room=1');
      const h = await c.response;
      assert.strictEqual(h[':status'], 200);
      assert.strictEqual(h['sec-websocket-accept'], undefined);
      assert.strictEqual(seen.length, 1);
      assert.strictEqual(seen[0].method, 'CONNECT');
      assert.strictEqual(seen[0].url, '/chat?room=1');
      assert.strictEqual(seen[0].httpVersion, '2.0');
      assert.match(seen[0].host, /^localhost:\d+$/);
      assert.strictEqual(seen[0].readyState, 1);

      c.send(frame(OP.text, 'héllo'));
      const bin = Buffer.alloc(70000);
      for (let i = 0; i < bin.length; i++) bin[i] = (i * 7) & 255;
      c.send(frame(OP.binary, bin));
      c.send(frame(OP.text, 'frag', { fin: false }));
      c.send(frame(OP.ping, 'between'));
      c.send(frame(OP.cont, 'ment', { fin: false }));
      c.send(frame(OP.cont, 'ed'));
      let f = await nFrames(c, 4);
      assert.deepStrictEqual(f.map((x) => x.opcode), [OP.text, OP.binary, OP.pong, OP.text]);
      assert.strictEqual(f[0].payload.toString(), 'héllo');
      assert.ok(f[1].payload.equals(bin));
      assert.strictEqual(f[2].payload.toString(), 'between');
      assert.strictEqual(f[3].payload.toString(), 'fragmented');
      assert.deepStrictEqual(seen[1], { ping: 'between' });

      // The session's other streams: a GET, while the WebSocket is open.
      assert.deepStrictEqual(await get(session, '/plain'), [200, 'plain GET /plain 2.0']);

      // The client closes: the server echoes the code and ends the stream
      // (END_STREAM, no reset); the client ends its side, the stream closes.
      c.send(frame(OP.close, closePayload(4321, 'bye h2')));
      f = await nFrames(c, 5);
      assert.strictEqual(f[4].opcode, OP.close);
      assert.strictEqual(f[4].payload.readUInt16BE(0), 4321);
      await c.ended;
      c.stream.end();
      assert.strictEqual(await c.closed, 0);
      await common.withTimeout((async () => { while (closes.length === 0) await common.sleep(5); })(), 8000, 'ws close');
      assert.deepStrictEqual(closes, [[4321, 'bye h2']]);
      // The session serves on.
      assert.deepStrictEqual(await get(session, '/after'), [200, 'plain GET /after 2.0']);
    });

    it(`${name}: the server closes with a code and reason; terminate resets only the stream`, async () => {
      const { wss, connect } = await start(tls);
      const sockets = [];
      echo(wss, (ws) => sockets.push(ws));
      const session = await connect();
      const a = open(session, '/a');
      const b = open(session, '/b');
      await a.response;
      await b.response;
      const closed = next(sockets[0], 'close');
      sockets[0].close(4001, 'server says bye');
      assert.strictEqual(sockets[0].readyState, 2);
      const f = await nFrames(a, 1);
      assert.strictEqual(f[0].opcode, OP.close);
      assert.strictEqual(f[0].payload.readUInt16BE(0), 4001);
      assert.strictEqual(f[0].payload.subarray(2).toString(), 'server says bye');
      a.send(frame(OP.close, closePayload(4001)));
      await a.ended;
      a.stream.end();
      assert.strictEqual(await a.closed, 0);
      assert.strictEqual((await closed)[0], 4001);
      assert.strictEqual(sockets[0].readyState, 3);

      const closedB = next(sockets[1], 'close');
      sockets[1].terminate();
      assert.strictEqual(await b.closed, http2.constants.NGHTTP2_CANCEL);
      assert.strictEqual((await closedB)[0], 1006);
      // Neither took the session with it.
      assert.deepStrictEqual(await get(session, '/still'), [200, 'plain GET /still 2.0']);
      assert.strictEqual(wss.clients.size, 0);
    });

    it(`${name}: permessage-deflate is negotiated and used both ways`, async () => {
      const { wss, connect } = await start(tls, { perMessageDeflate: { threshold: 0 } });
      echo(wss);
      const session = await connect();
      const c = open(session, '/', { 'sec-websocket-extensions': 'permessage-deflate; client_max_window_bits' });
      const h = await c.response;
      assert.match(h['sec-websocket-extensions'], /^permessage-deflate/);
      const text = 'compress me '.repeat(200);
      c.send(frame(OP.text, deflate(Buffer.from(text)), { rsv: 0x40 }));
      c.send(frame(OP.text, 'plain too'));
      const f = await nFrames(c, 2);
      assert.strictEqual(f[0].rsv, 0x40);
      assert.ok(f[0].payload.length < text.length / 4, 'compressed on the wire');
      const first = inflate(f[0].payload);
      assert.strictEqual(first.toString(), text);
      assert.strictEqual(f[1].rsv, 0x40);
    });
  }

  it('without permessage-deflate on the server the offer is declined', async () => {
    const { wss, connect } = await start(false);
    let ext;
    echo(wss, (ws) => { ext = ws.extensions; });
    const session = await connect();
    const c = open(session, '/', { 'sec-websocket-extensions': 'permessage-deflate' });
    const h = await c.response;
    assert.strictEqual(h['sec-websocket-extensions'], undefined);
    assert.strictEqual(ext, '');
  });

  it('maxPayload: a larger message gets 1009 and the stream ends', async () => {
    const { wss, connect } = await start(false, { maxPayload: 16 });
    const errors = [];
    let closeCode;
    wss.on('connection', (ws) => {
      ws.on('error', (e) => errors.push(e.code));
      ws.on('close', (code) => { closeCode = code; });
    });
    const session = await connect();
    const c = open(session);
    await c.response;
    c.send(frame(OP.binary, Buffer.alloc(17)));
    const f = await nFrames(c, 1);
    assert.strictEqual(f[0].opcode, OP.close);
    assert.strictEqual(f[0].payload.readUInt16BE(0), 1009);
    await c.ended;
    c.stream.end();
    await c.closed;
    assert.deepStrictEqual(errors, ['WS_ERR_UNSUPPORTED_MESSAGE_LENGTH']);
    await common.withTimeout((async () => { while (closeCode === undefined) await common.sleep(5); })(), 8000, 'close');
    assert.strictEqual(closeCode, 1009);
  });

  it('pub/sub reaches HTTP/1.1 and HTTP/2 subscribers; ws.publish skips the sender', async () => {
    const { wss, port, connect } = await start(false);
    const sockets = [];
    wss.on('connection', (ws, req) => {
      ws.on('error', () => {});
      ws.subscribe('news');
      sockets.push({ ws, version: req.httpVersion });
      ws.on('message', (m) => ws.publish('news', m, { binary: false }));
    });
    const h1 = client(`ws://127.0.0.1:${port}/`);
    await next(h1, 'open');
    const session = await connect();
    const c = open(session);
    await c.response;
    assert.deepStrictEqual(sockets.map((s) => s.version).sort(), ['1.1', '2.0']);
    assert.strictEqual(wss.subscribers('news'), 2);
    const h1msg = next(h1, 'message');
    assert.strictEqual(wss.publish('news', 'to everyone'), 2);
    assert.strictEqual((await h1msg)[0].toString(), 'to everyone');
    let f = await nFrames(c, 1);
    assert.strictEqual(f[0].payload.toString(), 'to everyone');
    // From the HTTP/2 socket: the HTTP/1.1 one gets it, the sender not.
    const h1msg2 = next(h1, 'message');
    c.send(frame(OP.text, 'from h2'));
    assert.strictEqual((await h1msg2)[0].toString(), 'from h2');
    // From the HTTP/1.1 socket: the HTTP/2 one gets it.
    h1.send('from h1');
    f = await nFrames(c, 2);
    assert.strictEqual(f[1].payload.toString(), 'from h1');
    assert.strictEqual(c.frames().length, 2);
    const h2ws = sockets.find((s) => s.version === '2.0').ws;
    assert.deepStrictEqual(h2ws.topics, ['news']);
    assert.strictEqual(h2ws.unsubscribe('news'), true);
    assert.strictEqual(wss.subscribers('news'), 1);
  });

  it('sharedCompressor: one compressed frame reaches HTTP/2 and HTTP/1.1 deflate subscribers, the plain one the rest', async () => {
    const { wss, port, connect } = await start(false, { perMessageDeflate: { sharedCompressor: true } });
    let n = 0;
    wss.on('connection', (ws) => {
      ws.on('error', () => {});
      ws.subscribe('news');
      n++;
    });
    const h1deflate = client(`ws://127.0.0.1:${port}/`, undefined, { perMessageDeflate: true });
    const h1plain = client(`ws://127.0.0.1:${port}/`);
    await Promise.all([next(h1deflate, 'open'), next(h1plain, 'open')]);
    const session = await connect();
    const c = open(session, '/', { 'sec-websocket-extensions': 'permessage-deflate; client_max_window_bits' });
    const h = await c.response;
    assert.match(h['sec-websocket-extensions'], /server_no_context_takeover/);
    const p = open(session);
    await p.response;
    await common.withTimeout((async () => { while (n < 4) await common.sleep(5); })(), 8000, 'connections');
    const text = 'published to all, compressed once. '.repeat(100);
    const got = [next(h1deflate, 'message'), next(h1plain, 'message')];
    assert.strictEqual(wss.publish('news', text), 4);
    for (const m of await Promise.all(got)) assert.strictEqual(m[0].toString(), text);
    const [f] = await nFrames(c, 1);
    assert.strictEqual(f.rsv, 0x40);
    assert.ok(f.payload.length < text.length / 4, 'compressed on the wire');
    assert.strictEqual(inflate(f.payload).toString(), text);
    const [g] = await nFrames(p, 1);
    assert.strictEqual(g.rsv, 0);
    assert.strictEqual(g.payload.toString(), text);
  });

  it('refusals: verifyClient (sync and async, with headers), path, version; the session serves on', async () => {
    const { wss, connect } = await start(false, {
      path: '/ws',
      verifyClient(info, cb) {
        const who = info.req.headers['x-who'];
        setImmediate(() => {
          if (who === 'friend') cb(true);
          else cb(false, 403, 'not you', { 'x-why': 'stranger' });
        });
      },
    });
    let connections = 0;
    wss.on('connection', () => connections++);
    const session = await connect();
    const statusOf = async (path, headers) => {
      const c = open(session, path, headers);
      const h = await c.response;
      const body = (await common.collect(c.stream)).toString();
      return [h[':status'], body, h];
    };
    let [status, body, h] = await statusOf('/ws', { 'x-who': 'foe' });
    assert.strictEqual(status, 403);
    assert.strictEqual(body, 'not you');
    assert.strictEqual(h['x-why'], 'stranger');
    [status] = await statusOf('/elsewhere', { 'x-who': 'friend' });
    assert.strictEqual(status, 400);
    [status, body, h] = await statusOf('/ws', { 'x-who': 'friend', 'sec-websocket-version': '12' });
    assert.strictEqual(status, 400);
    assert.strictEqual(h['sec-websocket-version'], '13');
    [status] = await statusOf('/ws', { 'x-who': 'friend', 'sec-websocket-protocol': 'a, a' });
    assert.strictEqual(status, 400);
    assert.strictEqual(connections, 0);
    // An accepted one on the same session, and a GET.
    const c = open(session, '/ws', { 'x-who': 'friend' });
    assert.strictEqual((await c.response)[':status'], 200);
    assert.strictEqual(connections, 1);
    assert.deepStrictEqual(await get(session, '/x'), [200, 'plain GET /x 2.0']);
  });

  it('a sync verifyClient refusal is 401; info.secure and origin as on HTTP/1.1', async () => {
    const infos = [];
    const { connect } = await start(true, {
      verifyClient(info) {
        infos.push({ secure: info.secure, origin: info.origin });
        return false;
      },
    });
    const session = await connect();
    const c = open(session, '/', { origin: 'https://example.test' });
    assert.strictEqual((await c.response)[':status'], 401);
    assert.deepStrictEqual(infos, [{ secure: true, origin: 'https://example.test' }]);
  });

  it('handleProtocols and the headers event shape the 200', async () => {
    const { wss, connect } = await start(false, {
      handleProtocols: (protocols) => (protocols.has('chat.v2') ? 'chat.v2' : false),
    });
    let headersSeen;
    wss.on('headers', (headers) => {
      headersSeen = headers.slice();
      headers.push('set-cookie: id=42');
    });
    let protocol;
    echo(wss, (ws) => { protocol = ws.protocol; });
    const session = await connect();
    const c = open(session, '/', { 'sec-websocket-protocol': 'chat.v1, chat.v2' });
    const h = await c.response;
    assert.strictEqual(h['sec-websocket-protocol'], 'chat.v2');
    assert.deepStrictEqual(h['set-cookie'], ['id=42']);
    assert.deepStrictEqual(headersSeen, ['HTTP/2 200', 'sec-websocket-protocol: chat.v2']);
    assert.strictEqual(protocol, 'chat.v2');
  });

  it('frames sent before the 200 (an async verifyClient) are delivered after the accept', async () => {
    const { wss, connect } = await start(false, {
      verifyClient: (info, cb) => setTimeout(() => cb(true), 50),
    });
    echo(wss);
    const session = await connect();
    const c = open(session);
    c.send(frame(OP.text, 'early'));
    c.send(frame(OP.text, 'bird'));
    assert.strictEqual((await c.response)[':status'], 200);
    const f = await nFrames(c, 2);
    assert.deepStrictEqual(f.map((x) => x.payload.toString()), ['early', 'bird']);
  });

  it('a stream reset or the session going closes the WebSocket with 1006', async () => {
    const { wss, connect } = await start(false);
    const closes = [];
    wss.on('connection', (ws) => {
      ws.on('error', () => {});
      ws.on('close', (code) => closes.push(code));
    });
    const session = await connect();
    const a = open(session);
    const b = open(session);
    await a.response;
    await b.response;
    a.stream.close(http2.constants.NGHTTP2_CANCEL);
    await common.withTimeout((async () => { while (closes.length < 1) await common.sleep(5); })(), 8000, 'reset close');
    assert.deepStrictEqual(closes, [1006]);
    assert.strictEqual(wss.clients.size, 1);
    session.destroy();
    await common.withTimeout((async () => { while (closes.length < 2) await common.sleep(5); })(), 8000, 'session close');
    assert.deepStrictEqual(closes, [1006, 1006]);
    assert.strictEqual(wss.clients.size, 0);
  });

  it('server.close(): the GOAWAY closes each WebSocket of the session with 1001', async () => {
    const { server, wss, connect } = await start(false);
    let closed;
    wss.on('connection', (ws) => {
      ws.on('error', () => {});
      closed = next(ws, 'close');
    });
    const session = await connect();
    const c = open(session);
    await c.response;
    const serverClosed = new Promise((resolve) => server.close(resolve));
    const f = await nFrames(c, 1);
    assert.strictEqual(f[0].opcode, OP.close);
    assert.strictEqual(f[0].payload.readUInt16BE(0), 1001);
    c.send(frame(OP.close, closePayload(1001)));
    await c.ended;
    c.stream.end();
    assert.strictEqual((await closed)[0], 1001);
    await common.withTimeout(serverClosed, 8000, 'the server\'s close');
  });

  it('pause holds back the stream (its window is not credited); resume delivers what waited', async () => {
    // A 16 KiB stream window: a paused WebSocket's 64 KiB message cannot
    // complete until it resumes.
    const { wss, connect } = await start(false, {}, { http2: { initialWindowSize: 16384 } });
    const got = [];
    let paused;
    wss.on('connection', (ws, req) => {
      ws.on('error', () => {});
      if (req.url === '/paused') {
        paused = ws;
        ws.pause();
        ws.on('message', (m) => got.push(m.length));
      } else {
        ws.on('message', (m, isBinary) => ws.send(m, { binary: isBinary }));
      }
    });
    const session = await connect();
    const p = open(session, '/paused');
    await p.response;
    assert.strictEqual(paused.isPaused, true);
    assert.strictEqual(paused.bufferedAmount, 0);
    p.send(frame(OP.binary, Buffer.alloc(65536, 7)));
    // Round trips on another WebSocket of the session: unpaused, the
    // window updates would have let the whole message through by now.
    const e = open(session, '/echo');
    await e.response;
    for (let i = 1; i <= 12; i++) {
      e.send(frame(OP.text, `rt${i}`));
      await nFrames(e, i);
    }
    assert.deepStrictEqual(got, []);
    paused.resume();
    assert.strictEqual(paused.isPaused, false);
    await common.withTimeout((async () => { while (got.length < 1) await common.sleep(5); })(), 8000, 'the message after resume');
    assert.deepStrictEqual(got, [65536]);
  });

  it('backpressure is the client\'s window: a send reports buffered, bufferedAmount grows, the callback waits for the drain', async () => {
    const { wss, connect } = await start(false);
    let sock;
    wss.on('connection', (ws) => { sock = ws; });
    const session = await connect();
    const c = open(session);
    await c.response;
    c.stream.pause();  // node's client stops crediting the stream's window
    const big = Buffer.alloc(256 * 1024, 1);
    const results = [];
    let called = false;
    for (let i = 0; i < 3; i++) results.push(sock.send(big, i === 2 ? () => { called = true; } : undefined));
    const WS_SENT = 0;  // send's results (docs/websocket.md)
    const WS_BUFFERED = 1;
    assert.ok(results.includes(WS_BUFFERED), `send results ${results}`);
    assert.ok(results.every((r) => r === WS_SENT || r === WS_BUFFERED));
    assert.ok(sock.bufferedAmount > 256 * 1024, `bufferedAmount ${sock.bufferedAmount}`);
    await common.sleep(20);
    assert.strictEqual(called, false);
    c.stream.resume();
    await common.withTimeout((async () => { while (!called) await common.sleep(5); })(), 8000, 'the send callback');
    await nFrames(c, 3);
    assert.ok(c.frames().every((f) => f.payload.length === big.length));
  });

  it('other streams: a non-WebSocket extended CONNECT reaches the request listener', async () => {
    const { connect } = await start(false);
    const session = await connect();
    const r = session.request({ ':method': 'CONNECT', ':protocol': 'connect-udp', ':path': '/udp', ':scheme': 'http' });
    const [h] = await common.once(r, 'response', 8000, 'response');
    assert.strictEqual(h[':status'], 200);
    r.end();
    assert.strictEqual((await common.collect(r)).toString(), 'plain CONNECT /udp 2.0');
  });

  // noServer: the app's 'request' listener hands the extended CONNECT's
  // compat request to handleUpgrade (the server advertises the setting
  // through node's settings.enableConnectProtocol).
  async function startNoServer(tls, wsOptions, onRequest) {
    const wss = new common.impl.WebSocketServer({ noServer: true, ...wsOptions });
    const handler = (req, res) => {
      if (req.method === 'CONNECT' || req.url.startsWith('/upgrade-get')) onRequest(req, res, wss);
      else res.end(`plain ${req.method} ${req.url} ${req.httpVersion}`);
    };
    const s = await start(tls, null, { settings: { enableConnectProtocol: true } });
    s.server.removeAllListeners('request');
    s.server.on('request', handler);
    return { ...s, wss };
  }

  for (const tls of [false, true]) {
    const name = tls ? 'TLS h2' : 'h2c';
    it(`${name}: noServer handleUpgrade takes the compat request; frames sent before it are kept; the session serves on`, async () => {
      const seen = [];
      const late = [];
      const { wss, connect } = await startNoServer(tls, { handleProtocols: (p) => [...p][1] }, (req, res, wss) => {
        // Decided later (as an async verify would), while the client
        // already sends frames.
        setTimeout(() => {
          wss.handleUpgrade(req, req.socket, Buffer.alloc(0), (ws, r) => {
            seen.push({ method: r.method, url: r.url, httpVersion: r.httpVersion, protocol: ws.protocol,
              same: r === req, tracked: wss.clients.has(ws) });
            ws.on('message', (m, isBinary) => ws.send(m, { binary: isBinary }));
            // The compat response is the WebSocket's stream now: a late
            // answer on it writes nothing.
            late.push(res.write('not a frame'));
            res.end('nor this');
          });
        }, 100);
      });
      const session = await connect();
      const c = open(session, '/live', { 'sec-websocket-protocol': 'a, b' });
      c.send(frame(OP.text, 'early'));
      const h = await c.response;
      assert.strictEqual(h[':status'], 200);
      assert.strictEqual(h['sec-websocket-protocol'], 'b');
      c.send(frame(OP.binary, Buffer.from([1, 2, 3])));
      const f = await nFrames(c, 2);
      assert.deepStrictEqual(f.map((x) => [x.opcode, x.payload.toString('hex')]),
        [[OP.text, Buffer.from('early').toString('hex')], [OP.binary, '010203']]);
      assert.deepStrictEqual(seen, [{ method: 'CONNECT', url: '/live', httpVersion: '2.0', protocol: 'b',
        same: true, tracked: true }]);
      assert.deepStrictEqual(late, [false]);
      assert.deepStrictEqual(await get(session, '/plain'), [200, 'plain GET /plain 2.0']);
      c.send(frame(OP.close, closePayload(1000)));
      const g = await nFrames(c, 3);
      assert.strictEqual(g[2].opcode, OP.close);
      assert.strictEqual(g.length, 3);
      assert.strictEqual(parseFrames(c.body()).rest.length, 0, 'nothing but frames on the stream');
      await c.ended;
    });
  }

  it('noServer handleUpgrade over HTTP/2: shouldHandle, a non-CONNECT request, verifyClient and a second call are refused as ws refuses them', async () => {
    const thrown = [];
    const { connect } = await startNoServer(false, {
      path: '/ws',
      verifyClient: (info) => info.req.headers['x-let-in'] === 'yes',
    }, (req, res, wss) => {
      wss.handleUpgrade(req, req.socket, Buffer.alloc(0), () => {
        try {
          wss.handleUpgrade(req, req.socket, Buffer.alloc(0), () => {});
        } catch (e) {
          thrown.push(e.message);
        }
      });
    });
    const session = await connect();
    const wrongPath = open(session, '/elsewhere', { 'x-let-in': 'yes' });
    assert.strictEqual((await wrongPath.response)[':status'], 400);
    const refused = open(session, '/ws');
    assert.strictEqual((await refused.response)[':status'], 401);
    const [status] = await get(session, '/upgrade-get');
    assert.strictEqual(status, 405);
    const ok = open(session, '/ws', { 'x-let-in': 'yes' });
    assert.strictEqual((await ok.response)[':status'], 200);
    assert.strictEqual(thrown.length, 1);
    assert.match(thrown[0], /more than once/);
    ok.send(frame(OP.ping, 'still'));
    const f = await nFrames(ok, 1);
    assert.deepStrictEqual([f[0].opcode, f[0].payload.toString()], [OP.pong, 'still']);
    assert.deepStrictEqual(await get(session, '/plain'), [200, 'plain GET /plain 2.0']);
  });

  it('SETTINGS_ENABLE_CONNECT_PROTOCOL: off without a WebSocketServer, on while one is attached, and with settings.enableConnectProtocol', async () => {
    const plain = await start(false, null);
    assert.strictEqual((await plain.connect()).remoteSettings.enableConnectProtocol, false);
    const { wss, connect } = await start(false);
    assert.strictEqual((await connect()).remoteSettings.enableConnectProtocol, true);
    await new Promise((resolve) => wss.close(resolve));
    assert.strictEqual((await connect()).remoteSettings.enableConnectProtocol, false);
    const optedOut = await start(false, { http2: false });
    assert.strictEqual((await optedOut.connect()).remoteSettings.enableConnectProtocol, false);

    // node's setting, no WebSocketServer: the 'stream' listener gets the
    // extended CONNECT, as on node:http2.
    const own = await start(false, null, { settings: { enableConnectProtocol: true } });
    own.server.on('stream', (stream, headers) => {
      stream.respond({ ':status': 200, 'x-protocol': headers[':protocol'] });
      stream.end('mine');
    });
    const s = await own.connect();
    assert.strictEqual(s.remoteSettings.enableConnectProtocol, true);
    const c = open(s, '/');
    const h = await c.response;
    assert.strictEqual(h['x-protocol'], 'websocket');
    assert.strictEqual((await common.collect(c.stream)).toString(), 'mine');
  });
});
