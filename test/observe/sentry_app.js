'use strict';

// Child of tracers.test.js: @sentry/node initialised as its docs say (before
// the app loads; tracing on; no DSN service: the transactions are taken in
// beforeSendTransaction and dropped), then a plain createServer app on
// node:http or sluice (argv[2]). Requests go over raw sockets; the
// transactions are printed as JSON.

// Run as a child only (mocha loads every .js file of a folder it is given).
if (require.main === module) main();

function main() {
  const Sentry = require('@sentry/node');

  const transactions = [];
  Sentry.init({
    dsn: 'http://public@127.0.0.1:9/1',
    tracesSampleRate: 1,
    beforeSendTransaction(event) {
      transactions.push(event);
      return null;
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

  server.listen(0, '127.0.0.1', async () => {
    const { port } = server.address();
    const statuses = [];
    for (const head of [
      'GET /users/7?x=1 HTTP/1.1\r\nHost: example.test\r\nUser-Agent: t/1\r\n' +
        `sentry-trace: ${TRACE_ID}-${PARENT_ID}-1\r\nConnection: close\r\n\r\n`,
      'POST /missing HTTP/1.1\r\nHost: example.test\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc',
    ]) {
      statuses.push((await rawRequest(port, head)).split(' ')[1]);
    }
    await new Promise((r) => server.close(r));
    await Sentry.flush(2000);
    process.stdout.write(JSON.stringify({
      statuses,
      transactions: transactions.map((t) => ({
        transaction: t.transaction,
        op: t.contexts.trace.op,
        status: t.contexts.trace.status,
        traceId: t.contexts.trace.trace_id,
        parentSpanId: t.contexts.trace.parent_span_id,
        data: t.contexts.trace.data,
        request: t.request,
      })),
    }));
    process.exit(0);
  });
}
