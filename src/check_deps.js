#!/usr/bin/env node
'use strict';
// Runs before the native build (`npm run build`, and a from-source install:
// src/install.js): checks the compiler and the Debian packages the addon
// compiles against and prints the exact install line when one is missing,
// instead of letting the compiler fail with a missing header. Package names
// on other distributions: docs/install.md.
const fs = require('fs');
const path = require('path');

// `sudo ` only when not root: a root shell in a container has no sudo.
const SUDO = typeof process.getuid === 'function' && process.getuid() === 0 ? '' : 'sudo ';

function onPath(cmd) {
  if (cmd.includes('/')) return fs.existsSync(cmd);
  return (process.env.PATH || '').split(path.delimiter).filter(Boolean)
    .some((d) => { try { fs.accessSync(path.join(d, cmd), fs.constants.X_OK); return true; } catch { return false; } });
}

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
// node-gyp's make build runs $CXX (else g++), $CC (else gcc) and make.
// Only the first word of $CXX is the program ("ccache g++").
const compilers = [
  { pkg: 'g++', cmd: (process.env.CXX || 'g++').trim().split(/\s+/)[0] },
  { pkg: 'gcc', cmd: (process.env.CC || 'gcc').trim().split(/\s+/)[0] },
  { pkg: 'make', cmd: 'make' },
];
for (const c of compilers) {
  if (!onPath(c.cmd)) missing.push(c.pkg);
}
for (const c of checks) {
  const ok = c.files.every((f) => fs.existsSync(f)) &&
    (!c.anyOf || c.anyOf.some((f) => fs.existsSync(f)));
  if (!ok) missing.push(c.pkg);
}
let problems = 0;
if (missing.length) {
  problems++;
  console.error(`sluice: missing system packages: ${missing.join(', ')}`);
  console.error(`Install them with (Debian, Ubuntu; other distributions: docs/install.md):\n\n  ${SUDO}apt-get install -y ${missing.join(' ')}\n`);
}
if (!nodeHeaders.some((f) => fs.existsSync(f))) {
  problems++;
  console.error('sluice: Node headers not found (node_api.h). On Debian they come with the ' +
    'nodejs package (/usr/include/node); set npm\'s nodedir to the directory that holds include/node.');
}
process.exit(problems ? 1 : 0);
