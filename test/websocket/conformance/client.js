'use strict';

// A raw WebSocket client for the conformance runner, written from RFC 6455
// (framing, masking, closing handshake) and RFC 7692 (permessage-deflate),
// with no WebSocket library inside: it must be able to send what a correct
// client never would (unmasked frames, reserved bits and opcodes, broken
// UTF-8, bad close payloads, bytes split anywhere), and it records
// everything the server sends, so that a case is judged on the raw wire.
//
// Three ways in: HTTP/1.1 Upgrade over TCP, the same over TLS, and RFC 8441
// extended CONNECT on an HTTP/2 stream (node's http2 client, over TLS or
// h2c). Whatever the way in, a Conn exposes write(bytes) and an event log.

const net = require('node:net');
const tls = require('node:tls');
const http2 = require('node:http2');
const crypto = require('node:crypto');
const zlib = require('node:zlib');

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const OP = { CONT: 0, TEXT: 1, BINARY: 2, CLOSE: 8, PING: 9, PONG: 10 };
const TRAILER = Buffer.from([0x00, 0x00, 0xff, 0xff]);

// One frame as bytes. Client frames are masked unless opts.mask === false.
function encodeFrame(opcode, payload, opts = {}) {
  payload = toBuf(payload);
  const fin = opts.fin === false ? 0 : 0x80;
  const rsv = ((opts.rsv || 0) & 7) << 4;
  const masked = opts.mask !== false;
  const len = payload.length;
  let head;
  if (len < 126) {
    head = Buffer.alloc(2);
    head[1] = len;
  } else if (len < 65536) {
    head = Buffer.alloc(4);
    head[1] = 126;
    head.writeUInt16BE(len, 2);
  } else {
    head = Buffer.alloc(10);
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(len), 2);
  }
  head[0] = fin | rsv | (opcode & 0x0f);
  if (!masked) return Buffer.concat([head, payload]);
  head[1] |= 0x80;
  const key = opts.maskKey || crypto.randomBytes(4);
  const body = Buffer.allocUnsafe(len);
  for (let i = 0; i < len; i++) body[i] = payload[i] ^ key[i & 3];
  return Buffer.concat([head, key, body]);
}

function toBuf(x) {
  if (x === undefined || x === null) return Buffer.alloc(0);
  return Buffer.isBuffer(x) ? x : Buffer.from(x);
}

// Parses a Sec-WebSocket-Extensions value: [{ name, params: { k: v|true } }].
function parseExtensions(value) {
  if (!value) return [];
  return value.split(',').map((ext) => {
    const [name, ...ps] = ext.split(';').map((s) => s.trim());
    const params = {};
    for (const p of ps) {
      if (!p) continue;
      const eq = p.indexOf('=');
      if (eq < 0) params[p.toLowerCase()] = true;
      else params[p.slice(0, eq).trim().toLowerCase()] = p.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
    }
    return { name: name.toLowerCase(), params };
  });
}

// Checks the server's permessage-deflate answer against what was offered
// (RFC 7692 section 7.1); returns null when valid or the reason it is not.
// `offers` are the parsed offers, in order.
function checkDeflateAnswer(offers, answer) {
  const p = answer.params;
  const known = ['server_no_context_takeover', 'client_no_context_takeover',
    'server_max_window_bits', 'client_max_window_bits'];
  for (const k of Object.keys(p)) if (!known.includes(k)) return `unknown parameter ${k}`;
  const bits = (v) => /^[0-9]+$/.test(String(v)) && Number(v) >= 8 && Number(v) <= 15;
  if ('server_max_window_bits' in p && !bits(p.server_max_window_bits)) return 'server_max_window_bits without a value in 8..15';
  if ('client_max_window_bits' in p && !bits(p.client_max_window_bits)) return 'client_max_window_bits without a value in 8..15';
  // Some offer must admit the answer.
  for (const o of offers) {
    const q = o.params;
    if ('client_max_window_bits' in p && !('client_max_window_bits' in q)) continue;
    if ('client_max_window_bits' in p && q.client_max_window_bits !== true &&
        Number(p.client_max_window_bits) > Number(q.client_max_window_bits)) continue;
    if ('server_max_window_bits' in q && !('server_max_window_bits' in p)) continue;
    if ('server_max_window_bits' in q && Number(p.server_max_window_bits) > Number(q.server_max_window_bits)) continue;
    if (q.server_no_context_takeover && !p.server_no_context_takeover) continue;
    return null;
  }
  return 'no offer admits this answer';
}

