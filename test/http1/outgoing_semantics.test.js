'use strict';

// node's OutgoingMessage semantics on a server response, found by node's own
// tests (test-http-outgoing-*, -content-length-mismatch,
// -head-throw-on-response-body-write, -mutable-headers, -header-badrequest,
// -nodelay): end() after end(), writable / writableFinished / errored,
// strictContentLength, rejectNonStandardBodyWrites, ERR_INVALID_ARG_TYPE
// messages, an 'error' emitted on req.socket, a destroy right after end(),
// server.noDelay. Shared: also run against node:http.

const common = require('../common');
const { assert } = common;

const GET = 'GET / HTTP/1.1\r\nHost: h\r\n\r\n';

// Runs `handler` for one GET and resolves with what it resolved with plus
// the raw bytes the client got until the server closed or 300 ms passed.
async function inHandler(handler, options = {}) {
  let result;
  const done = new Promise((resolve, reject) => {
    common.startServer(options, (req, res) => {
      Promise.resolve().then(() => handler(req, res)).then((v) => { result = v; resolve(); }, reject);
    }).then(({ port }) => common.rawConnect(port)).then((c) => {
      c.socket.write(GET);
      done.client = c;
    }, reject);
  });
  await common.withTimeout(done, 5000, 'the handler');
  await common.sleep(50);
  return { result, client: done.client };
}

describe(`http1 outgoing message semantics [${common.implName}]`, function () {
  afterEach(common.cleanup);

  it("end(cb) after end(): ERR_STREAM_ALREADY_FINISHED once finished; end(body) is a write after end", async function () {
    const { result } = await inHandler((req, res) => new Promise((resolve) => {
      const seen = [];
      res.on('error', (err) => seen.push(`error ${err.code}`));
      res.end('first', () => seen.push('first cb'));
      assert.strictEqual(res.writableEnded, true);
      res.end((err) => seen.push(`bare ${err ? err.code : 'ok'}`));
      res.end('more', (err) => seen.push(`more ${err.code}`));
      res.on('finish', () => {
        res.end((err) => {
          seen.push(`after finish ${err.code}`);
          setImmediate(() => resolve(seen));
        });
      });
    }));
    assert.ok(result.includes('after finish ERR_STREAM_ALREADY_FINISHED'), result);
    assert.ok(result.includes('more ERR_STREAM_WRITE_AFTER_END'), result);
    assert.ok(result.includes('error ERR_STREAM_WRITE_AFTER_END'), result);
    assert.ok(result.includes('first cb'), result);
    assert.ok(result.includes('bare ERR_STREAM_ALREADY_FINISHED') || result.includes('bare ok'), result);
  });

  it('writable stays true after end(); errored is the destroy error', async function () {
    const { result } = await inHandler((req, res) => {
      const before = [res.writable, res.errored];
      res.end();
      const after = res.writable;
      return [...before, after];
    });
    assert.deepStrictEqual(result, [true, null, true]);
    const { result: errored } = await inHandler((req, res) => {
      res.on('error', () => {});
      const err = new Error('boom');
      res.destroy(err);
      return res.errored === err;
    });
    assert.strictEqual(errored, true);
  });

  it('strictContentLength: more than Content-Length, or a different total at end(), throws', async function () {
    const { result, client } = await inHandler((req, res) => {
      const codes = [];
      res.strictContentLength = true;
      res.setHeader('Content-Length', 5);
      res.write('a');
      try { res.write('aaaaa'); } catch (e) { codes.push(e.code); }
      try { res.end('aaa'); } catch (e) { codes.push(e.code); }
      assert.strictEqual(res.writableEnded, false);
      res.end('aaaa');
      return codes;
    });
    assert.deepStrictEqual(result, ['ERR_HTTP_CONTENT_LENGTH_MISMATCH', 'ERR_HTTP_CONTENT_LENGTH_MISMATCH']);
    const [r] = await client.responses(1);
    assert.strictEqual(r.body.toString(), 'aaaaa');
  });

  it('rejectNonStandardBodyWrites: body for a 204 throws ERR_HTTP_BODY_NOT_ALLOWED; without it, it is dropped', async function () {
    for (const reject of [true, false]) {
      const { result, client } = await inHandler((req, res) => {
        res.writeHead(204);
        let code = null;
        try { res.write('x'); } catch (e) { code = e.code; }
        res.end();
        return code;
      }, { rejectNonStandardBodyWrites: reject });
      assert.strictEqual(result, reject ? 'ERR_HTTP_BODY_NOT_ALLOWED' : null);
      const [r] = await client.responses(1);
      assert.strictEqual(r.statusCode, 204);
      assert.strictEqual(r.body.length, 0);
    }
  });

  it('getHeader/hasHeader/removeHeader name errors say what was received', async function () {
    const { result } = await inHandler((req, res) => {
      const messages = [];
      for (const call of [() => res.getHeader(), () => res.hasHeader(1), () => res.removeHeader({})]) {
        try { call(); } catch (e) { messages.push(`${e.code}: ${e.message}`); }
      }
      res.end();
      return messages;
    });
    assert.deepStrictEqual(result, [
      'ERR_INVALID_ARG_TYPE: The "name" argument must be of type string. Received undefined',
      'ERR_INVALID_ARG_TYPE: The "name" argument must be of type string. Received type number (1)',
      'ERR_INVALID_ARG_TYPE: The "name" argument must be of type string. Received an instance of Object',
    ]);
  });

  it("an 'error' emitted on req.socket after a write: what was written arrives, then the close", async function () {
    const { port } = await common.startServer((req, res) => {
      res.write('asd', () => res.socket.emit('error', new Error('kaboom')));
    });
    const c = await common.rawUntilClose(port, GET);
    assert.ok(c.text.endsWith('asd\r\n'), c.text);
  });

  it("an 'error' emitted on req.socket before any response: 400 and the close; clientError hears it instead when listened", async function () {
    const { port } = await common.startServer((req, res) => {
      req.socket.emit('error', new Error('kaboom'));
    });
    const c = await common.rawUntilClose(port, GET);
    assert.ok(c.text.startsWith('HTTP/1.1 400 Bad Request\r\n'), c.text);
    const { port: port2, server } = await common.startServer((req) => {
      req.socket.emit('error', new Error('kaboom'));
    });
    const heard = new Promise((resolve) => server.on('clientError', (err, socket) => {
      socket.destroy();
      resolve(err.message);
    }));
    await common.rawUntilClose(port2, GET);
    assert.strictEqual(await heard, 'kaboom');
  });

  it('end() then destroy(): the response still reaches the client', async function () {
    const { port } = await common.startServer((req, res) => {
      res.end('whole');
      res.destroy();
    });
    const c = await common.rawUntilClose(port, GET);
    const { responses } = common.parseResponses(c.data, { ended: true });
    assert.strictEqual(responses[0].body.toString(), 'whole');
  });

  it('server.noDelay is true by default, false when asked', async function () {
    const { server } = await common.startServer((req, res) => res.end());
    assert.strictEqual(server.noDelay, true);
    const { server: s2 } = await common.startServer({ noDelay: false }, (req, res) => res.end());
    assert.strictEqual(s2.noDelay, false);
  });
});
