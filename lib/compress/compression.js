'use strict';

// Response compression: the options of createServer({ compression }), the
// Accept-Encoding negotiation and the per-response decision. The encoding
// itself is native (src/core/compress/compressor.h, src/binding/js_compress.h):
// whole bodies in one pass (on the libuv threadpool above 32 KiB), streamed
// bodies through a streaming compressor with chunked framing, files through
// a compression transform in the native pipe.
//
// createServer({ compression: true | false | {
//     encodings: ['br', 'gzip', 'deflate'],  // server preference, first wins ties
//     threshold: 1024,        // bytes; smaller bodies are sent as they are
//     level: 6,               // zlib level (gzip, deflate), 0..9
//     brotliQuality: 4,       // brotli quality, 0..11 (node's zlib defaults
//                             // to 11, far too slow per request; 4 is what
//                             // the `compression` middleware uses)
//     filter(req, res),       // false: do not compress this response
//                             // (default: isCompressible(content-type))
//     maxBrotliStreams: 128,  // streamed (res.write) br responses open at
//                             // once; above it a streamed response
//                             // negotiates without br (each br stream
//                             // holds 0.5-1.3 MiB of encoder state)
// } })
// Per response: `res.compress = false` opts out.
//
// Negotiation (RFC 9110 12.5.3): codings with q=0 are not acceptable; `*`
// stands for any coding not listed; among the server's encodings the
// highest q wins and the server's order breaks ties. `identity` is always
// acceptable unless refused; when not listed it takes the lowest q listed
// (as the `negotiator` package does), so "gzip;q=0.5" still compresses,
// while "gzip;q=0.5, identity" does not. No Accept-Encoding: no
// compression.
// `identity;q=0` (or `*;q=0`) with none of our codings acceptable: the body
// is sent uncompressed, not 406. That is what users of the `compression`
// middleware get (it never answers 406), and what clients that send it in
// practice (none do on purpose) still understand best.
//
// Left alone (not compressed, no headers added): HEAD, 1xx/204/304,
// responses that already have Content-Encoding (other than identity), and
// `Cache-Control: no-transform`. Otherwise, when the content type is
// compressible, `Vary: Accept-Encoding` is added (also when the body ends
// up below the threshold, since the answer depends on the header), and
// when compressing, Content-Encoding is set and a user Content-Length is
// replaced (whole bodies: the compressed length; streams: chunked).

const binding = require('../common/binding');
const { kReq } = require('../common/symbols');
const { codedTypeError } = require('../common/errors');

// Coding values of the native compressor (binding.constants).
const { CODING_GZIP, CODING_DEFLATE, CODING_BR } = binding.constants;
const CODING = Object.freeze({ gzip: CODING_GZIP, deflate: CODING_DEFLATE, br: CODING_BR });
const NAMES = [];
for (const name of Object.keys(CODING)) NAMES[CODING[name]] = name;

// Compressible content types (the essence of the `compressible` /
// mime-db list for what servers send): text/*, JSON and XML (also the
// +json / +xml suffixes), JavaScript, SVG, wasm, ndjson, form data, fonts
// that are not already compressed (ttf, otf, eot), icons and bitmaps.
const COMPRESSIBLE = new Set([
  'application/json', 'application/javascript', 'application/x-javascript',
  'application/ecmascript', 'application/xml', 'application/xhtml+xml',
  'application/rss+xml', 'application/atom+xml', 'application/wasm',
  'application/x-ndjson', 'application/ld+json', 'application/manifest+json',
  'application/graphql', 'application/x-www-form-urlencoded',
  'application/vnd.ms-fontobject', 'application/x-font-ttf',
  'application/x-sh', 'application/x-tex', 'application/rtf',
  'font/ttf', 'font/otf', 'font/opentype', 'image/svg+xml',
  'image/x-icon', 'image/vnd.microsoft.icon', 'image/bmp',
]);

function isCompressible(contentType) {
  if (contentType === undefined || contentType === null) return false;
  let type = String(contentType);
  const semi = type.indexOf(';');
  if (semi !== -1) type = type.slice(0, semi);
  type = type.trim().toLowerCase();
  if (type.startsWith('text/')) return true;
  if (COMPRESSIBLE.has(type)) return true;
  return type.endsWith('+json') || type.endsWith('+xml');
}

const defaults = {
  encodings: ['br', 'gzip', 'deflate'],
  threshold: 1024,
  level: -1,          // Z_DEFAULT_COMPRESSION (6)
  brotliQuality: 4,
  filter: null,
  maxBrotliStreams: 128,
};

