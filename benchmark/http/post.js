'use strict';
// POST bodies side by side: 1 KiB and 16 KiB JSON (the handler parses it)
// and 1 MiB uploads (8 MiB too over h2c), over HTTP/1.1 (wrk c100, upload.lua) and h2c (h2load
// -c 10 -m 10 -d <file>); sluice with and without its buffer pool vs
// node:http / node:http2. Columns include the zero-copy share: the part of
// the body bytes the handler got as views of pool memory.
// uWebSockets.js is not on the npm registry (GitHub releases only), so no
// row for it here.
// Run: node benchmark/run.js http/post [--quick]

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-post-'));
process.on('exit', () => { try { fs.rmSync(dir, { recursive: true, force: true }); } catch {} });

// A JSON document of about `size` bytes (an array of small records).
function jsonBody(size) {
  const items = [];
  let s = '[]';
  for (let i = 0; s.length < size - 40; i++) {
    items.push({ id: i, name: `item-${i}`, ok: i % 2 === 0 });
    s = JSON.stringify(items);
  }
  return Buffer.from(s.padEnd(size, ' '));
}

function bodyFile(name, buf) {
  const f = path.join(dir, name);
  fs.writeFileSync(f, buf);
  return f;
}

const BODIES = [
  { name: '1 KiB JSON', file: bodyFile('1k.json', jsonBody(1024)), bytes: 1024, json: 1, quick: true },
  { name: '16 KiB JSON', file: bodyFile('16k.json', jsonBody(16 * 1024)), bytes: 16 * 1024, json: 1, quick: true },
  { name: '1 MiB upload', file: bodyFile('1m.bin', Buffer.alloc(1024 * 1024, 'u')), bytes: 1024 * 1024, json: 0, quick: true },
  // HTTP/2 only: bodies many stream windows long, read into pool memory
  // and credited as the handler releases.
  { name: '8 MiB upload', file: bodyFile('8m.bin', Buffer.alloc(8 * 1024 * 1024, 'u')), bytes: 8 * 1024 * 1024, json: 0, quick: true, protos: ['h2'] },
];

const cases = [];
for (const proto of ['h1', 'h2']) {
  for (const b of BODIES) {
    if (b.protos && !b.protos.includes(proto)) continue;
    const base = ['--proto', proto, '--json', b.json];
    cases.push({
      name: `${proto === 'h1' ? 'HTTP/1.1' : 'h2c'} ${b.name}`,
      quick: b.quick,
      duration: 5,
      uploadBytes: b.bytes,
      server: { script: 'post_server.js', args: base },
      variants: [
        { label: 'sluice pool', impl: 'sluice', args: ['--use-buffer-pool', 1] },
        { label: 'sluice', impl: 'sluice', args: ['--use-buffer-pool', 0] },
        { label: proto === 'h1' ? 'node:http' : 'node:http2', impl: 'node', args: ['--use-buffer-pool', 0], baseline: true },
      ],
      load: proto === 'h1' ?
        { tool: 'wrk', threads: 1, connections: 100, path: '/post', timeout: 20, script: 'upload.lua', scriptArgs: [b.file] } :
        { tool: 'h2load', args: ['-c', '10', '-m', '10', '-d', b.file] },
      check: proto === 'h1' ? { method: 'POST', path: '/post', bodySize: 64, body: 'ok' } : { http2: true, path: '/', body: 'ok' },
    });
  }
}

module.exports = {
  title: 'http/post: JSON and upload POSTs over HTTP/1.1 and h2c, sluice (pool on/off) vs node:http / node:http2',
  columns: ['rps', 'cpuPct', 'loadCpuPct', 'otherCpuPct', 'cpuUsPerReq', 'cpuSecPerGB', 'gcMsPerSec', 'zeroCopyPct', 'ratioRps', 'ratioCpu'],
  cases,
};
