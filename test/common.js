'use strict';

// Shared helpers for the sluice test suite.
//
// By default the tests run against sluice (`require('..')`, lib/index.js).
// With SLUICE_TEST_IMPL=node they run against a thin wrapper over node:http
// instead, so the suite itself can be validated against the reference
// behaviour. Tests of behaviour where sluice deliberately differs from node
// use `sluiceOnly(...)` (skipped under the node impl).
//
// Every server, socket, child process and timer created through these
// helpers is tracked and torn down by `cleanup()`; each test file registers
// `afterEach(common.cleanup)`. mocha runs without --exit, so a leaked handle
// hangs the run.

const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const http = require('node:http');
const net = require('node:net');
const path = require('node:path');
const crypto = require('node:crypto');
const { execFile, spawn } = require('node:child_process');

const IMPL_NAME = process.env.SLUICE_TEST_IMPL === 'node' ? 'node' : 'sluice';
const ROOT = path.resolve(__dirname, '..');

// Options only sluice understands; stripped before handing options to node.
const SLUICE_ONLY_OPTIONS = ['requestBufferAllocator', 'maxRequestBodySize'];

function makeNodeImpl() {
  return {
    name: 'node',
    createServer(options, listener) {
      if (typeof options === 'function') {
        listener = options;
        options = {};
      }
      const opts = { connectionsCheckingInterval: 50, ...(options || {}) };
      for (const k of SLUICE_ONLY_OPTIONS) delete opts[k];
      const server = http.createServer(opts, listener);
      if (options && options.keepAliveTimeout !== undefined) {
        server.keepAliveTimeout = options.keepAliveTimeout;
      }
      return server;
    },
  };
}

let impl;
if (IMPL_NAME === 'node') {
  impl = makeNodeImpl();
} else {
  impl = require(ROOT);
}

const isNode = IMPL_NAME === 'node';
const isSluice = !isNode;

// ---------------------------------------------------------------------------
// Resource tracking

const servers = new Set();
const sockets = new Set();
const timers = new Set();
const children = new Set();

function trackSocket(socket) {
  sockets.add(socket);
  socket.once('close', () => sockets.delete(socket));
  return socket;
}

function setTimer(fn, ms) {
  const t = setTimeout(() => {
    timers.delete(t);
    fn();
  }, ms);
  timers.add(t);
  return t;
}

function clearTimer(t) {
  clearTimeout(t);
  timers.delete(t);
}

function sleep(ms) {
  return new Promise((resolve) => setTimer(resolve, ms));
}

// Reject if `promise` does not settle within `ms`.
function withTimeout(promise, ms, what) {
  let t;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      t = setTimer(() => {
        const w = typeof what === 'function' ? what() : what;
        reject(new Error(`timed out after ${ms} ms waiting for ${w || 'promise'}`));
      }, ms);
    }),
  ]).finally(() => clearTimer(t));
}

// Wait for one `event` (no 'error' listener is added: attaching one changes
// what some emitters do). Resolves with the event's arguments.
function once(emitter, event, ms, what) {
  const p = new Promise((resolve) => emitter.once(event, (...args) => resolve(args)));
  return ms ? withTimeout(p, ms, what || `'${event}' event`) : p;
}

function closeServer(server, ms = 3000) {
  return new Promise((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimer(t);
      servers.delete(server);
      resolve();
    };
    const t = setTimer(() => {
      // eslint-disable-next-line no-console
      console.warn(`      [common] server.close() callback not called within ${ms} ms`);
      finish();
    }, ms);
    try {
      if (typeof server.closeAllConnections === 'function') server.closeAllConnections();
    } catch (_) { /* ignore */ }
    try {
      server.close(() => finish());
    } catch (_) {
      finish();
    }
  });
}

async function cleanup() {
  for (const s of sockets) s.destroy();
  sockets.clear();
  for (const c of children) {
    try { c.kill('SIGKILL'); } catch (_) { /* ignore */ }
  }
  children.clear();
  await Promise.all([...servers].map((s) => closeServer(s)));
  for (const t of timers) clearTimeout(t);
  timers.clear();
}

// ---------------------------------------------------------------------------
// Servers

// Create a server with `impl`, listen on 127.0.0.1:0 and resolve with
// { server, port, url }.
async function startServer(options, listener) {
  if (typeof options === 'function') {
    listener = options;
    options = {};
  }
  const server = impl.createServer(options || {}, listener);
  const port = await listenLocal(server);
  return { server, port, url: `http://127.0.0.1:${port}` };
}