// createServer's `compression` option → null (off) or a config object.
function normalize(option) {
  if (option === undefined || option === null || option === false) return null;
  if (option === true) option = {};
  if (typeof option !== 'object') {
    throw codedTypeError('ERR_INVALID_ARG_TYPE',
      'The "options.compression" property must be a boolean or an object');
  }
  const encodings = option.encodings === undefined ? defaults.encodings : option.encodings;
  if (!Array.isArray(encodings) || encodings.some((e) => CODING[e] === undefined)) {
    throw codedTypeError('ERR_INVALID_ARG_VALUE',
      'The "options.compression.encodings" property must be an array of \'br\', \'gzip\', \'deflate\'');
  }
  const threshold = option.threshold === undefined ? defaults.threshold : option.threshold;
  if (typeof threshold !== 'number' || !(threshold >= 0)) {
    throw codedTypeError('ERR_INVALID_ARG_VALUE',
      'The "options.compression.threshold" property must be a non-negative number');
  }
  const level = option.level === undefined ? defaults.level : option.level;
  if (!Number.isInteger(level) || level < -1 || level > 9) {
    throw codedTypeError('ERR_INVALID_ARG_VALUE',
      'The "options.compression.level" property must be an integer from -1 to 9');
  }
  const brotliQuality = option.brotliQuality === undefined ?
    defaults.brotliQuality : option.brotliQuality;
  if (!Number.isInteger(brotliQuality) || brotliQuality < 0 || brotliQuality > 11) {
    throw codedTypeError('ERR_INVALID_ARG_VALUE',
      'The "options.compression.brotliQuality" property must be an integer from 0 to 11');
  }
  const filter = option.filter === undefined ? null : option.filter;
  if (filter !== null && typeof filter !== 'function') {
    throw codedTypeError('ERR_INVALID_ARG_TYPE',
      'The "options.compression.filter" property must be of type function');
  }
  const maxBrotliStreams = option.maxBrotliStreams === undefined ?
    defaults.maxBrotliStreams : option.maxBrotliStreams;
  if (typeof maxBrotliStreams !== 'number' || !(maxBrotliStreams >= 0)) {
    throw codedTypeError('ERR_INVALID_ARG_VALUE',
      'The "options.compression.maxBrotliStreams" property must be a non-negative number');
  }
  const cfg = {
    encodings: encodings.map((e) => CODING[e]),
    threshold, level, brotliQuality, filter, maxBrotliStreams,
    cache: new Map(),  // Accept-Encoding value → coding (0 = identity)
    withoutBrotli: null,  // the same without br: streams over the cap
  };
  if (cfg.encodings.includes(CODING.br)) {
    cfg.withoutBrotli = { ...cfg, encodings: cfg.encodings.filter((c) => c !== CODING.br),
      cache: new Map(), withoutBrotli: null };
  }
  return cfg;
}

// Parses an Accept-Encoding value into [[coding, q], ...] (lower-cased).
function parseAcceptEncoding(value) {
  const out = [];
  for (const part of value.split(',')) {
    const semi = part.indexOf(';');
    const name = (semi === -1 ? part : part.slice(0, semi)).trim().toLowerCase();
    if (name === '') continue;
    let q = 1;
    if (semi !== -1) {
      for (const param of part.slice(semi + 1).split(';')) {
        const eq = param.indexOf('=');
        if (eq === -1) continue;
        if (param.slice(0, eq).trim().toLowerCase() !== 'q') continue;
        const v = Number(param.slice(eq + 1).trim());
        q = Number.isFinite(v) ? Math.min(Math.max(v, 0), 1) : 0;
      }
    }
    out.push([name, q]);
  }
  return out;
}

// The coding to use for `acceptEncoding` among `encodings` (wire values,
// in server preference order): a CODING value, or 0 for identity.
function negotiate(acceptEncoding, encodings) {
  if (acceptEncoding === undefined || acceptEncoding === null) return 0;
  const list = parseAcceptEncoding(String(acceptEncoding));
  if (list.length === 0) return 0;  // "Accept-Encoding:" (empty): identity only
  let star;
  let identity;
  let minQ = 1;
  const q = new Map();
  for (const [name, v] of list) {
    if (name === '*') star = v;
    else if (name === 'identity') identity = v;
    else if (name === 'x-gzip') { if (!q.has('gzip')) q.set('gzip', v); }  // RFC 9110 8.4.1.3
    else if (!q.has(name)) q.set(name, v);
    if (v > 0 && v < minQ) minQ = v;
  }
  let best = 0;
  let bestQ = 0;
  for (const c of encodings) {
    const name = NAMES[c];
    let v = q.has(name) ? q.get(name) : star;
    if (v === undefined || v <= 0) continue;
    if (v > bestQ) { best = c; bestQ = v; }  // strict: earlier (preferred) wins ties
  }
  if (best === 0) return 0;
  // identity not listed: acceptable at the lowest q listed (or refused by *;q=0).
  const idQ = identity !== undefined ? identity : (star !== undefined && star <= 0 ? 0 : minQ);
  return idQ > bestQ ? 0 : best;
}

