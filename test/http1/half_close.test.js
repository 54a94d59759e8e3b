'use strict';

// A client's half-close (FIN after its request) as node's server handles
// it: by default (httpAllowHalfOpen false) the EOF ends the connection
// right away and the requests still in flight are aborted ('aborted' on
// req, 'close' on res) when it closes; with server.httpAllowHalfOpen set
// the responses in flight finish and the last one closes. Shared: also
// run against node:http.

const common = require('../common');
const { assert } = common;

// Resolves once the server's handler for `path` has run (the request is
// in flight), with its req / res.
function inFlight(handlers, path) {
  return new Promise((resolve) => { handlers[path] = resolve; });
}

async function startRecording(options) {
  const handlers = {};
  const s = await common.startServer(options, (req, res) => {
    res.setHeader('Content-Length', 10);
    if (req.url === '/answered') {
      res.end('0123456789');
      return;
    }
    // A response in progress: its head and part of its body are out.
    res.write('hello');
    handlers[req.url]({ req, res });
  });
  return { ...s, handlers };
}

// What happens to a request in flight: its events, in order.
function watch(req, res) {
  const seen = [];
  req.on('aborted', () => seen.push(`aborted:${req.aborted}`));
  req.on('error', (err) => seen.push(`req-error:${err.code}`));
  req.on('close', () => seen.push('req-close'));
  res.on('close', () => seen.push(`res-close:${res.writableFinished}`));
  res.on('finish', () => seen.push('finish'));
  return seen;
}

describe(`http1 client half-close with requests in flight [${common.implName}]`, function () {
  afterEach(common.cleanup);

  it("default: the FIN aborts the request in flight ('aborted', then req/res 'close') and the server closes", async function () {
    const s = await startRecording();
    assert.strictEqual(s.server.httpAllowHalfOpen, false);
    const c = await common.rawConnect(s.port);
    const started = inFlight(s.handlers, '/slow');
    c.socket.write('GET /slow HTTP/1.1\r\nHost: h\r\n\r\n');
    const { req, res } = await common.withTimeout(started, 5000, 'request');
    const seen = watch(req, res);
    await c.waitFor((x) => x.text.endsWith('hello'), 5000, 'the partial body');
    const resClosed = common.once(res, 'close', 5000, "res 'close'");
    c.end();
    await resClosed;
    await c.waitClose(5000);
    // What the response had written reached the client, nothing after.
    assert.match(c.text, /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nhello$/);
    assert.strictEqual(req.aborted, true);
    assert.ok(seen.includes('aborted:true'), seen.join());
    assert.ok(seen.includes('res-close:false'), seen.join());
    assert.ok(!seen.includes('finish'), seen.join());
    assert.strictEqual(seen.indexOf('aborted:true') < seen.indexOf('req-close'), true, seen.join());
    // A late end() is harmless: no throw, no bytes, no 'finish'.
    res.end('67890');
    await common.sleep(50);
    assert.ok(!seen.includes('finish'), seen.join());
  });

  it("default: an 'error' listener on req hears ECONNRESET 'aborted'", async function () {
    const s = await startRecording();
    const c = await common.rawConnect(s.port);
    const started = inFlight(s.handlers, '/slow');
    c.socket.write('GET /slow HTTP/1.1\r\nHost: h\r\n\r\n');
    const { req } = await common.withTimeout(started, 5000, 'request');
    const errored = common.once(req, 'error', 5000, "req 'error'");
    c.end();
    const [err] = await errored;
    assert.strictEqual(err.code, 'ECONNRESET');
    assert.strictEqual(err.message, 'aborted');
    await c.waitClose(5000);
  });

  it('default: of two pipelined requests, the answered one is delivered whole and the one in flight is aborted', async function () {
    const s = await startRecording();
    const c = await common.rawConnect(s.port);
    const started = inFlight(s.handlers, '/slow');
    c.socket.write('GET /answered HTTP/1.1\r\nHost: h\r\n\r\nGET /slow HTTP/1.1\r\nHost: h\r\n\r\n');
    const { req, res } = await common.withTimeout(started, 5000, 'request');
    const seen = watch(req, res);
    const [first] = await c.responses(1);
    assert.strictEqual(first.body.toString(), '0123456789');
    const aborted = common.once(req, 'aborted', 5000, "'aborted'");
    c.end();
    await aborted;
    await c.waitClose(5000);
    assert.ok(seen.includes('res-close:false'), seen.join());
  });

  it('default: an idle keep-alive connection is closed at the FIN', async function () {
    const s = await startRecording();
    const c = await common.rawConnect(s.port);
    c.socket.write('GET /answered HTTP/1.1\r\nHost: h\r\n\r\n');
    await c.responses(1);
    c.end();
    await c.waitClose(5000);
  });

  it('httpAllowHalfOpen = true: the response in flight finishes after the FIN, then the server closes', async function () {
    const s = await startRecording();
    const c = await common.rawConnect(s.port);
    const started = inFlight(s.handlers, '/slow');
    c.socket.write('GET /slow HTTP/1.1\r\nHost: h\r\n\r\n');
    const { req, res } = await common.withTimeout(started, 5000, 'request');
    // Read at the EOF, as node's: a connection already open follows it.
    s.server.httpAllowHalfOpen = true;
    assert.strictEqual(s.server.httpAllowHalfOpen, true);
    const seen = watch(req, res);
    await c.waitFor((x) => x.text.endsWith('hello'), 5000, 'the partial body');
    c.end();
    await common.sleep(100);
    assert.strictEqual(req.aborted, false);
    assert.deepStrictEqual(seen, []);
    const finished = common.once(res, 'finish', 5000, "'finish'");
    res.end('67890');
    await finished;
    const data = await c.waitClose(5000);
    assert.match(data.toString('latin1'), /\r\n\r\nhello67890$/);
    assert.strictEqual(req.aborted, false);
    assert.ok(!seen.some((e) => e.startsWith('aborted')), seen.join());
  });

  it('httpAllowHalfOpen = true: pipelined requests in flight at the FIN are all answered, the last one closes', async function () {
    const s = await startRecording();
    s.server.httpAllowHalfOpen = true;
    const c = await common.rawConnect(s.port);
    const started = inFlight(s.handlers, '/slow');
    c.socket.end('GET /answered HTTP/1.1\r\nHost: h\r\n\r\nGET /slow HTTP/1.1\r\nHost: h\r\n\r\n');
    const { req, res } = await common.withTimeout(started, 5000, 'request');
    await common.sleep(100);
    assert.strictEqual(req.aborted, false);
    res.end('67890');
    const data = await c.waitClose(5000);
    const { responses } = common.parseResponses(data, { ended: true });
    assert.deepStrictEqual(responses.map((r) => r.body.toString()), ['0123456789', 'hello67890']);
  });
});
