'use strict';

// respond() + end(body) on the stream API, the path sluice sends as one
// native call (a head held while the 'stream' handler runs, then head +
// body + END_STREAM together; or, after a sent head, body + END_STREAM
// in one call). Everything else a stream allows must behave as it does
// without that shortcut, and as node:http2 does: late readers of the
// request body, write after end, pipes, close/destroy after respond, a
// body given later, HEAD, no content-length added. Shared with node:http2
// (SLUICE_TEST_IMPL=node).

const http2 = require('node:http2');
const { Readable } = require('node:stream');
const common = require('../common');
const h2 = require('./h2common');

const { waitFor } = h2;
const { assert } = common;

// The server-side events of a stream, in order, once it closed.
function watch(stream) {
  const events = [];
  const closed = new Promise((resolve) => {
    stream.on('finish', () => events.push('finish'));
    stream.on('error', (e) => events.push(`error ${e.code}`));
    stream.on('close', () => { events.push('close'); resolve(events); });
  });
  return closed;
}

// A request whose response ends in a reset: resolves { headers, rstCode }.
function requestReset(session, headers) {
  return new Promise((resolve) => {
    const req = session.request({ ':path': '/', ...headers });
    let resHeaders;
    req.on('response', (h) => { resHeaders = h; });
    req.on('error', () => {});
    req.resume();
    req.on('close', () => resolve({ headers: resHeaders, rstCode: req.rstCode }));
  });
}

const itSluice = common.isNode ? it.skip : it;

