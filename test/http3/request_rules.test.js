'use strict';

// One set of request rules for HTTP/2 and HTTP/3 (RFC 9113 8.2-8.5, RFC
// 9114 4.2-4.4; src/core/stream/request_rules.h): the same heads, written
// as raw frames — HPACK literals on an h2c connection, QPACK field
// sections on a QUIC stream of our own client (test/http3/quic_client.js)
// — are refused by both (HTTP/2: RST_STREAM PROTOCOL_ERROR, HTTP/3: the
// stream reset with H3_MESSAGE_ERROR) or served by both, and the handler
// never sees a refused head. One connection per protocol carries every
// case on its own stream. The HTTP/2 half also runs without HTTP/3.
// [sluice-only]: node has no HTTP/3 server, and node:http2 accepts some
// of these (a regular field nghttp2 drops instead of refusing).

const common = require('../common');
const { assert } = common;
const h2 = require('../http2/h2common');
const { h3, startH3Server } = require('./h3common');
const { headersFrame, h3Clients } = require('./quic_client');

const { PREFACE, FRAME, frame, waitFor } = h2;
const END_STREAM = 0x1;
const END_HEADERS = 0x4;
const PROTOCOL_ERROR = 0x1;
const H3_MESSAGE_ERROR = 0x10e;

const BASE = [[':method', 'GET'], [':scheme', 'https'], [':authority', 'localhost'], [':path', '/']];
const without = (name) => BASE.filter(([n]) => n !== name);
const set = (name, value) => BASE.map(([n, v]) => [n, n === name ? value : v]);

// [what, head fields, trailer fields or null, refused?]
const CASES = [
  ['a plain GET', BASE, null, false],
  ['host instead of :authority', [...without(':authority'), ['host', 'localhost']], null, false],
  ['host equal to :authority', [...BASE, ['host', 'localhost']], null, false],
  ['OPTIONS *', [...set(':method', 'OPTIONS').filter(([n]) => n !== ':path'), [':path', '*']], null, false],
  ['te: trailers', [...BASE, ['te', 'trailers']], null, false],
  ['valid trailers', BASE, [['x-sum', '1']], false],
  ['an uppercase field name', [...BASE, ['X-Upper', 'v']], null, true],
  ['a space in a field name', [...BASE, ['a b', 'v']], null, true],
  ['a separator in a field name', [...BASE, ['a(b', 'v']], null, true],
  ['a value with leading space', [...BASE, ['x-a', ' v']], null, true],
  ['a value with a control byte', [...BASE, ['x-a', 'a\u0001b']], null, true],
  ['a value with NUL', [...BASE, ['x-a', 'a\u0000b']], null, true],
  ['connection', [...BASE, ['connection', 'close']], null, true],
  ['keep-alive', [...BASE, ['keep-alive', '5']], null, true],
  ['proxy-connection', [...BASE, ['proxy-connection', 'close']], null, true],
  ['transfer-encoding', [...BASE, ['transfer-encoding', 'chunked']], null, true],
  ['upgrade', [...BASE, ['upgrade', 'websocket']], null, true],
  ['te other than trailers', [...BASE, ['te', 'gzip']], null, true],
  ['a repeated :method', [...BASE, [':method', 'GET']], null, true],
  ['a pseudo-header after a regular field', [...without(':path'), ['x-a', '1'], [':path', '/']], null, true],
  [':status in a request', [...BASE, [':status', '200']], null, true],
  ['an unknown pseudo-header', [...BASE, [':foo', 'x']], null, true],
  [':protocol where extended CONNECT is off', [...BASE, [':protocol', 'websocket']], null, true],
  ['no :method', without(':method'), null, true],
  ['no :scheme', without(':scheme'), null, true],
  ['no :path', without(':path'), null, true],
  ['an empty :path', set(':path', ''), null, true],
  [':path not starting with /', set(':path', 'a'), null, true],
  [':path * for GET', set(':path', '*'), null, true],
  [':method not a token', set(':method', 'G T'), null, true],
  ['userinfo in :authority', set(':authority', 'u@localhost'), null, true],
  ['userinfo in host', [...without(':authority'), ['host', 'u@localhost']], null, true],
  ['a space in :authority', set(':authority', 'local host'), null, true],
  ['neither :authority nor host', without(':authority'), null, true],
  ['host differing from :authority', [...BASE, ['host', 'other']], null, true],
  ['a repeated host', [...without(':authority'), ['host', 'localhost'], ['host', 'localhost']], null, true],
  ['a repeated content-length', [...BASE, ['content-length', '0'], ['content-length', '0']], null, true],
  ['a content-length not digits', [...BASE, ['content-length', 'abc']], null, true],
  ['CONNECT with :path', [[':method', 'CONNECT'], [':authority', 'localhost:443'], [':path', '/']], null, true],
  ['CONNECT without :authority', [[':method', 'CONNECT']], null, true],
  ['a pseudo-header in trailers', BASE, [[':path', '/']], true],
  ['an uppercase trailer name', BASE, [['X-Sum', '1']], true],
  ['connection in trailers', BASE, [['connection', 'close']], true],
];

