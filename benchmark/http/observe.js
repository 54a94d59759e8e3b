'use strict';
// The hello response with observers on (docs/observability.md): no observer,
// a no-op diagnostics-channel subscriber, OpenTelemetry's
// instrumentation-http, sluice's native access log and pino-http; sluice
// and node:http in one run. cpuUsPerReq is the column to read: what each
// observer adds per request on each server.
// Run: node benchmark/run.js http/observe [--quick]

const modes = ['none', 'subscriber', 'otel', 'pino'];
const variants = [];
for (const mode of modes) {
  variants.push({ label: `sluice ${mode}`, impl: 'sluice', args: ['--mode', mode] });
  variants.push({ label: `node ${mode}`, impl: 'node', args: ['--mode', mode], baseline: mode === 'none' });
}
// The native access log is sluice's own: no node row.
variants.push({ label: 'sluice accesslog', impl: 'sluice', args: ['--mode', 'accesslog'] });

module.exports = {
  title: 'http/observe: hello with observers, sluice vs node:http',
  columns: ['rps', 'cpuPct', 'cpuUsPerReq', 'ratioRps', 'ratioCpu'],
  cases: [
    {
      name: 'hello wrk c100, observers',
      server: { script: 'observe_server.js', args: [] },
      variants,
      load: { tool: 'wrk', threads: 1, connections: 100 },
      check: { bodyLength: 5, body: 'hello' },
    },
  ],
};
