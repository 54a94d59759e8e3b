'use strict';

// Hostile WebSocket clients, raw frames over net / tls sockets and node's
// http2 client (RFC 8441), against sluice.WebSocketServer and ws's
// WebSocketServer in the same run, each server in a child process of its
// own so that its RSS is its own (ws_flood_server.js):
//  - a ping flood whose pongs are never read: the server drops the
//    connection once maxPendingAutoPongs (ws's 60) pongs are pending, as
//    ws terminates (no close frame, 1006 on the server's side), and its
//    RSS stays flat instead of growing with every queued pong;
//  - a message of more than maxFragments (ws's 16,384) frames is refused
//    with 1008 (WS_ERR_TOO_MANY_BUFFERED_PARTS), one of exactly that many
//    frames passes.
// The suite sends at most 300,000 pings and expects the close long before
// (after some 30,000: what the kernel's socket buffers take first). By
// hand (docs/benchmarks.md): FLOOD_PINGS=1000000 offers that many and
// prints the server's RSS; FLOOD_LIMIT=0 sets maxPendingAutoPongs (0:
// sluice as it was, unbounded: all are taken, the test fails).

const net = require('node:net');
const tls = require('node:tls');
const http2 = require('node:http2');
const path = require('node:path');
const crypto = require('node:crypto');
const { fork } = require('node:child_process');
const common = require('../common');
const { assert } = common;
const { fixtures } = require('../tls/tls_common');
const { frame, parseFrames } = require('../websocket/helpers');

const SERVER = path.join(__dirname, 'ws_flood_server.js');
const MAX_PINGS = Number(process.env.FLOOD_PINGS) || 300000;
const FLOOD_OPTIONS = process.env.FLOOD_LIMIT === undefined ? {} :
  { maxPendingAutoPongs: Number(process.env.FLOOD_LIMIT) };
const RSS_BOUND = 8 * 1024 * 1024;