// What the handler saw: the paths of requests it was given. Each case's
// path carries its index so the HTTP/3 half can tell them apart.
function handler(seen) {
  return (req, res) => {
    seen.add(req.url);
    req.resume();
    req.on('end', () => res.end('ok'));
    req.on('error', () => {});
  };
}

// Tags a head with the case index (?c=N on an http path) so the handler's
// log names the case.
const tag = (fields, i) => fields.map(([n, v]) => [n, n === ':path' && v.startsWith('/') ? `/?c=${i}` : v]);

const hpack = h2.hpackLiterals;

// Every case on its own stream of one h2c connection; resolves, per case,
// 'refused' (RST_STREAM PROTOCOL_ERROR, no response) or 'served' (a
// response HEADERS) or a description of anything else.
async function overHttp2(port) {
  const { sock, frames: received } = await h2.rawConnect(port);
  const out = [PREFACE, frame(FRAME.SETTINGS, 0, 0)];
  CASES.forEach(([, head, trailers], i) => {
    const id = 2 * i + 1;
    const fields = tag(head, i);
    if (trailers === null) {
      out.push(frame(FRAME.HEADERS, END_STREAM | END_HEADERS, id, hpack(fields)));
    } else {
      out.push(frame(FRAME.HEADERS, END_HEADERS, id, hpack(fields)));
      out.push(frame(FRAME.HEADERS, END_STREAM | END_HEADERS, id, hpack(trailers)));
    }
  });
  sock.write(Buffer.concat(out));
  // 'served', 'refused' or another RST_STREAM code; null before either.
  const verdict = (id) => {
    const frames = received().filter((f) => f.streamId === id);
    if (frames.some((f) => f.type === FRAME.HEADERS)) return 'served';
    const rst = frames.find((f) => f.type === FRAME.RST_STREAM);
    if (rst === undefined) return null;
    const code = rst.payload.readUInt32BE(0);
    return code === PROTOCOL_ERROR ? 'refused' : `RST_STREAM ${code}`;
  };
  await waitFor(() => CASES.every((_, i) => verdict(2 * i + 1) !== null), 10000);
  const gone = received().find((f) => f.type === FRAME.GOAWAY);
  assert.strictEqual(gone, undefined, 'no case ends the connection');
  const verdicts = CASES.map((_, i) => verdict(2 * i + 1));
  sock.destroy();
  return verdicts;
}

// The same over HTTP/3: 'refused' is the stream reset with
// H3_MESSAGE_ERROR, 'served' a response.
async function overHttp3(connect, port) {
  const c = await connect(port);
  const results = await common.withTimeout(Promise.all(CASES.map(([, head, trailers], i) => {
    const parts = [headersFrame(tag(head, i).flat())];
    if (trailers !== null) parts.push(headersFrame(trailers.flat()));
    return c.raw(Buffer.concat(parts));
  })), 10000, 'HTTP/3 answers');
  assert.strictEqual(c.closeInfo, null, 'no case ends the connection');
  return results.map((r) => {
    if (r.status > 0) return 'served';
    if (r.reset === H3_MESSAGE_ERROR) return 'refused';
    return JSON.stringify(r);
  });
}

// Every case's expected verdict, and the handler given exactly the
// served ones.
function check(verdicts, seen, proto) {
  const expected = CASES.map(([, , , refused]) => (refused ? 'refused' : 'served'));
  const diff = CASES.map(([what], i) => `${what}: ${verdicts[i]}`).filter((_, i) => verdicts[i] !== expected[i]);
  assert.deepStrictEqual(diff, [], `${proto}: cases answered otherwise`);
  CASES.forEach(([what, head, trailers, refused], i) => {
    const path = tag(head, i).find(([n]) => n === ':path');
    // Only tagged paths name one case ("*" is OPTIONS *'s too).
    const url = path !== undefined && path[1].startsWith('/?c=') ? path[1] : null;
    // A refused head never reaches the handler; refused trailers do (the
    // head was fine), but the request never ends.
    if (refused && trailers === null && url !== null) assert.ok(!seen.has(url), `${proto}: the handler saw ${what}`);
    if (!refused && url !== null) assert.ok(seen.has(url), `${proto}: the handler missed ${what}`);
  });
}

const runH2 = common.isSluice ? describe : describe.skip;
const runH3 = common.isSluice && h3 ? describe : describe.skip;

runH2('request rules: HTTP/2', function () {
  afterEach(() => common.cleanup());

  it('refuses each malformed head and trailer section, serves the rest', async function () {
    const seen = new Set();
    const { port } = await common.startServer({}, handler(seen));
    check(await overHttp2(port), seen, 'HTTP/2');
  });
});

runH3('request rules: HTTP/3 refuses exactly what HTTP/2 refuses', function () {
  const { connect } = h3Clients();

  it('the same cases, the same verdicts', async function () {
    const seen = new Set();
    const { port } = await startH3Server({}, handler(seen));
    const v3 = await overHttp3(connect, port);
    check(v3, seen, 'HTTP/3');
    // HTTP/2 on the same table: the two sets are equal.
    const seen2 = new Set();
    const { port: p2 } = await common.startServer({}, handler(seen2));
    assert.deepStrictEqual(await overHttp2(p2), v3);
  });
});
