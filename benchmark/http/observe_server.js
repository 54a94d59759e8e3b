'use strict';
// observe_server.js <sluice|node> --mode <none|subscriber|otel|accesslog|pino>
//   [--keep-alive-timeout MS]
// The hello server (res.end('hello')) with an observer on:
//   subscriber: a no-op subscriber on http.server.request.start and
//     http.server.response.finish (node's diagnostics channels);
//   otel: OpenTelemetry's NodeTracerProvider + instrumentation-http, default
//     options, spans to an exporter that drops them (registered before the
//     server loads, as its docs say);
//   accesslog: sluice's native access log (combined) to a temp file; on
//     node:http the row is not run (benchmark/http/observe.js);
//   pino: pino-http writing to a temp file (pino.destination, async).
// Prints "PORT <n>" when listening (benchmark/server_harness.js).

const fs = require('fs');
const os = require('os');
const path = require('path');
const { parseArgs, loadImpl, serve } = require('../server_harness.js');

const opts = parseArgs(process.argv.slice(2), { mode: 'none', keepAliveTimeout: 0 });
const mode = opts.mode;

if (mode === 'otel') {
  const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node');
  const { SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
  const { registerInstrumentations } = require('@opentelemetry/instrumentation');
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http');
  // Every span is made, ended and handed to an exporter that drops it.
  const exporter = { export(spans, cb) { cb({ code: 0 }); }, shutdown: async () => {} };
  new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).register();
  registerInstrumentations({ instrumentations: [new HttpInstrumentation()] });
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-observe-'));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

const impl = opts._[0];
const http = loadImpl(impl);
const serverOptions = {};
if (opts.keepAliveTimeout > 0) serverOptions.keepAliveTimeout = opts.keepAliveTimeout;
if (mode === 'accesslog') serverOptions.accessLog = path.join(dir, 'access.log');

let handler = (req, res) => res.end('hello');
if (mode === 'pino') {
  const pino = require('pino');
  const logger = require('pino-http')({
    logger: pino(pino.destination({ dest: path.join(dir, 'pino.log'), sync: false })),
  });
  handler = (req, res) => {
    logger(req, res);
    res.end('hello');
  };
}
if (mode === 'subscriber') {
  const dc = require('diagnostics_channel');
  dc.subscribe('http.server.request.start', () => {});
  dc.subscribe('http.server.response.finish', () => {});
}

const server = http.createServer(serverOptions, handler);
if (opts.keepAliveTimeout > 0) server.keepAliveTimeout = opts.keepAliveTimeout;
serve(server);
