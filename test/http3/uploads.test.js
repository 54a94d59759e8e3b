'use strict';

// HTTP/3 request bodies in requestBufferAllocator memory, as HTTP/2's
// (test/uploads/http2_zero_copy.test.js): each request stream is read
// straight into a pool buffer, DATA payloads reach the 'stream' and
// 'request' handlers as views of it, and a stream is read on only while
// its unreleased bytes (and its connection's) are under HTTP/2's stream
// (connection) window; unread, its data keeps QUIC's flow-control windows
// shut. A dry pool stops the stream that needs memory, not the connection.
// Clients: ours on node's OpenSSL (test/http3/quic_client.js) and Debian's
// gtlsclient. [sluice-only]: node has no HTTP/3 server.

const crypto = require('node:crypto');
const fs = require('node:fs');
const common = require('../common');
const { assert } = common;
const { h3, haveClient, startH3Server, gtls, sluice } = require('./h3common');
const { frame, headersFrame, goawayId, h3Clients } = require('./quic_client');
const { KiB, MiB, BUF, pool, tmpFile, waitUntil, waitInUseZero, hashBody } = require('../uploads/pool_helpers');

const run = common.isSluice && h3 ? describe : describe.skip;

const H3_REQUEST_CANCELLED = 0x10c;

// Keeps every chunk of `stream` in `held` (never released here), telling
// count(n) of each; answers the body's sha256 at its end.
function holdBody(stream, held, count) {
  const h = crypto.createHash('sha256');
  stream.on('data', (chunk) => {
    h.update(chunk);
    count(chunk.length);
    held.push(chunk);
  });
  stream.on('end', () => {
    if (stream.destroyed) return;
    stream.respond({ ':status': 200 });
    stream.end(h.digest('hex'));
  });
}

// Releases the held chunks as they come (now, then every 5 ms) until the
// held upload's `response` settles; it must answer `body`'s sha256.
async function releaseUntilAnswered(held, response, body, ms, what) {
  const release = () => { for (const chunk of held.splice(0)) sluice.releaseBuffer(chunk); };
  release();
  const pump = setInterval(release, 5);
  try {
    const r = await common.withTimeout(response, ms, what);
    assert.strictEqual(r.status, 200);
    assert.strictEqual(r.body.toString(), common.sha256(body));
  } finally {
    clearInterval(pump);
    release();
  }
}

function checkHash(r, body) {
  assert.strictEqual(r.status, 200, JSON.stringify(r.reset !== undefined ? r : r.body.toString()));
  const j = JSON.parse(r.body.toString());
  assert.strictEqual(j.length, body.length);
  assert.strictEqual(j.sha, common.sha256(body));
  assert.ok(j.pooled >= 0.9 * body.length,
    `only ${j.pooled} of ${body.length} bytes (${(100 * j.pooled / body.length).toFixed(1)}%) were views of pool memory`);
  return j;
}

// A request head for `path` with a body to follow (no FIN).
function postHead(path) {
  return headersFrame([':method', 'POST', ':scheme', 'https', ':authority', 'localhost', ':path', path]);
}

