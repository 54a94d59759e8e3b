'use strict';

// A deterministic HTTP/3 test client on node's own OpenSSL QUIC client
// (binding.NativeQuicClient, src/core/quic/quic_client.h): raw QUIC
// streams carrying exactly the bytes a test writes, with the server's
// QPACK encoder/decoder (the HTTP/3 core) to build and read field
// sections. It sends what gtlsclient never would: malformed frames, bad
// pseudo-headers, oversized heads, extra control streams.

const common = require('../common');

const binding = common.libInternal('common/binding');

const { NativeQuicClient } = binding;

// The framing is the benchmark load client's too.
const { varint, readVarint, frame } = require('../../benchmark/lib/h3_frames');

// [name, value, ...] → a HEADERS frame.
function headersFrame(fields) {
  return frame(0x1, NativeQuicClient.encodeFieldSection(fields));
}

// Frames of a whole stream: [{ type, payload }].
function parseFrames(buf) {
  const out = [];
  let off = 0;
  while (off < buf.length) {
    const t = readVarint(buf, off);
    if (t === null) break;
    const l = readVarint(buf, t[1]);
    if (l === null || l[1] + l[0] > buf.length) break;
    out.push({ type: t[0], payload: buf.subarray(l[1], l[1] + l[0]) });
    off = l[1] + l[0];
  }
  return out;
}

class H3Client {
  constructor() {
    this.streams = new Map();    // id → { chunks, resolve, reset }
    this.closeInfo = null;
    this.peerUni = new Map();     // the server's uni streams: id → bytes
    this._connected = null;
    this.closed = new Promise((resolve) => { this._onClosed = resolve; });
    this.native = new NativeQuicClient({
      onConnect: () => this._connected(),
      onData: (id, buf, fin) => this._data(id, buf, fin),
      onReset: (id, code) => this._reset(id, code),
      onClose: (code, transport, reason) => {
        this.closeInfo = { code, transport, reason };
        for (const s of this.streams.values()) if (s.resolve) s.resolve({ closed: this.closeInfo });
        this._onClosed(this.closeInfo);
      },
    });
  }

  // Connects and opens the client's control stream (SETTINGS) and QPACK
  // streams, unless opts.bare. opts.servername: the SNI name ('localhost');
  // opts.session: a session (Buffer, from session()) to resume; opts.host:
  // the server's address ('127.0.0.1').
  async connect(port, opts = {}) {
    const up = new Promise((resolve, reject) => {
      this._connected = resolve;
      this.closed.then((c) => reject(new Error(`closed before connecting: ${JSON.stringify(c)}`)));
    });
    this.native.connect(opts.host || '127.0.0.1', port, opts.alpn || 'h3', opts.servername || 'localhost', opts.session);
    await up;
    if (!opts.bare) {
      this.control = this.native.openStream(true);
      this.native.write(this.control, Buffer.concat([varint(0x00), frame(0x4, Buffer.alloc(0))]), false);
      const enc = this.native.openStream(true);
      this.native.write(enc, Buffer.from([0x02]), false);
      const dec = this.native.openStream(true);
      this.native.write(dec, Buffer.from([0x03]), false);
    }
    return this;
  }

  _data(id, buf, fin) {
    if ((id & 2) !== 0) {  // a uni stream of the server
      const prev = this.peerUni.get(id) || Buffer.alloc(0);
      this.peerUni.set(id, Buffer.concat([prev, buf]));
      return;
    }
    const s = this.streams.get(id);
    if (!s) return;
    s.chunks.push(buf);
    if (fin && s.resolve) {
      const all = Buffer.concat(s.chunks);
      s.resolve(this._response(all));
      s.resolve = null;
    }
  }

  _reset(id, code) {
    const s = this.streams.get(id);
    if (s && s.resolve) {
      s.resolve({ reset: code, partial: Buffer.concat(s.chunks) });
      s.resolve = null;
    }
  }

