'use strict';

// TLS test fixtures: certificates made at test time with the openssl CLI
// (a CA, server certificates for localhost and for the SNI names, a
// second localhost certificate for rotation, a client certificate from
// the CA and one from nowhere), and secure servers for both impls:
// sluice.createSecureServer, or node's http2.createSecureServer with
// allowHTTP1 (the node server that speaks h2 and http/1.1 on one port,
// what sluice's secure server is compared with).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http2 = require('node:http2');
const https = require('node:https');
const tls = require('node:tls');
const { execFileSync } = require('node:child_process');
const common = require('../common');

let certs = null;

function openssl(args, cwd) {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

// Makes (once per process) and returns { dir, ca, localhost: { key, cert },
// rotated, sniA, sniB, client, stranger } as Buffers.
function fixtures() {
  if (certs) return certs;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-tls-'));
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2',
    '-subj', '/CN=sluice test CA'], dir);
  const leaf = (name, cn, san, ext = 'serverAuth') => {
    openssl(['req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`], dir);
    fs.writeFileSync(path.join(dir, `${name}.ext`),
      `${san ? `subjectAltName=${san}\n` : ''}extendedKeyUsage=${ext}\n`);
    openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key',
      '-CAcreateserial', '-out', `${name}.pem`, '-days', '2', '-extfile', `${name}.ext`], dir);
  };
  leaf('localhost', 'localhost', 'DNS:localhost,IP:127.0.0.1');
  leaf('rotated', 'localhost rotated', 'DNS:localhost,IP:127.0.0.1');
  leaf('sniA', 'a.example', 'DNS:a.example');
  leaf('sniB', 'wild.b.example', 'DNS:*.b.example');
  leaf('client', 'sluice client', null, 'clientAuth');
  openssl(['req', '-x509', ...ec, '-keyout', 'stranger.key', '-out', 'stranger.pem', '-days', '2',
    '-subj', '/CN=stranger'], dir);
  const read = (f) => fs.readFileSync(path.join(dir, f));
  const pair = (n) => ({ key: read(`${n}.key`), cert: read(`${n}.pem`), keyPath: path.join(dir, `${n}.key`), certPath: path.join(dir, `${n}.pem`) });
  certs = {
    dir,
    ca: read('ca.pem'),
    caPath: path.join(dir, 'ca.pem'),
    localhost: pair('localhost'),
    rotated: pair('rotated'),
    sniA: pair('sniA'),
    sniB: pair('sniB'),
    client: pair('client'),
    stranger: pair('stranger'),
  };
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return certs;
}

// A secure server on 127.0.0.1:0 with localhost's certificate (unless
// options say otherwise): { server, port, url }.
async function startSecure(options, listener) {
  const f = fixtures();
  const opts = { key: f.localhost.key, cert: f.localhost.cert, ...options };
  let server;
  if (common.isSluice) {
    server = common.impl.createSecureServer(opts, listener);
  } else {
    const nodeOpts = { allowHTTP1: true, ...opts };
    for (const k of ['requestBufferAllocator', 'maxRequestBodySize', 'compression']) delete nodeOpts[k];
    server = http2.createSecureServer(nodeOpts, listener);
  }
  const port = await common.listenLocal(server);
  return { server, port, url: `https://localhost:${port}` };
}

// A TLS connection to 127.0.0.1:port with the test CA, SNI localhost and
// ALPN http/1.1 (opts override); resolves the socket once secure.
function connect(port, opts = {}) {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, ca: fixtures().ca, servername: 'localhost', ALPNProtocols: ['http/1.1'], ...opts });
    common.trackSocket(s);
    s.once('secureConnect', () => resolve(s));
    s.once('error', reject);
  });
}

// GET /x over https (ALPN http/1.1) with SNI `servername`: resolves
// { cn (of the certificate served), body }.
function httpsGet(port, servername) {
  return new Promise((resolve, reject) => {
    https.get({ host: '127.0.0.1', port, servername, ca: fixtures().ca, agent: false, path: '/x' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ cn: res.socket.getPeerCertificate().subject.CN, body }));
    }).on('error', reject);
  });
}

// GET /h2 over http2 (ALPN h2) with SNI `servername`, to 127.0.0.1: the
// same.
function h2Get(port, servername) {
  return new Promise((resolve, reject) => {
    const client = http2.connect(`https://${servername}:${port}`, {
      ca: fixtures().ca, servername, lookup: (h, o, cb) => cb(null, o && o.all ? [{ address: '127.0.0.1', family: 4 }] : '127.0.0.1', 4),
    });
    client.on('error', reject);
    const req = client.request({ ':path': '/h2' });
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      const cn = client.socket.getPeerCertificate().subject.CN;
      client.close();
      resolve({ cn, body });
    });
    req.on('error', reject);
  });
}

module.exports = { fixtures, startSecure, connect, httpsGet, h2Get };
