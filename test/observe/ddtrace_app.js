'use strict';

// Child of tracers.test.js: dd-trace initialised as its docs say (before the
// app loads), sending to the test's fake agent (port argv[3]) as each trace
// finishes; its http plugin's public finish hook also records each server
// span's name, resource, tags and parent in-process. Then a plain
// createServer app on node:http or sluice (argv[2]); once the agent has
// the traces (its /wait answers), prints the records as JSON.

// Run as a child only (mocha loads every .js file of a folder it is given).
if (require.main === module) main();

function main() {
  const spans = [];
  const tracer = require('dd-trace').init({
    url: `http://127.0.0.1:${process.argv[3]}`, flushInterval: 0, telemetry: { enabled: false }, startupLogs: false,
    remoteConfig: { enabled: false }, runtimeMetrics: false,
  });
  tracer.use('http', {
    server: {
      hooks: {
        request(span, req, res) {
          const ctx = span.context();
          spans.push({
            name: ctx._name, tags: { ...ctx._tags }, traceId: ctx.toTraceId(), parentId: String(ctx._parentId),
          });
        },
      },
    },
  });

  const net = require('net');
  const path = require('path');
  const impl = process.argv[2];
  const http = impl === 'sluice' ? require(path.resolve(__dirname, '../..')) : require('http');
  const server = http.createServer((req, res) => {
    res.statusCode = req.url.startsWith('/missing') ? 404 : 200;
    res.end('hello');
  });
  const rawRequest = (port, head) => new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let data = '';
    s.on('data', (d) => { data += d; });
    s.on('end', () => resolve(data));
    s.on('error', reject);
    s.write(head);
  });
  server.listen(0, '127.0.0.1', async () => {
    const { port } = server.address();
    const statuses = [];
    for (const head of [
      'GET /users/7?x=1 HTTP/1.1\r\nHost: example.test\r\nUser-Agent: t/1\r\n' +
        'x-datadog-trace-id: 1234567890\r\nx-datadog-parent-id: 987654321\r\nConnection: close\r\n\r\n',
      'POST /missing HTTP/1.1\r\nHost: example.test\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc',
    ]) {
      statuses.push((await rawRequest(port, head)).split(' ')[1]);
    }
    await new Promise((r) => server.close(r));
    // The agent answers once it received both server traces.
    await new Promise((resolve, reject) => {
      require('http').get(`http://127.0.0.1:${process.argv[3]}/wait`, (res) => {
        res.resume();
        res.on('end', resolve);
      }).on('error', reject);
    });
    process.stdout.write(JSON.stringify({ statuses, spans }));
    process.exit(0);
  });
}
