'use strict';

// The differential harness: one sluice server and one node:http server in
// this process, both with the same recording handler. A case is written
// whole to each over a raw socket, then half-closed; when each server has
// closed the connection, what its handler saw (method, URL, version, raw
// headers, body, whether the body ended, raw trailers, per dispatched
// request) and the statuses it answered are compared.
//
// node is the reference; its behaviour depends on its llhttp (node 20
// ships 9.3, node 22 9.4, ...), so the comparison is always against the
// node that runs this file.

const http = require('node:http');
const net = require('node:net');
const path = require('node:path');
const { generate } = require('./grammar');
const { explain } = require('./known_differences');

const sluice = require(path.resolve(__dirname, '..', '..'));

// A case normally takes milliseconds; this bounds a hang. On a loaded
// machine a slow case is retried once before it counts as a hang.
const CASE_TIMEOUT_MS = 10000;

function recorder(logs) {
  return (req, res) => {
    const rec = {
      method: req.method,
      url: req.url,
      version: req.httpVersion,
      headers: req.rawHeaders.slice(),
      body: '',
      ended: false,
      trailers: null,
    };
    const port = req.socket.remotePort;
    let list = logs.get(port);
    if (list === undefined) logs.set(port, (list = []));
    list.push(rec);
    req.on('data', (d) => { rec.body += Buffer.from(d.buffer, d.byteOffset, d.length).toString('latin1'); });
    req.on('error', () => {});
    req.on('end', () => {
      rec.ended = true;
      rec.trailers = req.rawTrailers.slice();
      res.end('ok');
    });
  };
}

function listen(server) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });
}

// Writes `wire`, half-closes, and resolves with the client's view once
// the server closed: { port, data (latin1), timedOut }. onConnect(port)
// runs once the client's port is known, before the server can dispatch.
function exchange(port, wire, onConnect) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks = [];
    let localPort = 0;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      socket.destroy();
    }, CASE_TIMEOUT_MS);
    socket.on('connect', () => {
      localPort = socket.localPort;
      onConnect(localPort);
      socket.end(Buffer.from(wire, 'latin1'));
    });
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ port: localPort, data: Buffer.concat(chunks).toString('latin1'), timedOut });
    });
  });
}

// Final statuses in a response stream (interim 1xx left out).
function statuses(data) {
  const out = [];
  const re = /HTTP\/1\.[01] (\d{3})/g;
  let m;
  while ((m = re.exec(data)) !== null) {
    const s = Number(m[1]);
    if (s >= 200) out.push(s);
  }
  return out;
}

// The requests two handlers saw are the same.
function sameRequests(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

class Differential {
  async start() {
    this.nodeLogs = new Map();
    this.sluiceLogs = new Map();
    this.node = http.createServer(recorder(this.nodeLogs));
    this.sluice = sluice.createServer(recorder(this.sluiceLogs));
    // Both: requests received before the client's FIN are answered (by
    // default each server aborts them at the FIN, a race with 'end').
    this.node.httpAllowHalfOpen = true;
    this.sluice.httpAllowHalfOpen = true;
    this.nodePort = await listen(this.node);
    this.sluicePort = await listen(this.sluice);
  }

  async stop() {
    await Promise.all([this.node, this.sluice].map((s) => new Promise((resolve) => {
      s.close(() => resolve());
      if (s.closeAllConnections) s.closeAllConnections();
    })));
  }

  // Runs one case; resolves with its verdict:
  //   { seed, wire, node, sluice, status: 'same' | 'explained' | 'diff',
  //     kind, explainedBy }
  // where node / sluice are { requests, statuses, timedOut }.
  async runCase(seed, retry = true) {
    const wire = generate(seed);
    // A port the kernel hands out again must not inherit records of its
    // previous connection.
    const [n, s] = await Promise.all([
      exchange(this.nodePort, wire, (p) => this.nodeLogs.delete(p)),
      exchange(this.sluicePort, wire, (p) => this.sluiceLogs.delete(p)),
    ]);
    // Handlers' last events ('data', 'end') may trail the close by a tick.
    await new Promise((resolve) => setImmediate(resolve));
    const take = (logs, port) => {
      const list = logs.get(port) || [];
      logs.delete(port);
      return list;
    };
    const node = { requests: take(this.nodeLogs, n.port), statuses: statuses(n.data), timedOut: n.timedOut };
    const ours = { requests: take(this.sluiceLogs, s.port), statuses: statuses(s.data), timedOut: s.timedOut };
    if (retry && (node.timedOut || ours.timedOut)) return this.runCase(seed, false);
    const verdict = { seed, wire, node, sluice: ours, status: 'same', kind: null, explainedBy: null };
    if (sameRequests(node.requests, ours.requests) && node.timedOut === ours.timedOut) return verdict;
    verdict.kind = classify(node, ours);
    const id = explain(wire, node, ours, verdict.kind);
    if (id) {
      verdict.status = 'explained';
      verdict.explainedBy = id;
    } else {
      verdict.status = 'diff';
    }
    return verdict;
  }
}

// What kind of difference: sluice dispatched a request node refused
// ('sluice-accepts'), node dispatched one sluice refused ('sluice-refuses'),
// the same count with different contents ('content'), or one side hung.
function classify(node, ours) {
  if (node.timedOut !== ours.timedOut) return 'timeout';
  const n = node.requests.length;
  const s = ours.requests.length;
  if (s > n) return 'sluice-accepts';
  if (s < n) return 'sluice-refuses';
  return 'content';
}

// A latin1 string as a JS string literal with every non-printable byte
// escaped (JSON.stringify leaves DEL and 0x80-0xff raw).
function literal(s) {
  return JSON.stringify(s).replace(/[\x7f-\xff]/g, (c) => `\\x${c.charCodeAt(0).toString(16)}`);
}

// A case for a human: its seed, its bytes (as a JS string literal) and
// both sides.
function describeCase(v) {
  return [
    `seed ${v.seed} (${v.kind}${v.explainedBy ? `, explained: ${v.explainedBy}` : ''})`,
    `  bytes : ${literal(v.wire)}`,
    `  node  : ${JSON.stringify(v.node)}`,
    `  sluice: ${JSON.stringify(v.sluice)}`,
    `  rerun : npm run fuzz:diff -- --seed ${v.seed} --cases 1 --verbose`,
  ].join('\n');
}

module.exports = { Differential, describeCase, statuses };
