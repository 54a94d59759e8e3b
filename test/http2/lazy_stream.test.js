'use strict';

// sluice builds a stream's Duplex state only when something touches it
// (lib/http2/stream.js LazyDuplex): a stream answered with respond() +
// end(body) and never read, piped or listened to gets none. Whatever
// touches it later — a property read, a listener, a method — must find
// the stream node:http2 would show at that moment. Shared with
// node:http2 (SLUICE_TEST_IMPL=node).

const http2 = require('node:http2');
const stream = require('node:stream');
const common = require('../common');
const h2 = require('./h2common');

const { waitFor } = h2;
const { assert } = common;

// The Readable/Writable view of a stream, as the assertions compare it.
function streamView(s) {
  return {
    destroyed: s.destroyed,
    closed: s.closed,
    writable: s.writable,
    writableEnded: s.writableEnded,
    writableFinished: s.writableFinished,
    aborted: s.aborted,
    headersSent: s.headersSent,
  };
}

describe('http2 stream built when touched', function () {
  afterEach(common.cleanup);

  it('an untouched stream is a Duplex: instanceof, and its session, id and state', async function () {
    let seen;
    const { port } = await h2.startH2((s) => {
      s.respond({ ':status': 200, 'content-length': 2 });
      s.end('ok');
      seen = {
        duplex: s instanceof stream.Duplex,
        readable: s instanceof stream.Readable,
        id: s.id,
        session: typeof s.session.close === 'function',
        state: typeof s.state.weight === 'number',
      };
    });
    const r = await h2.request(h2.connect(port));
    assert.strictEqual(r.body.toString(), 'ok');
    assert.deepStrictEqual(seen, { duplex: true, readable: true, id: 1, session: true, state: true });
  });

  it('respond + end(body), then looked at once closed: destroyed and finished, as node', async function () {
    let st;
    const { port } = await h2.startH2((s) => {
      st = s;
      s.respond({ ':status': 200, 'content-length': 4 });
      s.end('done');
    });
    const r = await h2.request(h2.connect(port));
    assert.strictEqual(r.body.toString(), 'done');
    await waitFor(() => st.closed);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepStrictEqual(streamView(st), {
      destroyed: true,
      closed: true,
      writable: false,
      writableEnded: true,
      writableFinished: true,
      aborted: false,
      headersSent: true,
    });
    // Its 'close' was long ago: a listener added now is not called.
    let late = 0;
    st.on('close', () => late++);
    st.on('finish', () => late++);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.strictEqual(late, 0);
  });

  it('listeners added right after respond + end(body) get finish, then close', async function () {
    let events;
    let done;
    const closed = new Promise((resolve) => { done = resolve; });
    const { port } = await h2.startH2((s) => {
      s.respond({ ':status': 200, 'content-length': 1 });
      s.end('x');
      events = [];
      s.on('finish', () => events.push('finish'));
      s.on('close', () => { events.push('close'); done(); });
    });
    const r = await h2.request(h2.connect(port));
    assert.strictEqual(r.body.toString(), 'x');
    await closed;
    assert.deepStrictEqual(events, ['finish', 'close']);
  });

  it('respond, then end() with no body: end() again is harmless; end(cb) after is called', async function () {
    let cbErr = 'not called';
    const { port } = await h2.startH2((s) => {
      s.respond({ ':status': 200 });
      s.end();
      s.end();
      s.end(() => { cbErr = null; });
    });
    const r = await h2.request(h2.connect(port));
    assert.strictEqual(r.headers[':status'], 200);
    assert.strictEqual(r.body.length, 0);
    await waitFor(() => cbErr !== 'not called');
    assert.strictEqual(cbErr, null);
  });

  it('a stream the client resets before the answer, never touched: aborted and destroyed afterwards, no error', async function () {
    let st;
    const { port } = await h2.startH2((s) => { st = s; });
    const session = h2.connect(port);
    const req = session.request({ ':path': '/' });
    req.on('error', () => {});
    await waitFor(() => st !== undefined);
    req.close(http2.constants.NGHTTP2_CANCEL);
    await waitFor(() => st.closed);
    await new Promise((resolve) => setImmediate(resolve));
    assert.strictEqual(st.aborted, true);
    assert.strictEqual(st.destroyed, true);
    assert.strictEqual(st.rstCode, http2.constants.NGHTTP2_CANCEL);
  });

  it('a close listener on an otherwise untouched stream sees the client reset (aborted, then close)', async function () {
    const events = [];
    let done;
    const closed = new Promise((resolve) => { done = resolve; });
    let st;
    const { port } = await h2.startH2((s) => {
      st = s;
      s.on('aborted', () => events.push('aborted'));
      s.on('close', () => { events.push('close'); done(); });
    });
    const session = h2.connect(port);
    const req = session.request({ ':path': '/' });
    req.on('error', () => {});
    await waitFor(() => st !== undefined);
    req.close(http2.constants.NGHTTP2_CANCEL);
    await closed;
    assert.deepStrictEqual(events, ['aborted', 'close']);
  });

  it('a POST answered with respond + end(body) first, its body read by for await afterwards', async function () {
    let got;
    const { port } = await h2.startH2(async (s) => {
      s.respond({ ':status': 200, 'content-length': 2 });
      s.end('ok');
      let n = 0;
      for await (const c of s) n += c.length;
      got = n;
    });
    const r = await h2.request(h2.connect(port), { ':method': 'POST' }, { body: 'y'.repeat(20000) });
    assert.strictEqual(r.body.toString(), 'ok');
    await waitFor(() => got !== undefined);
    assert.strictEqual(got, 20000);
  });

  // The request head reaches JS packed in one string and is split there
  // (src/binding/js_http2.h PackedFields): the 'stream' event's headers
  // and rawHeaders must be node's, empty and latin1 values included.
  it("the 'stream' event's headers and rawHeaders: duplicates, empty and latin1 values, as node", async function () {
    let seen;
    const { port } = await h2.startH2((s, headers, flags, rawHeaders) => {
      seen = { headers: { ...headers }, raw: rawHeaders.filter((v, i) => !rawHeaders[i - (i % 2)].startsWith(':')) };
      s.respond({ ':status': 204 });
    });
    const r = await h2.request(h2.connect(port), {
      'x-dup': ['one', 'two'],
      'x-empty': '',
      'x-latin': 'caf\u00e9',
      cookie: ['a=1', 'b=2'],
    });
    assert.strictEqual(r.headers[':status'], 204);
    assert.deepStrictEqual(seen.raw, [
      'x-dup', 'one', 'x-dup', 'two', 'x-empty', '', 'x-latin', 'caf\u00e9', 'cookie', 'a=1', 'cookie', 'b=2',
    ]);
    assert.strictEqual(seen.headers['x-dup'], 'one, two');
    assert.strictEqual(seen.headers['x-empty'], '');
    assert.strictEqual(seen.headers['x-latin'], 'caf\u00e9');
    assert.strictEqual(seen.headers.cookie, 'a=1; b=2');
  });
});