  _response(all) {
    const frames = parseFrames(all);
    const r = { status: 0, headers: {}, body: Buffer.alloc(0), trailers: null, frames };
    const bodies = [];
    let heads = 0;
    for (const f of frames) {
      if (f.type === 0x1) {
        const fields = NativeQuicClient.decodeFieldSection(f.payload);
        const obj = {};
        for (let i = 0; i < fields.length; i += 2) obj[fields[i]] = fields[i + 1];
        if (heads === 0 && obj[':status'] && Number(obj[':status']) < 200) continue;  // 1xx
        if (heads++ === 0) {
          r.status = Number(obj[':status']);
          r.headers = obj;
        } else {
          r.trailers = obj;
        }
      } else if (f.type === 0x0) {
        bodies.push(f.payload);
      }
    }
    r.body = Buffer.concat(bodies);
    return r;
  }

  // Opens a request stream, writes `bytes` (and FIN unless opts.noFin);
  // resolves with the response { status, headers, body, trailers }, or
  // { reset: code }, or { closed: { code } }.
  raw(bytes, opts = {}) {
    const id = this.native.openStream(false);
    if (id < 0) throw new Error('no stream available');
    const p = new Promise((resolve) => this.streams.set(id, { chunks: [], resolve }));
    if (bytes.length > 0 || !opts.noFin) this.native.write(id, bytes, !opts.noFin);
    p.id = id;
    return p;
  }

  // A well-formed request: pseudo-headers from method/path, `headers` as
  // [name, value, ...], an optional body.
  request(method, path, headers = [], body = null, port = 0) {
    const fields = [':method', method, ':scheme', 'https', ':authority', `localhost:${port}`, ':path', path, ...headers];
    const parts = [headersFrame(fields)];
    if (body !== null && body.length > 0) parts.push(frame(0x0, body));
    return this.raw(Buffer.concat(parts));
  }

  // The server's certificate (DER Buffer), the session (DER Buffer, for
  // connect's opts.session: after the server's NewSessionTicket it
  // resumes), and whether this handshake resumed one.
  peerCertificate() { return this.native.tls('cert'); }

  session() { return this.native.tls('session'); }

  isSessionReused() { return this.native.tls('reused') === true; }

  // Gives a request stream up as a browser cancelling it does (OpenSSL
  // sends STOP_SENDING for the response); its promise resolves
  // { abandoned: true, partial }.
  abandon(id) {
    const s = this.streams.get(id);
    this.native.abandon(id);
    if (s && s.resolve) {
      s.resolve({ abandoned: true, partial: Buffer.concat(s.chunks) });
      s.resolve = null;
    }
  }

  close(code = 0x100) {
    this.native.close(code);
  }

  destroy() {
    this.native.destroy();
  }
}

// The frames of the server's control stream (uni stream 3) after its
// type byte (0x00), as parsed so far.
function controlFrames(c) {
  const bytes = c.peerUni.get(3);
  if (bytes === undefined || bytes.length === 0) return [];
  if (bytes[0] !== 0x00) throw new Error(`control stream type ${bytes[0]}`);
  return parseFrames(bytes.subarray(1));
}

const GOAWAY = 0x7;

// The id a GOAWAY of the server named (its first varint byte: ids below
// 64 in the tests), or null before one came.
function goawayId(c) {
  const g = controlFrames(c).find((f) => f.type === GOAWAY);
  return g === undefined ? null : g.payload[0];
}

// For a mocha suite (call it inside describe): client() makes an
// H3Client, connect(port, opts) makes one and connects it; every one made
// is destroyed after each test, then common.cleanup() runs.
function h3Clients() {
  const made = [];
  afterEach(async () => {
    for (const c of made.splice(0)) c.destroy();
    await common.cleanup();
  });
  const client = () => {
    const c = new H3Client();
    made.push(c);
    return c;
  };
  return { client, connect: (port, opts) => client().connect(port, opts) };
}

module.exports = {
  H3Client, varint, frame, headersFrame, parseFrames, controlFrames, goawayId, h3Clients, NativeQuicClient,
};
