'use strict';
// sluice behind nginx as a reverse proxy, with the upstream configuration
// docs/deployment.md gives (HTTP/1.1 to the upstream, keepalive pool,
// Connection cleared): GETs reuse a few upstream connections, an upload
// streams through, a file comes back whole, and server.close() drains
// under load with 0 failed requests. nginx (Debian's nginx-light, installed by
// .ci/run) runs as a child with its own prefix in a temporary directory.
// Shared test: under SLUICE_TEST_IMPL=node the upstream is node:http.

const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { spawn, execFileSync } = require('node:child_process');
const common = require('../common');
const { startLoad } = require('../cluster/load');

const { assert } = common;

function nginxBinary() {
  for (const p of ['/usr/sbin/nginx', '/usr/bin/nginx']) if (fs.existsSync(p)) return p;
  return null;
}

// The upstream block of docs/deployment.md, in a config of its own.
function nginxConfig(dir, listenPort, upstreamPorts) {
  const user = process.getuid && process.getuid() === 0 ? 'user root;' : '';
  return `${user}
worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream sluice {
${upstreamPorts.map((p) => `    server 127.0.0.1:${p};`).join('\n')}
    keepalive 16;
    keepalive_timeout 4s;
  }
  server {
    listen 127.0.0.1:${listenPort};
    client_max_body_size 16m;
    location / {
      proxy_pass http://sluice;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_request_buffering off;
    }
  }
}
`;
}

describe('behind nginx (reverse proxy, upstream keepalive)', function () {
  this.timeout(60000);
  let dir;
  let nginx;
  let proxyPort;
  let server;
  let second;
  const upstreamPorts = new Set();
  const file = crypto.randomBytes(200 * 1024);

  before(async function () {
    const bin = nginxBinary();
    assert.ok(bin, 'nginx not found: apt-get install -y nginx-light (.ci/run installs it)');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-nginx-'));
    fs.writeFileSync(path.join(dir, 'file.bin'), file);
    const handler = (req, res) => {
      upstreamPorts.add(req.socket.remotePort);
      if (req.method === 'POST') {
        const hash = crypto.createHash('sha256');
        let n = 0;
        req.on('data', (c) => { hash.update(c); n += c.length; });
        req.on('end', () => res.end(`${n} ${hash.digest('hex')}`));
        return;
      }
      if (req.url === '/file' && typeof res.respondWithFile === 'function') {
        res.respondWithFile(path.join(dir, 'file.bin'), { 'content-type': 'application/octet-stream' });
        return;
      }
      if (req.url === '/file') {
        res.setHeader('content-type', 'application/octet-stream');
        fs.createReadStream(path.join(dir, 'file.bin')).pipe(res);
        return;
      }
      res.setHeader('content-type', 'text/plain');
      res.end(`${req.method} ${req.url} host=${req.headers.host} xff=${req.headers['x-forwarded-for']} conn=${req.headers.connection || ''}`);
    };
    ({ server } = await common.startServer(handler));
    ({ server: second } = await common.startServer(handler));
    proxyPort = await common.freePort();
    fs.writeFileSync(path.join(dir, 'nginx.conf'),
      nginxConfig(dir, proxyPort, [server.address().port, second.address().port]));
    execFileSync(bin, ['-t', '-p', dir, '-c', path.join(dir, 'nginx.conf')], { stdio: 'pipe' });
    nginx = spawn(bin, ['-p', dir, '-c', path.join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
    // Ready when the port answers.
    const deadline = Date.now() + 10000;
    for (;;) {
      const ok = await new Promise((resolve) => {
        const s = net.connect(proxyPort, '127.0.0.1', () => { s.destroy(); resolve(true); });
        s.on('error', () => resolve(false));
      });
      if (ok) break;
      if (Date.now() > deadline) throw new Error(`nginx did not start: ${fs.readFileSync(path.join(dir, 'error.log'), 'utf8')}`);
      await common.sleep(50);
    }
  });

  after(async function () {
    if (nginx && nginx.exitCode === null) {
      await new Promise((resolve) => { nginx.once('exit', resolve); nginx.kill('SIGQUIT'); });
    }
    await common.cleanup();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('proxies GETs over a few kept-alive upstream connections, with the forwarded headers', async function () {
    upstreamPorts.clear();
    for (let i = 0; i < 50; i++) {
      const r = await common.httpRequest(proxyPort, { path: `/x?i=${i}`, headers: { host: 'example.test', connection: 'close' } });
      assert.strictEqual(r.statusCode, 200);
      assert.strictEqual(r.body.toString(), `GET /x?i=${i} host=example.test xff=127.0.0.1 conn=`);
    }
    // 50 client connections, one request each, round-robin over two
    // upstreams: nginx reused its upstream connections (keepalive) instead
    // of opening 50.
    assert.ok(upstreamPorts.size <= 4, `${upstreamPorts.size} upstream connections for 50 requests`);
  });

  it('streams a 4 MiB upload through (proxy_request_buffering off) and a file back', async function () {
    const body = crypto.randomBytes(4 * 1024 * 1024);
    const up = await common.httpRequest(proxyPort, { method: 'POST', path: '/upload', body: [body.subarray(0, 1 << 20), body.subarray(1 << 20)] });
    assert.strictEqual(up.statusCode, 200);
    assert.strictEqual(up.body.toString(), `${body.length} ${crypto.createHash('sha256').update(body).digest('hex')}`);
    const down = await common.httpRequest(proxyPort, { path: '/file' });
    assert.strictEqual(down.statusCode, 200);
    assert.ok(down.body.equals(file));
  });

  it('one upstream drains with server.close() under load through nginx: 0 failed requests', async function () {
    // Continuous GETs through nginx (new client connection each), then one
    // of the two upstreams closes: its in-flight requests finish with
    // Connection: close, its idle kept-alive connections close, nginx
    // retries a request that met a closing connection on the other upstream
    // (proxy_next_upstream error, idempotent GET) and stops using it.
    const load = startLoad(proxyPort);
    await common.sleep(500);
    await common.closeServer(server, 10000);
    load.nextRound();
    await common.sleep(500);
    const stats = await load.stop();
    // eslint-disable-next-line no-console
    console.log(`      ${stats.ok} requests through nginx, ${stats.failed} failed (${stats.perRound.map((r) => Object.values(r)[0] || 0).join(' before, ')} after the close)`);
    assert.deepStrictEqual(stats.errors, {});
    assert.ok(stats.ok > 20, `only ${stats.ok} requests`);
    for (let i = 0; i < 10; i++) {
      const r = await common.httpRequest(proxyPort, { path: '/after' });
      assert.strictEqual(r.statusCode, 200);
    }
  });
});
