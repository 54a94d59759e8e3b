'use strict';

// Child of tracers.test.js: OpenTelemetry registered as its docs say (tracer
// provider and @opentelemetry/instrumentation-http, default options) before
// the app loads, then an app on node:http or on sluice (argv[2]: 'node' or
// 'sluice'; argv[3]: 'plain', 'express' or 'fastify'). It answers requests
// sent over raw sockets (so no client span is made) and prints the SERVER
// spans the in-memory exporter got, as JSON, then exits.

// Run as a child only (mocha loads every .js file of a folder it is given).
if (require.main === module) main();

function main() {
  const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node');
  const { InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
  const { registerInstrumentations } = require('@opentelemetry/instrumentation');
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http');
  const { SpanKind } = require('@opentelemetry/api');

  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  provider.register();
  registerInstrumentations({ instrumentations: [new HttpInstrumentation()] });

  const net = require('net');
  const path = require('path');

  const [impl, kind] = process.argv.slice(2);
  const ROOT = path.resolve(__dirname, '../..');

  function handler(req, res) {
    if (req.url.startsWith('/missing')) {
      res.statusCode = 404;
      res.end('no');
      return;
    }
    res.setHeader('content-type', 'text/plain');
    res.end('hello');
  }

  function createServer(listener) {
    if (impl === 'sluice') return require(ROOT).createServer(listener);
    return require('http').createServer(listener);
  }

  async function start() {
    if (kind === 'express') {
      const app = require('express5')();
      app.get('/users/:id', (req, res) => res.send(`user ${req.params.id}`));
      app.use(handler);
      const server = createServer(app);
      await new Promise((r) => server.listen(0, '127.0.0.1', r));
      return { port: server.address().port, close: () => new Promise((r) => server.close(r)) };
    }
    if (kind === 'fastify') {
      const Fastify = require('fastify');
      const app = impl === 'sluice' ? Fastify({ serverFactory: (h) => createServer(h) }) : Fastify();
      app.get('/users/:id', async (req) => `user ${req.params.id}`);
      app.setNotFoundHandler((req, reply) => reply.code(404).send('no'));
      await app.listen({ port: 0, host: '127.0.0.1' });
      return { port: app.server.address().port, close: () => app.close() };
    }
    const server = createServer(handler);
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    return { port: server.address().port, close: () => new Promise((r) => server.close(r)) };
  }

  // One request over a fresh raw socket; resolves the response text.
  function rawRequest(port, head) {
    return new Promise((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1');
      let data = '';
      s.on('data', (d) => { data += d; });
      s.on('end', () => resolve(data));
      s.on('error', reject);
      s.write(head);
    });
  }

  const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
  const PARENT_ID = 'b7ad6b7169203331';

  (async () => {
    const { port, close } = await start();
    const responses = [];
    responses.push(await rawRequest(port, 'GET /users/7?x=1 HTTP/1.1\r\nHost: example.test\r\n' +
      `User-Agent: t/1\r\ntraceparent: 00-${TRACE_ID}-${PARENT_ID}-01\r\nConnection: close\r\n\r\n`));
    responses.push(await rawRequest(port, 'POST /missing HTTP/1.1\r\nHost: example.test\r\n' +
      'Content-Length: 3\r\nConnection: close\r\n\r\nabc'));
    await close();
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER).map((s) => ({
      name: s.name,
      kind: s.kind,
      traceId: s.spanContext().traceId,
      parentSpanId: s.parentSpanContext ? s.parentSpanContext.spanId : s.parentSpanId,
      status: s.status,
      attributes: s.attributes,
      ended: s.ended,
    }));
    process.stdout.write(JSON.stringify({
      port, spans, statuses: responses.map((r) => r.split(' ')[1]),
    }));
  })().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
