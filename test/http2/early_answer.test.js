'use strict';

// A request body still arriving when the response has ended: the table
// over the stream API and the compat API, reading before the response
// ends, right after it, or long after it, with bodies under and over the
// 65,535-byte stream window, sent with the request or only once the
// response arrived. Every row is what node:http2 does; plus stream.end()
// without respond(), stream.state, readableEnded after 'close' and
// respond() + close(code). Shared with node:http2 (SLUICE_TEST_IMPL=node).

const http2 = require('node:http2');
const common = require('../common');
const h2 = require('./h2common');

const { assert } = common;

// A server on `api` ('stream' or 'compat') calling handler(readable,
// respondAndEnd) per request.
async function start(api, handler) {
  if (api === 'stream') {
    return h2.startH2((stream) => handler(stream, () => {
      stream.respond({ ':status': 200 });
      stream.end('ok');
    }));
  }
  if (common.isNode) {
    const server = common.trackServer(http2.createServer((req, res) => handler(req, () => res.end('ok'))));
    server.on('session', (s) => common.trackSocket(s));
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    return { server, port: server.address().port };
  }
  return common.startServer((req, res) => handler(req, () => res.end('ok')));
}

// What the handler saw of the request body.
function reader(r, seen) {
  r.on('data', (d) => { seen.bytes += d.length; });
  r.on('end', () => seen.events.push('end'));
  r.on('aborted', () => seen.events.push('aborted'));
  r.on('error', (e) => seen.events.push(`error ${e.code}`));
  r.on('close', () => {
    seen.events.push('close');
    seen.readableEnded = r.readableEnded;
  });
}

// One POST of `size` bytes; client 'eager': the body follows the head at
// once, 'late': the body is sent once the response arrived.
async function row(api, when, size, client) {
  const seen = { bytes: 0, events: [], readableEnded: undefined };
  let readLater = null;
  const { port } = await start(api, (r, answer) => {
    if (when === 'before') {
      reader(r, seen);
      r.on('end', answer);
      return;
    }
    answer();
    if (when === 'after') reader(r, seen);
    else readLater = r;
  });
  const s = h2.connect(port);
  const req = s.request({ ':method': 'POST', ':path': '/' });
  const got = { status: 0, body: '', error: null };
  req.on('response', (h) => {
    got.status = h[':status'];
    if (client === 'late') setTimeout(() => req.end(Buffer.alloc(size, 'x')), 50);
  });
  req.setEncoding('latin1');
  req.on('data', (d) => { got.body += d; });
  req.on('error', (e) => { got.error = e.code; });
  if (client === 'eager') req.end(Buffer.alloc(size, 'x'));
  await common.once(req, 'close', 10000, 'client stream close');
  got.rstCode = req.rstCode;
  if (when === 'later') {
    // Long after the response: node closed the stream (RST_STREAM
    // NO_ERROR once nobody had read); nothing is delivered.
    await common.sleep(200);
    reader(readLater, seen);
    await common.sleep(100);
  } else {
    await h2.waitFor(() => seen.events.includes('close'), 10000);
  }
  return { seen, got };
}