// A connection. Events recorded in order in conn.events:
//   { type: 'text'|'binary', data }      a whole data message (inflated)
//   { type: 'ping'|'pong', data }
//   { type: 'close', code, reason, raw }  the server's close frame (code null if empty)
//   { type: 'end' }                       the server closed the transport
//   { type: 'protocol', error }           the server broke the protocol
class Conn {
  constructor() {
    this.events = [];
    this.waiters = new Set();
    this.buf = Buffer.alloc(0);
    this.frag = null;  // { opcode, compressed, parts: [] } of the message being received
    this.closeSent = false;
    this.ended = false;
    this.deflate = null;  // negotiated params, or null
    this.inflater = null;
    this.deflater = null;
    this.chain = Promise.resolve();  // orders inflation of server messages
  }

  // --- transport (set by open()) -------------------------------------
  _attach(stream, first) {
    this.stream = stream;
    stream.on('data', (d) => this._onData(d));
    const onEnd = () => {
      if (this.ended) return;
      this.chain.then(() => {
        if (this.ended) return;
        this.ended = true;
        this._push({ type: 'end' });
      });
    };
    stream.on('end', onEnd);
    stream.on('close', onEnd);
    stream.on('error', () => onEnd());
    if (first && first.length) this._onData(first);
  }

  write(bytes) {
    if (this.ended || this.stream.destroyed) return false;
    try { this.stream.write(bytes); } catch { return false; }
    return true;
  }

  destroy() {
    try {
      if (this.session) this.session.destroy();
      this.stream.destroy();
    } catch { /* already gone */ }
  }

  // --- events --------------------------------------------------------
  _push(ev) {
    this.events.push(ev);
    for (const w of [...this.waiters]) w();
  }

  // Resolves true once pred(events) holds, false after ms.
  waitUntil(pred, ms) {
    if (pred(this.events)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (v) => { clearTimeout(t); this.waiters.delete(check); resolve(v); };
      const check = () => { if (pred(this.events)) done(true); };
      const t = setTimeout(() => done(false), ms);
      this.waiters.add(check);
    });
  }

  has(type) { return this.events.some((e) => e.type === type); }

  // --- sending -------------------------------------------------------
  frame(opcode, payload, opts) { return this.write(encodeFrame(opcode, payload, opts)); }

  // Sends bytes in pieces at the given offsets, yielding to the event loop
  // (and a few ms) between them so the server is likely to read them apart.
  async writeSplit(bytes, offsets, pauseMs = 2) {
    let at = 0;
    for (const o of [...offsets, bytes.length]) {
      if (o <= at) continue;
      if (!this.write(bytes.subarray(at, o))) return;
      at = o;
      if (at < bytes.length) await new Promise((r) => (pauseMs ? setTimeout(r, pauseMs) : setImmediate(r)));
    }
  }

  sendClose(code, reason, opts) {
    let payload = Buffer.alloc(0);
    if (code !== undefined && code !== null) {
      payload = Buffer.alloc(2);
      payload.writeUInt16BE(code);
      payload = Buffer.concat([payload, toBuf(reason)]);
    }
    this.closeSent = true;
    return this.frame(OP.CLOSE, payload, opts);
  }

  // Compresses one message for this connection (RFC 7692 7.2.1): a raw
  // DEFLATE stream flushed with Z_SYNC_FLUSH and its 00 00 ff ff removed.
  async compress(data) {
    const d = this.deflate;
    const windowBits = d.clientMaxWindowBits || 15;
    if (!this.deflater || d.clientNoContextTakeover) {
      if (this.deflater) this.deflater.close();
      this.deflater = zlib.createDeflateRaw({ windowBits: Math.max(windowBits, 9) });
    }
    const out = await flushThrough(this.deflater, toBuf(data));
    return out.subarray(0, out.length - 4);
  }

  // --- receiving -----------------------------------------------------
  _onData(d) {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    for (;;) {
      if (this.buf.length < 2) return;
      const b0 = this.buf[0];
      const b1 = this.buf[1];
      let len = b1 & 0x7f;
      let off = 2;
      if (len === 126) {
        if (this.buf.length < 4) return;
        len = this.buf.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (this.buf.length < 10) return;
        const big = this.buf.readBigUInt64BE(2);
        if (big > BigInt(Number.MAX_SAFE_INTEGER)) return this._protocol('64-bit length too large');
        len = Number(big);
        off = 10;
      }
      if (b1 & 0x80) return this._protocol('server frame is masked');
      if (this.buf.length < off + len) return;
      const payload = this.buf.subarray(off, off + len);
      this.buf = this.buf.subarray(off + len);
      this._onFrame(!!(b0 & 0x80), (b0 >> 4) & 7, b0 & 0x0f, payload);
      if (this.broken) return;
    }
  }

  _protocol(error) {
    if (this.broken) return;
    this.broken = true;
    this._push({ type: 'protocol', error });
  }

  _onFrame(fin, rsv, opcode, payload) {
    if (this.has('close')) return this._protocol('frame after the server\'s close frame');
    if (opcode >= 8) {
      if (!fin || payload.length > 125 || rsv) return this._protocol(`bad control frame from the server (opcode ${opcode})`);
      if (opcode === OP.CLOSE) {
        const code = payload.length >= 2 ? payload.readUInt16BE(0) : null;
        const reason = payload.length >= 2 ? payload.subarray(2) : Buffer.alloc(0);
        const ev = { type: 'close', code, reason, raw: Buffer.from(payload) };
        this.chain.then(() => {
          this._push(ev);
          // Reply as RFC 6455 5.5.1 asks (echoing the code), once.
          if (!this.closeSent) {
            if (code === null) this.sendClose();
            else this.sendClose(code);
          }
        });
        return;
      }
      if (opcode === OP.PING || opcode === OP.PONG) {
        const ev = { type: opcode === OP.PING ? 'ping' : 'pong', data: Buffer.from(payload) };
        this.chain.then(() => this._push(ev));
        return;
      }
      return this._protocol(`reserved control opcode ${opcode} from the server`);
    }
    if (opcode !== OP.CONT && opcode !== OP.TEXT && opcode !== OP.BINARY) return this._protocol(`reserved opcode ${opcode} from the server`);
    if (opcode === OP.CONT) {
      if (!this.frag) return this._protocol('continuation with nothing to continue');
      if (rsv) return this._protocol('RSV bits on a continuation frame');
    } else {
      if (this.frag) return this._protocol('new data message inside a fragmented one');
      if (rsv & 3) return this._protocol('RSV2/RSV3 set by the server');
      if ((rsv & 4) && !this.deflate) return this._protocol('RSV1 set without permessage-deflate');
      this.frag = { opcode, compressed: !!(rsv & 4), parts: [] };
    }
    this.frag.parts.push(Buffer.from(payload));
    if (!fin) return;
    const { opcode: op, compressed, parts } = this.frag;
    this.frag = null;
    const whole = Buffer.concat(parts);
    const type = op === OP.TEXT ? 'text' : 'binary';
    if (!compressed) {
      this.chain.then(() => this._push({ type, data: whole }));
      return;
    }
    this.chain = this.chain.then(async () => {
      try {
        this._push({ type, data: await this._inflate(whole), compressed: true });
      } catch (e) {
        this._protocol(`server message does not inflate with the negotiated parameters: ${e.message}`);
      }
    });
  }

  async _inflate(data) {
    const d = this.deflate;
    if (!this.inflater || d.serverNoContextTakeover) {
      if (this.inflater) this.inflater.close();
      // Inflating with exactly the negotiated window proves the server kept to it.
      this.inflater = zlib.createInflateRaw({ windowBits: Math.max(d.serverMaxWindowBits || 15, 9) });
    }
    return flushThrough(this.inflater, Buffer.concat([data, TRAILER]));
  }
}

