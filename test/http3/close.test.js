'use strict';

// server.close() on an HTTP/3 server, seen from clients on node's OpenSSL
// QUIC client (test/http3/quic_client.js): every connection gets GOAWAY
// on the server's control stream, an idle one is closed at once
// (CONNECTION_CLOSE, H3_NO_ERROR), a request in flight finishes whole and
// its connection closes after it, a client that vanished without a word
// does not hold the close, then the callback and 'close' fire and the UDP
// port is free. closeGrace is set far beyond the test's timeout, so a
// close that waited on it fails the test rather than passing slowly.
// server.closeIdleConnections() and closeAllConnections() on HTTP/3
// connections (and, in one call, an HTTP/2 session), alone and after
// server.close().
// [sluice-only]: node has no HTTP/3 server.

const dgram = require('node:dgram');
const common = require('../common');
const { assert } = common;
const { h3, startH3Server } = require('./h3common');
const { goawayId, h3Clients } = require('./quic_client');

const run = common.isSluice && h3 ? describe : describe.skip;

const H3_NO_ERROR = 0x100;

async function until(cond, what) {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > 15000) throw new Error(`timed out waiting for ${what}`);
    await common.sleep(10);
  }
}

run('HTTP/3 server.close() [sluice-only]', function () {
  this.timeout(30000);
  const { connect } = h3Clients();

  it('GOAWAY to all, idle connections closed at once, the request in flight finishes, then close', async function () {
    const events = [];
    let release = null;
    const { server, port } = await startH3Server({ http3: { closeGrace: 600000 } }, (req, res) => {
      if (req.url === '/slow') {
        release = () => res.end('finished after GOAWAY');
      } else {
        res.end('quick');
      }
    });
    const idle = await connect(port);
    const busy = await connect(port);
    const gone = await connect(port);
    for (const c of [idle, busy, gone]) {
      const r = await common.withTimeout(c.request('GET', '/quick', [], null, port), 10000, 'GET');
      assert.strictEqual(r.status, 200);
    }
    // `busy` has a request in flight (stream 4); `gone` vanishes without a
    // CONNECTION_CLOSE, as a client whose network went away.
    const slow = busy.request('GET', '/slow', [], null, port);
    await until(() => release !== null, 'the slow request');
    gone.destroy();
    idle.closed.then((info) => events.push(['idle closed', info.code]));
    busy.closed.then((info) => events.push(['busy closed', info.code]));
    const closed = new Promise((resolve) => server.close(() => { events.push(['close callback']); resolve(); }));
    const closeEvent = common.once(server, 'close').then(() => events.push(['close event']));

    // The idle connection: GOAWAY naming stream 4 (after its request 0),
    // then CONNECTION_CLOSE with H3_NO_ERROR, while a request elsewhere is
    // still held by its handler.
    const idleInfo = await common.withTimeout(idle.closed, 15000, 'the idle connection closed');
    assert.strictEqual(idleInfo.code, H3_NO_ERROR);
    assert.strictEqual(idleInfo.transport, false);
    assert.strictEqual(goawayId(idle), 4, 'GOAWAY(4) before the close');
    // The busy connection got GOAWAY naming stream 8 (its requests 0 and 4
    // are processed) and stays open for its request.
    await until(() => goawayId(busy) !== null, 'GOAWAY on the busy connection');
    assert.strictEqual(goawayId(busy), 8);
    assert.strictEqual(busy.closeInfo, null, 'the busy connection is still open');
    assert.deepStrictEqual(events, [['idle closed', H3_NO_ERROR]]);

    release();
    const r = await common.withTimeout(slow, 15000, 'the response in flight');
    assert.strictEqual(r.status, 200);
    assert.strictEqual(r.body.toString(), 'finished after GOAWAY');
    const busyInfo = await common.withTimeout(busy.closed, 15000, 'the busy connection closed');
    assert.strictEqual(busyInfo.code, H3_NO_ERROR);
    // The vanished client's connection does not hold the close (closeGrace
    // is 10 minutes).
    await common.withTimeout(Promise.all([closed, closeEvent]), 15000, "server.close() callback and 'close'");
    assert.deepStrictEqual(events.map((e) => e[0]), ['idle closed', 'busy closed', 'close callback', 'close event']);
    assert.strictEqual(server.http3Address(), null);

    // The UDP port is released: it can be bound again.
    const sock = dgram.createSocket('udp4');
    await new Promise((resolve, reject) => {
      sock.once('error', reject);
      sock.bind(port, '127.0.0.1', resolve);
    });
    sock.close();
  });

  it("on a quiet loop, the close callback and 'close' run when the endpoint closes, before the loop empties", async function () {
    // A process with nothing else to do: the endpoint's close is the last
    // event. What its callback queues (an await's continuation) must run
    // then, not only once node drains what was left queued at 'beforeExit'
    // (in a busy process: at some later, unrelated callback).
    const { localhost } = require('../tls/tls_common').fixtures();
    const script = `
      const sluice = require(${JSON.stringify(require.resolve('../..'))});
      const out = [];
      process.once('beforeExit', () => { out.push('beforeExit'); setImmediate(() => console.log(out.join(','))); });
      const server = sluice.createSecureServer({ key: process.env.KEY, cert: process.env.CERT, http3: true });
      server.on('close', () => out.push('close event'));
      server.listen(0, '127.0.0.1', async () => {
        await new Promise((resolve) => server.close(() => { out.push('close callback'); resolve(); }));
        out.push('awaited');
      });
    `;
    // runNodeScript: under test:asan the child gets the sanitizer runtime.
    const r = await common.runNodeScript(script, {
      timeout: 20000, env: { KEY: localhost.key.toString(), CERT: localhost.cert.toString() },
    });
    assert.strictEqual(r.code, 0, r.stderr);
    const stdout = r.stdout;
    assert.strictEqual(stdout.trim(), 'close event,close callback,awaited,beforeExit');
  });

  it('a server with no HTTP/3 connection closes, and one whose only client vanished', async function () {
    const a = await startH3Server({ http3: { closeGrace: 600000 } }, (req, res) => res.end('x'));
    await common.withTimeout(new Promise((resolve) => a.server.close(resolve)), 15000, 'close with no connection');
    const b = await startH3Server({ http3: { closeGrace: 600000 } }, (req, res) => res.end('x'));
    const c = await connect(b.port);
    const r = await common.withTimeout(c.request('GET', '/', [], null, b.port), 10000, 'GET');
    assert.strictEqual(r.status, 200);
    c.destroy();
    assert.strictEqual(b.server._http3.connections(), 1, 'the server does not know the client left');
    await common.withTimeout(new Promise((resolve) => b.server.close(resolve)), 15000, 'close after the client vanished');
  });

  // server.closeIdleConnections() / closeAllConnections() reach the HTTP/3
  // connections as they reach HTTP/2 sessions (docs/api.md).
  async function busyServer(options = {}) {
    const held = [];
    const s = await startH3Server(options, (req, res) => {
      if (req.url === '/slow') {
        held.push({ req, res, closed: new Promise((resolve) => res.on('close', resolve)) });
      } else {
        res.end('quick');
      }
    });
    return { ...s, held };
  }

  it('closeIdleConnections(): the idle connection is closed (H3_NO_ERROR), the one with a request in flight serves on', async function () {
    const { server, port, held } = await busyServer();
    const idle = await connect(port);
    const busy = await connect(port);
    for (const c of [idle, busy]) {
      assert.strictEqual((await common.withTimeout(c.request('GET', '/quick', [], null, port), 10000, 'GET')).status, 200);
    }
    const slow = busy.request('GET', '/slow', [], null, port);
    await until(() => held.length === 1, 'the slow request');
    server.closeIdleConnections();
    const info = await common.withTimeout(idle.closed, 10000, 'the idle connection closed');
    assert.strictEqual(info.code, H3_NO_ERROR);
    assert.strictEqual(info.transport, false);
    await common.sleep(200);
    assert.strictEqual(busy.closeInfo, null, 'the busy connection is still open');
    held[0].res.end('finished');
    const r = await common.withTimeout(slow, 10000, 'the response in flight');
    assert.strictEqual(r.body.toString(), 'finished');
    // Still listening, and the busy connection still serves.
    assert.strictEqual((await common.withTimeout(busy.request('GET', '/quick', [], null, port), 10000, 'GET')).status, 200);
    const fresh = await connect(port);
    assert.strictEqual((await common.withTimeout(fresh.request('GET', '/quick', [], null, port), 10000, 'GET')).status, 200);
  });

  it('closeAllConnections(): HTTP/3 connections closed with requests in flight aborted, the HTTP/2 session too, the server still listening', async function () {
    const http2 = require('node:http2');
    const { server, port, tcpPort, held } = await busyServer();
    const idle = await connect(port);
    assert.strictEqual((await common.withTimeout(idle.request('GET', '/quick', [], null, port), 10000, 'GET')).status, 200);
    const busy = await connect(port);
    const slow = busy.request('GET', '/slow', [], null, port);
    const h2 = http2.connect(`https://127.0.0.1:${tcpPort}`, { rejectUnauthorized: false });
    h2.on('error', () => {});
    const h2closed = new Promise((resolve) => h2.on('close', resolve));
    const h2req = h2.request({ ':path': '/slow' });
    h2req.on('error', () => {});
    h2req.end();
    await until(() => held.length === 2, 'the two slow requests');
    server.closeAllConnections();
    const [a, b] = await common.withTimeout(Promise.all([idle.closed, busy.closed]), 10000, 'both HTTP/3 connections closed');
    assert.strictEqual(a.code, H3_NO_ERROR);
    assert.strictEqual(b.code, H3_NO_ERROR);
    const r = await common.withTimeout(slow, 10000, 'the request in flight');
    assert.ok(r.closed !== undefined, `no response: ${JSON.stringify(r)}`);
    // The handlers' responses are closed unfinished (HTTP/3 and HTTP/2).
    await common.withTimeout(Promise.all(held.map((h) => h.closed)), 10000, "the handlers' 'close'");
    for (const h of held) assert.strictEqual(h.res.writableFinished, false);
    await common.withTimeout(h2closed, 10000, 'the HTTP/2 session closed');
    // Closing connections is not closing the server.
    const fresh = await connect(port);
    assert.strictEqual((await common.withTimeout(fresh.request('GET', '/quick', [], null, port), 10000, 'GET')).status, 200);
  });

  it('server.close() then closeAllConnections(): the grace period is cut short, the close completes', async function () {
    const { server, port, held } = await busyServer({ http3: { closeGrace: 600000 } });
    const busy = await connect(port);
    const slow = busy.request('GET', '/slow', [], null, port);
    await until(() => held.length === 1, 'the slow request');
    const closed = new Promise((resolve) => server.close(resolve));
    await until(() => goawayId(busy) !== null, 'GOAWAY');
    await common.sleep(100);
    assert.strictEqual(busy.closeInfo, null, 'held open for its request by close()');
    server.closeAllConnections();
    const info = await common.withTimeout(busy.closed, 10000, 'the connection closed');
    assert.strictEqual(info.code, H3_NO_ERROR);
    assert.ok((await slow).closed !== undefined);
    await common.withTimeout(closed, 10000, 'server.close() callback');
    await common.withTimeout(held[0].closed, 10000, "the handler's 'close'");
    assert.strictEqual(server.http3Address(), null);
  });
});
