'use strict';

// Request variants for the differential fuzzer, from a small grammar of
// HTTP/1.x with the corners where parsers disagree: every control byte and
// whitespace in the request line, header names and values and chunk
// lines; line folds; Content-Length and Transfer-Encoding duplicated,
// conflicting and misspelled; chunk sizes and extensions; HTTP/1.0 vs 1.1;
// pipelined tails. One case is a pure function of its seed (generate(seed)
// always gives the same bytes), so a failing case is reproduced from the
// seed it prints.

// mulberry32: small, fast, good enough to pick grammar branches.
function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const r = {
    next,
    int: (n) => Math.floor(next() * n),
    chance: (p) => next() < p,
    pick: (list) => list[Math.floor(next() * list.length)],
  };
  return r;
}

// Every byte that is not a visible ASCII character or a letter: controls,
// SP, DEL, and a few obs-text bytes.
const ODD_BYTES = [];
for (let b = 0; b < 0x21; b++) ODD_BYTES.push(String.fromCharCode(b));
ODD_BYTES.push('\x7f', '\x80', '\xa0', '\xe9', '\xff');
const WS = [' ', '\t', '  ', ' \t', '\x0b', '\x0c', '\r', '\x00'];
const SEPARATORS = ['(', ')', '<', '>', '@', ',', ';', ':', '\\', '"', '/', '[', ']', '?', '=', '{', '}'];

// One odd byte (any control, whitespace, DEL or obs-text) or separator.
function oddByte(r) {
  return r.chance(0.8) ? r.pick(ODD_BYTES) : r.pick(SEPARATORS);
}

function insertAt(r, s, what) {
  const i = r.int(s.length + 1);
  return s.slice(0, i) + what + s.slice(i);
}

const GOOD_METHODS = ['GET', 'GET', 'POST', 'POST', 'PUT', 'HEAD', 'DELETE', 'OPTIONS', 'PATCH'];
const ODD_METHODS = ['QUERY', 'get', 'Get', 'FOO', 'G ET', 'GE(T', 'M-SEARCH', 'PURGE', 'LINK',
  'SOURCE', 'TRACE', 'MKCOL', 'PROPFIND', 'REPORT', 'SEARCH', 'ACL', 'BIND', 'PRI'];
const GOOD_TARGETS = ['/', '/a', '/a/b?c=d&e=f', '/%20x', '/a;b', '/?' + 'q'.repeat(40)];
const ODD_TARGETS = ['/x#frag', '*', 'http://h/p?q', '//x', '/\xe9', '/a%00b', 'a', 'h:80', '/a b',
  '/a\tb', '', '?', '/|', '/{}', '/"', '/\\'];
const GOOD_VERSIONS = ['HTTP/1.1', 'HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0'];
const ODD_VERSIONS = ['HTTP/1.2', 'HTTP/2.0', 'HTTP/0.9', 'http/1.1', 'HTTP/11', 'HTTP/1.',
  'HTTP/1.1 ', 'HTTP /1.1', 'HTTP/1.01', 'HTTP/9.9', 'HTTP/1.1\t', 'HTTP/3.0', 'HTTP/0.1', 'HTTPS/1.1'];

// The part of the request a case bends; the rest is kept valid, so that
// most cases reach the parsers' corner cases instead of failing early.
const FOCI = ['none', 'none', 'method', 'target', 'version', 'line-ws', 'eol', 'name', 'value',
  'colon', 'fold', 'cl', 'te', 'cl-te', 'chunk-size', 'chunk-ext', 'chunk-eol', 'trailers',
  'pipeline', 'mutate', 'expect'];
let focus = 'none';
// Probability of bending `area`: high when it is the case's focus.
function bend(r, area, p = 0.35) {
  return r.chance(focus === area ? p : 0.003);
}

// Line endings: mostly CRLF.
function eol(r, area = 'eol') {
  if (!bend(r, area, 0.15)) return '\r\n';
  return r.pick(['\n', '\r', '\r\r\n', ' \r\n', '\t\r\n', '\r\n\r\n', '\n\r']);
}