// A server child: { port, rss(), events (close / error messages), stop() }.
async function startServer(impl, transport, wsOptions = {}) {
  const f = fixtures();
  const child = fork(SERVER, [impl, transport, JSON.stringify(wsOptions)], {
    // (Under test:asan, the sanitizer runtime too.)
    env: common.nodeChildEnv({ TLS_KEY: f.localhost.keyPath, TLS_CERT: f.localhost.certPath }),
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const events = [];
  const waiters = [];
  let port;
  let rssAnswer;
  let bufferedAnswer;
  child.on('message', (m) => {
    if (m.event) events.push(m);
    if (m.port) port = m.port;
    if (m.rss) rssAnswer = m.rss;
    if (m.buffered !== undefined) bufferedAnswer = m.buffered;
    for (const w of waiters.splice(0)) w();
  });
  const nextMessage = (pred, what) => common.withTimeout(new Promise((resolve) => {
    const check = () => {
      const hit = pred();
      if (hit !== undefined) resolve(hit);
      else waiters.push(check);
    };
    check();
  }), 20000, what);
  await nextMessage(() => port, 'the server child listening');
  return {
    port,
    events,
    async rss() {
      rssAnswer = undefined;
      child.send({ rss: true });
      return nextMessage(() => rssAnswer, 'the RSS answer');
    },
    async bufferedAmount() {
      bufferedAnswer = undefined;
      child.send({ buffered: true });
      return nextMessage(() => bufferedAnswer, 'the bufferedAmount answer');
    },
    // The next WebSocket close the server reported (taken off `events`).
    closed: () => nextMessage(() => {
      const i = events.findIndex((e) => e.event === 'close');
      return i === -1 ? undefined : events.splice(i, 1)[0];
    }, 'the server-side close'),
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send({ exit: true });
      await common.withTimeout(exited, 5000, 'the server child exiting').catch(() => child.kill('SIGKILL'));
    },
  };
}

function upgradeRequest() {
  const key = crypto.randomBytes(16).toString('base64');
  return `GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
    `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`;
}

// A WebSocket over a raw socket (h1, tls) or an RFC 8441 stream (h2):
// { stream (a Duplex: write frames, read server frames), data() (the
// server's bytes after the handshake), closed (resolves when it is gone),
// done() }.
async function openWs(transport, port) {
  if (transport === 'h2') {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', () => {});
    await common.once(session, 'remoteSettings', 8000);
    const stream = session.request({
      ':method': 'CONNECT', ':protocol': 'websocket', ':path': '/', ':scheme': 'http',
      'sec-websocket-version': '13',
    });
    stream.on('error', () => {});
    const [headers] = await common.once(stream, 'response', 8000, 'the 200');
    assert.strictEqual(headers[':status'], 200);
    let data = Buffer.alloc(0);
    stream.on('data', (d) => { data = Buffer.concat([data, d]); });
    const closed = new Promise((resolve) => stream.once('close', resolve));
    return { stream, data: () => data, closed, done: () => session.destroy() };
  }
  const socket = transport === 'tls' ?
    tls.connect({ host: '127.0.0.1', port, ca: fixtures().ca, servername: 'localhost', ALPNProtocols: ['http/1.1'] }) :
    net.connect(port, '127.0.0.1');
  common.trackSocket(socket);
  socket.on('error', () => {});
  await common.once(socket, transport === 'tls' ? 'secureConnect' : 'connect', 8000);
  socket.write(upgradeRequest());
  let data = Buffer.alloc(0);
  let headEnd = -1;
  const closed = new Promise((resolve) => socket.once('close', resolve));
  await common.withTimeout(new Promise((resolve, reject) => {
    socket.on('data', (d) => {
      data = Buffer.concat([data, d]);
      if (headEnd === -1) {
        const i = data.indexOf('\r\n\r\n');
        if (i === -1) return;
        if (!data.subarray(0, 12).toString().startsWith('HTTP/1.1 101')) reject(new Error(data.toString()));
        headEnd = i + 4;
        resolve();
      }
    });
  }), 8000, 'the 101');
  return { stream: socket, data: () => data.subarray(headEnd), closed, done: () => socket.destroy() };
}

// Pings (125-byte payloads) in batches, as fast as the stream takes them,
// never reading: until the stream closes or `max` were sent. Resolves the
// count sent.
async function flood(ws, max) {
  ws.stream.pause();
  ws.stream.removeAllListeners('data');
  const ping = frame(9, Buffer.alloc(125, 0x61));
  const perBatch = 500;
  const batch = Buffer.concat(Array(perBatch).fill(ping));
  let gone = false;
  ws.closed.then(() => { gone = true; });
  let sent = 0;
  while (!gone && sent < max) {
    if (!ws.stream.write(batch)) {
      await Promise.race([new Promise((resolve) => ws.stream.once('drain', resolve)), ws.closed,
        new Promise((resolve) => setTimeout(resolve, 2000))]);
    }
    sent += perBatch;
  }
  return sent;
}

// Resolves the first frame of the server's on `ws` that `pred` holds for
// (given the frame and every frame so far) once it has come.
function serverFrame(ws, pred, what) {
  return common.withTimeout((async () => {
    for (;;) {
      const frames = parseFrames(ws.data()).frames;
      const f = frames.find((x) => pred(x, frames));
      if (f) return f;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })(), 8000, what);
}

// Waits for the server's close frame, answers it with the same code (as a
// client does) and ends: resolves the code.
async function answerClose(ws) {
  const code = (await serverFrame(ws, (f) => f.opcode === 8, 'the close frame')).payload.readUInt16BE(0);
  const payload = Buffer.alloc(2);
  payload.writeUInt16BE(code);
  ws.stream.end(frame(8, payload));
  return code;
}

// A text message "aaa..." as `n` frames of one byte each (masked with a
// zero key: 7 bytes a frame, written in place).
function fragmented(n) {
  const buf = Buffer.alloc(n * 7);
  for (let i = 0; i < n; i++) {
    buf[i * 7] = (i === n - 1 ? 0x80 : 0) | (i === 0 ? 1 : 0);
    buf[i * 7 + 1] = 0x81;
    buf[i * 7 + 6] = 0x61;
  }
  return buf;
}

const cases = [['ws', 'h1'], ['sluice', 'h1'], ['ws', 'tls'], ['sluice', 'tls'], ['sluice', 'h2']];

describe('WebSocket control-frame and fragment limits, sluice and ws side by side', function () {
  this.timeout(60000);
  let servers = [];
  const open = [];
  afterEach(async () => {
    for (const ws of open.splice(0)) ws.done();
    await Promise.all(servers.map((s) => s.stop()));
    servers = [];
    await common.cleanup();
  });

  async function server(impl, transport, wsOptions) {
    const s = await startServer(impl, transport, wsOptions);
    servers.push(s);
    return s;
  }

  for (const [impl, transport] of cases) {
    it(`${impl} over ${transport}: a ping flood never read is dropped at 60 pending pongs, RSS flat`, async () => {
      const s = await server(impl, transport, FLOOD_OPTIONS);
      const ws = await openWs(transport, s.port);
      open.push(ws);
      const before = await s.rss();
      const sent = await flood(ws, MAX_PINGS);
      const after = await s.rss();
      const growth = after - before;
      if (process.env.FLOOD_PINGS) {
        console.log(`      ${impl}/${transport}: ${sent} pings sent, RSS ${(before / 1048576).toFixed(1)} -> ` +
          `${(after / 1048576).toFixed(1)} MB (+${(growth / 1048576).toFixed(2)} MB)`);
      }
      assert.ok(sent < MAX_PINGS, `the server was still taking pings after ${sent}`);
      const [closeEvent] = await Promise.all([s.closed(), ws.closed]);
      // ws's terminate: no close frame, 1006 on the server's side.
      assert.strictEqual(closeEvent.code, 1006);
      assert.ok(growth < RSS_BOUND, `server RSS grew ${growth} bytes`);
    });
  }

  it('maxPendingAutoPongs: 0 turns the limit off (sluice, as ws): a burst of 200 pings is answered', async () => {
    for (const impl of ['ws', 'sluice']) {
      const s = await server(impl, 'h1', { maxPendingAutoPongs: 0 });
      const ws = await openWs('h1', s.port);
      open.push(ws);
      ws.stream.write(Buffer.concat(Array(200).fill(frame(9, 'p'))));
      await serverFrame(ws, (f, all) => all.filter((x) => x.opcode === 10).length === 200, `${impl}: 200 pongs`);
    }
  });

  it('pongs count toward bufferedAmount (ws and sluice, limit off): a flood never read shows in it', async () => {
    for (const impl of ['ws', 'sluice']) {
      const s = await server(impl, 'h1', { maxPendingAutoPongs: 0 });
      const ws = await openWs('h1', s.port);
      open.push(ws);
      await flood(ws, 70000);
      await common.withTimeout((async () => {
        while (await s.bufferedAmount() < 1024 * 1024) await new Promise((resolve) => setTimeout(resolve, 20));
      })(), 8000, `${impl}: pongs in bufferedAmount`);
    }
  });

  it('a burst of more pings than maxPendingAutoPongs in one read is dropped by both (ws counts unwritten pongs)', async () => {
    for (const impl of ['ws', 'sluice']) {
      const s = await server(impl, 'h1', { maxPendingAutoPongs: 10 });
      const ws = await openWs('h1', s.port);
      open.push(ws);
      ws.stream.write(Buffer.concat(Array(11).fill(frame(9, 'p'))));
      const [closeEvent] = await Promise.all([s.closed(), ws.closed]);
      assert.strictEqual(closeEvent.code, 1006, impl);
      // The pongs queued before the limit went out before the drop.
      const pongs = parseFrames(ws.data()).frames.filter((f) => f.opcode === 10).length;
      assert.ok(pongs <= 10, `${impl}: ${pongs} pongs`);
    }
  });

  for (const transport of ['h1', 'h2']) {
    it(`a message of 16,385 frames is refused with 1008, one of 16,384 passes (ws and sluice, ${transport})`, async () => {
      for (const impl of transport === 'h2' ? ['sluice'] : ['ws', 'sluice']) {
        const s = await server(impl, transport);
        const ws = await openWs(transport, s.port);
        open.push(ws);
        ws.stream.write(fragmented(16384));
        const echo = await serverFrame(ws, (f) => f.opcode === 1, `${impl}: the echo of 16,384 fragments`);
        assert.strictEqual(echo.payload.length, 16384);
        ws.stream.write(fragmented(16385));
        assert.strictEqual(await answerClose(ws), 1008, impl);
        await Promise.all([s.closed(), ws.closed]);
        const err = s.events.find((e) => e.event === 'error');
        assert.strictEqual(err && err.code, 'WS_ERR_TOO_MANY_BUFFERED_PARTS', impl);
      }
    });
  }

  it('maxFragments is an option: 4 frames allowed, the fifth refused with 1008 (ws and sluice)', async () => {
    for (const impl of ['ws', 'sluice']) {
      const s = await server(impl, 'h1', { maxFragments: 4 });
      const ws = await openWs('h1', s.port);
      open.push(ws);
      ws.stream.write(Buffer.concat([fragmented(4), fragmented(5)]));
      assert.strictEqual(await answerClose(ws), 1008, impl);
      await Promise.all([s.closed(), ws.closed]);
      const frames = parseFrames(ws.data()).frames;
      assert.deepStrictEqual(frames.map((f) => f.opcode), [1, 8], impl);
      assert.strictEqual(s.events.find((e) => e.event === 'error').code, 'WS_ERR_TOO_MANY_BUFFERED_PARTS', impl);
    }
  });
});
