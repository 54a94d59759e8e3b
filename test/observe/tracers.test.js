'use strict';

// Tracers, unmodified, record for sluice what they record for node:http
// (docs/observability.md): OpenTelemetry's @opentelemetry/instrumentation-http
// in its default mode (a plain createServer app, Express, Fastify) and
// Sentry's @sentry/node (v10, through the http.server.request.start channel
// and the server's emit) and dd-trace (its http plugin patches
// http.Server.prototype.emit). Each case runs in a child (the tracer set up
// before the app loads, as their docs say) on node:http and on sluice in
// the same run; their spans / transactions are compared.

const path = require('node:path');
const { spawn } = require('node:child_process');
const common = require('../common');

const { assert } = common;

// `arg`: the app's second argument (otel_app.js: the app kind,
// ddtrace_app.js: the fake agent's port).
function runApp(app, impl, arg) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, app), impl, String(arg || '')], {
      cwd: common.ROOT, env: common.nodeChildEnv(), stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    const t = setTimeout(() => child.kill('SIGKILL'), 15000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(t);
      if (code !== 0) reject(new Error(`${impl} ${arg} exited ${code}: ${err}`));
      else resolve(JSON.parse(out));
    });
  });
}

// What may differ between two runs: the client's ephemeral port and the
// trace id of a span with no incoming parent.
function normalize(span) {
  const attributes = { ...span.attributes };
  assert.strictEqual(typeof attributes['network.peer.port'], 'number');
  delete attributes['network.peer.port'];
  return { ...span, attributes, traceId: span.parentSpanId ? span.traceId : 'random' };
}

describe('OpenTelemetry instrumentation-http (default mode): node:http and sluice', function () {
  this.timeout(40000);

  for (const kind of ['plain', 'express', 'fastify']) {
    it(`${kind}: the same SERVER spans, attributes and parent`, async () => {
      const [node, sluice] = await Promise.all([
        runApp('otel_app.js', 'node', kind), runApp('otel_app.js', 'sluice', kind),
      ]);
      assert.deepStrictEqual(sluice.statuses, ['200', '404']);
      assert.deepStrictEqual(node.statuses, ['200', '404']);
      assert.strictEqual(sluice.spans.length, 2, JSON.stringify(sluice.spans));
      const [get, post] = sluice.spans;
      // The incoming traceparent is the span's parent.
      assert.strictEqual(get.traceId, '0af7651916cd43dd8448eb211c80319c');
      assert.strictEqual(get.parentSpanId, 'b7ad6b7169203331');
      assert.strictEqual(get.attributes['http.response.status_code'], 200);
      assert.strictEqual(get.attributes['url.path'], '/users/7');
      assert.strictEqual(post.attributes['http.response.status_code'], 404);
      assert.strictEqual(post.parentSpanId, undefined);
      assert.deepStrictEqual(sluice.spans.map(normalize), node.spans.map(normalize));
    });
  }
});

describe('Sentry @sentry/node v10: node:http and sluice', function () {
  this.timeout(40000);

  it('the same http.server transactions, data and trace parent', async () => {
    const [node, sluice] = await Promise.all([
      runApp('sentry_app.js', 'node'), runApp('sentry_app.js', 'sluice'),
    ]);
    assert.deepStrictEqual(sluice.statuses, ['200', '404']);
    assert.ok(node.transactions.length >= 1);
    const [t] = sluice.transactions;
    assert.strictEqual(t.transaction, 'GET /users/7');
    assert.strictEqual(t.op, 'http.server');
    assert.strictEqual(t.traceId, '0af7651916cd43dd8448eb211c80319c');
    assert.strictEqual(t.parentSpanId, 'b7ad6b7169203331');
    assert.strictEqual(t.data['http.response.status_code'], 200);
    // Ports differ between the two servers and clients.
    const strip = (x) => {
      const data = { ...x.data };
      for (const k of ['net.host.port', 'net.peer.port']) {
        assert.strictEqual(typeof data[k], 'number');
        delete data[k];
      }
      return { ...x, data, traceId: x.parentSpanId ? x.traceId : 'random' };
    };
    assert.deepStrictEqual(sluice.transactions.map(strip), node.transactions.map(strip));
  });
});

