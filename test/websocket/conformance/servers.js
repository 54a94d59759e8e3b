'use strict';

// The echo servers the conformance cases run against, one per target:
//
//   ws/node:http        ws's WebSocketServer on node:http (the reference)
//   ws/node:https       the same over TLS
//   ws/sluice-upgrade   ws on sluice's 'upgrade' socket (sluice's tunnel socket, ws's framing)
//   sluice/http1        sluice.WebSocketServer on sluice.createServer
//   sluice/tls          sluice.WebSocketServer on sluice.createSecureServer (wss)
//   sluice/h2           the same secure server, RFC 8441 extended CONNECT over h2
//   sluice/h2c          sluice.createServer, RFC 8441 over h2c (prior knowledge)
//
// Every server echoes data messages as they came, answers pings (autoPong),
// compresses every reply when permessage-deflate is negotiated
// (threshold 0) and has maxPayload = MAX_PAYLOAD.
// The sluice/* targets exist only when sluice exports WebSocketServer.

const http = require('node:http');
const https = require('node:https');
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');
const { execFileSync } = require('node:child_process');
const { MAX_PAYLOAD } = require('./cases');

const ROOT = path.resolve(__dirname, '../../..');

function loadSluice() {
  try {
    return require(ROOT);
  } catch (e) {
    return { loadError: e };
  }
}

// Why the native sluice targets cannot run, or null when they can.
function sluiceMissing() {
  const s = loadSluice();
  if (s.loadError) return `sluice does not load: ${s.loadError.message}`;
  if (typeof s.WebSocketServer !== 'function') return 'sluice has no WebSocketServer yet (require(\'sluice\').WebSocketServer is not a function)';
  return null;
}

let cert = null;
// A self-signed localhost certificate made once per process with openssl.
function testCert() {
  if (cert) return cert;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-wsconf-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
    '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '2', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  cert = { key: fs.readFileSync(path.join(dir, 'key.pem')), cert: fs.readFileSync(path.join(dir, 'cert.pem')) };
  fs.rmSync(dir, { recursive: true, force: true });
  return cert;
}

function echo(wss) {
  wss.on('connection', (ws) => {
    ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
    ws.on('error', () => {});
  });
  wss.on('error', () => {});
  return wss;
}

const wsOptions = () => ({ perMessageDeflate: { threshold: 0 }, maxPayload: MAX_PAYLOAD });

const TARGETS = [
  { name: 'ws/node:http', mode: 'http1', reference: true, make: () => {
    const { WebSocketServer } = require('ws');
    const server = http.createServer((req, res) => res.end('http'));
    return { server, wss: echo(new WebSocketServer({ server, ...wsOptions() })) };
  } },
  { name: 'ws/node:https', mode: 'tls', reference: true, make: () => {
    const { WebSocketServer } = require('ws');
    const server = https.createServer(testCert(), (req, res) => res.end('https'));
    return { server, wss: echo(new WebSocketServer({ server, ...wsOptions() })) };
  } },
  { name: 'ws/sluice-upgrade', mode: 'http1', missing: () => (loadSluice().loadError ? 'sluice does not load' : null), make: () => {
    const { WebSocketServer } = require('ws');
    const server = loadSluice().createServer((req, res) => res.end('http'));
    return { server, wss: echo(new WebSocketServer({ server, ...wsOptions() })) };
  } },
  { name: 'sluice/http1', mode: 'http1', missing: sluiceMissing, make: () => {
    const sluice = loadSluice();
    const server = sluice.createServer((req, res) => res.end('http'));
    return { server, wss: echo(new sluice.WebSocketServer({ server, ...wsOptions() })) };
  } },
  { name: 'sluice/tls', mode: 'tls', missing: sluiceMissing, make: () => {
    const sluice = loadSluice();
    const server = sluice.createSecureServer(testCert(), (req, res) => res.end('https'));
    return { server, wss: echo(new sluice.WebSocketServer({ server, ...wsOptions() })) };
  } },
  { name: 'sluice/h2', mode: 'h2', missing: sluiceMissing, make: () => {
    const sluice = loadSluice();
    const server = sluice.createSecureServer(testCert(), (req, res) => res.end('h2'));
    return { server, wss: echo(new sluice.WebSocketServer({ server, ...wsOptions() })) };
  } },
  { name: 'sluice/h2c', mode: 'h2c', missing: sluiceMissing, make: () => {
    const sluice = loadSluice();
    const server = sluice.createServer((req, res) => res.end('h2c'));
    return { server, wss: echo(new sluice.WebSocketServer({ server, ...wsOptions() })) };
  } },
];

// Starts a target's echo server on 127.0.0.1:0; resolves
// { target: { mode, host, port }, close() }.
async function start(t) {
  const { server, wss } = t.make();
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const port = server.address().port;
  return {
    target: { mode: t.mode, host: '127.0.0.1', port, path: '/' },
    async close() {
      for (const c of wss.clients || []) c.terminate();
      wss.close();
      if (server.closeAllConnections) server.closeAllConnections();
      await new Promise((r) => server.close(() => r()));
    },
  };
}

module.exports = { TARGETS, start, testCert, sluiceMissing };