// Track `server` for cleanup, listen on 127.0.0.1:0 and resolve with its
// port (a listen error rejects). Any server: sluice's, node's, secure ones.
async function listenLocal(server) {
  servers.add(server);
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  return server.address().port;
}

// A TCP port free on 127.0.0.1 right now (bound and released), for
// children (a cluster, nginx) that must be told their port in advance.
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// Track a server created directly with impl.createServer.
function trackServer(server) {
  servers.add(server);
  return server;
}

// ---------------------------------------------------------------------------
// Raw sockets

// A raw TCP client that collects everything it receives.
class RawClient {
  constructor(socket) {
    this.socket = socket;
    this.buf = Buffer.alloc(0);
    this.len = 0;
    this.closed = false;
    this.error = null;
    this.waiters = new Set();
    socket.on('data', (d) => {
      this._append(d);
      this.firstDataChunk = this.firstDataChunk || d;
      this._check();
    });
    socket.on('error', (e) => {
      this.error = e;
    });
    socket.on('close', () => {
      this.closed = true;
      this._check();
    });
    this.closedPromise = new Promise((resolve) => socket.once('close', resolve));
  }

  _append(d) {
    if (this.len + d.length > this.buf.length) {
      const nb = Buffer.allocUnsafe(Math.max(this.len + d.length, this.buf.length * 2, 4096));
      this.buf.copy(nb, 0, 0, this.len);
      this.buf = nb;
    }
    d.copy(this.buf, this.len);
    this.len += d.length;
  }

  // Everything received so far (a view; later data does not change it).
  get data() {
    return this.buf.subarray(0, this.len);
  }

  get text() {
    return this.data.toString('latin1');
  }

  write(data) {
    return new Promise((resolve, reject) => {
      this.socket.write(data, (err) => (err ? reject(err) : resolve()));
    });
  }

  end(data) {
    this.socket.end(data);
  }

  destroy() {
    this.socket.destroy();
  }

  _check() {
    for (const w of [...this.waiters]) {
      let r;
      try {
        r = w.pred(this);
      } catch (e) {
        this.waiters.delete(w);
        w.reject(e);
        continue;
      }
      if (r) {
        this.waiters.delete(w);
        w.resolve(r);
      } else if (this.closed) {
        this.waiters.delete(w);
        w.reject(new Error(`connection closed while waiting for ${w.what}; received ${JSON.stringify(this.text.slice(0, 600))}`));
      }
    }
  }

  // Resolve with pred's truthy result once it holds.
  waitFor(pred, ms = 5000, what = 'condition') {
    const p = new Promise((resolve, reject) => {
      const w = { pred, resolve, reject, what };
      this.waiters.add(w);
      this._check();
    });
    return withTimeout(p, ms, () => `${what}; received so far ${JSON.stringify(this.text.slice(0, 600))}`);
  }

  // Resolve with the first n final (non-1xx) responses.
  responses(n, opts = {}, ms = 5000) {
    return this.waitFor((c) => {
      const r = parseResponses(c.data, { ...opts, ended: c.closed });
      const finals = r.responses.filter((x) => x.statusCode >= 200);
      return finals.length >= n ? finals : null;
    }, ms, `${n} response(s)`);
  }

  // Resolve with all data received once the peer closes the connection.
  waitClose(ms = 5000) {
    return withTimeout(this.closedPromise.then(() => this.data), ms,
                       () => `connection close; received ${JSON.stringify(this.text.slice(0, 600))}`);
  }
}

function rawConnect(port, host = '127.0.0.1') {
  return new Promise((resolve, reject) => {
    const socket = trackSocket(net.connect(port, host));
    socket.setNoDelay(true);
    const client = new RawClient(socket);
    socket.once('connect', () => {
      socket.removeListener('error', reject);
      resolve(client);
    });
    socket.once('error', reject);
  });
}

// Send `data` on a fresh connection and wait until the server closes it.
async function rawUntilClose(port, data, ms = 5000) {
  const c = await rawConnect(port);
  if (data !== undefined) c.socket.write(data);
  await c.waitClose(ms);
  return c;
}

// ---------------------------------------------------------------------------
// Raw response parser

function findCRLFCRLF(buf, from) {
  return buf.indexOf('\r\n\r\n', from, 'latin1');
}

