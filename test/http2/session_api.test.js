'use strict';

// The server's session object as node:http2's ServerHttp2Session: 'session'
// when the connection starts (also with no stream), ping(), settings()
// with its ack, 'remoteSettings', localSettings / remoteSettings, state,
// setLocalWindowSize(), altsvc(), goaway() with opaque data, and a
// session's own 'stream' listener. Shared with node:http2
// (SLUICE_TEST_IMPL=node).

const http2 = require('node:http2');
const common = require('../common');
const h2 = require('./h2common');
const { startSecure, fixtures } = require('../tls/tls_common');

const { assert } = common;

// A server with no 'stream' / 'request' listener; resolves { server, port }.
async function startBare() {
  if (common.isNode) {
    const server = common.trackServer(http2.createServer());
    server.on('session', (s) => common.trackSocket(s));
    await common.listenLocal(server);
    return { server, port: server.address().port };
  }
  return common.startServer();
}

describe('http2 server session API', function () {
  afterEach(common.cleanup);

  it("'session' is emitted when a connection starts, before any stream", async function () {
    const { server, port } = await startBare();
    const session = common.once(server, 'session', 5000);
    const client = h2.connect(port);
    await common.once(client, 'connect', 5000);
    const [s] = await session;
    assert.strictEqual(typeof s.ping, 'function');
  });

  it('ping(payload, cb): the client acks, cb(null, duration, payload); ping() without payload', async function () {
    const { server, port } = await startBare();
    const got = new Promise((resolve, reject) => {
      server.on('session', (s) => {
        const payload = Buffer.from('12345678');
        assert.throws(() => s.ping(Buffer.alloc(3), () => {}), { code: 'ERR_HTTP2_PING_LENGTH' });
        assert.strictEqual(s.ping(payload, (err, duration, ack) => {
          if (err) return reject(err);
          s.ping((err2, d2, ack2) => resolve({ duration, ack, err2, ack2 }));
        }), true);
      });
    });
    h2.connect(port);
    const r = await common.withTimeout(got, 5000, 'the ping acks');
    assert.strictEqual(typeof r.duration, 'number');
    assert.strictEqual(r.ack.toString(), '12345678');
    assert.strictEqual(r.err2, null);
    assert.strictEqual(r.ack2.length, 8);
  });

  it("settings(): the client's ack calls back with localSettings; 'remoteSettings' has the client's", async function () {
    const { server, port } = await startBare();
    const got = new Promise((resolve) => {
      server.on('session', (s) => {
        const out = {};
        s.on('remoteSettings', (r) => { out.remote = r; });
        assert.throws(() => s.settings({ maxFrameSize: 1 }), { code: 'ERR_HTTP2_INVALID_SETTING_VALUE' });
        s.settings({ maxConcurrentStreams: 7, initialWindowSize: 70000 }, (err, settings) => {
          out.err = err;
          out.settings = settings;
          out.local = s.localSettings;
          out.pending = s.pendingSettingsAck;
          resolve(out);
        });
      });
    });
    h2.connect(port, { settings: { initialWindowSize: 12345 } });
    const r = await common.withTimeout(got, 5000, 'the SETTINGS ack');
    assert.strictEqual(r.err, null);
    assert.strictEqual(r.settings.maxConcurrentStreams, 7);
    assert.strictEqual(r.local.initialWindowSize, 70000);
    assert.strictEqual(r.pending, false);
    assert.strictEqual(r.remote.initialWindowSize, 12345);
    assert.strictEqual(typeof r.remote.enablePush, 'boolean');
  });

  it('state and setLocalWindowSize(): the connection window grows as asked', async function () {
    const { port } = await h2.startH2((stream) => {
      const s = stream.session;
      s.setLocalWindowSize(2 ** 25);
      const st = s.state;
      stream.respond({ ':status': 200 });
      stream.end(JSON.stringify({ st, streamState: stream.state }));
    });
    const r = await h2.request(h2.connect(port));
    const { st, streamState } = JSON.parse(r.body);
    assert.strictEqual(st.localWindowSize, 2 ** 25);
    assert.strictEqual(st.effectiveLocalWindowSize, 2 ** 25);
    assert.strictEqual(st.lastProcStreamID, 1);
    for (const k of ['effectiveRecvDataLength', 'nextStreamID', 'remoteWindowSize', 'outboundQueueSize',
      'deflateDynamicTableSize', 'inflateDynamicTableSize']) {
      assert.strictEqual(typeof st[k], 'number', k);
    }
    assert.strictEqual(typeof streamState.localWindowSize, 'number');
  });

  it("altsvc(): the client's 'altsvc' event; bad arguments are node's errors", async function () {
    const { server, port } = await startBare();
    server.on('session', (s) => {
      assert.throws(() => s.altsvc('h2=":8000"', 0), { code: 'ERR_OUT_OF_RANGE' });
      assert.throws(() => s.altsvc('\u0001', 'https://a.example'), { code: 'ERR_INVALID_CHAR' });
      assert.throws(() => s.altsvc('h2=":8000"', { origin: 'null' }), { code: 'ERR_HTTP2_ALTSVC_INVALID_ORIGIN' });
      s.altsvc('h2=":8000"', 'https://a.example:8111/x');
    });
    const client = h2.connect(port);
    const [alt, origin, stream] = await common.once(client, 'altsvc', 5000);
    assert.deepStrictEqual([alt, origin, stream], ['h2=":8000"', 'https://a.example:8111', 0]);
  });

  it('goaway(0, 0, opaqueData): the client gets the data; the stream in flight finishes', async function () {
    const data = Buffer.from([1, 2, 3, 4, 5]);
    const { port } = await h2.startH2((stream) => {
      stream.session.goaway(0, 0, data);
      stream.respond({ ':status': 200 });
      stream.end('ok');
    });
    const client = h2.connect(port);
    const goaway = common.once(client, 'goaway', 5000);
    const r = await h2.request(client);
    assert.strictEqual(r.body.toString(), 'ok');
    const [code, lastStreamID, opaque] = await goaway;
    assert.deepStrictEqual([code, lastStreamID, opaque], [0, 1, data]);
  });

  it("a session's own 'stream' listener gets the streams (no server listener)", async function () {
    const { server, port } = await startBare();
    server.on('session', (s) => {
      s.on('stream', (stream, headers) => {
        stream.respond({ ':status': 200 });
        stream.end(`via session ${headers[':path']}`);
      });
    });
    const r = await h2.request(h2.connect(port), { ':path': '/x' });
    assert.strictEqual(r.body.toString(), 'via session /x');
  });

  it("origin() and the origins option: the client's 'origin' events and originSet (TLS)", async function () {
    const { server, url } = await startSecure({ origins: ['https://a.example/x'] });
    server.on('session', (s) => {
      common.trackSocket(s);
      assert.throws(() => s.origin('abc:'), { code: 'ERR_HTTP2_INVALID_ORIGIN' });
      s.origin('https://b.example/y', new URL('https://c.example'));
    });
    const client = http2.connect(url, { ca: fixtures().ca });
    common.trackSocket(client);
    const seen = [];
    await common.withTimeout(new Promise((resolve) => {
      client.on('origin', (origins) => {
        seen.push(...origins);
        if (seen.length === 3) resolve();
      });
    }), 5000, "the client's 'origin' events");
    assert.deepStrictEqual(seen, ['https://a.example', 'https://b.example', 'https://c.example']);
    assert.ok(client.originSet.includes('https://c.example'), client.originSet.join());
  });

  it("server.setTimeout(): an idle session times out, 'timeout' gets the session", async function () {
    const { server, port } = await startBare();
    server.setTimeout(50);
    const timedOut = common.once(server, 'timeout', 5000);
    const client = h2.connect(port);
    const closed = common.once(client, 'close', 5000);
    const [session] = await timedOut;
    assert.strictEqual(typeof session.ping, 'function');
    session.close();
    await closed;
  });
});
