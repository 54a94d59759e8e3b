'use strict';

// node:http2's session limits and session-level errors, as node enforces
// them: maxHeaderListPairs and settings.maxHeaderListSize (RST_STREAM
// ENHANCE_YOUR_CALM, the handler never called), maxSessionInvalidFrames
// (the connection closed), maxSettings, maxOutstandingSettings,
// session.destroy(code), a trailer block too large to send
// ('frameError' FRAME_SIZE_ERROR, not a hang), respondWithFile with 204,
// headers[http2.sensitiveHeaders]. Shared with node:http2
// (SLUICE_TEST_IMPL=node).

const http2 = require('node:http2');
const path = require('node:path');
const net = require('node:net');
const common = require('../common');
const h2 = require('./h2common');

const { assert } = common;
const {
  NGHTTP2_ENHANCE_YOUR_CALM, NGHTTP2_REFUSED_STREAM, NGHTTP2_FRAME_SIZE_ERROR,
} = http2.constants;

// A server with `options` and no listener; resolves { server, port }.
async function start(options) {
  if (common.isNode) {
    const server = common.trackServer(http2.createServer(options));
    server.on('session', (s) => common.trackSocket(s));
    await common.listenLocal(server);
    return { server, port: server.address().port };
  }
  return common.startServer(options);
}

// The client stream's close: { rstCode, error }.
function closed(req) {
  return common.withTimeout(new Promise((resolve) => {
    let error;
    req.on('error', (e) => { error = e; });
    req.on('close', () => resolve({ rstCode: req.rstCode, error }));
    req.resume();
  }), 5000, 'the stream to close');
}

