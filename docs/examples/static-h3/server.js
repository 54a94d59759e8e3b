'use strict';

// A static site over HTTPS: HTTP/1.1 and HTTP/2 on TCP, and HTTP/3 on UDP
// (same port number) where this Node has it (sluice.features.http3: Node
// 22.20+, 24, 26 — OpenSSL 3.5). Every file is answered natively
// (server.serveStatic: no JS per request, the same mount on all three
// protocols); HTTP/1.1 and HTTP/2 answers carry Alt-Svc so browsers move
// to HTTP/3. TLS_CERT / TLS_KEY name a certificate; without them a
// development certificate for localhost is made with the openssl CLI.
//
//   PORT=8443 node server.js [folder]

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const sluice = require('sluice');

const port = Number(process.env.PORT) || 8443;
const root = path.resolve(process.argv[2] || path.join(__dirname, 'public'));

function certificate() {
  if (process.env.TLS_CERT && process.env.TLS_KEY) {
    return { cert: fs.readFileSync(process.env.TLS_CERT), key: fs.readFileSync(process.env.TLS_KEY) };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'static-h3-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
      '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '30', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { cwd: dir, stdio: 'ignore' });
    return { cert: fs.readFileSync(path.join(dir, 'cert.pem')), key: fs.readFileSync(path.join(dir, 'key.pem')) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const server = sluice.createSecureServer({
  ...certificate(),
  compression: true,                    // text files compressed on the fly (br, gzip)
  http3: sluice.features.http3,
}, (req, res) => {
  // Only what no file answered comes here.
  res.statusCode = 404;
  res.setHeader('content-type', 'text/plain; charset=utf-8');
  res.end('not found\n');
});
server.serveStatic('/', root, { maxAge: '1h', precompressed: true });

server.listen(port, () => {
  console.log(`https://localhost:${port} serving ${root}`);
  console.log(sluice.features.http3 ? `HTTP/3 on UDP port ${port}` : `no HTTP/3: ${sluice.features.http3Reason}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
