'use strict';

// The conformance cases, grouped as the Autobahn test suite groups them
// (1 framing, 2 pings/pongs, 3 reserved bits, 4 opcodes, 5 fragmentation,
// 6 UTF-8, 7 close handling, 9 limits, 12/13 permessage-deflate), plus
// 'M' masking and 'S' bytes split at every position. The numbering is this
// runner's own, not Autobahn's. Each case says what RFC 6455 / RFC 7692
// expect of an echo server:
//
//   expect: the data messages and pongs the server must send, in order;
//   then:   { close: code }   the client then closes; the server must answer
//                             with the same code and close the connection
//           { fail: [codes] } the server must fail the connection: a close
//                             frame with one of the codes (another code, or
//                             dropping the transport without a close frame,
//                             is allowed by the RFC but NON-STRICT); echoing
//                             only part of `expect` first is NON-STRICT
//           { echoClose: code, also: [codes] }  the case itself sent a close
//                             frame; the server must answer with `code`
//                             (null: an empty close frame); a code in `also`
//                             is NON-STRICT
//   offer:  the Sec-WebSocket-Extensions offer (permessage-deflate cases)
//
// The server under test echoes every data message as it came (text as
// text, binary as binary), answers pings, and has maxPayload = MAX_PAYLOAD.

const crypto = require('node:crypto');
const { OP, encodeFrame } = require('./client');

const MAX_PAYLOAD = 32 * 1024 * 1024;
const PROBE = Buffer.from('probe');

const text = (s) => ({ type: 'text', data: Buffer.from(s) });
const bin = (b) => ({ type: 'binary', data: Buffer.from(b) });
const pong = (b) => ({ type: 'pong', data: Buffer.from(b || '') });

// Deterministic payloads (a case must send the same bytes on every run),
// memoized: several cases share the large ones.
const memo = new Map();
function cached(key, make) {
  if (!memo.has(key)) memo.set(key, make());
  return memo.get(key);
}
function rand(n, seed) { return cached(`r${n}:${seed}`, () => makeRand(n, seed)); }
function makeRand(n, seed) {
  // AES-CTR over zeros: fast, and the same bytes for the same seed.
  const key = crypto.createHash('sha256').update(`seed ${seed}`).digest().subarray(0, 16);
  return crypto.createCipheriv('aes-128-ctr', key, Buffer.alloc(16)).update(Buffer.alloc(n));
}
// Compressible ASCII text of n bytes.
function words(n, seed = 1) { return cached(`w${n}:${seed}`, () => makeWords(n, seed)); }
function makeWords(n, seed) {
  const w = ['sluice', 'frame', 'socket', 'payload', 'deflate', 'close', 'ping', 'message', 'buffer', 'stream'];
  // Up to 64 KiB of words, then that block repeated (still compressible text).
  const m = Math.min(n, 65536);
  const r = rand(m, seed);
  const parts = [];
  let len = 0;
  for (let i = 0; len < m; i++) {
    const word = `${w[r[i % m] % w.length]} `;
    parts.push(word);
    len += word.length;
  }
  const block = parts.join('').slice(0, m);
  return n <= m ? block : block.repeat(Math.ceil(n / m)).slice(0, n);
}

// Sends one data message: opts.frags = fragment sizes (the rest in the last),
// opts.compress = deflate it (RSV1 on the first frame).
async function sendMessage(c, opcode, data, opts = {}) {
  let payload = Buffer.isBuffer(data) ? data : Buffer.from(data);
  if (opts.compress) payload = await c.compress(payload);
  const rsv1 = opts.compress ? 4 : 0;
  if (!opts.frags) return c.frame(opcode, payload, { rsv: rsv1 });
  let at = 0;
  let first = true;
  const sizes = typeof opts.frags === 'number' ? [] : opts.frags;
  const frames = [];
  while (first || at < payload.length) {
    const n = typeof opts.frags === 'number' ? opts.frags : (sizes.shift() ?? payload.length - at);
    const part = payload.subarray(at, at + n);
    at += part.length;
    const fin = at >= payload.length;
    frames.push(encodeFrame(first ? opcode : OP.CONT, part, { fin, rsv: first ? rsv1 : 0 }));
    first = false;
    if (fin) break;
  }
  return c.write(Buffer.concat(frames));
}

// Writes bytes one per write (with a pause every few), for "chopped" cases.
async function chopped(c, bytes, size = 1) {
  const offsets = [];
  for (let i = size; i < bytes.length; i += size) offsets.push(i);
  await c.writeSplit(bytes, offsets, 1);
}

// Sends a probe ping and waits for its pong or the end: a server that fails
// fast has closed before answering it; one that answers was not fail-fast.
async function probe(c, ctx, what) {
  c.frame(OP.PING, PROBE);
  await c.waitUntil((ev) => ev.some((e) => e.type === 'close' || e.type === 'end' ||
    (e.type === 'pong' && e.data.equals(PROBE))), ctx.timeout);
  if (c.events.some((e) => e.type === 'pong' && e.data.equals(PROBE))) {
    ctx.nonStrict(`${what}: answered a ping after it instead of failing at once`);
    return false;
  }
  return true;
}