// Content-Length and Transfer-Encoding spellings.
const CL_NAMES = ['Content-Length', 'content-length', 'CONTENT-LENGTH', 'Content-length',
  'Content-Length ', 'Content_Length', ' Content-Length', 'Content-Length\t', 'Content-Lengthx'];
const TE_NAMES = ['Transfer-Encoding', 'transfer-encoding', 'TRANSFER-ENCODING',
  'Transfer-Encoding ', 'Transfer_Encoding', ' Transfer-Encoding', 'Transfer-Encodingx'];
const TE_VALUES = ['chunked', 'chunked', 'chunked', 'Chunked', 'CHUNKED', 'chunked ', ' chunked',
  '\tchunked', 'chunked\t', 'chunked, identity', 'identity, chunked', 'gzip, chunked', 'gzip',
  'identity', 'xchunked', 'chunkedx', 'chunked;x=1', 'chunked,', ',chunked', 'chunked , chunked',
  'chun ked', 'chunked\x0b', '"chunked"', ''];
function clValue(r, n) {
  return r.pick([
    String(n), String(n), String(n), `0${n}`, `00${n}`, `+${n}`, `-${n}`, `${n}, ${n}`, `${n},${n}`,
    ` ${n}`, `${n} `, `${n}\t`, `${n} ${n}`, `0x${n.toString(16)}`, `${n}.0`, '', `${n}a`,
    `${n + 1}`, String(Math.max(0, n - 1)), '18446744073709551616', `${n}\x00`,
  ]);
}

// A header value: mostly plain, sometimes with an odd byte or a fold.
function plainValue(r) {
  return r.pick(['x', 'a b', 'a,b', '"q"', '1', '', 'v'.repeat(r.int(30) + 1), '\xe9t\xe9', 'a\tb']);
}

function foldInto(r, value) {
  const fold = r.pick(['\r\n ', '\r\n\t', '\r\n  ', '\n ', '\r\n \r\n ']);
  // Folds after an empty first line are the ones llhttp 8.1 let through.
  if (value === '' || r.chance(0.4)) return fold + (value || plainValue(r));
  const i = r.int(value.length + 1);
  return value.slice(0, i) + fold + value.slice(i);
}

function headerLine(r, name, value, area = 'value') {
  let colonWs = r.pick([' ', ' ', ' ', '', '\t', '  ', ' \t']);
  if (bend(r, 'colon', 0.3)) colonWs = oddByte(r);
  let v = value;
  if (bend(r, 'fold', 0.3)) v = foldInto(r, v);
  let trailing = '';
  if (r.chance(0.05)) trailing = r.pick([' ', '\t', ' \t ']);
  let line = `${name}:${colonWs}${v}${trailing}`;
  if (bend(r, 'colon', 0.1)) line = `${name}${r.pick([' ', '\t'])}:${colonWs}${v}`;  // space before colon
  return line + eol(r, area === 'trailers' ? 'trailers' : 'eol');
}