function parseHeaderBlock(text) {
  const lines = text.split('\r\n');
  const rawHeaders = [];
  // No prototype: a `constructor` or `__proto__` header is a plain key.
  const headers = Object.create(null);
  for (const line of lines) {
    if (line === '') continue;
    const i = line.indexOf(':');
    if (i <= 0) throw new Error(`malformed header line ${JSON.stringify(line)}`);
    const name = line.slice(0, i);
    const value = line.slice(i + 1).trim();
    rawHeaders.push(name, value);
    const key = name.toLowerCase();
    if (key in headers) {
      if (!Array.isArray(headers[key])) headers[key] = [headers[key]];
      headers[key].push(value);
    } else {
      headers[key] = value;
    }
  }
  return { rawHeaders, headers };
}

// Parse as many complete HTTP/1.x responses from `buf` as it holds.
// opts.methods: request methods in order (to know which responses are to
//   HEAD); applies to final responses only.
// opts.ended: the connection has closed (a response delimited by close is
//   then complete).
// Returns { responses, rest, incomplete } where each response is
// { httpVersion, statusCode, statusMessage, headers (lower-cased; repeated
// names become arrays), rawHeaders, body (Buffer), chunked, trailers,
// rawTrailers, raw (Buffer of the whole response) }.
function parseResponses(buf, opts = {}) {
  const methods = opts.methods || [];
  const responses = [];
  let pos = 0;
  let finalIndex = 0;
  for (;;) {
    if (pos >= buf.length) break;
    const headEnd = findCRLFCRLF(buf, pos);
    if (headEnd < 0) break;
    const head = buf.toString('latin1', pos, headEnd);
    const nl = head.indexOf('\r\n');
    const statusLine = nl < 0 ? head : head.slice(0, nl);
    const m = /^HTTP\/(\d\.\d) (\d{3})(?: (.*))?$/.exec(statusLine);
    if (!m) throw new Error(`malformed status line ${JSON.stringify(statusLine)} at offset ${pos}`);
    const { headers, rawHeaders } = parseHeaderBlock(nl < 0 ? '' : head.slice(nl + 2));
    const res = {
      httpVersion: m[1],
      statusCode: Number(m[2]),
      statusMessage: m[3] === undefined ? '' : m[3],
      headers,
      rawHeaders,
      body: Buffer.alloc(0),
      chunked: false,
      trailers: {},
      rawTrailers: [],
    };
    let p = headEnd + 4;
    const informational = res.statusCode < 200;
    const method = informational ? undefined : methods[finalIndex];
    const te = headers['transfer-encoding'];
    const cl = headers['content-length'];
    if (informational || method === 'HEAD' || res.statusCode === 204 || res.statusCode === 304) {
      // no body
    } else if (te !== undefined) {
      if (!/(^|,)\s*chunked\s*$/i.test(String(te))) throw new Error(`unsupported transfer-encoding ${te}`);
      res.chunked = true;
      const parts = [];
      let complete = false;
      for (;;) {
        const le = buf.indexOf('\r\n', p, 'latin1');
        if (le < 0) break;
        const sizeLine = buf.toString('latin1', p, le);
        const sm = /^([0-9a-fA-F]+)(;.*)?$/.exec(sizeLine);
        if (!sm) throw new Error(`bad chunk size line ${JSON.stringify(sizeLine)}`);
        const size = parseInt(sm[1], 16);
        if (size === 0) {
          // trailers
          if (buf.toString('latin1', le + 2, le + 4) === '\r\n') {
            p = le + 4;
            complete = true;
            break;
          }
          const tEnd = findCRLFCRLF(buf, le + 2);
          if (tEnd < 0) break;
          const t = parseHeaderBlock(buf.toString('latin1', le + 2, tEnd));
          res.trailers = t.headers;
          res.rawTrailers = t.rawHeaders;
          p = tEnd + 4;
          complete = true;
          break;
        }
        if (le + 2 + size + 2 > buf.length) break;
        parts.push(buf.subarray(le + 2, le + 2 + size));
        if (buf.toString('latin1', le + 2 + size, le + 4 + size) !== '\r\n') {
          throw new Error('chunk data not followed by CRLF');
        }
        p = le + 4 + size;
      }
      if (!complete) return { responses, rest: buf.subarray(pos), incomplete: true };
      res.body = Buffer.concat(parts);
    } else if (cl !== undefined) {
      if (Array.isArray(cl)) throw new Error(`multiple content-length headers: ${cl}`);
      const n = Number(cl);
      if (p + n > buf.length) return { responses, rest: buf.subarray(pos), incomplete: true };
      res.body = buf.subarray(p, p + n);
      p += n;
    } else {
      // delimited by close
      if (!opts.ended) return { responses, rest: buf.subarray(pos), incomplete: true };
      res.body = buf.subarray(p);
      p = buf.length;
    }
    res.raw = buf.subarray(pos, p);
    responses.push(res);
    if (!informational) finalIndex++;
    pos = p;
  }
  return { responses, rest: buf.subarray(pos), incomplete: pos < buf.length };
}

