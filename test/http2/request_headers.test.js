'use strict';

// The request head as the handler sees it: the 'stream' event's headers
// object and rawHeaders array (and the 'trailers' object) must be
// node:http2's for inputs node's own client will not send — repeated
// single-value fields, set-cookie and cookie crumbs, a name that is an
// array index, an upper-case name. The head is written as raw HPACK
// literals. sluice builds these from the packed head in JS
// (lib/http/headers.js h2HeadersObject); the compat request keeps its
// head packed until req.headers / req.rawHeaders is read (lib/http2/session.js
// H2Head). Shared with node:http2 (SLUICE_TEST_IMPL=node), but the compat
// tests, where sluice's req.headers deliberately differs (host added from
// :authority; the pseudo-headers are there, as node's).

const common = require('../common');
const h2 = require('./h2common');

const { assert } = common;
const { PREFACE, FRAME, frame, waitFor } = h2;

const END_STREAM = 0x1;
const END_HEADERS = 0x4;

const block = h2.hpackLiterals;

const BASE = [[':method', 'GET'], [':scheme', 'http'], [':path', '/h?x=1'], [':authority', 'a.test']];

// Sends a head (and, with `trailers`, an empty DATA-less trailer block) on
// stream 1 of a raw connection; resolves the frames the server sent once
// stream 1 got its response headers or a reset.
async function rawRequest(port, fields, trailers) {
  const { sock, frames: received } = await h2.rawConnect(port);
  const out = [PREFACE, frame(FRAME.SETTINGS, 0, 0)];
  if (trailers === undefined) {
    out.push(frame(FRAME.HEADERS, END_STREAM | END_HEADERS, 1, block(fields)));
  } else {
    out.push(frame(FRAME.HEADERS, END_HEADERS, 1, block(fields)));
    out.push(frame(FRAME.HEADERS, END_STREAM | END_HEADERS, 1, block(trailers)));
  }
  sock.write(Buffer.concat(out));
  const done = () => received().some((f) => f.streamId === 1 &&
    (f.type === FRAME.HEADERS || f.type === FRAME.RST_STREAM));
  await waitFor(done);
  const frames = received();
  sock.destroy();
  return frames;
}

// What a 'stream' handler can observe of headers and rawHeaders.
function observe(headers, rawHeaders) {
  return {
    proto: Object.getPrototypeOf(headers),
    keys: Object.keys(headers),
    entries: Object.keys(headers).map((k) => [k, headers[k]]),
    raw: rawHeaders.slice(),
  };
}

