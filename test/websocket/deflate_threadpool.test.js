'use strict';

// permessage-deflate of large outgoing messages on the libuv threadpool
// (core/websocket/ws_deflate_job.h): a message of 64 KiB or more is deflated
// by a worker with the connection's own deflater while the loop goes on;
// everything sent after it (small compressed and plain messages, pings,
// published frames, the close) waits behind it and leaves in order, with
// the deflate context carried across (context takeover). A connection that
// goes mid-job frees the job and its deflater once the worker is done.
// sluice-only: ws deflates with node's async zlib, with no counters to
// observe it by.

const http2 = require('node:http2');
const zlib = require('node:zlib');
const common = require('../common');
const { assert } = common;
const binding = common.libInternal('common/binding');
const { startWs, client, terminateClients, next, rawWs, frame, closePayload, parseFrames } = require('./helpers');

// Compressible but not trivially: a deflate of it takes a while.
function payload(n, seed) {
  const b = Buffer.alloc(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    b[i] = 97 + ((x >>> 16) % 16);
  }
  return b;
}

// Resolves once pred() holds (polled every 5 ms), or fails after ms.
function until(pred, ms, what) {
  return common.withTimeout((async () => {
    while (!pred()) await common.sleep(5);
  })(), ms, what);
}

async function jobsBackToZero() {
  await until(() => binding.compressionStats().wsDeflateJobs === 0, 10000,
    () => `ws deflate jobs still alive: ${JSON.stringify(binding.compressionStats())}`);
}