run('HTTP/3 request bodies in pool memory [sluice-only]', function () {
  this.timeout(30000);
  const { connect } = h3Clients();

  async function hashServer(api, options) {
    if (api === 'compat') {
      return startH3Server(options, (req, res) => hashBody(req, (json) => res.end(json)));
    }
    const s = await startH3Server(options);
    s.server.on('stream', (stream) => hashBody(stream, (json) => {
      stream.respond({ ':status': 200 });
      stream.end(json);
    }));
    return s;
  }

  for (const api of ['stream', 'compat']) {
    it(`${api} API: an 8 MiB POST arrives intact, >= 90% as views of pool memory; every buffer comes back`, async function () {
      const p = pool(1024);
      const { port } = await hashServer(api, { requestBufferAllocator: p.alloc });
      const c = await connect(port);
      const body = crypto.randomBytes(8 * MiB);
      checkHash(await common.withTimeout(c.request('POST', '/up', [], body, port), 25000, 'the upload'), body);
      assert.strictEqual(p.stats().outstanding, 0);
      await waitInUseZero(p);
    });
  }

  it('a pool smaller than the body (4 buffers, 4 MiB): the stream waits for memory, releases let it go on, bytes exact', async function () {
    const p = pool(4);
    const { port } = await hashServer('stream', { requestBufferAllocator: p.alloc });
    const c = await connect(port);
    const body = crypto.randomBytes(4 * MiB);
    checkHash(await common.withTimeout(c.request('POST', '/up', [], body, port), 25000, 'the upload'), body);
    await waitInUseZero(p);
  });

  it('compat idioms without releaseBuffer through 4 buffers: pipe(file) (pool views) and for await complete intact', async function () {
    const p = pool(4);
    const file = tmpFile('h3-pipe.bin');
    let zeroCopy = 0;
    const { port } = await startH3Server({ requestBufferAllocator: p.alloc }, async (req, res) => {
      if (req.url === '/pipe') {
        req.on('data', (chunk) => { if (chunk.buffer.byteLength === BUF) zeroCopy += chunk.length; });
        const out = fs.createWriteStream(file);
        req.pipe(out);
        out.on('finish', () => res.end(common.sha256(fs.readFileSync(file))));
        return;
      }
      const h = crypto.createHash('sha256');
      for await (const chunk of req) h.update(chunk);
      res.end(h.digest('hex'));
    });
    const c = await connect(port);
    const body = crypto.randomBytes(2 * MiB);
    for (const path of ['/pipe', '/iterate']) {
      const r = await common.withTimeout(c.request('POST', path, [], body, port), 20000, path);
      assert.strictEqual(r.status, 200, path);
      assert.strictEqual(r.body.toString(), common.sha256(body), path);
    }
    assert.ok(zeroCopy >= 0.9 * body.length, `pipe: only ${zeroCopy} bytes as pool views`);
    await waitInUseZero(p);
  });

  it('a request that never releases stalls only itself at the stream limit; another stream on the connection completes; releasing resumes it', async function () {
    const p = pool(1024);
    const LIMIT = 256 * KiB;
    const held = [];
    let received = 0;
    const { server, port } = await startH3Server({
      requestBufferAllocator: p.alloc, http2: { initialWindowSize: LIMIT },
    });
    server.on('stream', (stream, headers) => {
      if (headers[':path'] !== '/hold') {
        hashBody(stream, (json) => {
          stream.respond({ ':status': 200 });
          stream.end(json);
        });
        return;
      }
      holdBody(stream, held, (n) => { received += n; });
    });
    const c = await connect(port);
    // Twice the stream limit: at most LIMIT bytes wait unread in OpenSSL,
    // well inside its connection window (768 KiB), so the other upload
    // has credit. A larger held body can use up the connection window
    // (OpenSSL grows the stream's window on its own: docs/http3.md).
    const big = crypto.randomBytes(2 * LIMIT);
    const stuck = c.request('POST', '/hold', [], big, port);
    let last = -1;
    await waitUntil(() => {
      const still = received === last && received > 0;
      last = received;
      return still;
    }, 5000, () => `the held upload to stall (received ${received})`);
    assert.ok(received <= LIMIT, `${received} bytes were lent past a ${LIMIT} byte stream limit`);
    assert.ok(received >= LIMIT / 2, `only ${received} bytes arrived`);
    assert.ok(p.stats().inUse * BUF <= LIMIT + 2 * BUF, `pool: ${JSON.stringify(p.stats())}`);
    // Another request on the same connection is served meanwhile.
    const other = crypto.randomBytes(MiB);
    checkHash(await common.withTimeout(c.request('POST', '/other', [], other, port), 15000, 'the other upload'), other);
    assert.ok(received <= LIMIT, `${received} bytes past the limit after the other upload`);
    // Releasing as they come from now on completes the first.
    await releaseUntilAnswered(held, stuck, big, 20000, 'the held upload after releasing');
    await waitInUseZero(p);
  });

  it('a dry pool stops only the upload that needs memory: a GET on the same connection is served, releasing resumes the upload', async function () {
    const p = pool(2);
    const held = [];
    let received = 0;
    const { server, port } = await startH3Server({ requestBufferAllocator: p.alloc });
    server.on('stream', (stream, headers) => {
      if (headers[':method'] === 'GET') {
        stream.respond({ ':status': 200 });
        stream.end('got');
        return;
      }
      holdBody(stream, held, (n) => { received += n; });
    });
    const c = await connect(port);
    // Small enough that its unread bytes leave the GET connection credit
    // (see the stream-limit test above).
    const body = crypto.randomBytes(512 * KiB);
    const up = c.request('POST', '/up', [], body, port);
    await waitUntil(() => p.stats().inUse === 2 && received > 0, 5000,
      () => `the pool to run dry (${JSON.stringify(p.stats())}, received ${received})`);
    const stalledAt = received;
    const get = await common.withTimeout(c.request('GET', '/', [], null, port), 5000, 'a GET while the pool is dry');
    assert.strictEqual(get.status, 200);
    assert.strictEqual(get.body.toString(), 'got');
    assert.strictEqual(received, stalledAt, 'body bytes arrived without pool memory');
    assert.ok(received < body.length);
    await releaseUntilAnswered(held, up, body, 15000, 'the upload after releasing');
    await waitInUseZero(p);
  });

  it('the client resets uploads the server read to their last byte while holding them: every pool buffer comes back, their bytes no longer count against the connection, no GOAWAY', async function () {
    const p = pool(1024);
    const closed = [];
    const held = [];
    const PART = 192 * KiB;
    const { server, port } = await startH3Server({
      requestBufferAllocator: p.alloc,
      // The two held bodies fill the connection limit exactly: bytes of
      // the reset streams still counted after their release would leave
      // the next upload no room at all.
      http2: { initialWindowSize: 256 * KiB, connectionWindowSize: 2 * PART },
    });
    server.on('stream', (stream, headers) => {
      const path = headers[':path'];
      if (path === '/ok') {
        hashBody(stream, (json) => {
          stream.respond({ ':status': 200 });
          stream.end(json);
        });
        return;
      }
      stream.on('error', () => {});
      stream.on('close', () => closed.push(path));
      stream.on('data', (chunk) => held.push(chunk));
    });
    const c = await connect(port);
    const streams = [];
    for (const path of ['/hold1', '/hold2']) {
      const s = c.raw(Buffer.concat([postHead(path), frame(0x0, crypto.randomBytes(PART + 64 * KiB)).subarray(0, 1 + 8 + PART)]), { noFin: true });
      s.catch(() => {});
      streams.push(s);
    }
    const heldBytes = () => held.reduce((n, chunk) => n + chunk.length, 0);
    await waitUntil(() => heldBytes() === 2 * PART, 5000,
      () => `both bodies read (${heldBytes()} bytes; pool ${JSON.stringify(p.stats())})`);
    for (const s of streams) c.native.reset(s.id, H3_REQUEST_CANCELLED);
    await waitUntil(() => closed.length === 2, 5000, () => `the streams to close (${closed})`);
    for (const chunk of held.splice(0)) sluice.releaseBuffer(chunk);
    await waitInUseZero(p);
    assert.strictEqual(p.stats().outstanding, 0);
    const body = crypto.randomBytes(2 * MiB);
    checkHash(await common.withTimeout(c.request('POST', '/ok', [], body, port), 15000, 'the next upload'), body);
    assert.strictEqual(goawayId(c), null, 'no GOAWAY: nothing was left unread');
    await waitInUseZero(p);
  });

  it('the client resets uploads the server held back (one never read, one at the stream limit): every pool buffer comes back, and the connection, whose QUIC window lost their unread bytes, gets GOAWAY', async function () {
    const p = pool(1024);
    const closed = [];
    const held = [];
    const { server, port } = await startH3Server({
      requestBufferAllocator: p.alloc,
      http2: { initialWindowSize: 256 * KiB },
    });
    server.on('stream', (stream, headers) => {
      const path = headers[':path'];
      if (path === '/ok') {
        hashBody(stream, (json) => {
          stream.respond({ ':status': 200 });
          stream.end(json);
        });
        return;
      }
      stream.on('error', () => {});
      stream.on('close', () => closed.push(path));
      if (path === '/read') stream.on('data', (chunk) => sluice.releaseBuffer(chunk));
      if (path === '/hold') stream.on('data', (chunk) => held.push(chunk));
      // '/unread': never read; its chunks queue in the stream.
    });
    const c = await connect(port);
    const streams = [];
    for (const path of ['/read', '/unread', '/hold']) {
      const s = c.raw(Buffer.concat([postHead(path), frame(0x0, crypto.randomBytes(600 * KiB))]), { noFin: true });
      s.catch(() => {});
      streams.push(s);
    }
    const heldBytes = () => held.reduce((n, chunk) => n + chunk.length, 0);
    // '/hold' stops at the stream limit (its client has sent more).
    await waitUntil(() => heldBytes() >= 192 * KiB, 5000,
      () => `held chunks (${heldBytes()} bytes; pool ${JSON.stringify(p.stats())})`);
    for (const s of streams) c.native.reset(s.id, H3_REQUEST_CANCELLED);
    await waitUntil(() => closed.length === 3, 5000, () => `the streams to close (${closed})`);
    for (const chunk of held.splice(0)) sluice.releaseBuffer(chunk);
    await waitInUseZero(p);
    assert.strictEqual(p.stats().outstanding, 0);
    // OpenSSL keeps the credit of a reset stream's unread bytes: the
    // connection is retired (GOAWAY naming the stream after the last
    // request); new requests go to a new connection.
    await waitUntil(() => goawayId(c) !== null, 5000, () => 'GOAWAY');
    assert.strictEqual(goawayId(c), 12);
    const c2 = await connect(port);
    const body = crypto.randomBytes(2 * MiB);
    checkHash(await common.withTimeout(c2.request('POST', '/ok', [], body, port), 15000, 'an upload on a new connection'), body);
    await waitInUseZero(p);
  });

  it('releaseBuffer on HTTP/3 chunks: a second release throws ERR_SLUICE_BUFFER_RELEASED, a slice ERR_SLUICE_INVALID_CHUNK, a foreign buffer is ignored', async function () {
    const p = pool(1024);
    const outcomes = [];
    const { port } = await startH3Server({ requestBufferAllocator: p.alloc }, (req, res) => {
      req.on('data', (chunk) => {
        if (outcomes.length > 0 || chunk.buffer.byteLength !== BUF || chunk.length < 2) {
          sluice.releaseBuffer(chunk);
          return;
        }
        const o = {};
        try { sluice.releaseBuffer(chunk.subarray(1)); } catch (e) { o.slice = e; }
        try { sluice.releaseBuffer(Buffer.alloc(16)); } catch (e) { o.foreign = e; }
        try { sluice.releaseBuffer(chunk); } catch (e) { o.first = e; }
        try { p.release(chunk); } catch (e) { o.second = e; }
        outcomes.push(o);
      });
      req.on('end', () => res.end('ok'));
    });
    const c = await connect(port);
    const r = await common.withTimeout(c.request('POST', '/', [], crypto.randomBytes(256 * KiB), port), 10000, 'POST');
    assert.strictEqual(r.body.toString(), 'ok');
    assert.strictEqual(outcomes.length, 1, 'no chunk of pool memory');
    const [o] = outcomes;
    assert.strictEqual(o.slice && o.slice.code, 'ERR_SLUICE_INVALID_CHUNK');
    assert.strictEqual(o.foreign, undefined);
    assert.strictEqual(o.first, undefined);
    assert.strictEqual(o.second && o.second.code, 'ERR_SLUICE_BUFFER_RELEASED');
    await waitInUseZero(p);
  });

  it('an allocator that throws closes the connection (H3_INTERNAL_ERROR), \'clientError\' hears why once, and the server serves on', async function () {
    const p = pool(1024);
    let fail = true;
    const alloc = (size) => {
      if (fail) throw new Error('no memory today');
      return p.alloc(size);
    };
    const errors = [];
    const { server, port } = await hashServer('stream', { requestBufferAllocator: alloc });
    server.on('clientError', (err) => errors.push(err));
    const c = await connect(port);
    const body = crypto.randomBytes(256 * KiB);
    const r = await common.withTimeout(c.request('POST', '/up', [], body, port), 10000, 'the failing upload');
    assert.ok(r.closed, JSON.stringify(r));
    assert.strictEqual(r.closed.code, 0x102);
    assert.strictEqual(errors.length, 1);
    assert.strictEqual(errors[0].message, 'no memory today');
    fail = false;
    const c2 = await connect(port);
    checkHash(await common.withTimeout(c2.request('POST', '/up', [], body, port), 10000, 'the next upload'), body);
    await waitInUseZero(p);
  });

  (haveClient ? it : it.skip)('gtlsclient: a 3 MiB POST into the pool arrives intact, >= 90% as views', async function () {
    const p = pool(1024);
    const { port } = await hashServer('compat', { requestBufferAllocator: p.alloc });
    const body = crypto.randomBytes(3 * MiB + 17);
    const { code, responses, log } = await gtls(port, ['/up'], { method: 'POST', data: body });
    assert.strictEqual(code, 0, log.slice(-2000));
    checkHash(responses.get('/up'), body);
    await common.cleanup();
    await waitInUseZero(p);
  });
});
