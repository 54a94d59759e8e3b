'use strict';
// Writes the seed corpus (test/fuzz/corpus/http1, http2, http3) in the harnesses'
// input format (see harness.h): config bytes, split records, decision
// bytes, then the client's bytes. Crash inputs found later are added to the
// same directories by hand (crash-*), never regenerated.
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');

function encode({ flags = 0, flags2 = 0, splits = [], decisions = [0, 1, 2, 3, 4, 5, 6, 7], data }) {
  const recs = [];
  for (const s of splits.slice(0, 15)) {
    const len = typeof s === 'number' ? s : s.len;
    const op = typeof s === 'number' ? 0 : s.op;
    const code = len < 128 ? len : 128 | Math.min(127, Math.round(len / 64));
    recs.push(code, op);
  }
  const dec = decisions.concat([0, 0, 0, 0, 0, 0, 0, 0]).slice(0, 8);
  return Buffer.concat([Buffer.from([flags, flags2, recs.length / 2]), Buffer.from(recs),
    Buffer.from(dec), Buffer.from(data, 'latin1')]);
}

function write(dir, name, buf) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `seed-${name}`), buf);
}

const CRLF = '\r\n';
const get = (p = '/', extra = '') => `GET ${p} HTTP/1.1${CRLF}Host: a${CRLF}${extra}${CRLF}`;
const post = (body, extra = '') =>
  `POST /up HTTP/1.1${CRLF}Host: a${CRLF}Content-Length: ${body.length}${CRLF}${extra}${CRLF}${body}`;
const chunked = (chunks, trailer = '') =>
  `POST /c HTTP/1.1${CRLF}Host: a${CRLF}Transfer-Encoding: chunked${CRLF}${CRLF}` +
  chunks.map((c) => `${c.length.toString(16)}${CRLF}${c}${CRLF}`).join('') + `0${CRLF}${trailer}${CRLF}`;

const http1 = {
  get: get(),
  get_keepalive_pair: get('/a') + get('/b'),
  pipelined_10: Array.from({ length: 10 }, (_, i) => get(`/p${i}`)).join(''),
  post_small: post('hello world'),
  post_64k: post('x'.repeat(65536)),
  chunked: chunked(['abc', 'defgh', 'x'.repeat(300)]),
  chunked_trailers: chunked(['abc'], `X-Trailer: 1${CRLF}`),
  chunk_ext: `POST / HTTP/1.1${CRLF}Transfer-Encoding: chunked${CRLF}${CRLF}3;a=b${CRLF}abc${CRLF}0${CRLF}${CRLF}`,
  head: `HEAD / HTTP/1.1${CRLF}Host: a${CRLF}${CRLF}` + get(),
  http10: `GET / HTTP/1.0${CRLF}${CRLF}`,
  http10_keepalive: `GET / HTTP/1.0${CRLF}Connection: keep-alive${CRLF}${CRLF}` + get(),
  expect: post('0123456789', `Expect: 100-continue${CRLF}`),
  connection_close: get('/', `Connection: close${CRLF}`) + get('/dropped'),
  connect: `CONNECT a:443 HTTP/1.1${CRLF}Host: a:443${CRLF}${CRLF}` + get(),
  upgrade: `GET / HTTP/1.1${CRLF}Upgrade: websocket${CRLF}Connection: Upgrade${CRLF}${CRLF}` + get(),
  upgrade_body: `POST / HTTP/1.1${CRLF}Upgrade: x${CRLF}Connection: upgrade${CRLF}Content-Length: 3${CRLF}${CRLF}abc` + get(),
  cl_te: `POST / HTTP/1.1${CRLF}Content-Length: 5${CRLF}Transfer-Encoding: chunked${CRLF}${CRLF}0${CRLF}${CRLF}`,
  dup_cl: `POST / HTTP/1.1${CRLF}Content-Length: 5${CRLF}Content-Length: 6${CRLF}${CRLF}hello`,
  cl_comma: `POST / HTTP/1.1${CRLF}Content-Length: 5, 5${CRLF}${CRLF}hello`,
  cl_negative: `POST / HTTP/1.1${CRLF}Content-Length: -1${CRLF}${CRLF}`,
  cl_overflow: `POST / HTTP/1.1${CRLF}Content-Length: 99999999999999999999999${CRLF}${CRLF}`,
  te_identity: `POST / HTTP/1.1${CRLF}Transfer-Encoding: chunked, identity${CRLF}${CRLF}0${CRLF}${CRLF}`,
  te_double: `POST / HTTP/1.1${CRLF}Transfer-Encoding: gzip${CRLF}Transfer-Encoding: chunked${CRLF}${CRLF}0${CRLF}${CRLF}`,
  bad_chunk_size: `POST / HTTP/1.1${CRLF}Transfer-Encoding: chunked${CRLF}${CRLF}zz${CRLF}abc${CRLF}0${CRLF}${CRLF}`,
  huge_chunk_size: `POST / HTTP/1.1${CRLF}Transfer-Encoding: chunked${CRLF}${CRLF}ffffffffffffffffff${CRLF}abc`,
  bare_lf: `GET / HTTP/1.1\nHost: a\n\n`,
  obs_fold: `GET / HTTP/1.1${CRLF}X-A: b${CRLF} c${CRLF}${CRLF}`,
  space_before_colon: `GET / HTTP/1.1${CRLF}Host : a${CRLF}${CRLF}`,
  nul_header: `GET / HTTP/1.1${CRLF}X-A: a\0b${CRLF}${CRLF}`,
  absolute_form: `GET http://a/b?c HTTP/1.1${CRLF}Host: a${CRLF}${CRLF}`,
  asterisk: `OPTIONS * HTTP/1.1${CRLF}Host: a${CRLF}${CRLF}`,
  http09: `GET /${CRLF}`,
  long_header: get('/', `X-Long: ${'v'.repeat(20000)}${CRLF}`),
  long_url: get('/' + 'u'.repeat(20000)),
  many_headers: get('/', Array.from({ length: 300 }, (_, i) => `X-H${i}: ${i}${CRLF}`).join('')),
  garbage: '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03',
  h2_preface_as_http1: 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
  post_then_get: post('abcdef') + get('/next') + post('z'.repeat(1000)),
  empty_lines: `${CRLF}${CRLF}` + get(),
  trailing_garbage_after_body: post('abc') + 'XYZ',
};
const dir1 = path.join(__dirname, 'corpus', 'http1');
for (const [name, data] of Object.entries(http1)) {
  write(dir1, name, encode({ data }));
  // The same bytes split at every few bytes, and with other flags.
  const n = Buffer.byteLength(data, 'latin1');
  const step = Math.max(1, Math.ceil(n / 15));
  write(dir1, `${name}-split`, encode({ flags: 0x01, data,
    splits: Array.from({ length: Math.min(15, n) }, (_, i) => ({ len: step, op: i % 2 ? 2 : 0 })),
    decisions: [1, 2, 3, 0, 0x10, 0x8c, 0x21, 0x05] }));
}
write(dir1, 'timeouts', encode({ flags: 0x20, data: get() + 'GET / HTTP/1.1\r\nHo',
  splits: [{ len: Buffer.byteLength(get()), op: 1 | (2 << 6) }, { len: 2, op: 1 | (3 << 6) }] }));
