'use strict';

// docs/examples/: each example started as a reader starts it (node
// docs/examples/run.js <name>, which links this checkout as 'sluice') on a
// free port, and checked with real clients. Each child runs in its own
// process group and is killed after its test.

const fs = require('fs');
const os = require('os');
const net = require('net');
const path = require('path');
const http = require('http');
const https = require('https');
const zlib = require('zlib');
const crypto = require('crypto');
const { spawn } = require('child_process');
const common = require('../common');
const { assert } = common;

const RUN = path.join(common.ROOT, 'docs', 'examples', 'run.js');
const running = [];

async function startExample(name, env = {}, args = []) {
  const port = await common.freePort();
  const child = spawn(process.execPath, [RUN, name, ...args], {
    detached: true,
    env: common.nodeChildEnv({ PORT: String(port), ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const state = { child, port, out: '', exited: null };
  child.stdout.on('data', (d) => { state.out += d; });
  child.stderr.on('data', (d) => { state.out += d; });
  state.exit = new Promise((r) => child.on('exit', (code) => { state.exited = code; r(); }));
  running.push(state);
  const until = Date.now() + 15000;
  for (;;) {
    if (state.exited !== null) throw new Error(`${name} exited (${state.exited}): ${state.out}`);
    if (await new Promise((r) => {
      const s = net.connect(port, '127.0.0.1');
      s.on('connect', () => { s.destroy(); r(true); });
      s.on('error', () => r(false));
    })) break;
    if (Date.now() > until) throw new Error(`${name} did not listen in 15 s: ${state.out}`);
    await common.sleep(100);
  }
  return state;
}

function request(port, { method = 'GET', path: p = '/', headers = {}, body, tls = false } = {}) {
  return new Promise((resolve, reject) => {
    const req = (tls ? https : http).request({ host: '127.0.0.1', port, method, path: p, headers, agent: false,
      rejectUnauthorized: false }, (res) => {
      const chunks = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.setTimeout(10000, () => req.destroy(new Error('no answer in 10 s')));
    req.on('error', reject);
    req.end(body);
  });
}

// A ws client that queues what it receives: next() resolves the next one.
function wsClient(url) {
  const WebSocket = require('ws');
  const ws = new WebSocket(url);
  const queue = [];
  let wake = null;
  ws.on('message', (m) => { queue.push(String(m)); if (wake) wake(); });
  ws.next = () => (queue.length ? Promise.resolve(queue.shift()) : common.withTimeout(
    new Promise((r) => { wake = () => { wake = null; r(queue.shift()); }; }), 5000, 'a WebSocket message'));
  ws.opened = new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  return ws;
}

// The cluster example's two workers have both said they listen.
async function bothListening(s) {
  const until = Date.now() + 15000;
  while ((s.out.match(/chat on http/g) || []).length < 2 && Date.now() < until) await common.sleep(100);
  assert.strictEqual((s.out.match(/chat on http/g) || []).length, 2, s.out);
}

(common.isNode ? describe.skip : describe)('docs/examples: each one starts and answers', function () {
  this.timeout(30000);
  afterEach(async () => {
    for (const s of running.splice(0)) {
      if (s.exited === null) {
        try { process.kill(-s.child.pid, 'SIGKILL'); } catch { /* gone */ }
        await s.exit;
      }
    }
  });

  it('express-chat: the page, the API and a chat message to every subscriber (one worker)', async () => {
    const { port } = await startExample('express-chat', { WORKERS: '1' });
    const page = await request(port);
    assert.strictEqual(page.status, 200);
    assert.match(page.body.toString(), /<title>sluice chat<\/title>/);
    assert.strictEqual((await request(port, { path: '/chat.js' })).status, 200);
    assert.strictEqual(JSON.parse((await request(port, { path: '/api/health' })).body).ok, true);
    const a = wsClient(`ws://127.0.0.1:${port}/chat`);
    const b = wsClient(`ws://127.0.0.1:${port}/chat`);
    try {
      await Promise.all([a.opened, b.opened]);
      assert.match(JSON.parse(await a.next()).system, /connected to worker/);
      assert.match(JSON.parse(await b.next()).system, /connected to worker/);
      a.send('hello room');
      assert.strictEqual(JSON.parse(await b.next()).text, 'hello room');
      assert.strictEqual(JSON.parse(await a.next()).text, 'hello room');
    } finally {
      a.terminate();
      b.terminate();
    }
  });

  it('express-chat: starts a worker per WORKERS on one port (cluster)', async () => {
    const s = await startExample('express-chat', { WORKERS: '2' });
    await bothListening(s);
    assert.strictEqual(JSON.parse((await request(s.port, { path: '/api/health' })).body).ok, true);
  });

  // Across processes wss.publish needs sluice's pub/sub bus (sluice.pubsub,
  // docs/websocket.md "The bus"); skipped where this sluice has none.
  it('express-chat: a message reaches a subscriber on another worker', async function () {
    if (!require('../..').pubsub) this.skip();
    const s = await startExample('express-chat', { WORKERS: '2' });
    const port = s.port;
    await bothListening(s);
    const byWorker = new Map();
    const spare = [];
    try {
      for (let i = 0; i < 40 && byWorker.size < 2; i++) {
        const ws = wsClient(`ws://127.0.0.1:${port}/chat`);
        await ws.opened;
        const worker = /worker (\d+)/.exec(JSON.parse(await ws.next()).system)[1];
        if (byWorker.has(worker)) spare.push(ws);
        else byWorker.set(worker, ws);
      }
      assert.strictEqual(byWorker.size, 2, 'the kernel spread 40 connections over one worker only');
      const [a, b] = [...byWorker.values()];
      await common.sleep(200);  // the subscriptions reach the bus
      a.send('across workers');
      assert.strictEqual(JSON.parse(await b.next()).text, 'across workers');
    } finally {
      for (const ws of [...byWorker.values(), ...spare]) ws.terminate();
    }
  });

  it('fastify-websocket: routes and a WebSocket route on sluice', async () => {
    const { port } = await startExample('fastify-websocket');
    assert.deepStrictEqual(JSON.parse((await request(port)).body), { hello: 'fastify on sluice' });
    const sum = await request(port, { method: 'POST', path: '/sum', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ numbers: [1, 2, 39] }) });
    assert.deepStrictEqual(JSON.parse(sum.body), { sum: 42 });
    const ws = wsClient(`ws://127.0.0.1:${port}/ws?name=docs`);
    try {
      await ws.opened;
      assert.strictEqual(await ws.next(), 'hello docs');
      ws.send('ping');
      assert.strictEqual(await ws.next(), 'echo: ping');
    } finally {
      ws.terminate();
    }
  });

  it('static-h3: the site over HTTPS, compressed, with Alt-Svc where HTTP/3 is on', async () => {
    const { port, out } = await startExample('static-h3');
    const page = await request(port, { tls: true });
    assert.strictEqual(page.status, 200);
    assert.match(page.body.toString(), /Served by sluice/);
    assert.strictEqual(page.headers['cache-control'], 'public, max-age=3600');
    assert.strictEqual((await request(port, { tls: true, path: '/style.css' })).status, 200);
    assert.strictEqual((await request(port, { tls: true, path: '/nope' })).status, 404);
    // A folder given on the command line; a text file above the
    // compression threshold goes out compressed.
    const site = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-example-site-'));
    try {
      const css = '.a { color: red }\n'.repeat(500);
      fs.writeFileSync(path.join(site, 'app.css'), css);
      const other = await startExample('static-h3', {}, [site]);
      const r = await request(other.port, { tls: true, path: '/app.css', headers: { 'accept-encoding': 'br' } });
      assert.strictEqual(r.headers['content-encoding'], 'br');
      assert.strictEqual(zlib.brotliDecompressSync(r.body).toString(), css);
    } finally {
      fs.rmSync(site, { recursive: true, force: true });
    }
    if (require('../..').features.http3) {
      assert.match(page.headers['alt-svc'] || '', /h3=":\d+"/);
    } else {
      assert.strictEqual(page.headers['alt-svc'], undefined);
      await common.sleep(100);
      assert.match(out + running[0].out, /no HTTP\/3: /);
    }
  });

  it('uploads-to-disk: a 3 MiB upload lands on disk intact, every pool buffer back', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-example-uploads-'));
    try {
      const { port } = await startExample('uploads-to-disk', { UPLOAD_DIR: dir });
      const body = crypto.randomBytes(3 * 1024 * 1024 + 17);
      const r = await request(port, { method: 'PUT', path: '/upload', body });
      assert.strictEqual(r.status, 200, r.body.toString());
      const answer = JSON.parse(r.body);
      assert.strictEqual(answer.bytes, body.length);
      assert.strictEqual(answer.sha256, crypto.createHash('sha256').update(body).digest('hex'));
      assert.ok(fs.readFileSync(path.join(dir, answer.name)).equals(body));
      const stats = JSON.parse((await request(port, { path: '/stats' })).body);
      assert.strictEqual(stats.outstanding, 0, JSON.stringify(stats));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
