'use strict';
// TLS uploads: 1 MiB POSTs over HTTPS (wrk + ../http/upload.lua), sluice
// with its buffer pool (decrypted bytes land in pool memory) vs node's
// https.createServer and http2.createSecureServer({ allowHTTP1 }).
// Run: node benchmark/run.js tls/secure_upload [--quick]

const UPLOAD = 1024 * 1024;

module.exports = {
  title: 'tls/secure_upload: 1 MiB HTTPS uploads, sluice (pool) vs node https / http2',
  columns: ['rps', 'gbps', 'cpuPct', 'loadCpuPct', 'cpuSecPerGB', 'gcMsPerSec', 'peakRss', 'ratioRps', 'ratioCpu'],
  ratioCpuMetric: 'cpuSecPerGB',
  cases: [
    {
      name: '1 MiB uploads wrk c20 (sluice with pool)',
      uploadBytes: UPLOAD,
      duration: 10,
      server: { script: 'secure_server.js', args: ['--mode', 'upload'] },
      variants: [
        { label: 'sluice pool', impl: 'sluice', args: ['--use-buffer-pool', 1] },
        { label: 'node https', impl: 'node-https', baseline: true },
        { label: 'node http2 (allowHTTP1)', impl: 'node-http2' },
      ],
      load: { tool: 'wrk', threads: 1, connections: 20, path: '/upload', timeout: 20, tls: true,
        script: '../http/upload.lua', scriptArgs: ['', UPLOAD] },
      check: { method: 'POST', path: '/upload', bodySize: UPLOAD, body: 'ok', tls: true },
    },
  ],
};
