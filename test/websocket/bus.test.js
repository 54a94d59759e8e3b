'use strict';

// The pub/sub bus under WebSocketServer (docs/websocket.md "The bus"):
// publishes reach the subscribers of other processes — the processes of
// one machine serving a port (cluster workers, here; MachineAdapter) and
// other hosts through a real redis-server (RedisAdapter with ioredis).
// Sequence numbers prove that nothing is lost while the engine is up and
// that one publisher's messages stay in order. sluice only (ws has no bus).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const common = require('../common');
const { client, terminateClients, next } = require('./helpers');

const { assert } = common;
const sluice = common.isNode ? null : require('../../lib');

const APP = path.join(__dirname, 'pubsub_app.js');

// A client that records every message; waitFor(pred) resolves once a
// message matches.
async function recorder(url) {
  const c = client(url);
  c.got = [];
  const waiters = [];
  c.on('message', (d) => {
    const s = d.toString();
    c.got.push(s);
    for (const w of waiters.splice(0)) {
      if (w.pred(s)) w.resolve(s); else waiters.push(w);
    }
  });
  c.waitFor = (pred, ms = 8000) => common.withTimeout(new Promise((resolve) => {
    const hit = c.got.find(pred);
    if (hit !== undefined) resolve(hit); else waiters.push({ pred, resolve });
  }), ms, 'a message');
  await next(c, 'open');
  return c;
}

// Sends `sub topic` and waits for the answer; -> the serving pid.
async function subscribe(c, topic) {
  const oks = () => c.got.filter((s) => s.startsWith('ok '));
  const n = oks().length;
  c.send(`sub ${topic}`);
  await c.waitFor(() => oks().length > n);
  return oks().pop().slice(3);
}

async function waitUntil(fn, what, ms = 8000) {
  const deadline = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await common.sleep(10);
  }
}

// Publishes `probe` through `pub` until every client has one: the bus'
// links and subscriptions have settled.
async function settle(pub, clients, topic, ms = 10000) {
  const deadline = Date.now() + ms;
  let i = 0;
  for (;;) {
    pub.send(`pub ${topic} probe ${++i}`);
    await common.sleep(30);
    if (clients.every((c) => c.got.some((s) => s.startsWith('probe ')))) return;
    if (Date.now() > deadline) throw new Error('the bus did not settle');
  }
}

// The numbers of `tag` messages a client got, checked strictly increasing
// (order per publisher, no duplicates).
function seqs(c, tag) {
  const out = c.got.filter((s) => s.startsWith(tag + ' ')).map((s) => Number(s.slice(tag.length + 1)));
  for (let i = 1; i < out.length; i++) assert.ok(out[i] > out[i - 1], `out of order: ${out[i - 1]} then ${out[i]}`);
  return out;
}

function startChild(args) {
  const child = spawn(process.execPath, [APP, ...args], { env: common.nodeChildEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  const c = { child, out: '', err: '' };
  child.stderr.on('data', (d) => { c.err += d; });
  const waiters = [];
  child.stdout.on('data', (d) => {
    c.out += d;
    for (const w of waiters.splice(0)) {
      if (w.re.test(c.out)) w.resolve(); else waiters.push(w);
    }
  });
  c.waitFor = (re, what, ms = 15000) => common.withTimeout(new Promise((resolve, reject) => {
    if (re.test(c.out)) return resolve();
    waiters.push({ re, resolve });
    child.once('exit', (code) => reject(new Error(`app exited ${code}: ${c.err}`)));
  }), ms, what);
  c.stop = () => new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', resolve);
    child.stdin.end();
    setTimeout(() => child.kill('SIGKILL'), 3000).unref();
  });
  return c;
}

// The app serving one port as `mode` with 2 members (cluster workers or
// threads), n clients on it, each subscribed to 't' and the bus settled:
// fn(clients, member ids) runs, then everything is torn down.
async function onSharedPort(mode, n, fn) {
  const port = await common.freePort();
  const app = startChild([mode, String(port), '2']);
  try {
    await app.waitFor(/READY\n/, `${mode}: members listening`);
    const cs = [];
    for (let i = 0; i < n; i++) cs.push(await recorder(`ws://127.0.0.1:${port}`));
    const ids = [];
    for (const c of cs) ids.push(await subscribe(c, 't'));
    assert.strictEqual(new Set(ids).size, 2, 'the clients landed on both members');
    await settle(cs[0], cs, 't');
    await fn(cs, ids);
  } finally {
    terminateClients();
    await app.stop();
  }
}

const upTo = (n) => Array.from({ length: n }, (_, i) => i + 1);

