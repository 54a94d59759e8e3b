'use strict';

// OpenTelemetry's @opentelemetry/instrumentation-http, unmodified and in its
// default mode, records for sluice the SERVER spans it records for node:http
// (docs/observability.md): a plain createServer app, Express and Fastify,
// each run in a child (the instrumentation is registered before the app
// loads, as its docs say) on node:http and on sluice in the same run,
// their spans compared.

const path = require('node:path');
const { spawn } = require('node:child_process');
const common = require('../common');

const { assert } = common;

const APP = path.join(__dirname, 'otel_app.js');

function runApp(impl, kind) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [APP, impl, kind], {
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
      if (code !== 0) reject(new Error(`${impl} ${kind} exited ${code}: ${err}`));
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
      const [node, sluice] = await Promise.all([runApp('node', kind), runApp('sluice', kind)]);
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
