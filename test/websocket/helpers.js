'use strict';

// WebSocket test helpers: the server under test (sluice.WebSocketServer on
// a sluice server, or under SLUICE_TEST_IMPL=node ws's WebSocketServer on
// node:http: the reference the shared tests are checked against), ws's
// client, and raw-socket framing for byte-exact cases.

const crypto = require('node:crypto');
const common = require('../common');
const WS = require('ws');

const ref = common.isNode;

// A WebSocketServer of the implementation under test, attached to a new
// HTTP server that answers plain requests (the same port keeps serving
// HTTP). Resolves { server, wss, port, url }.
async function startWs(options = {}, httpHandler) {
  const server = common.impl.createServer(httpHandler ||
    ((req, res) => res.end(`plain ${req.url}`)));
  const Server = ref ? WS.WebSocketServer : common.impl.WebSocketServer;
  const wss = new Server({ server, ...options });
  const port = await common.listenLocal(server);
  return { server, wss, port, url: `ws://127.0.0.1:${port}` };
}

// ws's client, tracked: terminated by the cleanup.
const clients = new Set();
function client(url, protocols, opts) {
  const c = new WS(url, protocols, { perMessageDeflate: false, ...opts });
  c.on('error', () => {});
  clients.add(c);
  c.once('close', () => clients.delete(c));
  return c;
}

function terminateClients() {
  for (const c of clients) c.terminate();
  clients.clear();
}

function next(emitter, event, ms = 8000) {
  return common.once(emitter, event, ms, `'${event}'`);
}

// ---- raw framing -------------------------------------------------------------

// A client frame: masked unless opts.mask === false; opts.rsv (bits 4-6
// of the first byte, e.g. 0x40 for RSV1), opts.fin (default true).
function frame(opcode, payload = Buffer.alloc(0), opts = {}) {
  payload = Buffer.from(payload);
  const fin = opts.fin === false ? 0 : 0x80;
  const masked = opts.mask !== false;
  const len = payload.length;
  const head = [fin | (opts.rsv || 0) | opcode];
  if (len < 126) {
    head.push((masked ? 0x80 : 0) | len);
  } else if (len < 65536) {
    head.push((masked ? 0x80 : 0) | 126, len >> 8, len & 255);
  } else {
    head.push((masked ? 0x80 : 0) | 127, 0, 0, 0, 0,
      (len / 2 ** 24) & 255, (len >> 16) & 255, (len >> 8) & 255, len & 255);
  }
  if (!masked) return Buffer.concat([Buffer.from(head), payload]);
  const mask = crypto.randomBytes(4);
  const body = Buffer.alloc(len);
  for (let i = 0; i < len; i++) body[i] = payload[i] ^ mask[i & 3];
  return Buffer.concat([Buffer.from(head), mask, body]);
}

function closePayload(code, reason = '') {
  const b = Buffer.alloc(2 + Buffer.byteLength(reason));
  b.writeUInt16BE(code, 0);
  b.write(reason, 2);
  return b;
}

// Server frames in `buf` (unmasked): [{ fin, rsv, opcode, payload }] and
// the bytes left over.
function parseFrames(buf) {
  const frames = [];
  let at = 0;
  while (buf.length - at >= 2) {
    const b0 = buf[at];
    const b1 = buf[at + 1];
    let len = b1 & 0x7f;
    let p = at + 2;
    if (len === 126) {
      if (buf.length - at < 4) break;
      len = buf.readUInt16BE(at + 2);
      p = at + 4;
    } else if (len === 127) {
      if (buf.length - at < 10) break;
      len = Number(buf.readBigUInt64BE(at + 2));
      p = at + 10;
    }
    if (b1 & 0x80) throw new Error('server frame is masked');
    if (buf.length - p < len) break;
    frames.push({ fin: !!(b0 & 0x80), rsv: b0 & 0x70, opcode: b0 & 0x0f, payload: buf.subarray(p, p + len) });
    at = p + len;
  }
  return { frames, rest: buf.subarray(at) };
}

// A raw connection that completed the handshake: { c (common RawClient),
// frames() (the server's frames after the 101), send(buf) }.
async function rawWs(port, path = '/', extraHeaders = '') {
  const c = await common.rawConnect(port);
  const key = crypto.randomBytes(16).toString('base64');
  await c.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n` +
    `Connection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n${extraHeaders}\r\n`);
  const headEnd = await c.waitFor((x) => {
    const i = x.data.indexOf('\r\n\r\n');
    return i === -1 ? null : i + 4;
  }, 8000, 'the 101 response');
  const head = c.data.subarray(0, headEnd).toString('latin1');
  if (!head.startsWith('HTTP/1.1 101')) throw new Error(`handshake refused: ${head}`);
  const expect = crypto.createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
  if (!head.includes(`Sec-WebSocket-Accept: ${expect}`)) throw new Error(`bad accept: ${head}`);
  return {
    c,
    head,
    frames: () => parseFrames(c.data.subarray(headEnd)).frames,
    send: (b) => c.write(b),
    // Resolves the frames once pred(frames) holds.
    waitFrames: (pred, what = 'frames', ms = 8000) =>
      c.waitFor((x) => {
        const f = parseFrames(x.data.subarray(headEnd)).frames;
        return pred(f) ? f : null;
      }, ms, what),
    // Resolves the server's close frame code and that the TCP connection
    // closed after it.
    async closedWith() {
      await c.waitClose(8000);
      const f = parseFrames(c.data.subarray(headEnd)).frames.filter((x) => x.opcode === 8);
      if (f.length === 0) return { code: null };
      const p = f[0].payload;
      return { code: p.length >= 2 ? p.readUInt16BE(0) : 1005, reason: p.subarray(2).toString() };
    },
  };
}

module.exports = {
  ref, WS, startWs, client, terminateClients, next, frame, closePayload, parseFrames, rawWs,
};
