'use strict';

// HTTP/2 conformance: h2spec (every case, against the 'stream' API and the
// request/response compat API) and the two RFC 9113 rules h2spec found
// missing, byte-exact with raw sockets: an invalid connection preface on
// the shared HTTP/1.1 + h2c port gets no HTTP/1.1 answer (3.4), and a
// HEADERS on a stream id the client skipped is a connection error (5.1.1).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFile } = require('node:child_process');
const common = require('../common');
const h2 = require('./h2common');
const { assert } = common;

const describeSluice = common.isNode ? describe.skip : describe;

// Cases nghttp2 after 1.61 no longer answers (Node 22: 1.69; Node 24 and
// 26: 1.70; sluice runs node's copy, docs/http2.md "Which nghttp2"): it
// keeps no closed streams and skips PRIORITY frames unread. sluice's own
// bookkeeping (src/core/http2/client_stream_ids.h) restores HEADERS on
// closed or skipped streams and PRIORITY on stream 0; DATA on a stream
// nghttp2 has forgotten, a self-dependent PRIORITY and a WINDOW_UPDATE
// overflow there it never sees (docs/http2.md "Not done yet"). On those
// nghttp2 versions the test fails on any case outside this list; which of
// the DATA cases fail depends on whether the stream is already closed when
// h2spec's DATA arrives.
const NEWER_NGHTTP2_GAPS = new Set([
  'http2/5.1: closed: Sends a DATA frame after sending RST_STREAM frame',
  'http2/5.1: closed: Sends a DATA frame',
  'http2/5.1: half closed (remote): Sends a DATA frame',
  'http2/5.3.1: Sends PRIORITY frame that depend on itself',
  'http2/6.1: Sends a DATA frame on the stream that is not in "open" or "half-closed (local)" state',
  'http2/6.9.1: Sends multiple WINDOW_UPDATE frames increasing the flow control window to above 2^31-1 on a stream',
]);
const [ngMajor, ngMinor] = process.versions.nghttp2.split('.').map(Number);
const newerNghttp2 = ngMajor > 1 || ngMinor > 61;

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
    it(`passes every h2spec case with the ${api}${newerNghttp2 ? ` (but the known gaps of nghttp2 ${process.versions.nghttp2})` : ''}`, async function () {
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
      if (newerNghttp2) {
        const unexpected = r.failures.filter((f) => !NEWER_NGHTTP2_GAPS.has(f));
        console.log(`      known gaps with nghttp2 ${process.versions.nghttp2}: ${r.failures.length}`);
        assert.deepStrictEqual(unexpected, [], r.stdout.split('\n').slice(-60).join('\n'));
      } else {
        assert.deepStrictEqual(r.failures, [], r.stdout.split('\n').slice(-60).join('\n'));
        assert.strictEqual(r.passed, 146);
      }
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

  common.sluiceOnly('first bytes that are neither an HTTP/1.x method nor the preface: closed without an answer', async function () {
    const { port } = await common.startServer(() => {});
    const c = await common.rawUntilClose(port, 'INVALID CONNECTION PREFACE\r\n\r\n');
    assert.strictEqual(c.data.length, 0, c.text);
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