// Chunked body: chunks of the given data with odd sizes, extensions and
// line endings, the last chunk and trailers.
function chunkedBody(r, data) {
  let out = '';
  let rest = data;
  while (rest.length > 0) {
    const n = Math.min(rest.length, 1 + r.int(7));
    let size = n.toString(16);
    if (r.chance(0.1)) size = size.toUpperCase();
    if (r.chance(0.06)) size = '0'.repeat(1 + r.int(3)) + size;
    if (bend(r, 'chunk-size', 0.25)) {
      size = r.pick([`0x${size}`, `-${size}`, `+${size}`, ` ${size}`, `${size} `, `${size}\t`, 'g', '',
        `${size}${oddByte(r)}`, `${oddByte(r)}${size}`, `${(n + 1).toString(16)}`, `${size}${size}`]);
    }
    let ext = '';
    if (bend(r, 'chunk-ext', 0.4)) {
      ext = r.pick([';a', ';a=b', ';a="b c"', ';a=b;c=d', ';a;b', ' ;a', ';a =b', ';a= b', ';=b',
        ';a="\\"q"', `;a=${oddByte(r)}`, `;a="${oddByte(r)}"`, ';a=b ', ';a=""', ';a="b";c']);
    }
    out += size + ext + eol(r, 'chunk-eol');
    out += rest.slice(0, n);
    out += bend(r, 'chunk-eol', 0.2) ? r.pick(['', '\n', '\r', 'XX', '\r\n\r\n', ' \r\n']) : '\r\n';
    rest = rest.slice(n);
  }
  out += r.pick(['0', '0', '0', '00', '000', '0;a=b']) + (bend(r, 'chunk-size', 0.2) ? r.pick([' ', '\t', 'x']) : '') + eol(r, 'chunk-eol');
  if (r.chance(focus === 'trailers' ? 0.9 : 0.1)) {
    const trailers = r.int(3) + 1;
    for (let i = 0; i < trailers; i++) {
      let name = `X-T${i}`;
      if (bend(r, 'trailers', 0.3)) name = r.pick(['Content-Length', 'Transfer-Encoding', 'Host', 'Trailer', insertAt(r, name, oddByte(r))]);
      out += headerLine(r, name, bend(r, 'trailers', 0.2) ? insertAt(r, plainValue(r), oddByte(r)) : plainValue(r), 'trailers');
    }
  }
  out += eol(r, 'trailers');
  return out;
}

// A complete request; `depth` > 0 for pipelined followers (kept simple).
function request(r, depth = 0) {
  let method = bend(r, 'method', 0.6) ? r.pick(ODD_METHODS) : r.pick(GOOD_METHODS);
  let target = bend(r, 'target', 0.6) ? r.pick(ODD_TARGETS) : r.pick(GOOD_TARGETS);
  let version = bend(r, 'version', 0.6) ? r.pick(ODD_VERSIONS) : r.pick(GOOD_VERSIONS);
  let sp1 = ' ';
  let sp2 = ' ';
  if (bend(r, 'line-ws', 0.5)) sp1 = r.pick(WS);
  if (bend(r, 'line-ws', 0.5)) sp2 = r.pick(WS);
  if (bend(r, 'target', 0.3)) target = insertAt(r, target, oddByte(r));
  if (bend(r, 'method', 0.3)) method = insertAt(r, method, oddByte(r));
  if (bend(r, 'version', 0.3)) version = insertAt(r, version, oddByte(r));
  let head = '';
  if (depth === 0 && bend(r, 'line-ws', 0.3)) head += r.pick(['\r\n', '\r\n\r\n', '\n', ' ', '\t']);
  head += `${method}${sp1}${target}${sp2}${version}` + eol(r);

  const headers = [];
  if (!r.chance(0.03)) headers.push(['Host', r.chance(0.95) ? 'h' : plainValue(r)]);
  if (r.chance(0.02)) headers.push(['Host', 'h2']);

  const body = 'b'.repeat(r.int(12)) + (r.chance(0.1) ? 'GET /s HTTP/1.1\r\nHost: h\r\n\r\n' : '');
  let framing = r.pick(['none', 'none', 'cl', 'cl', 'te', 'te']);
  if (focus === 'cl') framing = r.pick(['cl', 'cl2']);
  if (focus === 'te') framing = r.pick(['te', 'te', 'te2']);
  if (focus === 'cl-te') framing = 'both';
  if (['chunk-size', 'chunk-ext', 'chunk-eol', 'trailers'].includes(focus)) framing = 'te';
  if (depth > 0 && r.chance(0.5)) framing = 'none';
  let payload = '';
  const odd = focus === 'cl' || focus === 'te' || focus === 'cl-te';
  const cl = () => headers.push([odd && r.chance(0.2) ? r.pick(CL_NAMES) : 'Content-Length',
    odd && r.chance(0.5) ? clValue(r, body.length) : String(body.length)]);
  const te = () => headers.push([odd && r.chance(0.2) ? r.pick(TE_NAMES) : r.pick(TE_NAMES.slice(0, 3)),
    odd && r.chance(0.6) ? r.pick(TE_VALUES) : 'chunked']);
  switch (framing) {
    case 'cl': cl(); payload = body; break;
    case 'cl2': cl(); cl(); payload = body; break;
    case 'te': te(); payload = chunkedBody(r, body); break;
    case 'te2': te(); te(); payload = chunkedBody(r, body); break;
    case 'both':
      if (r.chance(0.5)) { cl(); te(); } else { te(); cl(); }
      payload = r.chance(0.5) ? chunkedBody(r, body) : body;
      break;
    default:
      if (r.chance(0.1)) payload = body;  // bytes after a bodiless request
  }
  const extra = r.int(4);
  for (let i = 0; i < extra; i++) {
    const kind = r.int(10);
    if (kind < 5) headers.push([`X-A${i}`, bend(r, 'value', 0.6) ? insertAt(r, plainValue(r), oddByte(r)) : plainValue(r)]);
    else if (kind < 7) headers.push([bend(r, 'name', 0.7) ? insertAt(r, `X-A${i}`, oddByte(r)) : `X-A${i}`, 'v']);
    else if (kind < 8) headers.push(['Connection', r.pick(['close', 'keep-alive', 'Close', 'close, x', 'x, close', 'upgrade', 'keep-alive, close'])]);
    else if (kind < 9) headers.push([r.pick(['Cookie', 'Set-Cookie', 'X-Dup', 'Content-Type', 'User-Agent']), plainValue(r)]);
    else headers.push([`X-B${i}`, plainValue(r)]);
  }
  if (focus === 'expect' || r.chance(0.02)) {
    headers.push(['Expect', r.pick(['100-continue', '100-Continue', 'x', 'x, 100-continue', '100-continuex', ''])]);
  }
  // Shuffle a little: the framing headers are not always last.
  for (let i = headers.length - 1; i > 0; i--) {
    if (r.chance(0.3)) {
      const j = r.int(i + 1);
      [headers[i], headers[j]] = [headers[j], headers[i]];
    }
  }
  for (const [name, value] of headers) head += headerLine(r, name, value);
  head += eol(r);
  return head + payload;
}