function build({ full = false } = {}) {
  const cases = [];
  const add = (id, title, def) => cases.push({ id, group: id.split('.')[0], title, ...def });
  const enc = encodeFrame;

  // ---- 1 framing --------------------------------------------------------
  const sizes = [0, 1, 125, 126, 127, 128, 65535, 65536, 65537, 1 << 20, 16 << 20];
  sizes.forEach((n, i) => {
    const t = Buffer.from(words(n, i + 1));
    add(`1.1.${i + 1}`, `text message of ${n} bytes`, {
      run: (c) => sendMessage(c, OP.TEXT, t), expect: [text(t)], then: { close: 1000 }, big: n > 1e6,
    });
  });
  sizes.forEach((n, i) => {
    const b = rand(n, i + 100);
    add(`1.2.${i + 1}`, `binary message of ${n} bytes`, {
      run: (c) => sendMessage(c, OP.BINARY, b), expect: [bin(b)], then: { close: 1000 }, big: n > 1e6,
    });
  });
  add('1.3.1', 'text message of 126 bytes with a 64-bit length field (not minimal: RFC says MUST be minimal; servers differ)', {
    run: (c) => {
      const p = Buffer.from(words(126, 9));
      const head = Buffer.from([0x81, 0xff, 0, 0, 0, 0, 0, 0, 0, 126]);
      const key = Buffer.from([1, 2, 3, 4]);
      const body = Buffer.from(p.map((x, j) => x ^ key[j & 3]));
      c.write(Buffer.concat([head, key, body]));
    },
    expect: [text(words(126, 9))], then: { close: 1000 }, informational: true,
  });

  // ---- 2 pings and pongs --------------------------------------------------
  add('2.1', 'ping without payload', { run: (c) => c.frame(OP.PING, ''), expect: [pong('')], then: { close: 1000 } });
  add('2.2', 'ping with a text payload', { run: (c) => c.frame(OP.PING, 'Hello, world!'), expect: [pong('Hello, world!')], then: { close: 1000 } });
  const pb = Buffer.from([0x00, 0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0x00, 0xff]);
  add('2.3', 'ping with a binary payload', { run: (c) => c.frame(OP.PING, pb), expect: [pong(pb)], then: { close: 1000 } });
  const p125 = rand(125, 7);
  add('2.4', 'ping with 125 bytes', { run: (c) => c.frame(OP.PING, p125), expect: [pong(p125)], then: { close: 1000 } });
  add('2.5', 'ping with 126 bytes (control frames carry at most 125)', {
    run: (c) => c.frame(OP.PING, rand(126, 8)), expect: [], then: { fail: [1002] },
  });
  add('2.6', 'ping with 125 bytes written one byte at a time', {
    run: (c) => chopped(c, enc(OP.PING, p125)), expect: [pong(p125)], then: { close: 1000 },
  });
  add('2.7', 'unsolicited pong without payload: ignored', { run: (c) => c.frame(OP.PONG, ''), expect: [], then: { close: 1000 } });
  add('2.8', 'unsolicited pong with payload: ignored', { run: (c) => c.frame(OP.PONG, 'unsolicited'), expect: [], then: { close: 1000 } });
  add('2.9', 'unsolicited pong, then ping', {
    run: (c) => { c.frame(OP.PONG, 'unsolicited'); c.frame(OP.PING, 'ping'); }, expect: [pong('ping')], then: { close: 1000 },
  });
  add('2.10', '10 pings in one write: 10 pongs in order', {
    run: (c) => c.write(Buffer.concat(Array.from({ length: 10 }, (_, i) => enc(OP.PING, `p${i}`)))),
    expect: Array.from({ length: 10 }, (_, i) => pong(`p${i}`)), then: { close: 1000 },
  });
  add('2.11', '10 pings written one byte at a time', {
    run: (c) => chopped(c, Buffer.concat(Array.from({ length: 10 }, (_, i) => enc(OP.PING, `p${i}`)))),
    expect: Array.from({ length: 10 }, (_, i) => pong(`p${i}`)), then: { close: 1000 },
  });

  // ---- 3 reserved bits -----------------------------------------------------
  // RSV bits are 4 (RSV1), 2 (RSV2), 1 (RSV3); no extension is negotiated here.
  for (let rsv = 1; rsv <= 7; rsv++) {
    add(`3.1.${rsv}`, `text frame with RSV=${rsv} and no extension`, {
      run: (c) => c.frame(OP.TEXT, 'small', { rsv }), expect: [], then: { fail: [1002] },
    });
  }
  add('3.2', 'text, then a text frame with RSV=2, then a ping: echo, then fail', {
    run: (c) => { c.frame(OP.TEXT, 'Hello'); c.frame(OP.TEXT, 'small', { rsv: 2 }); c.frame(OP.PING, ''); },
    expect: [text('Hello')], then: { fail: [1002] },
  });
  add('3.3', 'the same in one write', {
    run: (c) => c.write(Buffer.concat([enc(OP.TEXT, 'Hello'), enc(OP.TEXT, 'small', { rsv: 3 }), enc(OP.PING, '')])),
    expect: [text('Hello')], then: { fail: [1002] },
  });
  add('3.4', 'the same written one byte at a time', {
    run: (c) => chopped(c, Buffer.concat([enc(OP.TEXT, 'Hello'), enc(OP.TEXT, 'small', { rsv: 4 }), enc(OP.PING, '')])),
    expect: [text('Hello')], then: { fail: [1002] },
  });
  add('3.5', 'binary frame with RSV=5', { run: (c) => c.frame(OP.BINARY, rand(8, 3), { rsv: 5 }), expect: [], then: { fail: [1002] } });
  add('3.6', 'ping with RSV=6', { run: (c) => c.frame(OP.PING, 'x', { rsv: 6 }), expect: [], then: { fail: [1002] } });
  add('3.7', 'close with RSV=7', { run: (c) => { c.closeSent = true; c.frame(OP.CLOSE, Buffer.from([3, 232]), { rsv: 7 }); }, expect: [], then: { fail: [1002] } });
  add('3.8', 'pong with RSV=1', { run: (c) => c.frame(OP.PONG, 'x', { rsv: 1 }), expect: [], then: { fail: [1002] } });

  // ---- 4 opcodes -----------------------------------------------------------
  for (const op of [3, 4, 5, 6, 7]) {
    add(`4.1.${op}`, `reserved non-control opcode ${op}`, { run: (c) => c.frame(op, ''), expect: [], then: { fail: [1002] } });
    add(`4.2.${op}`, `text, reserved non-control opcode ${op} with payload, ping: echo, then fail`, {
      run: (c) => { c.frame(OP.TEXT, 'Hello'); c.frame(op, 'reserved'); c.frame(OP.PING, ''); },
      expect: [text('Hello')], then: { fail: [1002] },
    });
  }
  for (const op of [11, 12, 13, 14, 15]) {
    add(`4.3.${op}`, `reserved control opcode ${op}`, { run: (c) => c.frame(op, ''), expect: [], then: { fail: [1002] } });
    add(`4.4.${op}`, `text, reserved control opcode ${op} with payload, ping (one write): echo, then fail`, {
      run: (c) => c.write(Buffer.concat([enc(OP.TEXT, 'Hello'), enc(op, 'reserved'), enc(OP.PING, '')])),
      expect: [text('Hello')], then: { fail: [1002] },
    });
  }

  // ---- 5 fragmentation -------------------------------------------------------
  add('5.1', 'ping in two fragments', {
    run: (c) => { c.frame(OP.PING, 'frag1', { fin: false }); c.frame(OP.CONT, 'frag2'); }, expect: [], then: { fail: [1002] },
  });
  add('5.2', 'pong in two fragments', {
    run: (c) => { c.frame(OP.PONG, 'frag1', { fin: false }); c.frame(OP.CONT, 'frag2'); }, expect: [], then: { fail: [1002] },
  });
  add('5.3', 'text in two fragments', {
    run: (c) => { c.frame(OP.TEXT, 'frag1', { fin: false }); c.frame(OP.CONT, 'frag2'); }, expect: [text('frag1frag2')], then: { close: 1000 },
  });
  add('5.4', 'text in two fragments, one write', {
    run: (c) => c.write(Buffer.concat([enc(OP.TEXT, 'frag1', { fin: false }), enc(OP.CONT, 'frag2')])),
    expect: [text('frag1frag2')], then: { close: 1000 },
  });
  add('5.5', 'text in two fragments, written one byte at a time', {
    run: (c) => chopped(c, Buffer.concat([enc(OP.TEXT, 'frag1', { fin: false }), enc(OP.CONT, 'frag2')])),
    expect: [text('frag1frag2')], then: { close: 1000 },
  });
  add('5.6', 'text in two fragments with a ping between', {
    run: (c) => { c.frame(OP.TEXT, 'frag1', { fin: false }); c.frame(OP.PING, 'between'); c.frame(OP.CONT, 'frag2'); },
    expect: [pong('between'), text('frag1frag2')], then: { close: 1000 },
  });
  add('5.7', 'the same in one write', {
    run: (c) => c.write(Buffer.concat([enc(OP.TEXT, 'frag1', { fin: false }), enc(OP.PING, 'between'), enc(OP.CONT, 'frag2')])),
    expect: [pong('between'), text('frag1frag2')], then: { close: 1000 },
  });
  add('5.8', 'the same written one byte at a time', {
    run: (c) => chopped(c, Buffer.concat([enc(OP.TEXT, 'frag1', { fin: false }), enc(OP.PING, 'between'), enc(OP.CONT, 'frag2')])),
    expect: [pong('between'), text('frag1frag2')], then: { close: 1000 },
  });
  add('5.9', 'text in two fragments with an unsolicited pong between', {
    run: (c) => { c.frame(OP.TEXT, 'frag1', { fin: false }); c.frame(OP.PONG, 'unsolicited'); c.frame(OP.CONT, 'frag2'); },
    expect: [text('frag1frag2')], then: { close: 1000 },
  });
  add('5.10', 'continuation (fin) with nothing to continue', {
    run: (c) => c.frame(OP.CONT, 'non-continuation payload'), expect: [], then: { fail: [1002] },
  });
  add('5.11', 'continuation (not fin) with nothing to continue', {
    run: (c) => { c.frame(OP.CONT, 'fragment1', { fin: false }); c.frame(OP.CONT, 'fragment2'); }, expect: [], then: { fail: [1002] },
  });
  add('5.12', 'continuation with nothing to continue, written one byte at a time', {
    run: (c) => chopped(c, enc(OP.CONT, 'non-continuation payload')), expect: [], then: { fail: [1002] },
  });
  add('5.13', 'text (not fin), then text instead of a continuation', {
    run: (c) => { c.frame(OP.TEXT, 'fragment1', { fin: false }); c.frame(OP.TEXT, 'fragment2'); }, expect: [], then: { fail: [1002] },
  });
  add('5.14', 'binary (not fin), then text instead of a continuation', {
    run: (c) => { c.frame(OP.BINARY, 'fragment1', { fin: false }); c.frame(OP.TEXT, 'fragment2'); }, expect: [], then: { fail: [1002] },
  });
  add('5.15', 'a whole text, then a continuation (fin)', {
    run: (c) => { c.frame(OP.TEXT, 'whole'); c.frame(OP.CONT, 'stray'); c.frame(OP.PING, ''); },
    expect: [text('whole')], then: { fail: [1002] },
  });
  add('5.16', 'text with empty fragments around a payload', {
    run: (c) => c.write(Buffer.concat([enc(OP.TEXT, '', { fin: false }), enc(OP.CONT, '', { fin: false }),
      enc(OP.CONT, 'middle', { fin: false }), enc(OP.CONT, '', { fin: false }), enc(OP.CONT, '')])),
    expect: [text('middle')], then: { close: 1000 },
  });
  add('5.17', 'empty text in one empty fragment plus an empty continuation', {
    run: (c) => { c.frame(OP.TEXT, '', { fin: false }); c.frame(OP.CONT, ''); }, expect: [text('')], then: { close: 1000 },
  });
  const b300 = rand(300, 5);
  add('5.18', 'binary in 300 one-byte fragments with a ping after every 50', {
    run: (c) => {
      const frames = [];
      for (let i = 0; i < 300; i++) {
        frames.push(enc(i ? OP.CONT : OP.BINARY, b300.subarray(i, i + 1), { fin: i === 299 }));
        if (i % 50 === 49) frames.push(enc(OP.PING, `p${i}`));
      }
      c.write(Buffer.concat(frames));
    },
    // The last ping follows the fin fragment: its pong comes after the message.
    expect: [pong('p49'), pong('p99'), pong('p149'), pong('p199'), pong('p249'), bin(b300), pong('p299')],
    then: { close: 1000 },
  });
  add('5.19', 'text fragment, close, continuation: the close wins, no message', {
    run: (c) => { c.frame(OP.TEXT, 'fragment1', { fin: false }); c.sendClose(1000); c.frame(OP.CONT, 'fragment2'); },
    expect: [], then: { echoClose: 1000 },
  });
  add('5.20', 'text fragment with a close (fin=0) between', {
    run: (c) => { c.frame(OP.TEXT, 'fragment1', { fin: false }); c.closeSent = true; c.frame(OP.CLOSE, Buffer.from([3, 232]), { fin: false }); },
    expect: [], then: { fail: [1002] },
  });

  // ---- 6 UTF-8 ----------------------------------------------------------------
  const valid = [
    ['Hello-µ@ßöäüàá-UTF-8!!', 'Latin-1 supplement'],
    ['κόσμε', 'Greek'],
    ['\u0080', 'first 2-byte code point U+0080'],
    ['\u07ff', 'last 2-byte code point U+07FF'],
    ['\u0800', 'first 3-byte code point U+0800'],
    ['\ud7ff', 'U+D7FF, below the surrogates'],
    ['\ue000', 'U+E000, above the surrogates'],
    ['\ufffd', 'U+FFFD'],
    ['\uffff', 'U+FFFF (a noncharacter, valid UTF-8)'],
    ['\u{10000}', 'first 4-byte code point U+10000'],
    ['\u{10ffff}', 'last code point U+10FFFF'],
    ['\u{1f600}\u{1f680} mixed ascii é 中文', 'mixed widths'],
  ];
  valid.forEach(([s, what], i) => {
    const b = Buffer.from(s);
    add(`6.1.${i + 1}`, `valid UTF-8 (${what}) in one frame`, { run: (c) => c.frame(OP.TEXT, b), expect: [text(b)], then: { close: 1000 } });
    add(`6.2.${i + 1}`, `valid UTF-8 (${what}) in one-byte fragments (code points split across frames)`, {
      run: (c) => sendMessage(c, OP.TEXT, b, { frags: 1 }), expect: [text(b)], then: { close: 1000 },
    });
    add(`6.3.${i + 1}`, `valid UTF-8 (${what}) written one byte at a time`, {
      run: (c) => chopped(c, enc(OP.TEXT, b)), expect: [text(b)], then: { close: 1000 },
    });
  });
  const invalid = [
    [[0x80], 'lone continuation byte 0x80'],
    [[0xbf], 'lone continuation byte 0xbf'],
    [[0x80, 0xbf, 0x80], 'three continuation bytes'],
    [[0xc0, 0x80], 'overlong NUL (c0 80)'],
    [[0xc1, 0xbf], 'overlong 2-byte (c1 bf)'],
    [[0xe0, 0x80, 0x80], 'overlong 3-byte (e0 80 80)'],
    [[0xe0, 0x9f, 0xbf], 'overlong U+07FF in 3 bytes'],
    [[0xf0, 0x80, 0x80, 0x80], 'overlong 4-byte (f0 80 80 80)'],
    [[0xf0, 0x8f, 0xbf, 0xbf], 'overlong U+FFFF in 4 bytes'],
    [[0xed, 0xa0, 0x80], 'high surrogate U+D800'],
    [[0xed, 0xbf, 0xbf], 'low surrogate U+DFFF'],
    [[0xed, 0xa0, 0x80, 0xed, 0xb0, 0x80], 'surrogate pair encoded as two 3-byte sequences'],
    [[0xf4, 0x90, 0x80, 0x80], 'above U+10FFFF (f4 90 80 80)'],
    [[0xf5, 0x80, 0x80, 0x80], 'lead byte f5'],
    [[0xf8, 0x88, 0x80, 0x80, 0x80], '5-byte sequence'],
    [[0xfc, 0x84, 0x80, 0x80, 0x80, 0x80], '6-byte sequence'],
    [[0xfe], 'byte fe'],
    [[0xff], 'byte ff'],
    [[0xc2], 'truncated 2-byte sequence at the end'],
    [[0xe2, 0x82], 'truncated 3-byte sequence at the end'],
    [[0xf0, 0x9f, 0x98], 'truncated 4-byte sequence at the end'],
    [[0xc2, 0x41], '2-byte lead followed by ASCII'],
    [[0xe2, 0x28, 0xa1], '3-byte lead, bad second byte'],
    [[0xce, 0xba, 0xe1, 0xbd, 0xb9, 0xcf, 0x83, 0xce, 0xbc, 0xce, 0xb5, 0xed, 0xa0, 0x80, 0x65, 0x64, 0x69, 0x74, 0x65, 0x64],
      'κόσμε, a surrogate, then "edited"'],
  ];
  invalid.forEach(([bytes, what], i) => {
    const b = Buffer.from(bytes);
    add(`6.4.${i + 1}`, `invalid UTF-8 (${what}) in one frame`, { run: (c) => c.frame(OP.TEXT, b), expect: [], then: { fail: [1007] } });
    add(`6.5.${i + 1}`, `invalid UTF-8 (${what}) in one-byte fragments`, {
      run: (c) => sendMessage(c, OP.TEXT, b, { frags: 1 }), expect: [], then: { fail: [1007] },
    });
    add(`6.6.${i + 1}`, `invalid UTF-8 (${what}) written one byte at a time`, {
      run: (c) => chopped(c, enc(OP.TEXT, b)), expect: [], then: { fail: [1007] },
    });
  });
  // Fail fast: the first fragment already holds bytes no continuation can
  // make valid; a strict server fails before the message completes.
  const failFast = [
    [Buffer.concat([Buffer.from('κόσμε'), Buffer.from([0xed, 0xa0, 0x80])]), Buffer.from('edited'), 'a surrogate in the first fragment'],
    [Buffer.from([0x41, 0xc0]), Buffer.from([0x80, 0x41]), 'overlong lead c0 at the end of the first fragment'],
    [Buffer.from([0x41, 0xf4, 0x90]), Buffer.from([0x80, 0x80]), 'f4 90 (above U+10FFFF) split across fragments'],
    [Buffer.from([0x41, 0xed, 0xa0]), Buffer.from([0x80]), 'ed a0 (a surrogate) split across fragments'],
    [Buffer.from([0x41, 0xff]), Buffer.from('tail'), 'byte ff in the first fragment'],
    [Buffer.from('valid first '), Buffer.from([0x80, 0x41]), 'a continuation byte opening the second fragment'],
  ];
  failFast.forEach(([a, b, what], i) => {
    add(`6.7.${i + 1}`, `fail fast inside a fragmented text: ${what}`, {
      run: async (c, ctx) => {
        c.frame(OP.TEXT, a, { fin: false });
        if (i === failFast.length - 1) {  // the bad byte opens the second fragment
          c.frame(OP.CONT, b, { fin: false });
          if (await probe(c, ctx, 'invalid UTF-8 in the middle fragment')) return;
          c.frame(OP.CONT, 'end');
          return;
        }
        if (await probe(c, ctx, 'invalid UTF-8 in the first fragment')) return;
        c.frame(OP.CONT, b);
      },
      expect: [], then: { fail: [1007] },
    });
  });
  add('6.8.1', 'valid 4-byte code point split 1|3 across fragments (must not fail early)', {
    run: (c) => { c.frame(OP.TEXT, Buffer.from([0x41, 0xf0]), { fin: false }); c.frame(OP.CONT, Buffer.from([0x9f, 0x98, 0x80])); },
    expect: [text('A\u{1f600}')], then: { close: 1000 },
  });
  add('6.8.2', 'valid 3-byte code point split 2|1 with a ping between', {
    run: (c) => { c.frame(OP.TEXT, Buffer.from([0xe2, 0x82]), { fin: false }); c.frame(OP.PING, 'x'); c.frame(OP.CONT, Buffer.from([0xac])); },
    expect: [pong('x'), text('€')], then: { close: 1000 },
  });
  add('6.8.3', 'invalid UTF-8 in a binary message is fine', {
    run: (c) => c.frame(OP.BINARY, Buffer.from([0xed, 0xa0, 0x80, 0xff])), expect: [bin([0xed, 0xa0, 0x80, 0xff])], then: { close: 1000 },
  });

  // ---- 7 close handling -----------------------------------------------------------
  add('7.1.1', 'echo, then a normal close', { run: (c) => c.frame(OP.TEXT, 'Hello World!'), expect: [text('Hello World!')], then: { close: 1000 } });
  add('7.1.2', 'close twice', { run: (c) => { c.sendClose(1000); c.sendClose(1000); }, expect: [], then: { echoClose: 1000 } });
  add('7.1.3', 'ping after the close: not answered', { run: (c) => { c.sendClose(1000); c.frame(OP.PING, 'after'); }, expect: [], then: { echoClose: 1000 } });
  add('7.1.4', 'text after the close: not echoed', { run: (c) => { c.sendClose(1000); c.frame(OP.TEXT, 'after'); }, expect: [], then: { echoClose: 1000 } });
  add('7.1.5', '256 KiB text then close in one write: echo, then close', {
    run: (c) => { const t = words(256 * 1024, 3); c.write(Buffer.concat([enc(OP.TEXT, t), enc(OP.CLOSE, Buffer.from([3, 232]))])); c.closeSent = true; },
    expect: [text(words(256 * 1024, 3))], then: { echoClose: 1000 },
  });
  add('7.3.1', 'close without payload: answered with an empty close', { run: (c) => c.sendClose(), expect: [], then: { echoClose: null, also: [1000] } });
  add('7.3.2', 'close with a 1-byte payload', {
    run: (c) => { c.closeSent = true; c.frame(OP.CLOSE, Buffer.from([0x03])); }, expect: [], then: { fail: [1002] },
  });
  add('7.3.3', 'close 1000 without reason', { run: (c) => c.sendClose(1000), expect: [], then: { echoClose: 1000 } });
  add('7.3.4', 'close 1000 with a reason', { run: (c) => c.sendClose(1000, 'Hello World!'), expect: [], then: { echoClose: 1000 } });
  add('7.3.5', 'close 1000 with a 123-byte reason (125 bytes in all)', { run: (c) => c.sendClose(1000, 'x'.repeat(123)), expect: [], then: { echoClose: 1000 } });
  add('7.3.6', 'close 1000 with a 124-byte reason (126: too long for a control frame)', {
    run: (c) => c.sendClose(1000, 'x'.repeat(124)), expect: [], then: { fail: [1002] },
  });
  add('7.5.1', 'close reason with invalid UTF-8', {
    run: (c) => c.sendClose(1000, Buffer.from([0xce, 0xba, 0xe1, 0xbd, 0xb9, 0xcf, 0x83, 0xce, 0xbc, 0xce, 0xb5, 0xed, 0xa0, 0x80, 0x65, 0x64])),
    expect: [], then: { fail: [1007] },
  });
  add('7.5.2', 'close reason with valid multi-byte UTF-8', { run: (c) => c.sendClose(1000, 'κόσμε \u{1f600}'), expect: [], then: { echoClose: 1000 } });
  [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999].forEach((code, i) => {
    add(`7.7.${i + 1}`, `close with valid code ${code}: echoed`, { run: (c) => c.sendClose(code), expect: [], then: { echoClose: code, also: [1000] } });
  });
  [1012, 1013, 1014].forEach((code, i) => {
    add(`7.8.${i + 1}`, `close with code ${code} (registered after RFC 6455)`, {
      run: (c) => c.sendClose(code), expect: [], then: { echoClose: code, also: [1000, 1002] }, informational: true,
    });
  });
  [0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535].forEach((code, i) => {
    add(`7.9.${i + 1}`, `close with invalid code ${code}`, { run: (c) => c.sendClose(code), expect: [], then: { fail: [1002] } });
  });
  add('7.13.1', 'close written one byte at a time', {
    run: (c) => { c.closeSent = true; return chopped(c, enc(OP.CLOSE, Buffer.concat([Buffer.from([0x03, 0xe8]), Buffer.from('chopped')]))); },
    expect: [], then: { echoClose: 1000 },
  });

  // ---- 9 limits and large messages ---------------------------------------------------
  const bigSizes = full ? [64 << 10, 256 << 10, 1 << 20, 4 << 20, 8 << 20, 16 << 20] : [64 << 10, 1 << 20, 16 << 20];
  bigSizes.forEach((n, i) => {
    const t = Buffer.from(words(n, 50 + i));
    const b = rand(n, 60 + i);
    add(`9.1.${i + 1}`, `text message of ${n >> 10} KiB`, { run: (c) => sendMessage(c, OP.TEXT, t), expect: [text(t)], then: { close: 1000 }, big: true });
    add(`9.2.${i + 1}`, `binary message of ${n >> 10} KiB`, { run: (c) => sendMessage(c, OP.BINARY, b), expect: [bin(b)], then: { close: 1000 }, big: true });
  });
  const fragSizes = full ? [64, 256, 1024, 4096, 16384, 65536, 262144, 1 << 20, 4 << 20] : [64, 4096, 262144, 4 << 20];
  const t4 = Buffer.from(words(4 << 20, 70));
  const b4 = rand(4 << 20, 71);
  fragSizes.forEach((f, i) => {
    // Servers may cap the fragments of one message (ws: maxFragments,
    // 16,384 by default): a close with 1008 (policy) is then INFORMATIONAL.
    const then = { close: 1000, policy: [1008] };
    add(`9.3.${i + 1}`, `4 MiB text in fragments of ${f} bytes`, { run: (c) => sendMessage(c, OP.TEXT, t4, { frags: f }), expect: [text(t4)], then, big: true });
    add(`9.4.${i + 1}`, `4 MiB binary in fragments of ${f} bytes`, { run: (c) => sendMessage(c, OP.BINARY, b4, { frags: f }), expect: [bin(b4)], then, big: true });
  });
  const chops = full ? [64, 128, 256, 512, 1024, 2048, 4096] : [64, 4096];
  const m1t = Buffer.from(words(1 << 20, 80));
  const m1b = rand(1 << 20, 81);
  chops.forEach((ch, i) => {
    add(`9.5.${i + 1}`, `1 MiB text written in chops of ${ch} bytes`, { run: (c) => c.writeSplit(enc(OP.TEXT, m1t), offsetsEvery(m1t.length + 14, ch), 0), expect: [text(m1t)], then: { close: 1000 }, big: true });
    add(`9.6.${i + 1}`, `1 MiB binary written in chops of ${ch} bytes`, { run: (c) => c.writeSplit(enc(OP.BINARY, m1b), offsetsEvery(m1b.length + 14, ch), 0), expect: [bin(m1b)], then: { close: 1000 }, big: true });
  });
  const many = full ? 10000 : 1000;
  add('9.7.1', `${many} small text messages in one write: echoed in order`, {
    run: (c) => c.write(Buffer.concat(Array.from({ length: many }, (_, i) => enc(OP.TEXT, `m${i}`)))),
    expect: Array.from({ length: many }, (_, i) => text(`m${i}`)), then: { close: 1000 },
  });
  add('9.7.2', `${many} small binary messages, one write each`, {
    run: (c) => { for (let i = 0; i < many; i++) c.frame(OP.BINARY, `b${i}`); },
    expect: Array.from({ length: many }, (_, i) => bin(`b${i}`)), then: { close: 1000 },
  });
  add('9.8.1', `a frame header announcing maxPayload + 1 (${MAX_PAYLOAD + 1} bytes)`, {
    run: (c) => {
      const head = Buffer.alloc(14);
      head[0] = 0x82; head[1] = 0xff;
      head.writeBigUInt64BE(BigInt(MAX_PAYLOAD + 1), 2);
      c.write(head);  // mask key and body follow only if the server waits for them
      c.write(Buffer.alloc(1024));
    },
    expect: [], then: { fail: [1009] },
  });
  add('9.8.2', 'a fragmented message growing past maxPayload', {
    run: async (c) => {
      const part = Buffer.alloc(4 << 20);
      for (let i = 0; i * part.length <= MAX_PAYLOAD && !c.has('close') && !c.has('end'); i++) {
        c.frame(i ? OP.CONT : OP.BINARY, part, { fin: false });
        await new Promise((r) => setImmediate(r));
      }
    },
    expect: [], then: { fail: [1009] }, big: true,
  });
  add('9.8.3', '64-bit length with its most significant bit set', {
    run: (c) => {
      const head = Buffer.alloc(14);
      head[0] = 0x82; head[1] = 0xff;
      head.writeBigUInt64BE(0x8000000000000010n, 2);
      c.write(Buffer.concat([head, Buffer.alloc(16)]));
    },
    expect: [], then: { fail: [1002, 1009] },
  });

  // ---- M masking ----------------------------------------------------------------
  add('M.1', 'unmasked text frame', { run: (c) => c.frame(OP.TEXT, 'Hello', { mask: false }), expect: [], then: { fail: [1002] } });
  add('M.2', 'unmasked ping', { run: (c) => c.frame(OP.PING, 'Hello', { mask: false }), expect: [], then: { fail: [1002] } });
  add('M.3', 'unmasked close', { run: (c) => { c.closeSent = true; c.frame(OP.CLOSE, Buffer.from([3, 232]), { mask: false }); }, expect: [], then: { fail: [1002] } });
  add('M.4', 'masked text, then an unmasked continuation', {
    run: (c) => { c.frame(OP.TEXT, 'masked', { fin: false }); c.frame(OP.CONT, 'unmasked', { mask: false }); }, expect: [], then: { fail: [1002] },
  });
  add('M.5', 'text with an all-zero mask key', {
    run: (c) => c.frame(OP.TEXT, 'zero key', { maskKey: Buffer.alloc(4) }), expect: [text('zero key')], then: { close: 1000 },
  });
  add('M.6', 'unmasked empty binary frame', { run: (c) => c.frame(OP.BINARY, '', { mask: false }), expect: [], then: { fail: [1002] } });

  // ---- S bytes split at every position ------------------------------------------
  for (const [n, what] of [[20, '7-bit length'], [300, '16-bit length'], [70000, '64-bit length']]) {
    const payload = Buffer.from(words(n, n));
    const frame = enc(OP.TEXT, payload);
    const header = frame.length - n;
    // Every position inside the header and mask, and the first and last few
    // bytes of the payload (a 70,000-byte payload is not split 70,000 times).
    const positions = [];
    for (let p = 1; p < frame.length; p++) if (p <= header + 8 || p >= frame.length - 8 || n <= 300) positions.push(p);
    add(`S.${n}`, `text frame (${what}) written in two pieces, split at each of ${positions.length} positions`, {
      run: async (c) => { for (const p of positions) await c.writeSplit(frame, [p], 1); },
      expect: positions.map(() => text(payload)), then: { close: 1000 },
    });
  }
  {
    const msgs = ['first', 'second message', 'third'];
    const bytes = Buffer.concat([enc(OP.TEXT, 'first', { fin: false }), enc(OP.PING, 'mid'), enc(OP.CONT, ' and more'),
      enc(OP.TEXT, msgs[1]), enc(OP.CLOSE, Buffer.from([3, 232]))]);
    add('S.mixed', 'fragments, a ping, messages and a close: one write per byte', {
      run: (c) => { c.closeSent = true; return chopped(c, bytes); },
      expect: [pong('mid'), text('first and more'), text(msgs[1])], then: { echoClose: 1000 },
    });
  }

  // ---- 12 permessage-deflate: messages ------------------------------------------
  const dsizes = full ? [16, 64, 256, 1024, 4096, 8192, 16384, 32768, 65536, 131072] : [16, 256, 4096, 65536];
  const per = full ? 100 : 5;
  const offers12 = [
    ['permessage-deflate', 'default'],
    ['permessage-deflate; client_no_context_takeover; server_no_context_takeover', 'no context takeover'],
    ['permessage-deflate; client_max_window_bits=9; server_max_window_bits=9', 'window bits 9'],
  ];
  offers12.forEach(([offer, what], oi) => {
    dsizes.forEach((n, i) => {
      const tmsgs = Array.from({ length: per }, (_, k) => Buffer.from(words(n, 1000 + n + k)));
      const bmsgs = Array.from({ length: per }, (_, k) => rand(n, 2000 + n + k));
      add(`12.${oi + 1}.${i + 1}`, `${per} compressed text messages of ${n} bytes (${what})`, {
        offer, run: async (c) => { for (const m of tmsgs) await sendMessage(c, OP.TEXT, m, { compress: true }); },
        expect: tmsgs.map(text), then: { close: 1000 },
      });
      add(`12.${oi + 4}.${i + 1}`, `${per} compressed binary (random) messages of ${n} bytes (${what})`, {
        offer, run: async (c) => { for (const m of bmsgs) await sendMessage(c, OP.BINARY, m, { compress: true }); },
        expect: bmsgs.map(bin), then: { close: 1000 },
      });
    });
  });
  const rep = Buffer.from(words(2000, 5));
  add('12.7.1', 'the same compressible message 20 times (context takeover pays)', {
    offer: 'permessage-deflate', run: async (c) => { for (let i = 0; i < 20; i++) await sendMessage(c, OP.TEXT, rep, { compress: true }); },
    expect: Array.from({ length: 20 }, () => text(rep)), then: { close: 1000 },
  });
  add('12.7.2', 'compressed message in fragments (RSV1 on the first only)', {
    offer: 'permessage-deflate', run: (c) => sendMessage(c, OP.TEXT, words(5000, 6), { compress: true, frags: 17 }),
    expect: [text(words(5000, 6))], then: { close: 1000 },
  });
  add('12.7.3', 'uncompressed and compressed messages mixed', {
    offer: 'permessage-deflate',
    run: async (c) => { c.frame(OP.TEXT, 'plain'); await sendMessage(c, OP.TEXT, 'deflated', { compress: true }); c.frame(OP.BINARY, 'plain bin'); },
    expect: [text('plain'), text('deflated'), bin('plain bin')], then: { close: 1000 },
  });
  add('12.7.4', 'compressed empty message', {
    offer: 'permessage-deflate', run: (c) => sendMessage(c, OP.TEXT, '', { compress: true }), expect: [text('')], then: { close: 1000 },
  });
  add('12.7.5', 'compressed 16 MiB text', {
    offer: 'permessage-deflate', run: (c) => sendMessage(c, OP.TEXT, words(16 << 20, 12), { compress: true }),
    expect: [text(words(16 << 20, 12))], then: { close: 1000 }, big: true,
  });
  add('12.8.1', 'RSV1 on a continuation frame', {
    offer: 'permessage-deflate',
    run: async (c) => { const z = await c.compress(Buffer.from('Hello, Hello')); c.frame(OP.TEXT, z.subarray(0, 3), { fin: false, rsv: 4 }); c.frame(OP.CONT, z.subarray(3), { rsv: 4 }); },
    expect: [], then: { fail: [1002] },
  });
  add('12.8.2', 'RSV1 on a ping', { offer: 'permessage-deflate', run: (c) => c.frame(OP.PING, 'x', { rsv: 4 }), expect: [], then: { fail: [1002] } });
  add('12.8.3', 'RSV1 on a close', { offer: 'permessage-deflate', run: (c) => { c.closeSent = true; c.frame(OP.CLOSE, Buffer.from([3, 232]), { rsv: 4 }); }, expect: [], then: { fail: [1002] } });
  add('12.8.4', 'RSV2 with permessage-deflate negotiated', { offer: 'permessage-deflate', run: (c) => c.frame(OP.TEXT, 'x', { rsv: 2 }), expect: [], then: { fail: [1002] } });
  add('12.8.5', 'compressed data that is not DEFLATE', {
    offer: 'permessage-deflate', run: (c) => c.frame(OP.TEXT, Buffer.from([0xff, 0xff, 0xff, 0xff, 0x12, 0x34]), { rsv: 4 }), expect: [], then: { fail: [1007] },
  });
  add('12.8.6', `compression bomb: 64 MiB of zeros deflated (> maxPayload ${MAX_PAYLOAD >> 20} MiB)`, {
    offer: 'permessage-deflate', run: (c) => sendMessage(c, OP.BINARY, Buffer.alloc(64 << 20), { compress: true }), expect: [], then: { fail: [1009] }, big: true,
  });
  add('12.8.7', 'compressed text inflating to invalid UTF-8', {
    offer: 'permessage-deflate', run: (c) => sendMessage(c, OP.TEXT, Buffer.from([0x41, 0xed, 0xa0, 0x80]), { compress: true }), expect: [], then: { fail: [1007] },
  });

  // ---- 13 permessage-deflate: negotiation ---------------------------------------
  const offers13 = [
    'permessage-deflate',
    'permessage-deflate; client_no_context_takeover',
    'permessage-deflate; server_no_context_takeover',
    'permessage-deflate; client_max_window_bits',
    'permessage-deflate; client_max_window_bits=9',
    'permessage-deflate; client_max_window_bits=15',
    'permessage-deflate; server_max_window_bits=9',
    'permessage-deflate; server_max_window_bits=12; client_max_window_bits=12',
    'permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=9; client_max_window_bits=9',
    'permessage-deflate; server_max_window_bits=10, permessage-deflate',
    'permessage-deflate; server_max_window_bits=9; server_no_context_takeover, permessage-deflate; client_max_window_bits',
    'x-unknown-extension, permessage-deflate; client_max_window_bits',
    'permessage-deflate; client_max_window_bits="10"',
  ];
  offers13.forEach((offer, i) => {
    const msgs = [100, 1000, 8000, 30000].map((n, k) => Buffer.from(words(n, 300 + i * 10 + k)));
    add(`13.1.${i + 1}`, `negotiate "${offer}", then compressed messages both ways`, {
      offer, requireDeflate: true,
      run: async (c) => { for (const m of msgs) await sendMessage(c, OP.TEXT, m, { compress: true }); for (const m of msgs) await sendMessage(c, OP.TEXT, m, { compress: true }); },
      expect: [...msgs, ...msgs].map(text), then: { close: 1000 },
    });
  });
  const badOffers = [
    'permessage-deflate; server_max_window_bits=7',
    'permessage-deflate; server_max_window_bits=16',
    'permessage-deflate; client_max_window_bits=0',
    'permessage-deflate; server_max_window_bits',
    'permessage-deflate; server_no_context_takeover=1',
    'permessage-deflate; unknown_parameter',
    'permessage-deflate; server_no_context_takeover; server_no_context_takeover',
  ];
  badOffers.forEach((offer, i) => {
    add(`13.2.${i + 1}`, `invalid offer "${offer}": declined or refused, never accepted`, {
      offer, declineOnly: true, run: (c) => c.frame(OP.TEXT, 'plain'), expect: [text('plain')], then: { close: 1000 },
    });
  });

  return cases;
}

function offsetsEvery(len, step) {
  const o = [];
  for (let i = step; i < len; i += step) o.push(i);
  return o;
}

module.exports = { build, MAX_PAYLOAD, PROBE };
