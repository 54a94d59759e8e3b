'use strict';
// The runner's own HTTP clients: the answer checks each server passes
// before it is measured (so that a server answering garbage never gets a
// number next to its name), and the latency probe that runs beside a load.

const http = require('node:http');
const net = require('node:net');
const { setTimeout: sleep } = require('node:timers/promises');
const { HOST } = require('./host.js');

// tls: over TLS, any certificate accepted (the servers make their own).
function httpRequest(port, { method = 'GET', path: p = '/', body, timeoutMs = 10000, tls = false }) {
  return new Promise((resolve, reject) => {
    const req = (tls ? require('node:https') : http).request({
      host: HOST, port, method, path: p, agent: false, rejectUnauthorized: false,
      headers: body ? { 'content-length': body.length } : {},
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no response within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

// Send `depth` GETs in one write on a raw socket and parse `depth` responses.
function pipelinedCheck(port, depth, expectBodyLength, timeoutMs = 10000) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, HOST);
    let buf = Buffer.alloc(0);
    let got = 0;
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`pipelined check: ${got}/${depth} responses within ${timeoutMs} ms`));
    }, timeoutMs);
    const fail = (msg) => { clearTimeout(timer); sock.destroy(); reject(new Error(`pipelined check: ${msg}`)); };
    sock.on('connect', () => {
      sock.write(`GET / HTTP/1.1\r\nHost: ${HOST}:${port}\r\n\r\n`.repeat(depth));
    });
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end === -1) return;
        const head = buf.subarray(0, end).toString('latin1');
        const status = /^HTTP\/1\.1 (\d{3})/.exec(head);
        if (!status) return fail(`bad status line in response ${got + 1}: ${JSON.stringify(head.slice(0, 60))}`);
        if (status[1] !== '200') return fail(`response ${got + 1} has status ${status[1]}`);
        const cl = /\r\ncontent-length:\s*(\d+)/i.exec(head);
        if (!cl) return fail(`response ${got + 1} has no Content-Length (chunked not expected here)`);
        const len = Number(cl[1]);
        if (buf.length < end + 4 + len) return;
        if (expectBodyLength !== undefined && len !== expectBodyLength) {
          return fail(`response ${got + 1} body is ${len} bytes, expected ${expectBodyLength}`);
        }
        buf = buf.subarray(end + 4 + len);
        if (++got === depth) {
          clearTimeout(timer);
          sock.destroy();
          if (buf.length) return reject(new Error(`pipelined check: ${buf.length} extra bytes after ${depth} responses`));
          return resolve(got);
        }
      }
    });
    sock.on('error', (err) => fail(err.message));
    sock.on('close', () => { if (got < depth) fail(`connection closed after ${got}/${depth} responses`); });
  });
}

// One GET over HTTP/2 (h2c prior knowledge) with node's client, for
// servers that speak only HTTP/2 (check.http2).
function http2Get(port, p = '/', timeoutMs = 10000, tls = false) {
  return new Promise((resolve, reject) => {
    const session = require('node:http2').connect(`${tls ? 'https' : 'http'}://${HOST}:${port}`,
      { rejectUnauthorized: false });
    const t = setTimeout(() => {
      session.destroy();
      reject(new Error(`no HTTP/2 response within ${timeoutMs} ms`));
    }, timeoutMs);
    session.on('error', (e) => { clearTimeout(t); reject(e); });
    const req = session.request({ ':path': p });
    const chunks = [];
    let status;
    req.on('response', (h) => { status = h[':status']; });
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      clearTimeout(t);
      session.close();
      resolve({ status, body: Buffer.concat(chunks) });
    });
    req.on('error', (e) => { clearTimeout(t); session.destroy(); reject(e); });
  });
}