// Parse exactly: all bytes must form complete responses.
function parseAll(buf, opts = {}) {
  const r = parseResponses(buf, { ended: true, ...opts });
  if (r.rest.length) {
    throw new Error(`trailing bytes after ${r.responses.length} response(s): ${JSON.stringify(r.rest.toString('latin1').slice(0, 300))}`);
  }
  return r.responses;
}

// ---------------------------------------------------------------------------
// node http client / fetch / curl

// Resolve { res, statusCode, headers, body (Buffer), trailers }.
// opts: node http.request options plus `body` (string|Buffer|array of chunks)
// opts.timeout: fail after this many ms (default 8000).
function httpRequest(port, opts = {}) {
  const { body, timeout = 8000, ...reqOpts } = opts;
  const what = () => `response to ${reqOpts.method || 'GET'} ${reqOpts.path || '/'}`;
  return withTimeout(new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1',
      port,
      method: 'GET',
      path: '/',
      agent: false,
      ...reqOpts,
    }, (res) => {
      const chunks = [];
      res.on('data', (d) => chunks.push(d));
      res.on('error', reject);
      res.on('end', () => {
        resolve({
          res,
          statusCode: res.statusCode,
          statusMessage: res.statusMessage,
          headers: res.headers,
          rawHeaders: res.rawHeaders,
          body: Buffer.concat(chunks),
          trailers: res.trailers,
        });
      });
    });
    req.on('socket', (s) => trackSocket(s));
    req.on('error', reject);
    if (Array.isArray(body)) {
      for (const b of body) req.write(b);
      req.end();
    } else {
      req.end(body);
    }
  }), timeout, what);
}

function curl(args, { input, timeout = 10000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = execFile('curl', ['-sS', '--max-time', String(Math.ceil(timeout / 1000)), ...args], {
      encoding: 'buffer',
      maxBuffer: 64 * 1024 * 1024,
      timeout: timeout + 2000,
    }, (err, stdout, stderr) => {
      children.delete(child);
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ code: err ? err.code : 0, stdout, stderr: stderr.toString() });
    });
    children.add(child);
    if (input !== undefined) child.stdin.end(input);
    else child.stdin.end();
  });
}

// Environment for a node child process that may load the addon. Under
// npm run test:asan the sanitizer runtime must be preloaded into it (it is
// kept out of other children: see test/asan/setup.js).
function nodeChildEnv(extra = {}) {
  const env = { ...process.env, SLUICE_TEST_IMPL: IMPL_NAME, ...extra };
  if (process.env.SLUICE_ASAN_PRELOAD) env.LD_PRELOAD = process.env.SLUICE_ASAN_PRELOAD;
  return env;
}

// Run a node script (string) in a child process; resolve { code, signal,
// stdout, stderr, ms, endedAt (Date.now() when it had exited) }. Env carries SLUICE_TEST_IMPL (and, under
// test:asan, the sanitizer runtime).
function runNodeScript(source, { timeout = 10000, env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, ['-e', source], {
      cwd: ROOT,
      env: nodeChildEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const t = setTimer(() => child.kill('SIGKILL'), timeout);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimer(t);
      children.delete(child);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started, endedAt: Date.now() });
    });
  });
}

// ---------------------------------------------------------------------------
// misc

function sha256(buf) {
  return crypto.createHash('sha256').update(buf).digest('hex');
}

function collect(readable) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    readable.on('data', (d) => chunks.push(Buffer.from(d)));
    readable.on('end', () => resolve(Buffer.concat(chunks)));
    readable.on('error', reject);
  });
}

// Wrap a request handler so an exception in it fails the test instead of
// crashing the process: errors are recorded and thrown by `check()`.
function handlerErrors() {
  const errors = [];
  return {
    errors,
    wrap(fn) {
      return function wrapped(...args) {
        try {
          const r = fn.apply(this, args);
          if (r && typeof r.catch === 'function') r.catch((e) => errors.push(e));
          return r;
        } catch (e) {
          errors.push(e);
          // A failed assertion inside a request handler must not leave the
          // client waiting until the mocha timeout: end the response.
          const res = args[1];
          if (res && typeof res.end === 'function' && res.writableEnded === false) {
            try { res.end(); } catch (_) { /* ignore */ }
          }
          return undefined;
        }
      };
    },
    check() {
      if (errors.length) throw errors[0];
    },
  };
}

