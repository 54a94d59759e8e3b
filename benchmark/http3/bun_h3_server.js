'use strict';
// bun bun_h3_server.js --mode file|upload [--file-size N]
//
// Bun's HTTP/3 (Bun.serve({ http3: true }): lsquic) with the same work as
// h3_server.js: a --file-size file (Bun.file, Bun's own file response) or
// a POST body read to its end and answered 'ok'. TLS certificate made at
// start (EC P-256); TCP and UDP on one port number on 127.0.0.1. Prints
// "PORT <n>"; exits on SIGTERM. Run under Bun only (side_by_side.js).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const mode = opt('mode', 'file');
const fileSize = Number(opt('file-size', 1024));

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-bun-h3-'));
execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
  '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=localhost'],
{ stdio: 'ignore' });
const file = path.join(dir, 'file.bin');
fs.writeFileSync(file, Buffer.alloc(mode === 'file' ? fileSize : 0, 'f'));
const cleanup = () => fs.rmSync(dir, { recursive: true, force: true });

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  http3: true,
  tls: { key: fs.readFileSync(path.join(dir, 'key.pem')), cert: fs.readFileSync(path.join(dir, 'cert.pem')) },
  async fetch(req) {
    if (req.method === 'POST') {
      const reader = req.body.getReader();
      while (!(await reader.read()).done);
      return new Response('ok');
    }
    return new Response(Bun.file(file), { headers: { 'content-type': 'application/octet-stream' } });
  },
});
process.on('SIGTERM', () => {
  server.stop(true);
  cleanup();
  process.exit(0);
});
process.stdout.write(`PORT ${server.port}\n`);
