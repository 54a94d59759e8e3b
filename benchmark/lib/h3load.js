'use strict';
// h3load.js: the load client of benchmark/http3 (HTTP/3 and HTTP/2 over
// TLS), in one node process
// (pinned to the load CPU by the runner). Node >= 22.20 for --proto h3.
//
//   node h3load.js --proto h3|h2 --port P [--path /] [--method GET|POST]
//                  [--body-size N] [--expect-length N] [-c C] [-m M]
//                  [--duration S]
//
// C connections, each keeping M requests in flight for S seconds (then
// the ones in flight finish); every response's status (200) and body
// length (--expect-length) are checked. Prints one line:
//   RESULT requests=N seconds=S bytes=B errors=E bad=K
// requests: completed and correct; seconds: from the first request to
// the last response (handshakes before); bytes: response bytes (frames
// included on h3, DATA payload on h2); bad: wrong status or length.
// Exit status 1 if any response was bad or failed.
//
// h3: sluice's own QUIC client (binding.NativeQuicClient, the client half
// of node's OpenSSL 3.5 QUIC stack, src/core/quic/quic_client.h) with the
// HTTP/3 framing done here: a request is one prebuilt HEADERS frame
// (+ one DATA frame for a POST) written with the FIN; the response's
// frames are walked as they arrive without keeping the body. No QPACK
// dynamic table (neither side has one). The client's control stream
// carries an empty SETTINGS frame.
// h2: node:http2 over TLS (ALPN h2), the same shape (C sessions x M
// streams) so both protocols are driven by a client of the same kind:
// node's OpenSSL and JavaScript per response. Stream and connection
// windows are opened wide (h2load's default is 2^30) so flow control is
// not what is measured.
//
// Where the client costs: one JS callback per 16 KiB the QUIC client reads
// (a copy into a Buffer), one per request to open and write; OpenSSL's
// QUIC client does the same packet protection and ACK work as the server.
// On 2 cores the client's CPU is the limit for small responses (the
// runner's `load CPU %` column shows it).

const http2 = require('node:http2');
const path = require('node:path');
const { varint, readVarint, frame } = require('./h3_frames');

function parseCli(argv) {
  const o = { proto: 'h3', port: 0, path: '/', method: 'GET', bodySize: 0, expectLength: -1,
    c: 1, m: 1, duration: 5, host: '127.0.0.1' };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i].replace(/^-+/, '').replace(/-([a-z])/g, (_, ch) => ch.toUpperCase());
    const v = argv[++i];
    if (!(k in o)) throw new Error(`h3load: unknown option ${argv[i - 1]}`);
    o[k] = typeof o[k] === 'number' ? Number(v) : v;
  }
  if (!(o.port > 0)) throw new Error('h3load: --port is required');
  return o;
}

const opts = parseCli(process.argv.slice(2));
const body = opts.bodySize > 0 ? Buffer.alloc(opts.bodySize, 'u') : null;

const stats = { requests: 0, bytes: 0, errors: 0, bad: 0, first: 0n, last: 0n, inflight: 0 };
let running = true;

function done(status, length, bytes) {
  stats.inflight--;
  if (status !== 200 || (opts.expectLength >= 0 && length !== opts.expectLength)) {
    if (stats.bad++ === 0) process.stderr.write(`h3load: bad response: status ${status}, body ${length} bytes\n`);
    return;
  }
  stats.requests++;
  stats.bytes += bytes;
  stats.last = process.hrtime.bigint();
}

function failed(why) {
  stats.inflight--;
  if (stats.errors++ === 0) process.stderr.write(`h3load: ${why}\n`);
}

// ---- HTTP/3 ----------------------------------------------------------------

// One response being read: frames walked as the bytes come.
class H3Response {
  constructor() {
    this.pend = null;      // a frame head cut by a read
    this.type = -1;
    this.rem = 0;          // payload bytes left of the current frame
    this.head = null;      // HEADERS payload pieces
    this.status = 0;
    this.length = 0;       // DATA payload bytes
    this.bytes = 0;
  }