(common.isNode ? describe.skip : describe)('WebSocketServer pub/sub bus', function () {
  this.timeout(30000);
  const dirs = [];
  afterEach(async () => {
    terminateClients();
    await common.cleanup();
  });
  after(() => { for (const d of dirs) fs.rmSync(d, { recursive: true, force: true }); });

  function tmpDir() {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bus-test-'));
    dirs.push(d);
    return d;
  }

  // Two WebSocketServers of this process meshed through one directory, as
  // two processes serving one port would be.
  async function twoMembers(options = {}) {
    const dir = tmpDir();
    const members = [];
    for (let i = 0; i < 2; i++) {
      const server = sluice.createServer((req, res) => res.end());
      const wss = new sluice.WebSocketServer({ server, pubsub: new sluice.pubsub.MachineAdapter({ dir, ...options }) });
      wss.on('connection', (ws) => ws.on('message', (d) => {
        const [cmd, topic, ...rest] = d.toString().split(' ');
        if (cmd === 'sub') { ws.subscribe(topic); ws.send('ok x'); }
        if (cmd === 'unsub') { ws.unsubscribe(topic); ws.send('ok x'); }
        if (cmd === 'pub') wss.publish(topic, rest.join(' '));
        if (cmd === 'wspub') ws.publish(topic, rest.join(' '));
      }));
      const port = await common.listenLocal(server);
      members.push({ server, wss, url: `ws://127.0.0.1:${port}` });
    }
    // Both linked.
    const deadline = Date.now() + 5000;
    while (members.some((m) => m.wss._bus._adapter.peers() < 1)) {
      if (Date.now() > deadline) throw new Error('members did not link');
      await common.sleep(10);
    }
    return members;
  }

  it('the hub reports a topic once when it gains its first and loses its last subscriber', async function () {
    const log = [];
    const adapter = {
      attach(sink) { this.sink = sink; },
      subscribe(t) { log.push(`+${t}`); },
      unsubscribe(t) { log.push(`-${t}`); },
      publish() {},
      close() {},
    };
    const server = sluice.createServer((req, res) => res.end());
    const wss = new sluice.WebSocketServer({ server, pubsub: adapter });
    wss.on('connection', (ws) => ws.on('message', (d) => {
      const [cmd, topic, n] = d.toString().split(' ');
      if (cmd === 'sub') ws.subscribe(topic);
      if (cmd === 'unsub') ws.unsubscribe(topic);
      // A storm in one turn: ends subscribed; one report at most.
      if (cmd === 'storm') for (let i = 0; i < Number(n); i++) { ws.subscribe(topic); ws.unsubscribe(topic); ws.subscribe(topic); }
      ws.send('done');
    }));
    const port = await common.listenLocal(server);
    const a = await recorder(`ws://127.0.0.1:${port}`);
    const b = await recorder(`ws://127.0.0.1:${port}`);
    const round = async (c, msg) => { const n = c.got.length; c.send(msg); await c.waitFor(() => c.got.length > n); await common.sleep(20); };
    await round(a, 'sub t');
    await round(b, 'sub t');
    assert.deepStrictEqual(log, ['+t']);
    await round(a, 'unsub t');
    assert.deepStrictEqual(log, ['+t']);
    b.close();
    await next(b, 'close');
    await common.sleep(30);
    assert.deepStrictEqual(log, ['+t', '-t'], 'the last subscriber closing unsubscribes the topic');
    await round(a, 'storm s 10000');
    assert.deepStrictEqual(log, ['+t', '-t', '+s']);
    assert.strictEqual(wss.pubsubStats().topics, 1);
    wss.close();
  });

  it('two members: a publish crosses once, every subscriber gets it, ws.publish skips the sender, subscribers() is local', async function () {
    const [m1, m2] = await twoMembers();
    const a = [await recorder(m1.url), await recorder(m1.url)];
    const b = [await recorder(m2.url), await recorder(m2.url), await recorder(m2.url)];
    for (const c of [...a, ...b]) await subscribe(c, 'room');
    await settle(a[0], [...a, ...b], 'room');
    assert.strictEqual(m1.wss.subscribers('room'), 2);
    assert.strictEqual(m2.wss.subscribers('room'), 3);
    const before2 = m2.wss.pubsubStats().received;
    for (let i = 1; i <= 200; i++) a[0].send(`pub room seq ${i}`);
    b[0].send('wspub room from-b0');
    for (const c of [...a, ...b]) await c.waitFor((s) => s === 'seq 200');
    for (const c of [...a, ...b]) assert.deepStrictEqual(seqs(c, 'seq'), upTo(200));
    // Once per process, not per subscriber: 200 messages reached 3 subscribers.
    assert.strictEqual(m2.wss.pubsubStats().received - before2, 200);
    for (const c of [...a, ...b.slice(1)]) await c.waitFor((s) => s === 'from-b0');
    await common.sleep(50);
    assert.ok(!b[0].got.includes('from-b0'), 'ws.publish skips its sender');
    // A topic of any bytes (a lone surrogate is U+FFFD in UTF-8 on every
    // path), and a large binary message.
    const odd = 'd\u00e9j\u00e0\u{1F600}\ud800';
    for (const c of [a[1], b[1]]) await subscribe(c, odd);
    await waitUntil(() => m1.wss._bus._adapter.wants('d\u00e9j\u00e0\u{1F600}\ufffd'), 'the odd topic on the bus');
    const big = Buffer.alloc(1024 * 1024, 7);
    const got = common.once(b[1], 'message', 5000);
    m1.wss.publish(odd, big);
    const [data] = await got;
    assert.ok(Buffer.isBuffer(data) && data.equals(big));
    m1.wss.close();
    m2.wss.close();
  });

  it('a sibling that stops reading gets drops, counted and reported, not a queue', async function () {
    const [m1, m2] = await twoMembers({ maxBuffered: 1 << 20 });
    const b = await recorder(m2.url);
    await subscribe(b, 't');
    await waitUntil(() => m1.wss._bus._adapter.wants('t'), 'the topic on the bus');
    // m2 stops reading its link: m1's socket buffer fills.
    for (const l of m2.wss._bus._adapter._links) l.socket.pause();
    const errors = [];
    m1.wss.on('error', (err) => errors.push(err));
    const big = Buffer.alloc(256 * 1024);
    for (let i = 0; i < 200; i++) {
      m1.wss.publish('t', big);
      await new Promise((r) => setImmediate(r));
    }
    const { dropped, published } = m1.wss.pubsubStats();
    assert.ok(dropped > 100, `dropped ${dropped} of ${published}`);
    await waitUntil(() => errors.length > 0, 'the drop report');
    assert.strictEqual(errors[0].code, 'ERR_SLUICE_PUBSUB_DROPPED');
    assert.ok(errors[0].dropped > 0);
    let queued = 0;
    for (const l of m1.wss._bus._adapter._links) queued += l.socket.writableLength;
    assert.ok(queued < 4 * 1024 * 1024, `${queued} bytes queued`);
    m1.wss.close();
    m2.wss.close();
  });

  it('a member that goes away disturbs no other; pubsub: false has no bus', async function () {
    const [m1, m2] = await twoMembers();
    const a = await recorder(m1.url);
    const b = await recorder(m2.url);
    await subscribe(a, 't');
    await subscribe(b, 't');
    await settle(a, [a, b], 't');
    m2.wss.close();
    await common.closeServer(m2.server);
    terminateClients();
    await common.sleep(50);
    assert.strictEqual(m1.wss._bus._adapter.peers(), 0);
    const a2 = await recorder(m1.url);
    const a3 = await recorder(m1.url);
    await subscribe(a2, 't');
    a3.send('pub t still');
    await a2.waitFor((s) => s === 'still');
    m1.wss.close();
    const server = sluice.createServer((req, res) => res.end());
    const off = new sluice.WebSocketServer({ server, pubsub: false });
    await common.listenLocal(server);
    assert.strictEqual(off.pubsubStats(), null);
    assert.throws(() => new sluice.WebSocketServer({ noServer: true, pubsub: {} }), { code: 'ERR_SLUICE_PUBSUB_ADAPTER' });
  });

  it('a cluster of 2 workers: every one of 20 subscribers gets every message, in order', async function () {
    await onSharedPort('cluster', 20, async (cs, ids) => {
      for (let i = 1; i <= 300; i++) cs[i % 20].send(`pub t n ${i}`);
      // Different clients publish (through both workers): every message
      // reaches every subscriber once.
      const ns = (c) => new Set(c.got.filter((s) => s.startsWith('n ')));
      await waitUntil(() => cs.every((c) => ns(c).size === 300), 'every message at every subscriber', 10000);
      for (const c of cs) assert.strictEqual(c.got.filter((s) => s.startsWith('n ')).length, 300, 'no duplicates');
      // One publisher: strictly in order everywhere.
      cs[3].send('stream t 200 1 m');
      for (const c of cs) await c.waitFor((s) => s === 'm 200');
      for (const c of cs) assert.deepStrictEqual(seqs(c, 'm'), upTo(200));
      // A worker killed: the other goes on, its subscribers still served.
      const dead = ids[0];
      process.kill(parseInt(dead, 10), 'SIGKILL');
      const left = cs.filter((c, i) => ids[i] !== dead);
      await waitUntil(() => cs.every((c, i) => ids[i] !== dead || c.readyState === c.CLOSED), 'the dead worker\'s clients closed');
      left[0].send('stream t 50 1 k');
      for (const c of left) await c.waitFor((s) => s === 'k 50');
      for (const c of left) assert.deepStrictEqual(seqs(c, 'k'), upTo(50));
    });
  });

  it('worker threads serving one port (reusePort) share topics with no app code', async function () {
    await onSharedPort('threads', 10, async (cs) => {
      cs[1].send('stream t 100 1 r');
      for (const c of cs) await c.waitFor((s) => s === 'r 100');
      for (const c of cs) assert.deepStrictEqual(seqs(c, 'r'), upTo(100));
    });
  });

  describe('Redis (two hosts)', function () {
    const redisServer = spawnSync('sh', ['-c', 'command -v redis-server']).stdout.toString().trim();
    let redisPort;
    let redis = null;

    async function startRedis() {
      const r = spawn(redisServer, ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '',
        '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      r.stdout.on('data', (d) => { out += d; });
      await common.withTimeout(new Promise((resolve, reject) => {
        const t = setInterval(() => { if (/Ready to accept connections/.test(out)) { clearInterval(t); resolve(); } }, 20);
        r.once('exit', (code) => { clearInterval(t); reject(new Error(`redis-server exited ${code}: ${out}`)); });
      }), 5000, 'redis-server ready');
      redis = r;
    }

    function killRedis() {
      const r = redis;
      redis = null;
      return new Promise((resolve) => {
        if (r === null || r.exitCode !== null) return resolve();
        r.once('exit', resolve);
        r.kill('SIGKILL');
      });
    }

    before(async function () {
      if (!redisServer) {
        // eslint-disable-next-line no-console
        console.log('      redis-server is not installed (apt-get install redis-server): Redis bus tests skipped');
        this.skip();
      }
      redisPort = await common.freePort();
    });
    afterEach(killRedis);

    it('two server processes: nothing lost, in order; Redis killed and restarted mid-stream: local delivery goes on, drops are reported, subscriptions come back', async function () {
      await startRedis();
      const [p1, p2] = [await common.freePort(), await common.freePort()];
      const h1 = startChild(['redis', String(p1), String(redisPort)]);
      const h2 = startChild(['redis', String(p2), String(redisPort)]);
      try {
        await h1.waitFor(/READY\n/, 'host 1');
        await h2.waitFor(/READY\n/, 'host 2');
        const a = [await recorder(`ws://127.0.0.1:${p1}`), await recorder(`ws://127.0.0.1:${p1}`)];
        const b = [await recorder(`ws://127.0.0.1:${p2}`), await recorder(`ws://127.0.0.1:${p2}`)];
        const all = [...a, ...b];
        for (const c of all) await subscribe(c, 'room');
        await settle(a[0], all, 'room');
        // Up: nothing lost, in order, both directions.
        a[0].send('stream room 300 1 x');
        b[0].send('stream room 300 1 y');
        for (const c of all) {
          await c.waitFor((s) => s === 'x 300');
          await c.waitFor((s) => s === 'y 300');
        }
        const full = upTo(300);
        for (const c of all) {
          assert.deepStrictEqual(seqs(c, 'x'), full);
          assert.deepStrictEqual(seqs(c, 'y'), full);
        }
        // Redis killed mid-stream, then restarted on its port.
        a[0].send('stream room 150 10 z');
        await b[0].waitFor((s) => s === 'z 20');
        await killRedis();
        await h1.waitFor(/ERROR ERR_SLUICE_PUBSUB_DROPPED \d+/, 'the drops reported', 5000);
        await common.sleep(200);
        await startRedis();
        for (const c of a) await c.waitFor((s) => s === 'z 150', 8000);
        // Local delivery never stopped.
        for (const c of a) assert.deepStrictEqual(seqs(c, 'z'), upTo(150));
        // The other host lost some while Redis was away, kept the order,
        // and hears the publisher again once the subscriptions are back.
        const zb = seqs(b[0], 'z');
        assert.ok(zb.length < 150 && zb.length >= 20, `host 2 got ${zb.length}`);
        b[1].got.length = 0;
        await settle(a[1], [b[1]], 'room');
        b[0].send('stream room 100 1 w');
        for (const c of all) await c.waitFor((s) => s === 'w 100');
        for (const c of all) assert.deepStrictEqual(seqs(c, 'w'), full.slice(0, 100));
      } finally {
        terminateClients();
        await Promise.all([h1.stop(), h2.stop()]);
      }
    });
  });
});