describe('http2 respond() + end(body)', function () {
  afterEach(common.cleanup);

  it('in the handler: head, body and END_STREAM arrive; finish, close; end(cb) called; state as node', async function () {
    let closed;
    let endCb = 0;
    let after;
    const body = Buffer.alloc(1024, 'a');
    const { port } = await h2.startH2((stream) => {
      closed = watch(stream);
      stream.respond({ ':status': 200, 'content-length': body.length, 'x-a': 'b' });
      stream.end(body, () => { endCb++; });
      after = { headersSent: stream.headersSent, writableEnded: stream.writableEnded };
    });
    const s = h2.connect(port);
    const r = await h2.request(s, { ':path': '/' });
    assert.strictEqual(r.headers[':status'], 200);
    assert.strictEqual(r.headers['content-length'], '1024');
    assert.strictEqual(r.headers['x-a'], 'b');
    assert.deepStrictEqual(r.body, body);
    assert.deepStrictEqual(await closed, ['finish', 'close']);
    assert.strictEqual(endCb, 1);
    assert.deepStrictEqual(after, { headersSent: true, writableEnded: true });
  });

  it('no content-length is added when the handler gave none', async function () {
    const { port } = await h2.startH2((stream) => {
      stream.respond({ ':status': 200 });
      stream.end('hello');
    });
    const s = h2.connect(port);
    const r = await h2.request(s);
    assert.strictEqual(r.headers['content-length'], undefined);
    assert.strictEqual(r.body.toString(), 'hello');
  });

  it('the request body is read by a data listener attached after respond + end', async function () {
    let got;
    const { port } = await h2.startH2((stream) => {
      stream.respond({ ':status': 200, 'content-length': 2 });
      stream.end('ok');
      const chunks = [];
      stream.on('data', (d) => chunks.push(d));
      stream.on('end', () => { got = Buffer.concat(chunks).toString(); });
    });
    const s = h2.connect(port);
    const r = await h2.request(s, { ':method': 'POST' }, { body: 'x'.repeat(5000) });
    assert.strictEqual(r.body.toString(), 'ok');
    await waitFor(() => got !== undefined);
    assert.strictEqual(got, 'x'.repeat(5000));
  });

  it('a GET stream touched after respond + end: its readable side has ended, read() gives null', async function () {
    let seen;
    const { port } = await h2.startH2((stream) => {
      stream.respond({ ':status': 200, 'content-length': 1 });
      stream.end('k');
      stream.on('end', () => {
        seen = { readableEnded: stream.readableEnded, read: stream.read() };
      });
      stream.resume();
    });
    const s = h2.connect(port);
    const r = await h2.request(s);
    assert.strictEqual(r.body.toString(), 'k');
    await waitFor(() => seen !== undefined);
    assert.deepStrictEqual(seen, { readableEnded: true, read: null });
  });

  it('write after end fails with ERR_STREAM_WRITE_AFTER_END (callback and error event), the response stands', async function () {
    let closed;
    let writeErr;
    const { port } = await h2.startH2((stream) => {
      closed = watch(stream);
      stream.respond({ ':status': 200, 'content-length': 3 });
      stream.end('abc');
      stream.write('more', (err) => { writeErr = err; });
    });
    const s = h2.connect(port);
    const r = await h2.request(s);
    assert.strictEqual(r.body.toString(), 'abc');
    const events = await closed;
    assert.ok(events.includes('error ERR_STREAM_WRITE_AFTER_END'), events.join());
    assert.strictEqual(writeErr && writeErr.code, 'ERR_STREAM_WRITE_AFTER_END');
  });

  it('a second end(body) after end(body) is reported as node does, the first body stands', async function () {
    let closed;
    const { port } = await h2.startH2((stream) => {
      closed = watch(stream);
      stream.respond({ ':status': 200, 'content-length': 3 });
      stream.end('abc');
      stream.end('def');
    });
    const s = h2.connect(port);
    const r = await h2.request(s);
    assert.strictEqual(r.body.toString(), 'abc');
    const events = await closed;
    assert.ok(events.includes('error ERR_STREAM_WRITE_AFTER_END'), events.join());
  });

  it('respond, write, end(body) in the handler: the body in order', async function () {
    const { port } = await h2.startH2((stream) => {
      stream.respond({ ':status': 200, 'content-length': 6 });
      stream.write('abc');
      stream.end('def');
    });
    const s = h2.connect(port);
    const r = await h2.request(s);
    assert.strictEqual(r.body.toString(), 'abcdef');
  });

  it('a Readable piped into the stream after respond (with content-length) in the handler', async function () {
    const parts = ['one ', 'two ', 'three'];
    const { port } = await h2.startH2((stream) => {
      stream.respond({ ':status': 200, 'content-length': parts.join('').length });
      Readable.from(parts.map((p) => Buffer.from(p))).pipe(stream);
    });
    const s = h2.connect(port);
    const r = await h2.request(s);
    assert.strictEqual(r.body.toString(), 'one two three');
  });

  it('respond in the handler, end(body) later: the head is not held back meanwhile', async function () {
    let release;
    const { port } = await h2.startH2((stream) => {
      stream.respond({ ':status': 201, 'content-length': 4 });
      release = () => stream.end('late');
    });
    const s = h2.connect(port);
    const req = s.request({ ':path': '/' });
    const headers = await new Promise((resolve) => req.on('response', resolve));
    assert.strictEqual(headers[':status'], 201);
    const chunks = [];
    req.on('data', (d) => chunks.push(d));
    const ended = new Promise((resolve) => req.on('end', resolve));
    release();
    await ended;
    assert.strictEqual(Buffer.concat(chunks).toString(), 'late');
  });

  // The stream ends short of its content-length and is reset. What the
  // client reports depends on its nghttp2: from 1.69 (Node 22+) it refuses
  // the short END_STREAM itself (PROTOCOL_ERROR), for node's server as for
  // sluice's; nghttp2 1.61 (Node 20) reports the server's reset, which
  // sluice sends as the stream closes (CANCEL) and node's server later,
  // once the session closes the stream (0). So: as node:http2 in this very
  // process, except that Node 20's 0 is sluice's CANCEL.
  itSluice('respond then close(code) in the handler: the client sees the reset as with node:http2', async function () {
    const handler = (stream) => {
      stream.respond({ ':status': 200, 'content-length': 10 });
      stream.close(http2.constants.NGHTTP2_CANCEL);
    };
    const nodeServer = http2.createServer();
    nodeServer.on('stream', handler);
    const nodePort = await common.listenLocal(nodeServer);
    const ns = http2.connect(`http://127.0.0.1:${nodePort}`);
    const nodeCode = (await requestReset(ns)).rstCode;
    ns.close();
    const { port } = await h2.startH2(handler);
    const s = h2.connect(port);
    const r = await requestReset(s);
    assert.strictEqual(r.rstCode, nodeCode === 0 ? http2.constants.NGHTTP2_CANCEL : nodeCode,
      `node:http2's client saw ${nodeCode}`);
  });

  itSluice('respond then destroy() in the handler: the client sees CANCEL, the stream closes', async function () {
    let closed;
    const { port } = await h2.startH2((stream) => {
      closed = watch(stream);
      stream.respond({ ':status': 200, 'content-length': 10 });
      stream.destroy();
    });
    const s = h2.connect(port);
    const r = await requestReset(s);
    assert.strictEqual(r.rstCode, http2.constants.NGHTTP2_CANCEL);
    assert.deepStrictEqual(await closed, ['close']);
  });

  it('HEAD: respond ends the stream (no body), so end(body) is a write after end, as node', async function () {
    let closed;
    const { port } = await h2.startH2((stream) => {
      closed = watch(stream);
      stream.respond({ ':status': 200, 'content-length': 5 });
      stream.end('hello');
    });
    const s = h2.connect(port);
    const r = await h2.request(s, { ':method': 'HEAD' });
    assert.strictEqual(r.headers[':status'], 200);
    assert.strictEqual(r.headers['content-length'], '5');
    assert.strictEqual(r.body.length, 0);
    const events = await closed;
    assert.ok(events.includes('error ERR_STREAM_WRITE_AFTER_END'), events.join());
  });

  it('a handler that throws after respond: the head still goes out, the error reaches the process', async function () {
    const { port } = await h2.startH2((stream) => {
      stream.respond({ ':status': 200, 'content-length': 2 });
      setImmediate(() => stream.end('ok'));
      throw new Error('boom');
    });
    const errors = [];
    const onUncaught = (e) => errors.push(e.message);
    const listeners = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    process.on('uncaughtException', onUncaught);
    try {
      const s = h2.connect(port);
      const r = await h2.request(s);
      assert.strictEqual(r.body.toString(), 'ok');
    } finally {
      process.removeListener('uncaughtException', onUncaught);
      for (const l of listeners) process.on('uncaughtException', l);
    }
    assert.deepStrictEqual(errors, ['boom']);
  });
});