// A fake Datadog agent: takes trace payloads (PUT /v0.4/traces, msgpack),
// keeps their trace counts and bodies; GET /wait answers once two
// web.request spans came in (the child's cue that its server traces were
// sent).
async function fakeAgent() {
  const http = require('node:http');
  const payloads = [];
  let traces = 0;
  let waiter = null;
  const server = http.createServer((req, res) => {
    if (req.url === '/wait') {
      waiter = () => res.end();
      if (traces >= 2) waiter();
      return;
    }
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'PUT' && /^\/v0\.[45]\/traces$/.test(req.url)) {
        const count = Number(req.headers['x-datadog-trace-count']);
        const body = Buffer.concat(chunks);
        payloads.push({ url: req.url, count, body });
        // Only the server's traces: the app's own client spans
        // (dns.lookup, tcp.connect) come in traces of their own first.
        for (let at = body.indexOf('web.request'); at !== -1; at = body.indexOf('web.request', at + 1)) traces++;
        if (traces >= 2 && waiter) waiter();
      }
      res.setHeader('content-type', 'application/json');
      res.end('{"rate_by_service":{}}');
    });
  });
  return { port: await common.listenLocal(server), payloads };
}

describe('dd-trace (its http plugin, a fake local agent): node:http and sluice', function () {
  this.timeout(40000);
  afterEach(common.cleanup);

  it('the same web.request server spans, tags and x-datadog parent, sent to the agent', async () => {
    const [nodeAgent, sluiceAgent] = await Promise.all([fakeAgent(), fakeAgent()]);
    const [node, sluice] = await Promise.all([
      runApp('ddtrace_app.js', 'node', nodeAgent.port), runApp('ddtrace_app.js', 'sluice', sluiceAgent.port),
    ]);
    // What the agent got: two traces, web.request spans with the incoming
    // trace id (msgpack: strings as their bytes, the id a uint64).
    for (const agent of [nodeAgent, sluiceAgent]) {
      const body = Buffer.concat(agent.payloads.map((p) => p.body));
      assert.ok(agent.payloads.reduce((n, p) => n + p.count, 0) >= 2, JSON.stringify(agent.payloads));
      assert.ok(body.includes('web.request'), 'span name sent');
      assert.ok(body.includes('/users/7'), 'the request url sent');
      const id = Buffer.alloc(9);
      id[0] = 0xcf;  // msgpack uint64
      id.writeBigUInt64BE(1234567890n, 1);
      assert.ok(body.includes(id), 'the x-datadog trace id sent');
    }
    assert.deepStrictEqual(sluice.statuses, ['200', '404']);
    assert.strictEqual(sluice.spans.length, 2, JSON.stringify(sluice.spans));
    const [get, post] = sluice.spans;
    assert.strictEqual(get.name, 'web.request');
    assert.strictEqual(get.tags['span.kind'], 'server');
    assert.strictEqual(get.tags['http.status_code'], 200);
    assert.strictEqual(get.traceId, '1234567890');
    assert.strictEqual(get.parentId, (987654321).toString(16).padStart(16, '0'));
    assert.strictEqual(post.tags['http.status_code'], 404);
    // Per-process ids and the random trace of the request without a parent.
    const strip = (s) => {
      const tags = { ...s.tags };
      delete tags['runtime-id'];
      delete tags['_dd.rc.client_id'];
      return { ...s, tags, traceId: s.parentId === 'null' ? 'random' : s.traceId };
    };
    assert.deepStrictEqual(sluice.spans.map(strip), node.spans.map(strip));
  });
});