write(dir1, 'pool-dry', encode({ flags: 0x01, data: post('x'.repeat(5000)),
  splits: [{ len: 60, op: 0 }, { len: 100, op: 8 }, { len: 1000, op: 8 | 4 }], decisions: [0, 0, 0, 0, 0, 0, 0, 0] }));
// The listener released with the connection open and a request pending.
write(dir1, 'release-open', encode({ flags2: 0x20, data: get() + post('0123456789').slice(0, -8),
  decisions: [3, 3, 3, 3, 3, 3, 3, 3] }));
write(dir1, 'pipeline-pause', encode({ flags: 0x04 | 0x10, data: Array.from({ length: 8 }, () => get()).join(''),
  decisions: [0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e], splits: [{ len: 40, op: 32 }] }));
// Native pipe bodies through the compressor (decision bytes: answer at
// once, a 40000-byte pipe, then the coding: 0 gzip, 4 deflate, 8 br; the
// harness checks the body inflates to the pattern).
for (const [name, c] of [['gzip', 0x00], ['deflate', 0x04], ['br', 0x08]]) {
  write(dir1, `pipe-${name}`, encode({ data: get() + get('/2'), decisions: [0x00, 0x0b, c, 0x00, 0x0f, 0x2f, c + 0x40, 0] }));
}

// HTTP/2 seeds: the preface, SETTINGS, and request frames.
function frame(type, flags, id, payload = Buffer.alloc(0)) {
  const h = Buffer.alloc(9);
  h.writeUIntBE(payload.length, 0, 3);
  h[3] = type; h[4] = flags; h.writeUInt32BE(id, 5);
  return Buffer.concat([h, payload]);
}
// HPACK: literal without indexing, new name (0x00) / indexed (0x80|i).
function hpack(headers) {
  const out = [];
  for (const [k, v] of headers) {
    out.push(Buffer.from([0x00, k.length]), Buffer.from(k), Buffer.from([v.length]), Buffer.from(v));
  }
  return Buffer.concat(out);
}
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
const SETTINGS = frame(4, 0, 0);
const req = (id, method = 'GET', end = true, extra = []) => frame(1, 0x04 | (end ? 1 : 0), id,
  hpack([[':method', method], [':path', '/'], [':scheme', 'http'], [':authority', 'a'], ...extra]));