describe('http2 session limits (as node:http2)', function () {
  afterEach(common.cleanup);

  it('maxHeaderListPairs: one field past it resets ENHANCE_YOUR_CALM; the handler is not called', async function () {
    const { server, port } = await start({ maxHeaderListPairs: 5 });
    let handled = 0;
    server.on('stream', (stream) => {
      handled++;
      stream.respond();
      stream.end();
    });
    const client = h2.connect(port);
    // 4 pseudo-headers + 1: at the limit.
    const ok = await h2.request(client, { a: '1' });
    assert.strictEqual(ok.headers[':status'], 200);
    const r = await closed(client.request({ a: '1', b: '2' }));
    assert.strictEqual(r.rstCode, NGHTTP2_ENHANCE_YOUR_CALM);
    assert.strictEqual(r.error.code, 'ERR_HTTP2_STREAM_ERROR');
    assert.strictEqual(handled, 1);
  });

  it('settings.maxHeaderListSize is advertised; a longer list resets ENHANCE_YOUR_CALM', async function () {
    const { server, port } = await start({ settings: { maxHeaderListSize: 200 } });
    server.on('stream', () => assert.fail('the handler got the stream'));
    const client = h2.connect(port);
    const [settings] = await common.once(client, 'remoteSettings', 5000);
    assert.strictEqual(settings.maxHeaderListSize, 200);
    const r = await closed(client.request({ foo: 'a'.repeat(1000) }));
    assert.strictEqual(r.rstCode, NGHTTP2_ENHANCE_YOUR_CALM);
  });

  it('maxSessionInvalidFrames: past it the connection is destroyed (a half-open client is not waited for)', async function () {
    const { port } = await start({ maxSessionInvalidFrames: 5 });
    // allowHalfOpen: the client never ends its side, so only the server's
    // own close (not a graceful end waiting for the client's) ends it.
    const sock = common.trackSocket(net.connect({ port, host: '127.0.0.1', allowHalfOpen: true }));
    await common.once(sock, 'connect', 5000);
    sock.resume();
    // After the server's FIN, writes go on (as node's own test does): to
    // a destroyed connection they fail (ECONNRESET / EPIPE); one that
    // lingers reading would take them.
    let timer;
    sock.on('end', () => {
      timer = setInterval(() => sock.write(h2.frame(6, 0, 0, Buffer.alloc(8))), 20);
    });
    const end = common.withTimeout(new Promise((resolve) => sock.once('error', resolve)), 2000,
      'the server to destroy the connection');
    end.finally(() => clearInterval(timer)).catch(() => {});
    sock.write(h2.PREFACE);
    sock.write(h2.frame(4, 0, 0));
    sock.write(h2.frame(4, 1, 0));
    // HEADERS with :status (0x88) in a request: a malformed request each.
    const bad = [];
    for (let id = 1; id < 2 * 20; id += 2) bad.push(h2.frame(1, 0x5, id, Buffer.from([0x88])));
    sock.write(Buffer.concat(bad));
    await end;
  });

  it('maxSettings: a SETTINGS frame with more entries is a connection error', async function () {
    const { server, port } = await start({ maxSettings: 1 });
    server.on('stream', () => assert.fail('the handler got a stream'));
    // 'session' all the same: the connection started.
    const session = common.once(server, 'session', 5000);
    const client = http2.connect(`http://127.0.0.1:${port}`, { settings: { headerTableSize: 1000, enablePush: false } });
    common.trackSocket(client);
    const [err] = await common.once(client, 'error', 5000);
    assert.ok(err.code === 'ERR_HTTP2_SESSION_ERROR' || err.code === 'ECONNRESET', err.code);
    await session;
  });

  it('maxOutstandingSettings: settings() past it destroys the session (ERR_HTTP2_MAX_PENDING_SETTINGS_ACK)', async function () {
    const { server, port } = await start({ maxOutstandingSettings: 2 });
    const got = new Promise((resolve) => {
      server.once('session', (session) => {
        session.on('error', resolve);
        // As node's: no argument sends an empty SETTINGS.
        session.settings();
        assert.strictEqual(session.pendingSettingsAck, true);
        session.settings({ enablePush: false });
      });
    });
    const client = h2.connect(port);
    const err = await common.withTimeout(got, 5000, "the session's error");
    assert.strictEqual(err.code, 'ERR_HTTP2_MAX_PENDING_SETTINGS_ACK');
    await common.once(client, 'close', 5000);
  });

  it('session.destroy(code): GOAWAY with the code; its streams error with rstCode the code, leave the session, end', async function () {
    const { server, port } = await start();
    const serverSide = new Promise((resolve) => {
      server.on('stream', (stream) => {
        const session = stream.session;
        const out = {};
        session.on('error', (e) => { out.sessionErr = e; });
        stream.on('error', (e) => {
          if (out.e !== undefined) return;
          out.e = e;
          out.rstCode = stream.rstCode;
          out.destroyed = session.destroyed;
        });
        session.on('close', () => resolve(out));
        session.destroy(NGHTTP2_REFUSED_STREAM);
        assert.strictEqual(stream.session, undefined);
        assert.deepStrictEqual(stream.state, {});
        assert.throws(() => stream.priority(), { code: 'ERR_HTTP2_INVALID_STREAM' });
        assert.throws(() => stream.respond(), { code: 'ERR_HTTP2_INVALID_STREAM' });
        // Push is refused as node's server refuses it to a client that
        // disabled it.
        assert.throws(() => stream.pushStream({}, () => {}), { code: 'ERR_HTTP2_PUSH_DISABLED' });
        stream.write('data', (err) => { out.writeErr = err.code; });
      });
    });
    const client = h2.connect(port);
    const goaway = common.once(client, 'goaway', 5000);
    const r = await closed(client.request());
    assert.strictEqual(r.rstCode, NGHTTP2_REFUSED_STREAM);
    const [code] = await goaway;
    assert.strictEqual(code, NGHTTP2_REFUSED_STREAM);
    const s = await common.withTimeout(serverSide, 5000, "the server stream's error");
    assert.match(s.e.message, /Session closed with error code 7/);
    assert.strictEqual(s.rstCode, NGHTTP2_REFUSED_STREAM);
    // (node: ERR_STREAM_DESTROYED here, after a destroy without a code
    // ERR_STREAM_WRITE_AFTER_END: node's test-http2-server-stream-session-destroy.)
    assert.ok(/^ERR_STREAM_(DESTROYED|WRITE_AFTER_END)$/.test(s.writeErr), s.writeErr);
    assert.match(s.sessionErr.message, /Session closed with error code 7/);
    assert.strictEqual(s.destroyed, true);
  });

  it("a trailer block too large to send: 'frameError' FRAME_SIZE_ERROR and a reset, not a hang", async function () {
    const { server, port } = await start();
    const serverSide = new Promise((resolve) => {
      server.on('stream', (stream) => {
        const seen = {};
        stream.respond(undefined, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'test-trailer': 'X'.repeat(64 * 1024) }));
        stream.on('frameError', (type, code, id) => { seen.frameError = { type, code, id }; });
        stream.on('error', () => {});
        stream.on('close', () => resolve(seen));
        stream.end();
      });
    });
    const client = h2.connect(port);
    await closed(client.request());
    const seen = await common.withTimeout(serverSide, 5000, 'the server stream to close');
    assert.deepStrictEqual(seen.frameError, { type: 1, code: NGHTTP2_FRAME_SIZE_ERROR, id: 1 });
  });

  it('respond() + write() + destroy() in one turn: the head and the data go out before the reset', async function () {
    const { server, port } = await start();
    server.on('stream', (stream) => {
      stream.respond({ ':status': 200 });
      stream.write('foo');
      stream.destroy();
    });
    const client = h2.connect(port);
    const req = client.request();
    let head;
    let body = '';
    req.on('response', (h) => { head = h; });
    req.setEncoding('utf8');
    req.on('data', (d) => { body += d; });
    const r = await closed(req);
    assert.strictEqual(head && head[':status'], 200);
    assert.strictEqual(body, 'foo');
    // (node ends the stream first, rstCode 0; sluice resets it, CANCEL.)
    assert.ok(r.rstCode === 0 || r.rstCode === http2.constants.NGHTTP2_CANCEL, String(r.rstCode));
  });

  it("net.Server's allowHalfOpen option: server.allowHalfOpen and the accepted socket's", async function () {
    const { server, port } = await start({ allowHalfOpen: true });
    assert.strictEqual(server.allowHalfOpen, true);
    const conn = common.once(server, 'connection', 5000);
    h2.connect(port);
    const [socket] = await conn;
    assert.strictEqual(socket.allowHalfOpen, true);
  });

  it('respondWithFile with :status 204 throws ERR_HTTP2_PAYLOAD_FORBIDDEN; headers carry sensitiveHeaders', async function () {
    const { server, port } = await start();
    server.on('stream', (stream, headers) => {
      assert.deepStrictEqual(headers[http2.sensitiveHeaders], []);
      assert.throws(() => stream.respondWithFile(path.join(__dirname, 'h2common.js'), { ':status': 204 }), {
        code: 'ERR_HTTP2_PAYLOAD_FORBIDDEN',
        message: 'Responses with 204 status must not have a payload',
      });
      stream.respond({ ':status': 204 });
      stream.end();
    });
    const client = h2.connect(port);
    const r = await h2.request(client);
    assert.strictEqual(r.headers[':status'], 204);
  });
});
