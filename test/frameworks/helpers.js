'use strict';

// Framework tests: every app is started on node:http and on sluice, and the
// same checks run against both (the node run proves the check itself).
// Under SLUICE_TEST_IMPL=node only the node:http run is made.

const http = require('node:http');
const http2 = require('node:http2');
const zlib = require('node:zlib');
const common = require('../common');

const sluice = require('../..');

// [{ name, createServer }] for this run.
const servers = [
  { name: 'node:http', createServer: (...a) => http.createServer(...a), isSluice: false },
];
if (common.isSluice) {
  servers.push({ name: 'sluice', createServer: (...a) => sluice.createServer(...a), isSluice: true });
}

// Listens `server` on 127.0.0.1:0 (tracked for cleanup); resolves its base URL.
async function listen(server) {
  return `http://127.0.0.1:${await common.listenLocal(server)}`;
}

// describe() once per server implementation; fn(impl) defines the tests.
function forEachServer(title, fn) {
  for (const impl of servers) {
    describe(`${title} [${impl.name}]`, function () {
      // A framework's first hook requires its whole module tree and
      // registers plugins: on a loaded machine that once took over the
      // suite's 20 s (Fastify 5 on node:http itself). Not a latency check.
      this.timeout(60000);
      afterEach(common.cleanup);
      fn(impl);
    });
  }
}

// fetch with a deadline; resolves { status, headers, body (Buffer) }.
async function get(url, init = {}) {
  const r = await fetch(url, { signal: AbortSignal.timeout(8000), ...init });
  const body = Buffer.from(await r.arrayBuffer());
  return { status: r.status, headers: r.headers, body, text: body.toString() };
}

// The same with node's http client (fetch turns a conditional request into
// a no-cache one, which defeats 304s).
function nodeGet(url, headers = {}, method = 'GET') {
  const u = new URL(url);
  return common.httpRequest(Number(u.port), { path: u.pathname + u.search, headers, method })
    .then((r) => ({ status: r.statusCode, headers: r.headers, body: r.body, text: r.body.toString() }));
}

// One request over HTTP/2 prior knowledge with node's http2 client.
function h2request(base, headers, body) {
  return common.withTimeout(new Promise((resolve, reject) => {
    const client = http2.connect(base);
    client.on('error', reject);
    const req = client.request(headers);
    const chunks = [];
    let head;
    req.on('response', (h) => { head = h; });
    req.on('data', (d) => chunks.push(d));
    req.on('end', () => {
      client.close();
      resolve({ headers: head, status: head[':status'], body: Buffer.concat(chunks) });
    });
    req.on('error', reject);
    req.end(body);
  }), 8000, 'HTTP/2 response');
}

function gunzip(buf) { return zlib.gunzipSync(buf); }

module.exports = { servers, listen, forEachServer, get, nodeGet, h2request, gunzip, sluice };