function mutate(r, bytes) {
  // A byte-level change in the first 120 bytes (mostly the head).
  const limit = Math.min(bytes.length, 120);
  const i = r.int(limit + 1);
  switch (r.int(4)) {
    case 0: return bytes.slice(0, i) + oddByte(r) + bytes.slice(i);
    case 1: return bytes.slice(0, i) + bytes.slice(i + 1);
    case 2: return bytes.slice(0, i) + r.pick(['\r\n', '\r\n ', '\n', '\r', ':', ' ']) + bytes.slice(i);
    default: {
      // Duplicate one line of the head.
      const lines = bytes.split('\r\n');
      if (lines.length < 3) return bytes;
      const k = 1 + r.int(Math.min(lines.length - 2, 8));
      lines.splice(k, 0, lines[k]);
      return lines.join('\r\n');
    }
  }
}

// The bytes of case `seed` (a latin1 string).
function generate(seed) {
  const r = prng(seed);
  focus = r.pick(FOCI);
  let wire = request(r, 0);
  const followers = r.chance(focus === 'pipeline' ? 0.9 : 0.25) ? 1 + r.int(2) : 0;
  for (let i = 0; i < followers; i++) {
    wire += r.chance(focus === 'pipeline' ? 0.4 : 0.8) ? `GET /p${i} HTTP/1.1\r\nHost: h\r\n\r\n` : request(r, 1);
  }
  if (focus === 'mutate') {
    const n = 1 + r.int(2);
    for (let i = 0; i < n; i++) wire = mutate(r, wire);
  }
  return wire;
}

module.exports = { generate, prng };
