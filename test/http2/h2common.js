'use strict';

// Helpers for the HTTP/2 tests: node's http2 client sessions (tracked and
// destroyed by common.cleanup), one-shot requests, and a raw frame-level
// client for what node's client will not do (ignore the server's limits,
// split the preface).

const http2 = require('node:http2');
const net = require('node:net');
const common = require('../common');

// An HTTP/2 server with a 'stream' listener: sluice's, or node:http2's
// under SLUICE_TEST_IMPL=node. Resolves { server, port }.
async function startH2(onStream) {
  if (common.isNode) {
    const server = common.trackServer(http2.createServer());
    server.on('stream', onStream);
    server.on('session', (s) => common.trackSocket(s));
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    return { server, port: server.address().port };
  }
  const { server, port } = await common.startServer();
  server.on('stream', onStream);
  return { server, port };
}

// A compat server ('request' handler `onRequest`, server options
// `options`, more listeners in `events`): sluice's, or node:http2's under
// SLUICE_TEST_IMPL=node. Resolves its port.
async function startCompat(onRequest, events = {}, options = {}) {
  let server;
  if (common.isNode) {
    server = common.trackServer(http2.createServer(options, onRequest));
    server.on('session', (s) => common.trackSocket(s));
    await common.listenLocal(server);
  } else {
    ({ server } = await common.startServer(options, onRequest));
  }
  for (const [name, fn] of Object.entries(events)) server.on(name, fn);
  return server.address().port;
}

function connect(port, options = {}) {
  const session = http2.connect(`http://127.0.0.1:${port}`, options);
  common.trackSocket(session);
  session.on('error', () => {});
  return session;
}

// One request on `session`; resolves { headers, body, trailers, rstCode }.
function request(session, headers = {}, { body, timeout = 10000 } = {}) {
  const what = () => `HTTP/2 response to ${headers[':method'] || 'GET'} ${headers[':path'] || '/'}`;
  return common.withTimeout(new Promise((resolve, reject) => {
    const req = session.request({ ':path': '/', ...headers }, { endStream: body === undefined });
    const chunks = [];
    let resHeaders;
    let trailers;
    req.on('response', (h) => { resHeaders = h; });
    req.on('trailers', (t) => { trailers = t; });
    req.on('data', (d) => chunks.push(d));
    req.on('end', () => resolve({ headers: resHeaders, body: Buffer.concat(chunks), trailers, req }));
    req.on('error', reject);
    if (body !== undefined) req.end(body);
  }), timeout, what);
}

// ---- raw frames ---------------------------------------------------------------

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const FRAME = { DATA: 0, HEADERS: 1, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7, WINDOW_UPDATE: 8 };

function frame(type, flags, streamId, payload = Buffer.alloc(0)) {
  const h = Buffer.alloc(9);
  h.writeUIntBE(payload.length, 0, 3);
  h[3] = type;
  h[4] = flags;
  h.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([h, payload]);
}

// A GET / request header block in HPACK: :method GET (static 2), :scheme
// http (6), :path / (4), and :authority "a" (literal, indexed name 1).
const GET_SLASH = Buffer.from([0x82, 0x86, 0x84, 0x41, 0x01, 0x61]);

// A raw connection to 127.0.0.1:port (tracked for cleanup): resolves
// { sock, frames() }, frames() parsing what the server sent so far.
async function rawConnect(port) {
  const sock = common.trackSocket(net.connect(port, '127.0.0.1'));
  await new Promise((r) => sock.once('connect', r));
  let buf = Buffer.alloc(0);
  sock.on('data', (d) => { buf = Buffer.concat([buf, d]); });
  sock.on('error', () => {});
  return { sock, frames: () => parseFrames(buf) };
}

// A header block of HPACK literals without indexing, new names (RFC 7541
// 6.2.2), from [[name, value], ...] as given (any case, any bytes): what
// node's client will not send. Names and values under 127 bytes.
function hpackLiterals(fields) {
  return Buffer.concat(fields.map(([name, value]) => {
    const n = Buffer.from(name, 'latin1');
    const v = Buffer.from(value, 'latin1');
    return Buffer.concat([Buffer.from([0x00, n.length]), n, Buffer.from([v.length]), v]);
  }));
}

// Parses the frames in `buf`: [{ type, flags, streamId, payload }].
function parseFrames(buf) {
  const frames = [];
  let p = 0;
  while (p + 9 <= buf.length) {
    const len = buf.readUIntBE(p, 3);
    if (p + 9 + len > buf.length) break;
    frames.push({
      type: buf[p + 3],
      flags: buf[p + 4],
      streamId: buf.readUInt32BE(p + 5) & 0x7fffffff,
      payload: buf.subarray(p + 9, p + 9 + len),
    });
    p += 9 + len;
  }
  return frames;
}

// Resolves once cond() is true (polled every 5 ms); rejects after ms.
function waitFor(cond, ms = 5000) {
  return new Promise((resolve, reject) => {
    const start = Date.now();
    const t = setInterval(() => {
      if (cond()) { clearInterval(t); resolve(); } else if (Date.now() - start > ms) {
        clearInterval(t);
        reject(new Error('condition not met in time'));
      }
    }, 5);
  });
}

module.exports = {
  startH2, startCompat, connect, request, waitFor, PREFACE, FRAME, frame, parseFrames, GET_SLASH, hpackLiterals, rawConnect,
};