describe('http2: a request body still arriving when the response has ended', function () {
  afterEach(common.cleanup);

  for (const api of ['stream', 'compat']) {
    for (const when of ['before', 'after']) {
      for (const size of [1000, 70000]) {
        for (const client of when === 'before' ? ['eager'] : ['eager', 'late']) {
          it(`${api} API, read ${when} the response ends, ${size} bytes, body sent ${client}: all of it, 'end', 'close'`, async function () {
            const { seen, got } = await row(api, when, size, client);
            assert.deepStrictEqual(got, { status: 200, body: 'ok', error: null, rstCode: 0 });
            assert.strictEqual(seen.bytes, size);
            assert.deepStrictEqual(seen.events.filter((e) => e !== 'close'), ['end'], seen.events.join());
            assert.ok(seen.events.indexOf('end') < seen.events.indexOf('close'), seen.events.join());
            assert.strictEqual(seen.readableEnded, true);
          });
        }
      }
    }
    for (const size of [1000, 70000]) {
      it(`${api} API, read long after the response ended, ${size} bytes: nothing delivered, no error`, async function () {
        const { seen, got } = await row(api, 'later', size, 'eager');
        assert.deepStrictEqual([got.status, got.body, got.error], [200, 'ok', null]);
        assert.strictEqual(seen.bytes, 0);
        assert.deepStrictEqual(seen.events.filter((e) => e.startsWith('error') || e === 'aborted'), []);
      });
    }
  }

  // The frames the server sends for stream 1 after a raw client's POST
  // head (and, after 100 ms, DATA "ab" with END_STREAM).
  async function rawFrames(onStream) {
    const { port } = await h2.startH2(onStream);
    const sock = common.trackSocket(require('node:net').connect(port, '127.0.0.1'));
    let buf = Buffer.alloc(0);
    sock.on('data', (d) => { buf = Buffer.concat([buf, d]); });
    const POST = Buffer.from([0x83, 0x86, 0x84, 0x41, 0x01, 0x61]);
    sock.write(Buffer.concat([h2.PREFACE, h2.frame(h2.FRAME.SETTINGS, 0, 0),
      h2.frame(h2.FRAME.HEADERS, 0x4, 1, POST)]));
    await common.sleep(100);
    sock.write(h2.frame(h2.FRAME.DATA, 0x1, 1, Buffer.from('ab')));
    await common.sleep(300);
    sock.destroy();
    return h2.parseFrames(buf).filter((f) => f.streamId === 1)
      .map((f) => (f.type === h2.FRAME.RST_STREAM ? `RST_STREAM ${f.payload.readUInt32BE(0)}` :
        `${Object.keys(h2.FRAME).find((k) => h2.FRAME[k] === f.type)}${f.flags & 1 ? ' END_STREAM' : ''}`));
  }

  it('stream.end() without respond(): no response head is sent, the stream stays open', async function () {
    const frames = await rawFrames((stream) => { stream.on('error', () => {}); stream.end(); });
    assert.deepStrictEqual(frames, []);
  });

  it('respond() then close(2): the response ends, then RST_STREAM(2); the client sees rstCode 0', async function () {
    let server;
    const frames = await rawFrames((stream) => {
      stream.on('error', () => {});
      stream.respond({ ':status': 200 });
      stream.close(2);
      stream.on('close', () => { server = stream.rstCode; });
    });
    assert.strictEqual(frames[0], 'HEADERS');
    assert.strictEqual(frames[frames.length - 1], 'RST_STREAM 2');
    assert.ok(frames.slice(0, -1).some((f) => f.endsWith('END_STREAM')), frames.join());
    assert.strictEqual(server, 2);

    const { port } = await h2.startH2((stream) => {
      stream.on('error', () => {});
      stream.respond({ ':status': 200 });
      stream.close(2);
    });
    const s = h2.connect(port);
    const req = s.request({ ':path': '/' });
    req.on('error', () => {});
    req.resume();
    await common.once(req, 'close', 5000);
    assert.strictEqual(req.rstCode, 0);
  });

  it('stream.state as node: localClose not before the end is sent, {} after close; readableEnded after close', async function () {
    const states = {};
    let done;
    const closed = new Promise((r) => { done = r; });
    const { port } = await h2.startH2((stream) => {
      const pick = () => ({ localClose: stream.state.localClose, remoteClose: stream.state.remoteClose });
      states.start = pick();
      stream.respond({ ':status': 200 });
      stream.end('x');
      states.afterEnd = pick();
      stream.resume();
      stream.on('close', () => {
        states.close = stream.state;
        states.readableEnded = stream.readableEnded;
        done();
      });
    });
    const s = h2.connect(port);
    await h2.request(s, { ':method': 'POST' }, { body: 'ab' });
    await common.withTimeout(closed, 5000, 'server close');
    assert.deepStrictEqual(states, {
      start: { localClose: 0, remoteClose: 0 },
      afterEnd: { localClose: 0, remoteClose: 0 },
      close: {},
      readableEnded: true,
    });
  });
});
