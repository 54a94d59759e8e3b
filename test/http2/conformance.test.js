'use strict';

// HTTP/2 conformance: h2spec (every case, against the 'stream' API and the
// request/response compat API) and, byte-exact with raw sockets, the RFC
// 9113 rules h2spec found missing: an invalid connection preface on the
// shared HTTP/1.1 + h2c port gets no HTTP/1.1 answer (3.4), a HEADERS on a
// stream id the client skipped is a connection error (5.1.1), and the
// rules the frame prescan (src/core/http2/frame_prescan.h) answers the
// same on every nghttp2: frames on streams the client closed, PRIORITY
// depending on itself, a stream WINDOW_UPDATE overflow.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFile } = require('node:child_process');
const common = require('../common');
const h2 = require('./h2common');
const { assert } = common;

const describeSluice = common.isNode ? describe.skip : describe;

// `../shared/tools/h2spec` from the project root (CI lays shared/ beside
// the clone); H2SPEC overrides it, and a worktree one level deeper finds
// the same folder one level up.
function findH2spec() {
  const candidates = [
    process.env.H2SPEC,
    path.resolve(common.ROOT, '../shared/tools/h2spec'),
    path.resolve(common.ROOT, '../../shared/tools/h2spec'),
  ].filter(Boolean);
  return candidates.find((f) => {
    try {
      fs.accessSync(f, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

// Runs h2spec against `port` (tls: over TLS, -t -k); resolves { passed,
// failed, skipped, total, failures: [names], stdout } from its JUnit report.
function runH2spec(bin, port, tls) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-h2spec-'));
  const junit = path.join(dir, 'h2spec.xml');
  return new Promise((resolve, reject) => {
    execFile(bin, ['-h', '127.0.0.1', '-p', String(port), '-o', '2', '-j', junit, ...(tls ? ['-t', '-k'] : [])],
      { timeout: 120000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout) => {
        // h2spec exits non-zero when a case fails: the report says which.
        let xml;
        try {
          xml = fs.readFileSync(junit, 'utf8');
        } catch (e) {
          reject(err || e);
          return;
        } finally {
          fs.rmSync(dir, { recursive: true, force: true });
        }
        const cases = [...xml.matchAll(/<testcase package="([^"]*)" classname="([^"]*)"[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g)];
        const failures = [];
        let skipped = 0;
        for (const c of cases) {
          const body = c[4] || '';
          if (/<skipped/.test(body)) skipped++;
          else if (/<failure|<error/.test(body)) failures.push(`${c[1]}: ${c[2].replace(/&#34;/g, '"')}`);
        }
        resolve({
          total: cases.length,
          passed: cases.length - failures.length - skipped,
          failed: failures.length,
          skipped,
          failures,
          stdout,
        });
      });
  });
}

// The body is at least 5 bytes: h2spec skips its negative-window case
// (6.9.2 #2) against shorter responses.
const BODY = 'hello from sluice\n';

function streamHandler(stream, headers) {
  stream.on('error', () => {});
  stream.resume();
  if (headers[':method'] === 'HEAD') {
    stream.respond({ ':status': 200, 'content-type': 'text/plain' }, { endStream: true });
    return;
  }
  stream.respond({ ':status': 200, 'content-type': 'text/plain' });
  stream.end(BODY);
}

const servers = {
  // HTTP/2 over TLS (ALPN h2): the same sessions under the TLS layer.
  'stream API over TLS': () => require('../tls/tls_common').startSecure({}).then((s) => {
    s.server.on('stream', streamHandler);
    s.tls = true;
    return s;
  }),
  'stream API': () => common.startServer().then((s) => {
    s.server.on('stream', streamHandler);
    return s;
  }),
  // Request bodies in pool memory: windows credited as chunks go back
  // (here as resume() drops them).
  'stream API with a buffer pool': () => common.startServer({
    requestBufferAllocator: common.impl.createBufferPool({ bufferSize: 16384, maxBuffers: 64 }).alloc,
  }).then((s) => {
    s.server.on('stream', streamHandler);
    return s;
  }),
  'compat API': () => common.startServer((req, res) => {
    req.resume();
    res.setHeader('content-type', 'text/plain');
    res.end(BODY);
  }),
};

describeSluice('h2spec', function () {
  this.timeout(180000);
  afterEach(common.cleanup);

  for (const [api, start] of Object.entries(servers)) {
    it(`passes every h2spec case with the ${api} (nghttp2 ${process.versions.nghttp2})`, async function () {
      const bin = findH2spec();
      if (!bin) {
        const msg = 'h2spec not found (../shared/tools/h2spec from the project root, or H2SPEC=path)';
        if (process.env.CI === 'true') assert.fail(msg);
        console.log(`      skipped: ${msg}`);
        this.skip();
      }
      const { port, tls } = await start();
      const r = await runH2spec(bin, port, tls);
      console.log(`      h2spec (${api}): ${r.passed}/${r.total} passed, ${r.failed} failed, ${r.skipped} skipped`);
      assert.strictEqual(r.total, 146);
      assert.strictEqual(r.skipped, 0);
      assert.deepStrictEqual(r.failures, [], r.stdout.split('\n').slice(-60).join('\n'));
      assert.strictEqual(r.passed, 146);
    });
  }
});

describe('shared HTTP/1.1 + h2c port: the connection preface', function () {
  afterEach(common.cleanup);

  common.sluiceOnly('a preface wrong after "PRI * HTTP/2.0\\r\\n" is refused as HTTP/2: closed, no HTTP/1.1 answer', async function () {
    let handled = 0;
    const { port } = await common.startServer(() => { handled++; });
    const c = await common.rawUntilClose(port, 'PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n');
    assert.doesNotMatch(c.text, /HTTP\/1\.1/);
    assert.strictEqual(handled, 0);
  });

  common.sluiceOnly('a preface split across writes and wrong in its last byte is refused the same way', async function () {
    const { port } = await common.startServer(() => {});
    const c = await common.rawConnect(port);
    await c.write('PRI * HTTP/2.0\r\n');
    await common.sleep(20);
    await c.write('\r\nSM\r\n\r');
    await common.sleep(20);
    await c.write('Q');
    const data = await c.waitClose();
    assert.doesNotMatch(data.toString('latin1'), /HTTP\/1\.1/);
  });

  common.sluiceOnly('a first line naming another protocol (h2spec\'s invalid preface): closed without an answer', async function () {
    const { port } = await common.startServer(() => {});
    const c = await common.rawUntilClose(port, 'INVALID CONNECTION PREFACE\r\n\r\n');
    assert.strictEqual(c.data.length, 0, c.text);
  });

  it('a first line with an unknown method and no version (node\'s FOO /): node\'s exact 400 and close', async function () {
    const { port } = await common.startServer(() => {});
    const c = await common.rawUntilClose(port, 'FOO /\r\n');
    assert.strictEqual(c.text, 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
  });

  common.sluiceOnly('... and clientError is emitted (code HPE_INVALID_METHOD, no statusCode); a listener may still answer', async function () {
    const seen = [];
    const { server, port } = await common.startServer(() => {});
    server.on('clientError', (err, socket) => {
      seen.push([err.code, err.statusCode]);
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    });
    const c = await common.rawUntilClose(port, 'INVALID CONNECTION PREFACE\r\n\r\n');
    assert.deepStrictEqual(seen, [['HPE_INVALID_METHOD', undefined]]);
    assert.match(c.text, /^HTTP\/1\.1 400 /);
  });

  it('the same bytes after a first request are HTTP/1.1\'s: 400', async function () {
    const { port } = await common.startServer((req, res) => res.end('ok'));
    const c = await common.rawConnect(port);
    await c.write('GET / HTTP/1.1\r\nHost: a\r\n\r\n');
    await c.responses(1);
    await c.write('INVALID CONNECTION PREFACE\r\n\r\n');
    const r = common.parseResponses(await c.waitClose(), { ended: true }).responses;
    assert.deepStrictEqual(r.map((x) => x.statusCode), [200, 400]);
  });

  it('a request with a known method and a bad request line still gets 400', async function () {
    const { port } = await common.startServer((req, res) => res.end('ok'));
    const c = await common.rawUntilClose(port, 'GET / HTTP/1.1 x\r\nHost: a\r\n\r\n');
    assert.match(c.text, /^HTTP\/1\.1 400 /);
  });

  it('POST (sharing the preface\'s first byte) is still HTTP/1.1', async function () {
    const { port } = await common.startServer((req, res) => { req.resume(); req.on('end', () => res.end('posted')); });
    const c = await common.rawConnect(port);
    await c.write('POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi');
    const r = await c.responses(1);
    assert.strictEqual(r[0].statusCode, 200);
    assert.strictEqual(r[0].body.toString(), 'posted');
  });
});

describeSluice('http2 stream identifiers (RFC 9113 5.1.1)', function () {
  afterEach(common.cleanup);

  const settings = () => h2.frame(h2.FRAME.SETTINGS, 0, 0);
  const headers = (id) => h2.frame(h2.FRAME.HEADERS, 0x5, id, h2.GET_SLASH);  // END_STREAM|END_HEADERS

  it('a HEADERS on an id lower than one already used (and skipped) is a connection error: GOAWAY(PROTOCOL_ERROR, last 5)', async function () {
    const seen = [];
    const { server, port } = await common.startServer();
    server.on('stream', (stream) => {
      seen.push(stream.id);
      stream.respond({ ':status': 200 });
      stream.end('x');
    });
    const c = await common.rawConnect(port);
    // One write: stream 5's handler runs before stream 3 is parsed.
    await c.write(Buffer.concat([h2.PREFACE, settings(), headers(5), headers(3)]));
    const data = await c.waitClose();
    const frames = h2.parseFrames(data);
    const goaway = frames.find((f) => f.type === h2.FRAME.GOAWAY);
    assert.ok(goaway, `GOAWAY expected; frames: ${JSON.stringify(frames.map((f) => [f.type, f.streamId]))}`);
    assert.strictEqual(goaway.payload.readUInt32BE(0) & 0x7fffffff, 5);
    assert.strictEqual(goaway.payload.readUInt32BE(4), 1, 'PROTOCOL_ERROR');
    assert.deepStrictEqual(seen, [5]);
    // Nothing of stream 3 was answered.
    assert.ok(!frames.some((f) => f.streamId === 3));
  });

  it('the same with the two HEADERS in separate reads', async function () {
    const { server, port } = await common.startServer();
    server.on('stream', (stream) => { stream.respond({ ':status': 200 }); stream.end('x'); });
    const c = await common.rawConnect(port);
    await c.write(Buffer.concat([h2.PREFACE, settings(), headers(5)]));
    await c.waitFor((cl) => h2.parseFrames(cl.data).some((f) => f.type === h2.FRAME.DATA && f.streamId === 5), 5000, 'stream 5 answered');
    await c.write(headers(3));
    const frames = h2.parseFrames(await c.waitClose());
    const goaway = frames.find((f) => f.type === h2.FRAME.GOAWAY);
    assert.ok(goaway);
    assert.strictEqual(goaway.payload.readUInt32BE(4), 1, 'PROTOCOL_ERROR');
  });

  it('a HEADERS on a stream the client ended and that is closed: GOAWAY(STREAM_CLOSED), on every nghttp2', async function () {
    const { server, port } = await common.startServer();
    server.on('stream', (stream) => { stream.respond({ ':status': 200 }); stream.end('x'); });
    const c = await common.rawConnect(port);
    await c.write(Buffer.concat([h2.PREFACE, settings(), headers(1)]));
    await c.waitFor((cl) => h2.parseFrames(cl.data).some((f) => f.type === h2.FRAME.DATA && f.streamId === 1 && (f.flags & 1)), 5000, 'stream 1 answered');
    await common.sleep(20);
    await c.write(headers(1));
    const goaway = h2.parseFrames(await c.waitClose()).find((f) => f.type === h2.FRAME.GOAWAY);
    assert.ok(goaway);
    assert.strictEqual(goaway.payload.readUInt32BE(0) & 0x7fffffff, 1);
    assert.strictEqual(goaway.payload.readUInt32BE(4), 5, 'STREAM_CLOSED');
  });

  it('a PRIORITY frame on stream 0: GOAWAY(PROTOCOL_ERROR), on every nghttp2', async function () {
    const { port } = await common.startServer(() => {});
    const c = await common.rawConnect(port);
    const priority = h2.frame(2, 0, 0, Buffer.from([0, 0, 0, 1, 16]));
    await c.write(Buffer.concat([h2.PREFACE, settings(), priority]));
    const goaway = h2.parseFrames(await c.waitClose()).find((f) => f.type === h2.FRAME.GOAWAY);
    assert.ok(goaway);
    assert.strictEqual(goaway.payload.readUInt32BE(4), 1, 'PROTOCOL_ERROR');
  });

  it('skipping ids upwards is allowed: streams 1 and 7 are both answered', async function () {
    const { server, port } = await common.startServer();
    server.on('stream', (stream) => { stream.respond({ ':status': 200 }); stream.end(`s${stream.id}`); });
    const c = await common.rawConnect(port);
    await c.write(Buffer.concat([h2.PREFACE, settings(), headers(1), headers(7)]));
    const frames = await c.waitFor((cl) => {
      const f = h2.parseFrames(cl.data);
      return f.filter((x) => x.type === h2.FRAME.DATA && (x.flags & 1)).length === 2 ? f : null;
    }, 5000, 'two responses');
    const bodies = frames.filter((f) => f.type === h2.FRAME.DATA).map((f) => f.payload.toString()).sort();
    assert.deepStrictEqual(bodies, ['s1', 's7']);
    assert.ok(!frames.some((f) => f.type === h2.FRAME.GOAWAY));
    c.destroy();
  });
});

describeSluice('http2 frame rules answered the same on every nghttp2 (the frame prescan)', function () {
  afterEach(common.cleanup);

  const settings = () => h2.frame(h2.FRAME.SETTINGS, 0, 0);
  const get = (id, flags = 0x5) => h2.frame(h2.FRAME.HEADERS, flags, id, h2.GET_SLASH);
  const data = (id, body, flags = 0x1) => h2.frame(h2.FRAME.DATA, flags, id, Buffer.from(body));
  const rst = (id, code) => h2.frame(h2.FRAME.RST_STREAM, 0, id, Buffer.from([0, 0, 0, code]));
  const priority = (id, dep) => {
    const p = Buffer.alloc(5);
    p.writeUInt32BE(dep);
    p[4] = 15;
    return h2.frame(2, 0, id, p);
  };
  const windowUpdate = (id, inc) => {
    const p = Buffer.alloc(4);
    p.writeUInt32BE(inc);
    return h2.frame(h2.FRAME.WINDOW_UPDATE, 0, id, p);
  };
  const goawayOf = (frames) => {
    const g = frames.find((f) => f.type === h2.FRAME.GOAWAY);
    return g && { last: g.payload.readUInt32BE(0) & 0x7fffffff, code: g.payload.readUInt32BE(4) };
  };
  const rstOf = (frames, id) => {
    const r = frames.find((f) => f.type === h2.FRAME.RST_STREAM && f.streamId === id);
    return r && r.payload.readUInt32BE(0);
  };
  const answered = (id) => (cl) => h2.parseFrames(cl.data).some((f) => f.type === h2.FRAME.DATA && f.streamId === id && (f.flags & 1));
  const startEcho = () => common.startServer().then((s) => {
    s.server.on('stream', (stream) => {
      stream.on('error', () => {});
      stream.resume();
      stream.respond({ ':status': 200 });
      stream.end(`s${stream.id}`);
    });
    return s;
  });

  // A connection whose stream 1 (a GET) was answered and is closed.
  async function stream1Closed() {
    const { port } = await startEcho();
    const c = await common.rawConnect(port);
    await c.write(Buffer.concat([h2.PREFACE, settings(), get(1)]));
    await c.waitFor(answered(1), 5000, 'stream 1 answered');
    await common.sleep(20);
    return c;
  }

  it('DATA on a stream the client ended, once it is closed: GOAWAY(STREAM_CLOSED)', async function () {
    const c = await stream1Closed();
    await c.write(data(1, 'late'));
    const g = goawayOf(h2.parseFrames(await c.waitClose()));
    assert.deepStrictEqual(g, { last: 1, code: 5 });
  });

  it('DATA after the client\'s own RST_STREAM, in the same write: GOAWAY(STREAM_CLOSED)', async function () {
    const { port } = await startEcho();
    const c = await common.rawConnect(port);
    await c.write(Buffer.concat([h2.PREFACE, settings(), get(1, 0x4), rst(1, 8), data(1, 'late')]));
    const g = goawayOf(h2.parseFrames(await c.waitClose()));
    assert.strictEqual(g && g.code, 5);
  });

  it('DATA on a stream the server reset (the client may not have seen it) is ignored: the connection serves on', async function () {
    const { server, port } = await common.startServer();
    server.on('stream', (stream) => {
      stream.on('error', () => {});
      if (stream.id === 1) stream.close(8);
      else { stream.respond({ ':status': 200 }); stream.end('ok'); }
    });
    const c = await common.rawConnect(port);
    await c.write(Buffer.concat([h2.PREFACE, settings(), get(1, 0x4)]));
    await c.waitFor((cl) => h2.parseFrames(cl.data).some((f) => f.type === h2.FRAME.RST_STREAM && f.streamId === 1), 5000, 'RST_STREAM 1');
    await c.write(Buffer.concat([data(1, 'in flight'), get(3)]));
    await c.waitFor(answered(3), 5000, 'stream 3 answered');
    assert.strictEqual(goawayOf(h2.parseFrames(c.data)), undefined);
    c.destroy();
  });

  it('a PRIORITY depending on itself on an open stream: RST_STREAM(PROTOCOL_ERROR) for that stream only', async function () {
    const { server, port } = await common.startServer();
    const closed = [];
    server.on('stream', (stream) => {
      stream.on('error', () => {});
      stream.on('close', () => closed.push([stream.id, stream.rstCode]));
      if (stream.id === 3) { stream.respond({ ':status': 200 }); stream.end('ok'); }
    });
    const c = await common.rawConnect(port);
    await c.write(Buffer.concat([h2.PREFACE, settings(), get(1, 0x4), priority(1, 1), get(3)]));
    await c.waitFor((cl) => answered(3)(cl) && rstOf(h2.parseFrames(cl.data), 1) !== undefined, 5000, 'stream 3 answered, stream 1 reset');
    assert.strictEqual(rstOf(h2.parseFrames(c.data), 1), 1, 'PROTOCOL_ERROR');
    assert.strictEqual(goawayOf(h2.parseFrames(c.data)), undefined);
    for (let i = 0; i < 250 && closed.length < 2; i++) await common.sleep(20);
    assert.deepStrictEqual(closed.sort(), [[1, 1], [3, 0]]);
    c.destroy();
  });

  it('a PRIORITY depending on itself on an idle stream: GOAWAY(PROTOCOL_ERROR)', async function () {
    const { port } = await startEcho();
    const c = await common.rawConnect(port);
    await c.write(Buffer.concat([h2.PREFACE, settings(), priority(1, 1)]));
    const g = goawayOf(h2.parseFrames(await c.waitClose()));
    assert.strictEqual(g && g.code, 1);
  });

  it('a PRIORITY on another stream is no error', async function () {
    const { port } = await startEcho();
    const c = await common.rawConnect(port);
    await c.write(Buffer.concat([h2.PREFACE, settings(), priority(3, 1), get(1)]));
    await c.waitFor(answered(1), 5000, 'stream 1 answered');
    assert.strictEqual(goawayOf(h2.parseFrames(c.data)), undefined);
    c.destroy();
  });

  it('WINDOW_UPDATEs taking a stream window above 2^31-1: RST_STREAM(FLOW_CONTROL_ERROR), the connection serves on', async function () {
    const { port } = await startEcho();
    const c = await common.rawConnect(port);
    await c.write(Buffer.concat([h2.PREFACE, settings(), get(1, 0x4), windowUpdate(1, 0x7fffffff), windowUpdate(1, 0x7fffffff)]));
    await c.waitFor((cl) => rstOf(h2.parseFrames(cl.data), 1) !== undefined, 5000, 'RST_STREAM 1');
    assert.strictEqual(rstOf(h2.parseFrames(c.data), 1), 3, 'FLOW_CONTROL_ERROR');
    await c.write(get(3));
    await c.waitFor(answered(3), 5000, 'stream 3 answered');
    assert.strictEqual(goawayOf(h2.parseFrames(c.data)), undefined);
    c.destroy();
  });

  it('the same, every frame split at every byte across writes', async function () {
    this.timeout(60000);
    const { port } = await startEcho();
    const c = await common.rawConnect(port);
    const bytes = Buffer.concat([h2.PREFACE, settings(), get(1, 0x4), windowUpdate(1, 0x7fffffff), priority(3, 1), windowUpdate(1, 0x7fffffff), get(5)]);
    for (let i = 0; i < bytes.length; i++) {
      await c.write(bytes.subarray(i, i + 1));
      await common.sleep(1);
    }
    await c.waitFor((cl) => answered(5)(cl) && rstOf(h2.parseFrames(cl.data), 1) !== undefined, 5000, 'RST_STREAM 1 and stream 5 answered');
    assert.strictEqual(rstOf(h2.parseFrames(c.data), 1), 3);
    assert.strictEqual(goawayOf(h2.parseFrames(c.data)), undefined);
    c.destroy();
  });

  it('a WINDOW_UPDATE on a stream that is closed is ignored (RFC 9113 6.9)', async function () {
    const c = await stream1Closed();
    await c.write(Buffer.concat([windowUpdate(1, 0x7fffffff), windowUpdate(1, 0x7fffffff), get(3)]));
    await c.waitFor(answered(3), 5000, 'stream 3 answered');
    assert.strictEqual(goawayOf(h2.parseFrames(c.data)), undefined);
    c.destroy();
  });
});
