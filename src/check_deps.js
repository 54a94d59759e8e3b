#!/usr/bin/env node
'use strict';
// Runs before the native build: checks the Debian packages the addon
// compiles against and prints the exact install line when one is missing,
// instead of letting the compiler fail with a missing header.
const fs = require('fs');

const checks = [
  { pkg: 'node-llhttp', files: ['/usr/share/llhttp/llhttp.c', '/usr/share/llhttp/api.c',
    '/usr/share/llhttp/http.c', '/usr/share/include/llhttp/llhttp.h'] },
  // Headers only: the nghttp2 that runs is node's own copy
  // (src/core/http2/nghttp2_link.h); nothing links libnghttp2.
  { pkg: 'libnghttp2-dev', files: ['/usr/include/nghttp2/nghttp2.h'] },
  // Headers only: the brotli encoder that runs is the one inside node
  // (src/core/compress/compressor.h); zlib.h comes with Node's own headers.
  { pkg: 'libbrotli-dev', files: ['/usr/include/brotli/encode.h'] },
];

const nodeHeaders = [process.env.npm_config_nodedir, '/usr']
  .filter(Boolean).map((d) => `${d}/include/node/node_api.h`);

const missing = [];
for (const c of checks) {
  const ok = c.files.every((f) => fs.existsSync(f)) &&
    (!c.anyOf || c.anyOf.some((f) => fs.existsSync(f)));
  if (!ok) missing.push(c.pkg);
}
let problems = 0;
if (missing.length) {
  problems++;
  console.error(`sluice: missing system packages: ${missing.join(', ')}`);
  console.error(`Install them with:\n\n  sudo apt-get install -y ${missing.join(' ')}\n`);
}
if (!nodeHeaders.some((f) => fs.existsSync(f))) {
  problems++;
  console.error('sluice: Node headers not found (node_api.h). On Debian they come with the ' +
    'nodejs package (/usr/include/node); set npm\'s nodedir to the directory that holds include/node.');
}
process.exit(problems ? 1 : 0);