const data = (id, s, end) => frame(0, end ? 1 : 0, id, Buffer.from(s));
const h2 = {
  get: [req(1)],
  two_gets: [req(1), req(3)],
  post: [req(1, 'POST', false), data(1, 'hello', false), data(1, ' world', true)],
  post_cl: [req(1, 'POST', false, [['content-length', '3']]), data(1, 'abc', true)],
  rst: [req(1, 'POST', false), frame(3, 0, 1, Buffer.from([0, 0, 0, 8]))],
  ping: [frame(6, 0, 0, Buffer.alloc(8))],
  window_update: [frame(8, 0, 0, Buffer.from([0, 0, 0x10, 0])), req(1)],
  goaway: [req(1), frame(7, 0, 0, Buffer.alloc(8))],
  settings_small_window: [frame(4, 0, 0, Buffer.from([0, 4, 0, 0, 0, 10])), req(1)],
  continuation: [frame(1, 0x01, 1, hpack([[':method', 'GET'], [':path', '/']])),
    frame(9, 0x04, 1, hpack([[':scheme', 'http'], [':authority', 'a']]))],
  priority: [frame(2, 0, 1, Buffer.from([0, 0, 0, 0, 16])), req(1)],
  trailers: [req(1, 'POST', false), data(1, 'x', false), frame(1, 0x05, 1, hpack([['x-t', '1']]))],
  bad_frame: [frame(0, 0, 0, Buffer.from('x'))],
  many_streams: Array.from({ length: 20 }, (_, i) => req(2 * i + 1)),
};
const dir2 = path.join(__dirname, 'corpus', 'http2');
for (const [name, frames] of Object.entries(h2)) {
  // The harness prepends the client preface (flag 128 turns that off).
  const bytes = Buffer.concat([SETTINGS, ...frames]).toString('latin1');
  write(dir2, name, encode({ data: bytes }));
  const n = bytes.length;
  write(dir2, `${name}-split`, encode({ flags: 1, data: bytes,
    splits: Array.from({ length: Math.min(15, n) }, (_, i) => ({ len: 7 + i, op: i % 2 ? 2 : 0 })),
    decisions: [1, 2, 3, 0, 0x10, 0x8c, 0x21, 0x05] }));
}
for (const [name, c] of [['gzip', 0x00], ['deflate', 0x04], ['br', 0x08]]) {
  write(dir2, `pipe-${name}`, encode({ data: Buffer.concat([SETTINGS, req(1), req(3, 'HEAD'), req(5)]).toString('latin1'),
    decisions: [0x00, 0x8b, c, 0x00, 0x0f, 0x2f, c + 0x40, 0] }));
}
// Responses with content-length (decision 0x80 on the second byte): 5
// bytes, then a 100 KiB referenced body (0x0c).
write(dir2, 'content-length', encode({ data: Buffer.concat([SETTINGS, req(1), req(3)]).toString('latin1'),
  decisions: [0x04, 0x80, 0x0c, 0x80, 0, 0, 0, 0] }));
const upgrade = `GET / HTTP/1.1${CRLF}Host: a${CRLF}Connection: Upgrade, HTTP2-Settings${CRLF}Upgrade: h2c${CRLF}` +
  `HTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA${CRLF}${CRLF}`;
write(dir2, 'h2c_upgrade', encode({ flags: 128, data: upgrade + Buffer.concat([PREFACE, SETTINGS, req(3)]).toString('latin1') }));
write(dir2, 'h2c_upgrade_post', encode({ flags: 128, data: upgrade.replace('GET', 'POST') }));

