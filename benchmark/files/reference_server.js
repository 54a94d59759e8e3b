'use strict';
// reference_server.js <nginx|h2o> --file-size N --proto h2|h1
// Starts a reference web server (Debian's nginx-light or h2o) serving one
// file of N random bytes at /f from a temp dir, with the configuration
// written below (one worker process / one thread, access log off, the
// server's own open-file cache on where it has one), in the foreground as
// a child of this script, so that it inherits the CPU pin (taskset).
// Prints "PORT <n> PID <pid>": the runner measures the CPU of that pid (the
// reference server itself), not of this wrapper, which only relays the
// harness protocol (lib/relay.js).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { spawn } = require('node:child_process');
const { parseArgs } = require('../server_harness.js');
const { freePort, relay } = require('../lib/relay.js');

const opts = parseArgs(process.argv.slice(2), { fileSize: 1024, proto: 'h2' });
const which = opts._[0];
const h2 = opts.proto === 'h2';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), `sluice-bench-${which}-`));
const root = path.join(dir, 'root');
fs.mkdirSync(root);
fs.writeFileSync(path.join(root, 'f'), crypto.randomBytes(opts.fileSize));

function nginxConfig(port) {
  // master_process off: the one process doing the work is the one spawned.
  // http2 on a plain listener is h2c with prior knowledge (nginx 1.22).
  // http2_max_requests / keepalive_requests: h2load and wrk keep their
  // connections for the whole run (the defaults, 1000, would close them).
  return `daemon off;
master_process off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log stderr error;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_requests 100000000;
  http2_max_requests 100000000;
  http2_max_concurrent_streams 256;
  open_file_cache max=1000 inactive=60s;
  open_file_cache_valid 60s;
  default_type application/octet-stream;
  client_body_temp_path ${dir}/tmp-body;
  proxy_temp_path ${dir}/tmp-proxy;
  fastcgi_temp_path ${dir}/tmp-fastcgi;
  uwsgi_temp_path ${dir}/tmp-uwsgi;
  scgi_temp_path ${dir}/tmp-scgi;
  server {
    listen 127.0.0.1:${port}${h2 ? ' http2' : ''};
    root ${root};
    location / { }
  }
}
`;
}

function h2oConfig(port) {
  // h2o answers HTTP/1.1 and h2c (prior knowledge) on the same listener.
  // Started as root it would switch to "nobody", who cannot read the temp
  // dir: it stays the user running the benchmark.
  return `user: ${os.userInfo().username}
listen:
  host: 127.0.0.1
  port: ${port}
num-threads: 1
http2-max-concurrent-requests-per-connection: 256
access-log: /dev/null
error-log: ${dir}/error.log
file.send-gzip: OFF
hosts:
  default:
    paths:
      /:
        file.dir: ${root}
`;
}

async function main() {
  const port = await freePort();
  let child;
  if (which === 'nginx') {
    fs.writeFileSync(path.join(dir, 'nginx.conf'), nginxConfig(port));
    child = spawn('nginx', ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', 'stderr'],
      { stdio: ['ignore', 'inherit', 'inherit'] });
  } else if (which === 'h2o') {
    fs.writeFileSync(path.join(dir, 'h2o.conf'), h2oConfig(port));
    child = spawn('h2o', ['-c', path.join(dir, 'h2o.conf')], { stdio: ['ignore', 'inherit', 'inherit'] });
  } else {
    throw new Error(`unknown reference server ${JSON.stringify(which)} (want nginx or h2o)`);
  }
  await relay(child, port, which, { cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) });
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
