'use strict';

// HTTP/3 test helpers: whether this node can serve HTTP/3 (node's OpenSSL
// has the QUIC server API from 3.5: Node >= 22.20, 24, 26), a sluice
// secure server with http3 on 127.0.0.1, and Debian's ngtcp2 client
// (`gtlsclient`, package ngtcp2-client: an independent QUIC + HTTP/3
// implementation on GnuTLS) run against it, its responses read back from
// its log (heads) and --download directory (bodies).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFile } = require('node:child_process');
const common = require('../common');
const { fixtures } = require('../tls/tls_common');

const sluice = require('../..');

const GTLSCLIENT = '/usr/bin/gtlsclient';
const h3 = sluice.features.http3;
const haveClient = fs.existsSync(GTLSCLIENT);

// A secure server with HTTP/3 on 127.0.0.1 (TCP and UDP on one port
// number); resolves { server, port } (port: the UDP one).
async function startH3Server(options = {}, listener) {
  const { localhost } = fixtures();
  const server = sluice.createSecureServer({
    key: localhost.key, cert: localhost.cert, http3: true, ...options,
  }, listener);
  await common.listenLocal(server);
  return { server, port: server.http3Address().port, tcpPort: server.address().port };
}

// Runs gtlsclient against 127.0.0.1:port for `paths`; resolves
// { code, log, responses: Map(path → { status, headers, body, closed }) }.
// opts: method, data (a Buffer sent as the body), args (more flags),
// timeout (ms, the whole run), n (requests: paths wrapped), keep, idle,
// host (the server's address: '127.0.0.1').
function gtls(port, paths, opts = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-h3-'));
  // keep: stay connected after the responses (until the server closes or
  // the client's own idle timeout `idle`).
  const args = [...(opts.keep ? [] : ['--exit-on-all-streams-close']), ...(opts.quicDump ? [] : ['--no-quic-dump']), '--no-http-dump',
    '--download', dir, '--timeout', opts.idle || '15s'];
  if (opts.method) args.push('-m', opts.method);
  if (opts.data !== undefined) {
    const f = path.join(dir, '.request-body');
    fs.writeFileSync(f, opts.data);
    args.push('-d', f);
  }
  if (opts.n) args.push('-n', String(opts.n));
  if (opts.args) args.push(...opts.args);
  const host = opts.host || '127.0.0.1';
  const authority = host.includes(':') ? `[${host}]` : host;
  args.push(host, String(port), ...paths.map((p) => `https://${authority}:${port}${p}`));
  return new Promise((resolve) => {
    execFile(GTLSCLIENT, args, { timeout: opts.timeout || 30000, maxBuffer: 256 * 1024 * 1024, encoding: 'latin1' },
      (err, stdout, stderr) => {
        const log = `${stdout}\n${stderr}`;
        // Heads: "http: stream 0x4 [:status: 200]"; the request of each
        // stream id from the submit order (ids 0, 4, 8... in path order).
        const byId = new Map();
        for (const m of log.matchAll(/^http: stream 0x([0-9a-f]+) \[([^:\]]*|:[^:\]]*): (.*)\]$/gm)) {
          const id = parseInt(m[1], 16);
          let r = byId.get(id);
          if (!r) byId.set(id, r = { status: 0, headers: {}, body: null });
          if (m[2] === ':status') r.status = Number(m[3]);
          else r.headers[m[2]] = m[3];
        }
        const responses = new Map();
        const n = opts.n || paths.length;
        for (let i = 0; i < n; i++) {
          const p = paths[i % paths.length];
          const r = byId.get(i * 4);
          if (!r) continue;
          const file = path.join(dir, path.basename(p) || 'index.html');
          r.body = fs.existsSync(file) ? fs.readFileSync(file) : Buffer.alloc(0);
          responses.set(n === paths.length ? p : `${p}#${i}`, r);
        }
        fs.rmSync(dir, { recursive: true, force: true });
        resolve({ code: err ? (err.code || err.signal) : 0, log, responses });
      });
  });
}

module.exports = { h3, haveClient, startH3Server, gtls, sluice, GTLSCLIENT };