(common.isNode ? describe.skip : describe)('WebSocket deflate on the threadpool [sluice-only]', function () {
  this.timeout(30000);
  afterEach(async () => {
    terminateClients();
    await common.cleanup();
    await jobsBackToZero();
  });

  it('a large message is deflated off the loop; later sends wait behind it and arrive in order (ws client, context takeover)', async () => {
    const { wss, url } = await startWs({ perMessageDeflate: { threshold: 1024 } });
    const big1 = payload(1024 * 1024, 1);
    const big2 = payload(200 * 1024, 2);
    const small = payload(4096, 3);
    const seen = {};
    wss.on('connection', (ws) => {
      ws.on('error', () => {});
      wss.publish('t', 'published');
      ws.subscribe('t');
      ws.send(big1);
      // The job is in flight: it holds the message, and bufferedAmount
      // counts it.
      seen.jobs = binding.compressionStats().wsDeflateJobs;
      seen.buffered = ws.bufferedAmount;
      ws.send(small);                      // compressed, inline, behind the job
      ws.send('plain text', { compress: false });
      ws.ping('between');
      wss.publish('t', 'to subscribers');  // a hub frame, behind the job too
      ws.send(big2);                       // a second job, after the first
      ws.send(small, { binary: false });   // text this time
      ws.close(4000, 'all sent');
    });
    const c = client(url, undefined, { perMessageDeflate: true });
    const got = [];
    c.on('message', (m, isBinary) => got.push([isBinary, m]));
    c.on('ping', (d) => got.push(['ping', d]));
    const [code, reason] = await next(c, 'close', 20000);
    assert.strictEqual(seen.jobs, 1);
    assert.ok(seen.buffered >= big1.length, `bufferedAmount ${seen.buffered} counts the held message`);
    assert.deepStrictEqual([code, reason.toString()], [4000, 'all sent']);
    assert.strictEqual(got.length, 7, got.map((g) => g[0]).join());
    assert.ok(got[0][0] === true && got[0][1].equals(big1));
    assert.ok(got[1][0] === true && got[1][1].equals(small));
    assert.deepStrictEqual([got[2][0], got[2][1].toString()], [false, 'plain text']);
    assert.deepStrictEqual([got[3][0], got[3][1].toString()], ['ping', 'between']);
    assert.deepStrictEqual([got[4][0], got[4][1].toString()], [false, 'to subscribers']);
    assert.ok(got[5][0] === true && got[5][1].equals(big2));
    assert.deepStrictEqual([got[6][0], got[6][1].toString()], [false, small.toString()]);
  });

  it('on the wire: RSV1 on the deflated messages, one deflate context across the inline and threadpool ones', async () => {
    const { wss, port } = await startWs({ perMessageDeflate: { threshold: 1024 } });
    // x: inline; big (a job) starts with x and ends with r; then r alone,
    // inline again: with the context carried across, big's start and r
    // are back-references (a few bytes each), r's random bytes are not
    // sent twice.
    const x = require('node:crypto').randomBytes(8 * 1024);
    const r = require('node:crypto').randomBytes(16 * 1024);
    const big = Buffer.concat([x, payload(200 * 1024, 4), r]);
    wss.on('connection', (ws) => {
      ws.send(x);
      ws.send(big);
      ws.send(r);
    });
    const c = await rawWs(port, '/', 'Sec-WebSocket-Extensions: permessage-deflate\r\n');
    const f = await c.waitFrames((fs) => fs.length >= 3, 'three messages', 15000);
    assert.deepStrictEqual(f.map((m) => m.rsv), [0x40, 0x40, 0x40]);
    // One inflater for the whole connection, as the peer keeps it.
    const inflater = zlib.createInflateRaw();
    const inflate = (p) => new Promise((resolve) => {
      const out = [];
      const onData = (d) => out.push(d);
      inflater.on('data', onData);
      inflater.write(Buffer.concat([p, Buffer.from([0, 0, 0xff, 0xff])]));
      inflater.flush(zlib.constants.Z_SYNC_FLUSH, () => {
        inflater.removeListener('data', onData);
        resolve(Buffer.concat(out));
      });
    });
    assert.ok((await inflate(f[0].payload)).equals(x));
    assert.ok((await inflate(f[1].payload)).equals(big));
    assert.ok((await inflate(f[2].payload)).equals(r));
    assert.ok(f[1].payload.length < r.length + 8 * 1024,
      `big refers back to x: ${f[1].payload.length} bytes`);
    assert.ok(f[2].payload.length < 1024, `r refers back to big's end: ${f[2].payload.length} bytes`);
  });

  it('the peer\'s close while a job runs: the close echo waits for the message; a terminate mid-job frees job and deflater', async () => {
    const { wss, port } = await startWs({ perMessageDeflate: true });
    const big = payload(2 * 1024 * 1024, 6);
    const sockets = [];
    let inFlight = null;  // jobs right after the second socket's send
    wss.on('connection', (ws) => {
      ws.on('error', () => {});
      sockets.push(ws);
      ws.on('message', () => {
        ws.send(big);
        if (sockets.length === 2) {
          // The job was queued by the send; its completion reaches this
          // thread only on a later turn of the loop, so the terminate
          // below always meets it in flight.
          inFlight = binding.compressionStats().wsDeflateJobs;
          ws.terminate();
        }
      });
    });
    const r = await rawWs(port, '/', 'Sec-WebSocket-Extensions: permessage-deflate\r\n');
    // A message, then at once the close: the server's echo of the close
    // comes after the deflated message, then the connection ends.
    await r.send(Buffer.concat([frame(1, 'go'), frame(8, closePayload(1000))]));
    const closed = await r.closedWith();
    assert.strictEqual(closed.code, 1000);
    const f = r.frames();
    assert.deepStrictEqual(f.map((x) => x.opcode), [2, 8]);
    assert.strictEqual(f[0].rsv, 0x40);

    // terminate() while the worker deflates: nothing is written, the job
    // and its orphaned deflater go once the worker is done.
    const r2 = await rawWs(port, '/', 'Sec-WebSocket-Extensions: permessage-deflate\r\n');
    await r2.send(frame(1, 'go'));
    await r2.c.waitClose(8000);
    assert.strictEqual(inFlight, 1, 'a job in flight at the terminate');
    await jobsBackToZero();
  });

  it('over HTTP/2 (RFC 8441): a large message and what follows it, in order', async () => {
    const server = common.impl.createServer((req, res) => res.end('plain'));
    const wss = new common.impl.WebSocketServer({ server, perMessageDeflate: true });
    const big = payload(256 * 1024, 7);
    wss.on('connection', (ws) => {
      ws.send(big);
      ws.send('after', { compress: false });
      ws.close(1000);
    });
    const port = await common.listenLocal(server);
    const session = http2.connect(`http://localhost:${port}`);
    session.on('error', () => {});
    await next(session, 'remoteSettings');
    const stream = session.request({
      ':method': 'CONNECT', ':protocol': 'websocket', ':path': '/', ':scheme': 'http',
      'sec-websocket-version': '13', 'sec-websocket-extensions': 'permessage-deflate',
    });
    let body = Buffer.alloc(0);
    stream.on('data', (d) => { body = Buffer.concat([body, d]); });
    await until(() => parseFrames(body).frames.length >= 3, 15000, 'three frames');
    session.destroy();
    const f = parseFrames(body).frames;
    assert.deepStrictEqual(f.map((x) => [x.opcode, x.rsv]), [[2, 0x40], [1, 0], [8, 0]]);
    const inflated = zlib.inflateRawSync(Buffer.concat([f[0].payload, Buffer.from([0, 0, 0xff, 0xff])]),
      { finishFlush: zlib.constants.Z_SYNC_FLUSH });
    assert.ok(inflated.equals(big));
    assert.strictEqual(f[1].payload.toString(), 'after');
  });
});
