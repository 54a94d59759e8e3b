'use strict';
// TLS: sluice.createSecureServer vs node's https.createServer and
// http2.createSecureServer({ allowHTTP1 }), side by side in one run.
// HTTPS hello (wrk, keep-alive), new-connection handshakes (wrk with
// Connection: close), h2 respondWithFile 64 KiB (h2load over TLS, ALPN
// h2). Uploads: tls/secure_upload.js.
// Run: node benchmark/run.js tls/secure [--quick]

const server = (args) => ({ script: 'secure_server.js', args });
const h1Variants = [
  { label: 'sluice', impl: 'sluice' },
  { label: 'node https', impl: 'node-https', baseline: true },
  { label: 'node http2 (allowHTTP1)', impl: 'node-http2' },
];

module.exports = {
  title: 'tls/secure: sluice.createSecureServer vs node https / http2.createSecureServer',
  columns: ['rps', 'mbps', 'cpuPct', 'loadCpuPct', 'otherCpuPct', 'cpuUsPerReq', 'ratioRps', 'ratioCpu'],
  cases: [
    {
      name: 'https hello wrk c50 keep-alive',
      server: server(['--mode', 'hello']),
      variants: h1Variants,
      load: { tool: 'wrk', threads: 1, connections: 50, tls: true },
      check: { bodyLength: 5, body: 'hello', tls: true },
    },
    {
      name: 'handshakes: wrk c20 Connection: close',
      server: server(['--mode', 'hello']),
      variants: h1Variants,
      load: { tool: 'wrk', threads: 1, connections: 20, tls: true, headers: ['Connection: close'] },
      check: { bodyLength: 5, tls: true },
    },
    {
      name: 'h2 respondWithFile 64 KiB h2load c10 m10',
      server: server(['--mode', 'file', '--file-size', 65536]),
      variants: [
        { label: 'sluice', impl: 'sluice' },
        { label: 'node http2', impl: 'node-http2', baseline: true },
      ],
      load: { tool: 'h2load', args: ['-c', '10', '-m', '10'], tls: true },
      check: { http2: true, bodyLength: 65536, tls: true },
    },
  ],
};