// HTTP/3 core (fuzz_http3.cc): byte 0 mode | param << 3, byte 1 cut count,
// 2 bytes per cut, then one stream's bytes.
function varint(v) {
  if (v < 64) return Buffer.from([v]);
  if (v < 16384) return Buffer.from([0x40 | (v >> 8), v & 0xff]);
  const b = Buffer.alloc(4);
  b.writeUInt32BE(v);
  b[0] |= 0x80;
  return b;
}
const h3frame = (type, payload) => Buffer.concat([varint(type), varint(payload.length), Buffer.from(payload)]);
function h3(mode, param, cuts, data) {
  const head = [mode | (param << 3), cuts.length];
  for (const c of cuts) head.push(c >> 8, c & 0xff);
  return Buffer.concat([Buffer.from(head), data]);
}
// A QPACK field section: prefix, :method GET, :scheme https, :path / (all
// indexed), a literal with a name reference (:authority) and a literal
// name, one Huffman-coded ('www.example.com' from RFC 7541 C.4.1).
const wwwHuffman = Buffer.from('f1e3c2e5f23a6ba0ab90f4ff', 'hex');
const section = Buffer.concat([Buffer.from([0, 0, 0xd1, 0xd7, 0xc1, 0x50, 0x80 | wwwHuffman.length]), wwwHuffman,
  Buffer.from([0x23]), Buffer.from('abc'), Buffer.from([0x03]), Buffer.from('def')]);
const trailer = Buffer.concat([Buffer.from([0, 0, 0x2a]), Buffer.from('x-sum'), Buffer.from([0x01]), Buffer.from('1')]);
const settings = h3frame(4, Buffer.concat([varint(6), varint(16384), varint(0x21), varint(1), varint(1), varint(0)]));
const dir3 = path.join(__dirname, 'corpus', 'http3');
const h3seeds = {
  frames: h3(0, 4, [3, 10], Buffer.concat([h3frame(1, section), h3frame(0, 'hello'), h3frame(0x21, 'grease'), h3frame(0, '')])),
  request: h3(1, 4, [5, 1, 20], Buffer.concat([h3frame(1, section), h3frame(0, 'body'), h3frame(0x40, 'x'), h3frame(1, trailer)])),
  request_data_first: h3(1, 0, [], Buffer.concat([h3frame(0, 'x'), h3frame(1, section)])),
  request_cut: h3(1, 0, [2], h3frame(1, section).subarray(0, 9)),
  control: h3(2, 0, [1, 1, 4], Buffer.concat([settings, h3frame(0xd, varint(8)), h3frame(7, varint(100)), h3frame(7, varint(4))])),
  control_client: h3(2, 1, [7], Buffer.concat([settings, h3frame(7, varint(8)), h3frame(3, varint(2))])),
  control_no_settings: h3(2, 0, [], h3frame(7, varint(0))),
  uni_control: h3(3, 0, [1], Buffer.concat([varint(0), settings, h3frame(7, varint(0))])),
  uni_encoder: h3(3, 0, [2], Buffer.concat([varint(2), Buffer.from([0x3f, 0xe1, 0x01, 0x20])])),
  uni_decoder: h3(3, 1, [1], Buffer.concat([varint(3), Buffer.from([0x41, 0x7f, 0x80, 0x01, 0x80])])),
  uni_grease: h3(3, 1, [], Buffer.concat([varint(0x21 + 0x1f * 2), Buffer.from('ignored')])),
  qpack: h3(4, 1, [], section),
  qpack_dynamic: h3(4, 1, [], Buffer.from('0381101100', 'hex')),
  huffman: h3(4, 0, [], wwwHuffman),
};
// Mode 5 (dynamic-table decoder, capacity 512, one blocked stream): records
// [op][len][bytes]; RFC 9204 B.2's encoder stream and section, a section
// blocked on a third insert, the insert, the decoder-stream bytes.
const rec = (op, bytes) => Buffer.concat([Buffer.from([op, bytes.length]), bytes]);
const b2enc = Buffer.from('3fbd01c00f7777772e6578616d706c652e636f6dc10c2f73616d706c652f70617468', 'hex');
h3seeds.dynamic = Buffer.concat([Buffer.from([5 | (7 << 3)]),
  rec(0, b2enc.subarray(0, 10)), rec(0, b2enc.subarray(10)), rec(5, Buffer.from('03811011', 'hex')),
  rec(3, Buffer.alloc(0)), rec(9, Buffer.from('040080', 'hex')),
  rec(0, Buffer.from('4a637573746f6d2d6b65790c637573746f6d2d76616c7565', 'hex')), rec(3, Buffer.alloc(0)),
  rec(9, Buffer.from('040080', 'hex')), rec(13, Buffer.from('040080', 'hex')), rec(14, Buffer.alloc(0)), rec(3, Buffer.alloc(0))]);
for (const [name, buf] of Object.entries(h3seeds)) write(dir3, name, buf);

console.log('corpus: %d http1, %d http2 seeds', fs.readdirSync(dir1).filter((f) => f.startsWith('seed-')).length,
  fs.readdirSync(dir2).filter((f) => f.startsWith('seed-')).length);
console.log('corpus: %d http3 seeds', fs.readdirSync(dir3).filter((f) => f.startsWith('seed-')).length);
void crypto;