  feed(chunk, NativeQuicClient) {
    this.bytes += chunk.length;
    let buf = chunk;
    if (this.pend !== null) {
      buf = Buffer.concat([this.pend, chunk]);
      this.pend = null;
    }
    let pos = 0;
    while (pos < buf.length) {
      if (this.rem > 0) {
        const take = Math.min(this.rem, buf.length - pos);
        if (this.type === 0x0) this.length += take;
        else if (this.head !== null) this.head.push(buf.subarray(pos, pos + take));
        this.rem -= take;
        pos += take;
        if (this.rem === 0) this.endFrame(NativeQuicClient);
        continue;
      }
      const t = readVarint(buf, pos);
      const l = t && readVarint(buf, t[1]);
      if (!l) {
        this.pend = Buffer.from(buf.subarray(pos));
        return;
      }
      this.type = t[0];
      this.rem = l[0];
      pos = l[1];
      this.head = this.type === 0x1 && this.status === 0 ? [] : null;
      if (this.rem === 0) this.endFrame(NativeQuicClient);
    }
  }

  endFrame(NativeQuicClient) {
    if (this.head === null) return;
    const p = Buffer.concat(this.head);
    this.head = null;
    // ':status: 200' is QPACK static entry 25: one byte 0xd9 after the
    // two-byte prefix (no dynamic table). Anything else is decoded.
    if (p.length >= 3 && p[0] === 0 && p[1] === 0 && p[2] === 0xd9) {
      this.status = 200;
      return;
    }
    const f = NativeQuicClient.decodeFieldSection(p);
    for (let i = 0; Array.isArray(f) && i < f.length; i += 2) {
      if (f[i] === ':status' && Number(f[i + 1]) >= 200) this.status = Number(f[i + 1]);
    }
  }
}

function h3Connection(NativeQuicClient, request, onReady) {
  const streams = new Map();   // id → H3Response
  let want = 0;                // requests to open once the stream limit allows
  let closed = false;
  const native = new NativeQuicClient({
    onConnect: () => {
      const control = native.openStream(true);
      native.write(control, Buffer.concat([varint(0x00), frame(0x4, Buffer.alloc(0))]), false);
      onReady(conn);
    },
    onData: (id, buf, fin) => {
      const r = streams.get(id);
      if (r === undefined) return;   // the server's uni streams
      if (buf.length > 0) r.feed(buf, NativeQuicClient);
      if (fin) {
        streams.delete(id);
        done(r.status, r.length, r.bytes);
        if (running) want++;
      }
      conn.fill();
    },
    onReset: (id, code) => {
      if (!streams.delete(id)) return;
      failed(`stream reset by the server (0x${code.toString(16)})`);
      if (running) want++;
      conn.fill();
    },
    onClose: (code, transport, reason) => {
      closed = true;
      for (const id of streams.keys()) failed(`connection closed (0x${code.toString(16)} ${reason})`);
      streams.clear();
      want = 0;
      check();
    },
  });
  const conn = {
    start(m) {
      want = m;
      conn.fill();
    },
    // Opens what `want` asks for while the peer's stream limit allows; the
    // rest is retried on the next response (MAX_STREAMS comes back as the
    // server frees streams).
    fill() {
      while (want > 0 && running && !closed) {
        const id = native.openStream(false);
        if (id < 0) {
          if (streams.size === 0) setTimeout(() => conn.fill(), 1);
          break;
        }
        want--;
        streams.set(id, new H3Response());
        stats.inflight++;
        native.write(id, request, true);
      }
      check();
    },
    close() {
      if (!closed) native.close(0x100);
      native.destroy();
    },
    inflight: () => streams.size,
  };
  native.connect(opts.host, opts.port, 'h3', 'localhost');
  return conn;
}

function h3Request(NativeQuicClient) {
  const fields = [':method', opts.method, ':scheme', 'https', ':authority', `localhost:${opts.port}`,
    ':path', opts.path];
  if (body) fields.push('content-length', String(body.length));
  const parts = [frame(0x1, NativeQuicClient.encodeFieldSection(fields))];
  if (body) parts.push(varint(0x0), varint(body.length), body);
  return Buffer.concat(parts);
}