// Writes `data` through a zlib stream and resolves with what it produced
// up to a Z_SYNC_FLUSH (the stream stays usable: context takeover).
function flushThrough(stream, data) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    const onData = (c) => chunks.push(c);
    const onError = (e) => { stream.removeListener('data', onData); reject(e); };
    stream.on('data', onData);
    stream.once('error', onError);
    stream.write(data);
    stream.flush(zlib.constants.Z_SYNC_FLUSH, () => {
      stream.removeListener('data', onData);
      stream.removeListener('error', onError);
      resolve(Buffer.concat(chunks));
    });
  });
}

// target: { mode: 'http1'|'tls'|'h2'|'h2c', host, port, path }
// opts: { extensions (offer string), protocols, headers, timeout }
// Resolves { conn, status, headers } on a completed handshake, or
// { status, headers, refused: true } when the server answered otherwise.
async function open(target, opts = {}) {
  if (target.mode === 'h2' || target.mode === 'h2c') return openH2(target, opts);
  const timeout = opts.timeout || 10000;
  const sock = target.mode === 'tls'
    ? tls.connect({ host: target.host, port: target.port, servername: 'localhost', rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] })
    : net.connect(target.port, target.host);
  sock.setNoDelay(true);
  const key = crypto.randomBytes(16).toString('base64');
  const lines = [`GET ${target.path || '/'} HTTP/1.1`, `Host: ${target.host}:${target.port}`,
    'Upgrade: websocket', 'Connection: Upgrade', `Sec-WebSocket-Key: ${key}`, 'Sec-WebSocket-Version: 13'];
  if (opts.extensions) lines.push(`Sec-WebSocket-Extensions: ${opts.extensions}`);
  if (opts.protocols) lines.push(`Sec-WebSocket-Protocol: ${opts.protocols}`);
  const req = `${lines.join('\r\n')}\r\n\r\n`;
  return new Promise((resolve, reject) => {
    let head = Buffer.alloc(0);
    const timer = setTimeout(() => { sock.destroy(); reject(new Error('handshake timeout')); }, timeout);
    const fail = (e) => { clearTimeout(timer); sock.destroy(); reject(e); };
    sock.on('error', fail);
    sock.on('close', () => fail(new Error(`connection closed during the handshake: ${head.toString('latin1').slice(0, 200)}`)));
    const connectEvent = target.mode === 'tls' ? 'secureConnect' : 'connect';
    sock.once(connectEvent, () => sock.write(req));
    const onData = (d) => {
      head = Buffer.concat([head, d]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      clearTimeout(timer);
      sock.removeListener('data', onData);
      sock.removeAllListeners('close');
      sock.removeListener('error', fail);
      const text = head.subarray(0, end).toString('latin1');
      const [statusLine, ...hl] = text.split('\r\n');
      const status = Number(statusLine.split(' ')[1]);
      const headers = {};
      for (const l of hl) {
        const c = l.indexOf(':');
        const k = l.slice(0, c).trim().toLowerCase();
        const v = l.slice(c + 1).trim();
        headers[k] = headers[k] ? `${headers[k]}, ${v}` : v;
      }
      if (status !== 101) {
        sock.destroy();
        return resolve({ status, headers, refused: true });
      }
      const accept = crypto.createHash('sha1').update(key + GUID).digest('base64');
      if (headers['sec-websocket-accept'] !== accept) {
        sock.destroy();
        return reject(new Error(`bad Sec-WebSocket-Accept ${headers['sec-websocket-accept']}`));
      }
      const conn = new Conn();
      sock.on('error', () => {});
      conn._attach(sock, head.subarray(end + 4));
      resolve({ conn, status, headers });
    };
    sock.on('data', onData);
  });
}