// Mark a test as sluice-only (node behaves differently); skipped under node.
function sluiceOnly(title, fn) {
  return (isNode ? it.skip : it)(`[sluice-only] ${title}`, fn);
}

// describe() a suite twice on sluice: as is, and with a buffer pool
// (requestBufferAllocator), where every read of a connection lands in pool
// memory — heads included, split across pool buffers when longer than one.
// On node only the first. `define(v)` gets { pooled, options(extra) →
// server options, release(chunk) }; handlers should release the chunks
// they consume (v.release). After each pooled test (and the cleanup that
// closes its connections) every pool buffer must be back.
function withAndWithoutPool(title, define, { bufferSize = 1024, maxBuffers = 4096 } = {}) {
  for (const pooled of isSluice ? [false, true] : [false]) {
    describe(pooled ? `${title} (buffer pool)` : title, function () {
      let pool = null;
      const v = {
        pooled,
        options(extra = {}) {
          return pooled ? { ...extra, requestBufferAllocator: pool.alloc } : extra;
        },
        release(chunk) {
          if (pooled) impl.releaseBuffer(chunk);
        },
        get pool() { return pool; },
      };
      beforeEach(function () {
        if (pooled) pool = impl.createBufferPool({ bufferSize, maxBuffers });
      });
      define(v);
      afterEach(async function () {
        if (!pooled) return;
        await cleanup();
        const t0 = Date.now();
        while (pool.stats().inUse !== 0 && Date.now() - t0 < 3000) await sleep(10);
        assert.strictEqual(pool.stats().inUse, 0, `pool buffers still in use: ${JSON.stringify(pool.stats())}`);
      });
    });
  }
}

// ---------------------------------------------------------------------------
// A real browser: Debian's chromium (installed by .ci/run), headless,
// driven by puppeteer-core (a devDependency).

const CHROMIUM = process.env.SLUICE_CHROMIUM || '/usr/bin/chromium';

// Why chromium cannot be driven here (a string), or null.
function chromiumMissing() {
  if (!fs.existsSync(CHROMIUM)) return `${CHROMIUM} not found (apt-get install chromium)`;
  try {
    require.resolve('puppeteer-core');
  } catch {
    return 'puppeteer-core is not installed';
  }
  return null;
}

// Launches headless chromium with a fresh profile (removed again by the
// returned browser's closeAndClean()), quiet (no background traffic, no
// component updates), plus `args`; resolves the puppeteer Browser.
async function launchChromium(args = [], options = {}) {
  const puppeteer = require('puppeteer-core');
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-chromium-'));
  let browser;
  try {
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      userDataDir,
      ...options,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', ...args],
    });
  } catch (e) {
    fs.rmSync(userDataDir, { recursive: true, force: true });
    throw e;
  }
  browser.closeAndClean = async () => {
    await browser.close().catch(() => {});
    fs.rmSync(userDataDir, { recursive: true, force: true });
  };
  return browser;
}

// The one way a test outside test/unit/ reaches a lib/ internal: the native
// binding's counters (NativeFile.stats, compressionStats …) and the wire
// constants, which the public API does not expose. Paths are relative to
// lib/ ('common/binding'), so a move inside lib/ changes them here and in
// the callers' strings only; test/unit/lib_imports.test.js checks that no
// other test file requires into lib/ by a relative path.
function libInternal(rel) {
  return require(path.join(ROOT, 'lib', rel));
}

module.exports = {
  impl,
  libInternal,
  implName: IMPL_NAME,
  isNode,
  isSluice,
  ROOT,
  assert,
  startServer,
  listenLocal,
  freePort,
  trackServer,
  trackSocket,
  closeServer,
  cleanup,
  setTimer,
  clearTimer,
  sleep,
  withTimeout,
  once,
  RawClient,
  rawConnect,
  rawUntilClose,
  parseResponses,
  parseAll,
  httpRequest,
  curl,
  runNodeScript,
  nodeChildEnv,
  sha256,
  collect,
  handlerErrors,
  sluiceOnly,
  withAndWithoutPool,
  chromiumMissing,
  launchChromium,
};