describe('http2 request headers as node:http2 builds them', function () {
  afterEach(common.cleanup);

  it('repeated fields: set-cookie an array, cookie crumbs joined with "; ", single-value fields keep the first, others join with ", "', async function () {
    let seen;
    const { port } = await h2.startH2((s, headers, flags, rawHeaders) => {
      seen = observe(headers, rawHeaders);
      s.respond({ ':status': 204 });
    });
    const fields = [...BASE,
      ['x-dup', 'one'], ['user-agent', 'first'], ['cookie', 'a=1'], ['set-cookie', 's=1'],
      ['x-dup', 'two'], ['user-agent', 'second'], ['cookie', 'b=2'], ['set-cookie', 's=2'],
      ['content-type', 'text/plain'], ['content-type', 'text/html'], ['cookie', 'c=3'],
      ['accept', 'a/b'], ['accept', ''], ['authorization', 'x'], ['authorization', 'y'],
      ['range', 'bytes=0-1'], ['range', 'bytes=2-3'], ['if-none-match', '"a"'], ['if-none-match', '"b"'],
      ['x-empty', ''], ['x-latin', 'caf\u00e9']];
    const frames = await rawRequest(port, fields);
    assert.ok(frames.some((f) => f.type === FRAME.HEADERS && f.streamId === 1));
    assert.strictEqual(seen.proto, null, 'a null-prototype object, as node:http2');
    assert.deepStrictEqual(seen.raw, fields.flat());
    assert.deepStrictEqual(seen.entries, [
      [':method', 'GET'], [':scheme', 'http'], [':path', '/h?x=1'], [':authority', 'a.test'],
      ['x-dup', 'one, two'], ['user-agent', 'first'], ['cookie', 'a=1; b=2; c=3'],
      ['set-cookie', ['s=1', 's=2']], ['content-type', 'text/plain'], ['accept', 'a/b, '],
      ['authorization', 'x'], ['range', 'bytes=0-1'], ['if-none-match', '"a"'],
      ['x-empty', ''], ['x-latin', 'caf\u00e9'],
    ]);
  });

  it('enumeration order: a field named like an array index comes first, the rest in arrival order', async function () {
    let seen;
    const { port } = await h2.startH2((s, headers, flags, rawHeaders) => {
      seen = observe(headers, rawHeaders);
      s.respond({ ':status': 204 });
    });
    await rawRequest(port, [...BASE, ['x-b', '1'], ['7', 'seven'], ['constructor', 'c'], ['__proto__', 'p'], ['x-a', '2']]);
    assert.deepStrictEqual(seen.keys,
      ['7', ':method', ':scheme', ':path', ':authority', 'x-b', 'constructor', '__proto__', 'x-a']);
    assert.strictEqual(seen.entries.find(([k]) => k === '__proto__')[1], 'p');
    assert.strictEqual(seen.entries.find(([k]) => k === 'constructor')[1], 'c');
  });

  it('an upper-case field name: the stream is reset (PROTOCOL_ERROR), the handler never sees it', async function () {
    let called = false;
    const { port } = await h2.startH2((s) => {
      called = true;
      s.respond({ ':status': 204 });
    });
    const frames = await rawRequest(port, [...BASE, ['X-Upper', 'v']]);
    const rst = frames.find((f) => f.type === FRAME.RST_STREAM && f.streamId === 1);
    assert.ok(rst, 'RST_STREAM on stream 1');
    assert.strictEqual(rst.payload.readUInt32BE(0), 1);
    assert.strictEqual(called, false);
  });

  it("request trailers: a null-prototype object with node's joining rules", async function () {
    let trailers;
    const { port } = await h2.startH2((s) => {
      s.on('trailers', (t) => { trailers = t; });
      s.respond({ ':status': 200 });
      s.end();
      s.resume();
    });
    await rawRequest(port, BASE, [['x-t', '1'], ['x-t', '2'], ['etag', 'e1'], ['etag', 'e2']]);
    await waitFor(() => trailers !== undefined);
    assert.strictEqual(Object.getPrototypeOf(trailers), null);
    assert.deepStrictEqual(Object.entries(trailers), [['x-t', '1, 2'], ['etag', 'e1']]);
  });

  // Compat: method and url are read from the pseudo-headers at once; the
  // rest of the head stays packed until req.headers / req.rawHeaders.
  common.sluiceOnly('compat: req.method, req.url, and the lazily built req.rawHeaders / req.headers (pseudo-headers, host from :authority)', async function () {
    const seen = [];
    const { port } = await common.startServer((req, res) => {
      const before = { method: req.method, url: req.url };
      seen.push({ ...before, raw: req.rawHeaders.slice(), headers: { ...req.headers } });
      res.end();
    });
    await rawRequest(port, [[':method', 'DELETE'], [':scheme', 'http'], [':path', '/p?q'], [':authority', 'auth.test'],
      ['x-dup', '1'], ['cookie', 'a=1'], ['x-dup', '2'], ['cookie', 'b=2'], ['user-agent', 'u1'], ['user-agent', 'u2']]);
    // A host beside :authority must equal it (RFC 9113 8.3.1; a differing
    // one is refused, test/http3/request_rules.test.js): the head's own
    // host field is kept, none is added.
    await rawRequest(port, [...BASE, ['host', 'a.test'], ['x-a', 'host']]);
    await rawRequest(port, [[':method', 'GET'], [':scheme', 'http'], [':path', '/none'], ['host', 'only.test']]);
    assert.deepStrictEqual(seen[0], {
      method: 'DELETE',
      url: '/p?q',
      raw: [':method', 'DELETE', ':scheme', 'http', ':path', '/p?q', ':authority', 'auth.test',
        'x-dup', '1', 'cookie', 'a=1', 'x-dup', '2', 'cookie', 'b=2', 'user-agent', 'u1', 'user-agent', 'u2',
        'host', 'auth.test'],
      headers: { ':method': 'DELETE', ':scheme': 'http', ':path': '/p?q', ':authority': 'auth.test',
        'x-dup': '1, 2', cookie: 'a=1; b=2', 'user-agent': 'u1', host: 'auth.test' },
    });
    assert.deepStrictEqual(seen[1].raw, [...BASE.flat(), 'host', 'a.test', 'x-a', 'host']);
    assert.strictEqual(seen[1].headers.host, 'a.test');
    assert.deepStrictEqual(seen[2], { method: 'GET', url: '/none',
      raw: [':method', 'GET', ':scheme', 'http', ':path', '/none', 'host', 'only.test'],
      headers: { ':method': 'GET', ':scheme': 'http', ':path': '/none', host: 'only.test' } });
  });

  common.sluiceOnly('compat: req.headers read first (without req.rawHeaders) and a handler that reads neither', async function () {
    const seen = [];
    const { port } = await common.startServer((req, res) => {
      if (req.url === '/h') seen.push(req.headers);
      else seen.push(null);
      res.end(req.url);
    });
    await rawRequest(port, [[':method', 'GET'], [':scheme', 'http'], [':path', '/h'], [':authority', 'x.test'], ['x-k', 'v']]);
    await rawRequest(port, [[':method', 'GET'], [':scheme', 'http'], [':path', '/n'], [':authority', 'x.test']]);
    assert.deepStrictEqual({ ...seen[0] },
      { ':method': 'GET', ':scheme': 'http', ':path': '/h', ':authority': 'x.test', 'x-k': 'v', host: 'x.test' });
    assert.strictEqual(seen[1], null);
  });
});