// A WebSocket server of benchmark/websocket: /echo echoes a masked binary
// message, and a message sent on /pub reaches a socket on /sub.
function wsOpen(port, p, timeoutMs) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, HOST);
    let buf = Buffer.alloc(0);
    let open = false;
    const waiters = [];
    const t = setTimeout(() => { sock.destroy(); reject(new Error(`WebSocket ${p}: no answer within ${timeoutMs} ms`)); }, timeoutMs);
    sock.on('error', (e) => { clearTimeout(t); reject(e); });
    sock.on('connect', () => sock.write(`GET ${p} HTTP/1.1\r\nHost: ${HOST}:${port}\r\nUpgrade: websocket\r\n` +
      'Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n'));
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (!open) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        if (!/^HTTP\/1\.1 101/.test(buf.toString('latin1', 0, 12))) {
          clearTimeout(t);
          sock.destroy();
          return reject(new Error(`WebSocket ${p}: ${buf.toString('latin1', 0, end).split('\r\n')[0]}`));
        }
        open = true;
        buf = buf.subarray(end + 4);
        clearTimeout(t);
        resolve({
          send(payload) {  // one masked binary frame (payload < 126 bytes)
            const key = Buffer.from([1, 2, 3, 4]);
            sock.write(Buffer.concat([Buffer.from([0x82, 0x80 | payload.length]), key,
              Buffer.from(payload.map((x, i) => x ^ key[i & 3]))]));
          },
          next() { return new Promise((r) => { waiters.push(r); sock.emit('frames'); }); },
          close() { sock.destroy(); },
        });
      }
      sock.emit('frames');
    });
    sock.on('frames', () => {
      while (waiters.length && buf.length >= 2 && buf.length >= 2 + (buf[1] & 0x7f)) {
        const len = buf[1] & 0x7f;
        waiters.shift()(buf.subarray(2, 2 + len));
        buf = buf.subarray(2 + len);
      }
    });
  });
}

async function wsCheck(port, timeoutMs = 10000) {
  const deadline = (what, p) => Promise.race([p, sleep(timeoutMs).then(() => { throw new Error(`WebSocket check: no ${what} within ${timeoutMs} ms`); })]);
  const echo = await wsOpen(port, '/echo', timeoutMs);
  const sub = await wsOpen(port, '/sub', timeoutMs);
  const pub = await wsOpen(port, '/pub', timeoutMs);
  try {
    const msg = Buffer.from('0123456789abcdef');
    echo.send(msg);
    const back = await deadline('echo', echo.next());
    if (!back.equals(msg)) throw new Error(`WebSocket echo answered ${JSON.stringify(back.toString('latin1'))}`);
    await sleep(100);  // the subscription is made on open; let it land
    pub.send(msg);
    const got = await deadline('published message on /sub', sub.next());
    if (!got.equals(msg)) throw new Error(`WebSocket /sub got ${JSON.stringify(got.toString('latin1'))}`);
  } finally {
    echo.close();
    sub.close();
    pub.close();
  }
}

async function checkServer(port, check) {
  if (!check) return;
  if (check.websocket) return wsCheck(port);
  const body = check.bodySize ? Buffer.alloc(check.bodySize, 'x') : undefined;
  const res = check.http2 ? await http2Get(port, check.path, 10000, check.tls) :
    await httpRequest(port, { method: check.method, path: check.path, body, tls: check.tls });
  if (res.status !== (check.status || 200)) {
    throw new Error(`${check.method || 'GET'} ${check.path || '/'} answered ${res.status}, expected ${check.status || 200}`);
  }
  if (check.bodyLength !== undefined && res.body.length !== check.bodyLength) {
    throw new Error(`response body is ${res.body.length} bytes, expected ${check.bodyLength}`);
  }
  if (check.body !== undefined && res.body.toString() !== check.body) {
    throw new Error(`response body ${JSON.stringify(res.body.toString().slice(0, 40))}, expected ${JSON.stringify(check.body)}`);
  }
  if (check.pipeline) await pipelinedCheck(port, check.pipeline, check.bodyLength);
}

// A tiny GET (`probe.path`) every `probe.intervalMs` (default 10) on one
// keep-alive connection, one at a time, until stop(); resolves
// { count, errors, p50, p99 } in ms.
function startProbe(port, probe) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const lat = [];
  let errors = 0;
  let stopped = false;
  const one = () => new Promise((resolve) => {
    const t0 = process.hrtime.bigint();
    const req = http.get({ host: HOST, port, path: probe.path, agent, headers: probe.headers || {} }, (res) => {
      res.resume();
      res.on('end', () => { lat.push(Number(process.hrtime.bigint() - t0) / 1e6); resolve(); });
    });
    req.setTimeout(10000, () => req.destroy(new Error('probe timeout')));
    req.on('error', () => { errors++; resolve(); });
  });
  const loop = (async () => {
    while (!stopped) {
      await one();
      await sleep(probe.intervalMs || 10);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      agent.destroy();
      const sorted = lat.slice().sort((a, b) => a - b);
      const q = (p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : NaN);
      return { count: sorted.length, errors, p50: q(0.5), p99: q(0.99) };
    },
  };
}

module.exports = { httpRequest, pipelinedCheck, http2Get, checkServer, startProbe, wsCheck };
