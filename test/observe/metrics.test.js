'use strict';

// Metrics kept natively (docs/observability.md): server.metrics(), the
// Prometheus exposition read by Debian's prometheus server (started here
// on a free port, scraping every second, read back through its HTTP API)
// and by prom-client's registry.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const common = require('../common');

const { assert } = common;
const PROMETHEUS = '/usr/bin/prometheus';


async function app() {
  const sluice = require(common.ROOT);
  let handler;
  const { server, port } = await common.startServer((req, res) => {
    if (req.url === '/metrics') return handler(req, res);
    if (req.url === '/hang') return undefined;  // never answered
    res.statusCode = req.url === '/missing' ? 404 : 200;
    res.end('hello');
    return undefined;
  });
  handler = sluice.prometheusHandler(server);
  return { sluice, server, port };
}

describe('native metrics', () => {
  // Inside the describe: a root-level hook would run after every test
  // of every file (closing servers other files start in before()).
  afterEach(common.cleanup);

  if (common.isNode) return;  // sluice's own API

  it('server.metrics(): requests by method and status class, durations, connections, bytes', async () => {
    const { server, port } = await app();
    await common.httpRequest(port, { path: '/' });
    await common.httpRequest(port, { path: '/missing' });
    await common.httpRequest(port, { method: 'POST', path: '/', body: 'abc' });
    const m = server.metrics();
    const count = (method, cls) => {
      const r = m.requests.find((x) => x.protocol === '1.1' && x.method === method && x.statusClass === cls);
      return r === undefined ? 0 : r.count;
    };
    assert.strictEqual(count('GET', '2xx'), 1);
    assert.strictEqual(count('GET', '4xx'), 1);
    assert.strictEqual(count('POST', '2xx'), 1);
    const d = m.duration['1.1'];
    assert.strictEqual(d.count, 3);
    assert.deepStrictEqual(d.buckets, [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]);
    assert.ok(d.sum > 0 && d.sum < 3);
    assert.strictEqual(d.counts[d.counts.length - 1], 3);
    assert.strictEqual(m.connections.accepted, 3);
    assert.ok(m.bytes.in > 150, `bytes in ${m.bytes.in}`);
    assert.ok(m.bytes.out > 3 * 'hello'.length, `bytes out ${m.bytes.out}`);
  });

  it('HTTP/2: requests and durations under protocol 2, a client\'s reset and GOAWAY counted', async () => {
    const http2 = require('node:http2');
    const { server, port } = await app();
    const session = http2.connect(`http://127.0.0.1:${port}`);
    common.trackSocket(session);
    const get = (p) => new Promise((resolve, reject) => {
      const req = session.request({ ':path': p });
      req.on('response', (h) => resolve(h[':status']));
      req.on('error', reject);
      req.resume();
    });
    assert.strictEqual(await get('/'), 200);
    assert.strictEqual(await get('/missing'), 404);
    // A request the client resets with an error code before any answer.
    const reset = session.request({ ':path': '/hang' });
    reset.on('error', () => {});
    await common.sleep(50);
    assert.strictEqual(server.metrics().streams['2'], 1);
    reset.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    await new Promise((r) => reset.once('close', r));
    await new Promise((r) => session.close(r));
    await common.sleep(50);
    const m = server.metrics();
    const count = (cls) => m.requests.filter((x) => x.protocol === '2' && x.statusClass === cls)
      .reduce((n, x) => n + x.count, 0);
    assert.ok(count('2xx') >= 1, JSON.stringify(m.requests));
    assert.strictEqual(count('4xx'), 1);
    assert.ok(m.duration['2'].count >= 2);
    assert.strictEqual(m.http2.resets.received, 1);
    assert.strictEqual(m.streams['2'], 0);
    // node's client says GOAWAY on close() (and again as it ends the session).
    assert.ok(m.http2.goaways.received >= 1);
    assert.match(server.metricsText(), /sluice_http2_resets_total\{direction="received"\} 1/);
  });

  it('refusals by reason, open WebSockets, the pool\'s dry waits', async () => {
    const sluice = require(common.ROOT);
    const WebSocket = require('ws');
    const pool = sluice.createBufferPool({ bufferSize: 1024, maxBuffers: 1 });
    const { server, port } = await common.startServer({ requestBufferAllocator: pool.alloc, maxHeaderSize: 1024 },
      (req, res) => {
        // Keeps each chunk a while: the one-buffer pool runs dry meanwhile.
        req.on('data', (chunk) => setTimeout(() => sluice.releaseBuffer(chunk), 20));
        req.on('end', () => res.end('ok'));
      });
    const wss = new sluice.WebSocketServer({ server });
    const bad = await common.rawConnect(port);
    bad.write('GET / HTTP/1.1\r\nHost: a\r\nBad Header\r\n\r\n');
    await bad.closedPromise;
    const big = await common.rawConnect(port);
    big.write(`GET / HTTP/1.1\r\nHost: a\r\nX: ${'x'.repeat(2000)}\r\n\r\n`);
    await big.closedPromise;
    const r = await common.httpRequest(port, { method: 'POST', body: Buffer.alloc(16384, 1) });
    assert.strictEqual(r.body.toString(), 'ok');
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
    await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
    await common.sleep(20);
    let m = server.metrics();
    assert.strictEqual(m.refused['1.1'].bad_request, 1);
    assert.strictEqual(m.refused['1.1'].headers_too_large, 1);
    assert.strictEqual(m.websockets.open, 1);
    assert.ok(m.bufferPool.dryWaits >= 1, JSON.stringify(m.bufferPool));
    assert.match(server.metricsText(), /sluice_requests_refused_total\{network_protocol_version="1.1",reason="headers_too_large"\} 1/);
    ws.close();
    await new Promise((resolve) => ws.once('close', resolve));
    await common.sleep(20);
    m = server.metrics();
    assert.strictEqual(m.websockets.open, 0);
    wss.close();
  });

  it('HTTP/2 refusals by reason: a body over the limit', async () => {
    const http2 = require('node:http2');
    const { server, port } = await common.startServer({ maxRequestBodySize: 10 }, (req, res) => {
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    const session = http2.connect(`http://127.0.0.1:${port}`);
    common.trackSocket(session);
    const big = session.request({ ':method': 'POST', ':path': '/', 'content-length': '100' });
    big.on('error', () => {});
    const status = await new Promise((resolve) => big.on('response', (h) => resolve(h[':status'])));
    assert.strictEqual(status, 413);
    await new Promise((r) => big.once('close', r));
    await new Promise((r) => session.close(r));
    const m = server.metrics();
    assert.strictEqual(m.refused['2'].body_too_large, 1);
    assert.strictEqual(m.refused['1.1'].body_too_large, 0);
    assert.match(server.metricsText(),
      /sluice_requests_refused_total\{network_protocol_version="2",reason="body_too_large"\} 1/);
  });

  it('WebSocket messages each way, and a publish a subscriber missed', async () => {
    const sluice = require(common.ROOT);
    const WebSocket = require('ws');
    const { server, port } = await common.startServer((req, res) => res.end());
    const wss = new sluice.WebSocketServer({ server, pubsub: false });
    const got = [];
    wss.on('connection', (ws) => {
      ws.subscribe('t');
      ws.on('message', (data) => {
        got.push(String(data));
        if (String(data) === 'frag') ws.send('part', { fin: false });  // mid-message from here on
        else ws.send(`echo ${data}`);
      });
    });
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
    await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
    const next = () => new Promise((resolve) => ws.once('message', (d) => resolve(String(d))));
    ws.send('a');
    assert.strictEqual(await next(), 'echo a');
    ws.send('b');
    assert.strictEqual(await next(), 'echo b');
    ws.send('frag');
    while (got.length < 3) await common.sleep(10);
    // The subscriber is mid-way through a fragmented message: it misses this.
    wss.publish('t', 'news');
    const m = server.metrics();
    assert.strictEqual(m.websockets.messages.received, 3);
    assert.strictEqual(m.websockets.messages.sent, 2);
    assert.strictEqual(m.websockets.dropped.publishes, 1);
    assert.strictEqual(m.websockets.dropped.sends, 0);
    assert.match(server.metricsText(), /sluice_websocket_messages_total\{direction="received"\} 3/);
    assert.match(server.metricsText(), /sluice_websocket_messages_dropped_total\{kind="publish"\} 1/);
    ws.terminate();
    await new Promise((resolve) => ws.once('close', resolve));
    wss.close();
  });

  it('HTTP/3: requests, durations, streams and connections under protocol 3 (Node 24+)', async function () {
    const { h3, haveClient, startH3Server, gtls } = require('../http3/h3common');
    if (!h3 || !haveClient) this.skip();
    let openInHandler = -1;
    const { server, port } = await startH3Server({}, (req, res) => {
      openInHandler = server.metrics().streams['3'];  // this request's stream
      res.statusCode = req.url === '/missing' ? 404 : 200;
      res.end('hello');
    });
    const r = await gtls(port, ['/a', '/missing'], { method: 'GET' });
    assert.strictEqual(r.responses.get('/a').status, 200);
    assert.strictEqual(r.responses.get('/missing').status, 404);
    await common.sleep(50);
    const m = server.metrics();
    const count = (cls) => m.requests.filter((x) => x.protocol === '3' && x.method === 'GET' && x.statusClass === cls)
      .reduce((n, x) => n + x.count, 0);
    assert.strictEqual(count('2xx'), 1, JSON.stringify(m.requests));
    assert.strictEqual(count('4xx'), 1);
    assert.strictEqual(m.duration['3'].count, 2);
    assert.strictEqual(openInHandler, 1);
    assert.strictEqual(m.streams['3'], 0);
    assert.ok(m.connections.accepted >= 1);
    assert.ok(m.bytes.in > 1200 && m.bytes.out > 1200, JSON.stringify(m.bytes));
    assert.match(server.metricsText(),
      /http_server_requests_total\{network_protocol_version="3",http_request_method="GET",status_class="4xx"\} 1/);
  });

  it('prom-client: the collector\'s series in its registry', async () => {
    const promClient = require('prom-client');
    const { sluice, server, port } = await app();
    await common.httpRequest(port, { path: '/' });
    const registry = new promClient.Registry();
    sluice.promClientCollector(registry, server);
    const text = await registry.metrics();
    assert.match(text, /http_server_requests_total\{network_protocol_version="1.1",http_request_method="GET",status_class="2xx"\} 1/);
    assert.match(text, /http_server_request_duration_seconds_bucket\{network_protocol_version="1.1",le="\+Inf"\} 1/);
    assert.match(text, /sluice_connections_accepted_total 1/);
    const json = await registry.getMetricsAsJSON();
    assert.ok(json.some((f) => f.name === 'sluice_bytes_sent_total' && f.values[0].value > 0));
  });

  it('Debian\'s prometheus scrapes the ready route; its API returns the series', async function () {
    if (!fs.existsSync(PROMETHEUS)) this.skip();
    this.timeout(30000);
    const { port } = await app();
    for (let i = 0; i < 3; i++) await common.httpRequest(port, { path: '/' });
    await common.httpRequest(port, { path: '/missing' });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-prom-'));
    const promPort = await common.freePort();
    fs.writeFileSync(path.join(dir, 'prometheus.yml'),
      'global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n' +
      `scrape_configs:\n  - job_name: sluice\n    static_configs:\n      - targets: ['127.0.0.1:${port}']\n`);
    const child = spawn(PROMETHEUS, [
      `--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${promPort}`,
    ], { stdio: 'ignore' });
    try {
      const query = async (q) => {
        const r = await fetch(`http://127.0.0.1:${promPort}/api/v1/query?query=${encodeURIComponent(q)}`);
        return (await r.json()).data.result;
      };
      let result = [];
      const deadline = Date.now() + 20000;
      while (Date.now() < deadline) {
        await common.sleep(500);
        try {
          result = await query('http_server_requests_total{job="sluice"}');
        } catch {
          continue;  // not up yet
        }
        if (result.length >= 2) break;
      }
      const value = (method, cls) => {
        const s = result.find((x) => x.metric.http_request_method === method && x.metric.status_class === cls);
        return s === undefined ? undefined : Number(s.value[1]);
      };
      // The scrapes themselves are GET 2xx requests too.
      assert.ok(value('GET', '2xx') >= 3, JSON.stringify(result));
      assert.strictEqual(value('GET', '4xx'), 1);
      const buckets = await query('http_server_request_duration_seconds_bucket{job="sluice",le="+Inf"}');
      assert.strictEqual(buckets.length, 1);
      assert.ok(Number(buckets[0].value[1]) >= 4);
      const up = await query('up{job="sluice"}');
      assert.strictEqual(up[0].value[1], '1');
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