function cachedNegotiate(cfg, acceptEncoding) {
  if (acceptEncoding === undefined) return 0;
  const key = String(acceptEncoding);
  let c = cfg.cache.get(key);
  if (c === undefined) {
    c = negotiate(key, cfg.encodings);
    if (cfg.cache.size >= 256) cfg.cache.clear();
    cfg.cache.set(key, c);
  }
  return c;
}

function addVary(res) {
  const vary = res.getHeader('vary');
  if (vary === undefined) {
    res._putHeader('Vary', 'Accept-Encoding');
    return;
  }
  const s = Array.isArray(vary) ? vary.join(',') : String(vary);
  if (/(?:^|,)\s*(?:\*|accept-encoding)\s*(?:,|$)/i.test(s)) return;
  res._putHeader('Vary', s + ', Accept-Encoding');
}

function byteLength(body) {
  if (body === undefined || body === null) return 0;
  if (typeof body === 'string') return Buffer.byteLength(body);
  return body.byteLength;
}

// Decides whether `res` is compressed and, if so, sets its headers.
// bodyLength: the whole body's length, or -1 for a streamed body (then a
// user Content-Length, if any, stands for it). Returns the coding (wire
// value) or 0.
function prepare(res, cfg, bodyLength) {
  if (res.compress === false) return 0;
  const req = res[kReq];
  if (req.method === 'HEAD') return 0;
  const status = res.statusCode;
  if (status === 204 || status === 304 || (status >= 100 && status < 200)) return 0;
  // A partial response (206, or any Content-Range) describes byte ranges
  // of the identity body: compressing it would label gzip bytes with
  // offsets into the uncompressed file (nginx's gzip skips 206 too).
  if (status === 206 || res.getHeader('content-range') !== undefined) return 0;
  const ce = res.getHeader('content-encoding');
  if (ce !== undefined && String(ce).trim().toLowerCase() !== 'identity') return 0;
  const cc = res.getHeader('cache-control');
  if (cc !== undefined && /(?:^|,)\s*no-transform\s*(?:,|$)/i.test(String(cc))) return 0;
  if (cfg.filter !== null) {
    if (!cfg.filter(req, res)) return 0;
  } else if (!isCompressible(res.getHeader('content-type'))) {
    return 0;
  }
  addVary(res);
  let len = bodyLength;
  if (len < 0) {
    const cl = res.getHeader('content-length');
    if (cl !== undefined) len = Number(cl);
  }
  if (len >= 0 && len < cfg.threshold) return 0;
  const coding = cachedNegotiate(cfg, req.headers['accept-encoding']);
  if (coding === 0) return 0;
  res._putHeader('Content-Encoding', NAMES[coding]);
  res._dropHeader('content-length');
  return coding;
}

// The head of a streamed body (res.write, flushHeaders) is about to be
// sent: decide, and give the response its transport's native streaming
// compressor (docs/transport.md).
function startStream(res, cfg, conn) {
  // Open br streams are capped (maxBrotliStreams): their encoder state is
  // what a server with many long-lived streams (SSE) runs out of memory
  // on; over the cap, the client's next choice (gzip, or identity).
  if (cfg.withoutBrotli !== null && binding.liveBrotliStreams() >= cfg.maxBrotliStreams) {
    cfg = cfg.withoutBrotli;
  }
  const coding = prepare(res, cfg, -1);
  if (coding !== 0) {
    res._compressor = conn.newCompressor(coding, cfg);
  }
}

// respondWithFile(path, headers, { precompressed: true }): serves the
// sibling path.br or path.gz (br first, then the client's q-values as in
// negotiate) when the client accepts that coding and the sibling exists
// and is not older than path; sets Content-Encoding and Vary (Vary also
// when no sibling fits, since the answer depended on Accept-Encoding).
// Calls back with the path to serve. Works with or without the server's
// compression option.
function precompressed(res, path, cb) {
  const fs = require('fs');
  const req = res[kReq];
  const ae = req && req.headers['accept-encoding'];
  const order = [];
  const left = [CODING.br, CODING.gzip];
  for (;;) {
    const c = negotiate(ae, left);
    if (c === 0) break;
    order.push(c);
    left.splice(left.indexOf(c), 1);
  }
  if (res.getHeader('content-encoding') !== undefined) { cb(path); return; }
  fs.stat(path, (err, st) => {
    if (err || !st.isFile()) { cb(path); return; }  // the normal path reports it
    addVary(res);
    const next = (i) => {
      if (i >= order.length) { cb(path); return; }
      const sibling = path + (order[i] === CODING.br ? '.br' : '.gz');
      fs.stat(sibling, (e, s2) => {
        if (e || !s2.isFile() || s2.mtimeMs < st.mtimeMs) { next(i + 1); return; }
        res._putHeader('Content-Encoding', NAMES[order[i]]);
        cb(sibling);
      });
    };
    next(0);
  });
}

module.exports = {
  precompressed,
  normalize, negotiate, parseAcceptEncoding, isCompressible, prepare,
  startStream, byteLength, CODING, NAMES,
};