// HTTP/2 sessions are cached per target: one session carries many
// WebSockets, as a browser does (each case is still its own stream).
const sessions = new Map();

function h2Session(target, timeout) {
  const k = `${target.mode}:${target.host}:${target.port}`;
  const cached = sessions.get(k);
  if (cached && !cached.destroyed && !cached.closed) return Promise.resolve(cached);
  const scheme = target.mode === 'h2' ? 'https' : 'http';
  const session = http2.connect(`${scheme}://${target.host}:${target.port}`,
    { rejectUnauthorized: false, servername: 'localhost', settings: { enableConnectProtocol: false } });
  session.on('error', () => {});
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { session.destroy(); reject(new Error('HTTP/2 SETTINGS timeout')); }, timeout);
    session.once('remoteSettings', (s) => {
      clearTimeout(timer);
      if (!s.enableConnectProtocol) {
        session.destroy();
        const e = new Error('the server does not send SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 8441)');
        e.code = 'NO_RFC8441';
        return reject(e);
      }
      sessions.set(k, session);
      resolve(session);
    });
    session.once('close', () => { clearTimeout(timer); reject(new Error('HTTP/2 session closed')); });
  });
}

function closeSessions() {
  for (const s of sessions.values()) s.close();
  sessions.clear();
}

async function openH2(target, opts) {
  const timeout = opts.timeout || 10000;
  const session = await h2Session(target, timeout);
  const headers = {
    ':method': 'CONNECT', ':protocol': 'websocket', ':scheme': target.mode === 'h2' ? 'https' : 'http',
    ':path': target.path || '/', ':authority': `${target.host}:${target.port}`, 'sec-websocket-version': '13',
  };
  if (opts.extensions) headers['sec-websocket-extensions'] = opts.extensions;
  if (opts.protocols) headers['sec-websocket-protocol'] = opts.protocols;
  const stream = session.request(headers, { endStream: false });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { stream.close(); reject(new Error('extended CONNECT timeout')); }, timeout);
    stream.once('error', (e) => { clearTimeout(timer); reject(e); });
    stream.once('response', (h) => {
      clearTimeout(timer);
      const status = Number(h[':status']);
      if (status !== 200) {
        stream.close();
        return resolve({ status, headers: h, refused: true });
      }
      stream.on('error', () => {});
      const conn = new Conn();
      conn._attach(stream);
      // The stream's end is the transport's end; the session stays.
      conn.destroy = () => { try { stream.close(http2.constants.NGHTTP2_CANCEL); } catch { /* gone */ } };
      resolve({ conn, status, headers: h });
    });
  });
}

module.exports = { OP, encodeFrame, parseExtensions, checkDeflateAnswer, open, h2Session, closeSessions, Conn };
