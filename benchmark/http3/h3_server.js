'use strict';
// h3_server.js sluice --mode file|upload [--file-size N] [--gso 0]
//
// One sluice.createSecureServer({ http3: true }) (certificate made at
// start, EC P-256): HTTP/2 over TLS on the TCP port and HTTP/3 on the UDP
// port of the same number, with the same 'stream' handler for both:
//   file    stream.respondWithFile of a --file-size file (the native pipe)
//   upload  a POST body consumed, answered 'ok'
// Alt-Svc is off (HTTP/2 responses carry no extra header). Prints
// "PORT <n>" once both listen. Needs a node whose OpenSSL has QUIC
// (>= 22.20, 24, 26): otherwise it exits with the reason.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { loadImpl, parseArgs, serve } = require('../server_harness.js');

const opts = parseArgs(process.argv.slice(2), { mode: 'file', fileSize: 1024, gso: 1 });
const sluice = loadImpl(opts._[0] || 'sluice');
if (!sluice.features.http3) {
  process.stderr.write(`HTTP/3 unavailable in node ${process.version}: ${sluice.features.http3Reason}\n`);
  process.exit(3);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-h3-'));
execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
  '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=localhost'],
{ stdio: 'ignore' });
const file = path.join(dir, 'file.bin');
if (opts.mode === 'file') fs.writeFileSync(file, Buffer.alloc(opts.fileSize, 'f'));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

const server = sluice.createSecureServer({
  key: fs.readFileSync(path.join(dir, 'key.pem')),
  cert: fs.readFileSync(path.join(dir, 'cert.pem')),
  http3: { altSvc: false, gso: Number(opts.gso) !== 0 },
});
server.on('stream', (stream, headers) => {
  if (opts.mode === 'upload' || headers[':method'] === 'POST') {
    stream.on('data', () => {});
    stream.on('end', () => {
      stream.respond({ ':status': 200 });
      stream.end('ok');
    });
    return;
  }
  stream.respondWithFile(file, { 'content-type': 'application/octet-stream' });
});
server.on('listening', () => {
  const tcp = server.address().port;
  const udp = server.http3Address().port;
  if (tcp !== udp) {
    process.stderr.write(`HTTP/3 listens on UDP ${udp}, HTTP/2 on TCP ${tcp}: expected one port number\n`);
    process.exit(1);
  }
});
serve(server);