// ---- HTTP/2 ----------------------------------------------------------------

function h2Connection(onReady) {
  let want = 0;
  let live = 0;
  const session = http2.connect(`https://${opts.host}:${opts.port}`, {
    rejectUnauthorized: false,
    settings: { initialWindowSize: 2 ** 30 - 1 },
  });
  session.on('error', (err) => {
    if (stats.errors++ === 0) process.stderr.write(`h3load: session: ${err.message}\n`);
  });
  session.on('connect', () => {
    session.setLocalWindowSize(2 ** 30 - 1);
    onReady(conn);
  });
  const one = () => {
    live++;
    stats.inflight++;
    const req = session.request({ ':method': opts.method, ':path': opts.path,
      ...(body ? { 'content-length': body.length } : {}) }, { endStream: !body });
    let status = 0;
    let length = 0;
    req.on('response', (h) => { status = h[':status']; });
    req.on('data', (c) => { length += c.length; });
    req.on('end', () => {
      live--;
      done(status, length, length);
      if (running) want++;
      conn.fill();
    });
    req.on('error', (err) => {
      live--;
      failed(`stream: ${err.message}`);
      if (running) want++;
      conn.fill();
    });
    if (body) req.end(body);
  };
  const conn = {
    start(m) {
      want = m;
      conn.fill();
    },
    fill() {
      while (want > 0 && running && !session.destroyed) {
        want--;
        one();
      }
      check();
    },
    close() { session.destroy(); },
    inflight: () => live,
  };
  return conn;
}

// ---- the run ---------------------------------------------------------------

const conns = [];
let finished = false;

function check() {
  if (running || finished || stats.inflight > 0) return;
  finish();
}

function finish() {
  if (finished) return;
  finished = true;
  const seconds = Number(stats.last - stats.first) / 1e9;
  process.stdout.write(`RESULT requests=${stats.requests} seconds=${seconds.toFixed(3)} bytes=${stats.bytes} ` +
    `errors=${stats.errors + (stats.inflight > 0 ? stats.inflight : 0)} bad=${stats.bad}\n`);
  for (const c of conns) c.close();
  process.exitCode = stats.bad > 0 || stats.errors > 0 || stats.requests === 0 ? 1 : 0;
  // Native handles may hold the loop for a close round trip: do not wait.
  setImmediate(() => process.exit());
}

function main() {
  let NativeQuicClient = null;
  if (opts.proto === 'h3') {
    const root = process.env.SLUICE_MODULE || path.join(__dirname, '..', '..');
    const binding = require(path.join(root, 'lib', 'common', 'binding.js'));
    NativeQuicClient = binding.NativeQuicClient;
    const sluice = require(root);
    if (!sluice.features.http3) {
      process.stderr.write(`h3load: HTTP/3 unavailable in node ${process.version}: ${sluice.features.http3Reason}\n`);
      process.exit(3);
    }
  }
  const request = NativeQuicClient ? h3Request(NativeQuicClient) : null;
  let ready = 0;
  const onReady = () => {
    if (++ready < opts.c) return;
    // Every connection is up: the timed part starts.
    stats.first = process.hrtime.bigint();
    stats.last = stats.first;
    setTimeout(() => {
      running = false;
      for (const c of conns) c.fill();
      // In-flight responses get 20 s to finish; then they count as errors.
      setTimeout(finish, 20000).unref();
    }, opts.duration * 1000);
    for (const c of conns) c.start(opts.m);
  };
  for (let i = 0; i < opts.c; i++) {
    conns.push(NativeQuicClient ? h3Connection(NativeQuicClient, request, onReady) : h2Connection(onReady));
  }
  setTimeout(() => {
    if (ready < opts.c) {
      process.stderr.write(`h3load: ${ready} of ${opts.c} connections up after 10 s\n`);
      process.exit(1);
    }
  }, 10000).unref();
}

main();
