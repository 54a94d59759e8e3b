'use strict';
// Compressed responses (issue 7): sluice's native compression (whole
// bodies on the threadpool above 32 KiB, res.write() streams through the
// streaming compressor, files through the compression transform of the
// native pipe) vs node:http + zlib (createGzip() /
// createBrotliCompress() piped, and the sync gzipSync variant), plus
// precompressed files. gzip level 6 and br quality 4 on both sides.
// Columns: req/s, server CPU µs per request, bytes per response (head
// included: the compressed size, same level on both sides), and the p99
// latency of a tiny request sent every 10 ms on its own connection while
// the load runs (how responsive the loop stays).
// HTTP/1.1 with wrk; HTTP/2 with h2load (h2c, 'stream' API, -c 10 -m 10,
// no probe: node:http2's h2c server does not answer the HTTP/1.1 probe).
// Run: node benchmark/run.js zlib/compressed_response [--quick]

const S = 'compressed_server.js';
const probe = { path: '/tiny', intervalMs: 10 };

function variants(body, enc) {
  const base = ['--body', body, '--encoding', enc];
  const v = [{ label: 'sluice', impl: 'sluice', args: base }];
  if (body === 'precompressed' || body === 'stream') {
    v.push({ label: body === 'stream' ? 'node pipe' : 'node stream', impl: 'node', args: base, baseline: true });
    return v;
  }
  v.push({ label: 'node pipe', impl: 'node', args: [...base, '--node', 'pipe'], baseline: true });
  v.push({ label: 'node sync', impl: 'node', args: [...base, '--node', 'sync'] });
  return v;
}

function wrkCase(name, body, enc, connections) {
  return {
    name,
    server: { script: S, args: [] },
    variants: variants(body, enc),
    load: { tool: 'wrk', threads: 1, connections, headers: [`Accept-Encoding: ${enc}`] },
    probe,
    // The check fetches without Accept-Encoding: the identity body.
    check: { bodyLength: body === 'json' ? undefined : 1 << 20 },
  };
}

function h2Case(name, enc) {
  const base = ['--proto', 'h2', '--body', 'json', '--encoding', enc];
  return {
    name,
    server: { script: S, args: [] },
    variants: [
      { label: 'sluice', impl: 'sluice', args: base },
      { label: 'node:http2 pipe', impl: 'node', args: [...base, '--node', 'pipe'], baseline: true },
      { label: 'node:http2 sync', impl: 'node', args: [...base, '--node', 'sync'] },
    ],
    load: { tool: 'h2load', args: ['-c', '10', '-m', '10'], headers: [`accept-encoding: ${enc}`] },
    check: { http2: true },
  };
}

module.exports = {
  title: 'zlib/compressed_response: compressed responses, sluice vs node:http + zlib',
  columns: ['rps', 'cpuPct', 'loadCpuPct', 'otherCpuPct', 'cpuUsPerReq', 'bytesPerResp', 'probeP99', 'ratioRps', 'ratioCpu'],
  cases: [
    wrkCase('64 KiB JSON gzip wrk c50', 'json', 'gzip', 50),
    wrkCase('64 KiB JSON br wrk c50', 'json', 'br', 50),
    // Fewer connections: the server is not saturated, so the probe shows
    // the loop's own stalls (node sync blocks it for each body).
    wrkCase('64 KiB JSON gzip wrk c4', 'json', 'gzip', 4),
    wrkCase('1 MiB text file gzip wrk c10', 'file', 'gzip', 10),
    wrkCase('1 MiB text file br wrk c10', 'file', 'br', 10),
    // res.write() in 64 KiB chunks: the streaming compressor (threadpool
    // above 32 KiB per write) vs node's zlib stream piped.
    wrkCase('1 MiB text streamed gzip wrk c10', 'stream', 'gzip', 10),
    wrkCase('1 MiB text streamed br wrk c10', 'stream', 'br', 10),
    wrkCase('1 MiB text precompressed .gz wrk c10', 'precompressed', 'gzip', 10),
    wrkCase('1 MiB text precompressed .br wrk c10', 'precompressed', 'br', 10),
    h2Case('64 KiB JSON gzip h2load c10 m10', 'gzip'),
    h2Case('64 KiB JSON br h2load c10 m10', 'br'),
  ],
};
