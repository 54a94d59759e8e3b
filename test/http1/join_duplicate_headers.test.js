'use strict';

// node's joinDuplicateHeaders server option: duplicates of the fields whose
// repeats node otherwise drops (Authorization, User-Agent, ETag, ...) are
// joined with ', ' in req.headers and req.trailers; Cookie still joins
// with '; ', Set-Cookie stays an array. Shared: also run against node:http.

const common = require('../common');
const { assert } = common;

const head = 'GET / HTTP/1.1\r\nHost: h\r\n' +
  'Authorization: 1\r\nAuthorization: 2\r\n' +
  'User-Agent: ua1\r\nuser-agent: ua2\r\n' +
  'Cookie: a=1\r\nCookie: b=2\r\n' +
  'Set-Cookie: s1\r\nSet-Cookie: s2\r\n' +
  'X-Any: x1\r\nX-Any: x2\r\n\r\n';

// The request's view of `wire`, on a server made with `options`
// (`configure(server)` runs before the request is sent).
async function seen(options, wire, configure) {
  let view;
  const { port, server } = await common.startServer(options, (req, res) => {
    req.resume();
    req.on('end', () => {
      view = {
        join: req.joinDuplicateHeaders,
        headers: { ...req.headers },
        trailers: { ...req.trailers },
      };
      res.end();
    });
  });
  if (configure) configure(server);
  const c = await common.rawConnect(port);
  c.socket.write(wire);
  await c.responses(1);
  c.destroy();
  return view;
}

describe(`http1 joinDuplicateHeaders [${common.implName}]`, function () {
  afterEach(common.cleanup);

  it('off (default): the first Authorization / User-Agent wins; others joined as always', async function () {
    const v = await seen({}, head);
    // As node (20 to 26): null on a server request without the option.
    assert.strictEqual(v.join, null);
    assert.strictEqual(v.headers.authorization, '1');
    assert.strictEqual(v.headers['user-agent'], 'ua1');
    assert.strictEqual(v.headers.cookie, 'a=1; b=2');
    assert.deepStrictEqual(v.headers['set-cookie'], ['s1', 's2']);
    assert.strictEqual(v.headers['x-any'], 'x1, x2');
  });

  it("on: every duplicate joined with ', ' (Cookie with '; ', Set-Cookie an array)", async function () {
    const v = await seen({ joinDuplicateHeaders: true }, head);
    assert.strictEqual(v.join, true);
    assert.strictEqual(v.headers.authorization, '1, 2');
    assert.strictEqual(v.headers['user-agent'], 'ua1, ua2');
    assert.strictEqual(v.headers.cookie, 'a=1; b=2');
    assert.deepStrictEqual(v.headers['set-cookie'], ['s1', 's2']);
    assert.strictEqual(v.headers['x-any'], 'x1, x2');
  });

  it('on: trailers are joined the same way', async function () {
    const wire = 'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n' +
      '1\r\nx\r\n0\r\nETag: "a"\r\nETag: "b"\r\nX-T: 1\r\nX-T: 2\r\n\r\n';
    const off = await seen({}, wire);
    assert.strictEqual(off.trailers.etag, '"a"');
    assert.strictEqual(off.trailers['x-t'], '1, 2');
    const on = await seen({ joinDuplicateHeaders: true }, wire);
    assert.strictEqual(on.trailers.etag, '"a", "b"');
    assert.strictEqual(on.trailers['x-t'], '1, 2');
  });

  it('req.joinDuplicateHeaders is null with the option false (as node)', async function () {
    const v = await seen({ joinDuplicateHeaders: false }, head);
    assert.strictEqual(v.join, null);
    assert.strictEqual(v.headers.authorization, '1');
  });

  it('server.joinDuplicateHeaders: undefined unless given; an assignment applies to the next request', async function () {
    assert.strictEqual(common.impl.createServer().joinDuplicateHeaders, undefined);
    assert.strictEqual(common.impl.createServer({ joinDuplicateHeaders: false }).joinDuplicateHeaders, false);
    const v = await seen({}, head, (server) => { server.joinDuplicateHeaders = true; });
    assert.strictEqual(v.join, true);
    assert.strictEqual(v.headers.authorization, '1, 2');
  });

  it('a non-boolean option is ERR_INVALID_ARG_TYPE', function () {
    assert.throws(() => common.impl.createServer({ joinDuplicateHeaders: 'yes' }), {
      code: 'ERR_INVALID_ARG_TYPE',
      message: /"options\.joinDuplicateHeaders" property must be of type boolean/,
    });
  });
});
