'use strict';

// Child process for test/hardening/worker_teardown.test.js: runs one
// scenario a few times, each time starting a worker_threads Worker that
// serves with sluice and terminating it while the server still has work in
// flight. Prints "ok <n>" and exits 0 when every worker ended; a crash of the
// teardown (segfault, "uv_loop_close() while having open handles" abort)
// kills this process instead, which the test reports.
//
// The main thread never loads the addon (unless SLUICE_TEARDOWN_MAIN_LOADS
// is set): then node unloads sluice.node right after the worker's
// environment is gone, so a libuv callback of ours still pending at that
// point jumps into unmapped code.
//
//   node worker_teardown_child.js <scenario> <iterations> <file>
//
// Scenarios:
//   open-connections   HTTP/1.1 (idle, partial head, partial body, request
//                      waiting for its response) and HTTP/2 sessions
//                      (a stream waiting for its response)
//   file-h1 / file-h2  a large respondWithFile mid-transfer (the client
//                      paused or reading: file reads are in flight)
//   compress           res.end() of a 1 MiB JSON body with compression on:
//                      the compression job runs on the threadpool
//   compress-exit      the same, the worker calling process.exit() right
//                      after res.end() (the job is surely in flight)
//   file-open-exit     respondWithFile (HTTP/1.1) then process.exit() at
//                      once: the file's open job is in flight
//   file-open-exit-h2  the same with stream.respondWithFile (HTTP/2)
//   stream-exit        res.write() of 1 MiB chunks with compression on, then
//                      process.exit(): streamed compression jobs in flight
//   stream-exit-h2     the same over HTTP/2 (compat res.write())
//   fifo-h1 / fifo-h2  respondWithFile on a FIFO whose writer (this
//                      process's main thread) sent a few bytes and stays:
//                      the source waits on its poll handle
//   file-cached        openFileCache on: a small file answered from the
//                      cache (watches and descriptors held), then a large
//                      cached file mid-transfer over HTTP/2

const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');

function workerMain() {
  const sluice = require(ROOT);
  const { scenario, file } = workerData;
  const opts = scenario.startsWith('compress') || scenario.startsWith('stream-exit') ? { compression: true } : {};
  if (scenario === 'file-cached') opts.openFileCache = true;
  const server = sluice.createServer(opts, (req, res) => {
    parentPort.postMessage({ request: req.url });
    if (req.url === '/hang') return;  // never answered
    if (req.url === '/fifo') {
      res.respondWithFile(`${file}.fifo`);
      return;
    }
    if (req.url === '/small') {
      res.respondWithFile(`${file}.small`);
      return;
    }
    if (req.url === '/file') {
      res.respondWithFile(file);
      if (scenario === 'file-open-exit') process.exit(0);
      return;
    }
    if (req.url === '/json') {
      const body = JSON.stringify({ items: Array.from({ length: 20000 }, (_, i) => ({ i, name: `item ${i}`, tags: ['a', 'b', 'c'] })) });
      res.setHeader('content-type', 'application/json');
      res.end(body);
      parentPort.postMessage({ ended: body.length });
      if (scenario === 'compress-exit') process.exit(0);
      return;
    }
    res.end('ok');
  });
  if (scenario.startsWith('stream-exit')) {
    server.removeAllListeners('request');
    server.on('request', (req, res) => {
      // 4 MiB of text in 1 MiB writes: beyond the inline size, so each write
      // is a threadpool job, queued behind the one before it.
      res.setHeader('content-type', 'text/plain');
      const chunk = Buffer.from('sluice streams compressed text '.repeat(33825));
      for (let i = 0; i < 4; i++) res.write(chunk);
      parentPort.postMessage({ ended: 4 * chunk.length });
      process.exit(0);
    });
  }
  // (With a 'stream' listener, HTTP/2 requests go to it, not to 'request'.)
  if (!scenario.startsWith('stream-exit')) server.on('stream', (stream, headers) => {
    if (headers[':path'] !== '/file' && headers[':path'] !== '/fifo') return;  // others never answered
    parentPort.postMessage({ request: headers[':path'] });
    stream.respondWithFile(headers[':path'] === '/fifo' ? `${file}.fifo` : file);
    if (scenario === 'file-open-exit-h2') process.exit(0);
  });
  server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
}

async function mainOnce(scenario, file) {
  const net = require('node:net');
  const http = require('node:http');
  const http2 = require('node:http2');
  const closers = [];
  const w = new Worker(__filename, { workerData: { scenario, file } });
  const exited = new Promise((resolve) => w.once('exit', resolve));
  const workerError = new Promise((_, reject) => w.once('error', reject));
  const messages = [];
  let wake = null;
  w.on('message', (m) => {
    messages.push(m);
    if (wake) wake();
  });
  const next = (pred) => new Promise((resolve) => {
    const check = () => {
      const m = messages.find(pred);
      if (m) {
        wake = null;
        resolve(m);
      } else {
        wake = check;
      }
    };
    check();
  });
  const race = (p) => Promise.race([p, workerError]);
  const { port } = await race(next((m) => m.port));

  // One GET that reads whatever comes (HTTP/2: on a session of its own);
  // onData hears the first bytes.
  const get = (h2, path, headers = {}, onData = () => {}) => {
    if (!h2) {
      const req = http.get({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
        res.once('data', onData);
        res.on('error', () => {});
        res.resume();
      });
      req.on('error', () => {});
      closers.push(() => req.destroy());
      return;
    }
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', () => {});
    const req = session.request({ ':path': path, ...headers });
    req.on('error', () => {});
    req.once('data', onData);
    req.resume();
    closers.push(() => session.destroy());
  };

  if (scenario === 'open-connections') {
    const raw = [
      '',                                                   // idle
      'GET / HTTP/1.1\r\nHost: a\r\n',                      // partial head
      'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 9\r\n\r\nab',  // partial body
      'GET /hang HTTP/1.1\r\nHost: a\r\n\r\n',              // waiting for a response
    ];
    for (const data of raw) {
      const s = net.connect(port, '127.0.0.1', () => { if (data) s.write(data); });
      s.on('error', () => {});
      closers.push(() => s.destroy());
    }
    for (let i = 0; i < 2; i++) {
      const session = http2.connect(`http://127.0.0.1:${port}`);
      session.on('error', () => {});
      const req = session.request({ ':path': '/hang' });
      req.on('error', () => {});
      req.resume();
      closers.push(() => session.destroy());
    }
    // Two requests reach the handler (one HTTP/1.1, one per session is not
    // reported: 'stream' ignores /hang), the rest just sits there.
    await race(next((m) => m.request === '/hang'));
    await new Promise((r) => setTimeout(r, 20));
  } else if (scenario === 'file-h1' || scenario === 'file-h2') {
    let gotData;
    const firstData = new Promise((r) => { gotData = r; });
    get(scenario === 'file-h2', '/file', {}, () => gotData());
    await race(firstData);
  } else if (scenario === 'fifo-h1' || scenario === 'fifo-h2') {
    // The FIFO has a writer (never waits to open: O_RDWR) that sends a few
    // bytes and stays: the worker's source is polling when it ends.
    const fs = require('node:fs');
    const fifo = `${file}.fifo`;
    if (!fs.existsSync(fifo)) require('node:child_process').execFileSync('mkfifo', [fifo]);
    const wfd = fs.openSync(fifo, fs.constants.O_RDWR | fs.constants.O_NONBLOCK);
    closers.push(() => fs.closeSync(wfd));
    let gotData;
    const firstData = new Promise((r) => { gotData = r; });
    get(scenario === 'fifo-h2', '/fifo', {}, () => gotData());
    fs.writeSync(wfd, 'first bytes');
    await race(firstData);
  } else if (scenario === 'file-cached') {
    require('node:fs').writeFileSync(`${file}.small`, 'a small cached file');
    for (let i = 0; i < 2; i++) {
      let gotData;
      const firstData = new Promise((r) => { gotData = r; });
      get(false, '/small', {}, () => gotData());
      await race(firstData);
    }
    for (let i = 0; i < 2; i++) {
      let gotData;
      const firstData = new Promise((r) => { gotData = r; });
      get(true, '/file', {}, () => gotData());
      await race(firstData);
    }
  } else if (/^(file-open|stream)-exit/.test(scenario)) {
    // The worker exits by itself right after starting the response.
    const h2 = scenario.endsWith('-h2');
    if (scenario.startsWith('file')) get(h2, '/file');
    else get(h2, '/stream', { 'accept-encoding': h2 ? 'br' : 'gzip' });
    await exited;
  } else if (scenario === 'compress' || scenario === 'compress-exit') {
    get(false, '/json', { 'accept-encoding': 'gzip' });
    await race(next((m) => m.ended));
  } else {
    throw new Error(`unknown scenario ${scenario}`);
  }
  await w.terminate();
  const code = await exited;
  for (const c of closers) c();
  return code;
}

async function main() {
  const [scenario, n, file] = process.argv.slice(2);
  if (process.env.SLUICE_TEARDOWN_MAIN_LOADS) require(ROOT);
  for (let i = 0; i < Number(n); i++) await mainOnce(scenario, file);
  process.stdout.write(`ok ${n}\n`);
}

if (isMainThread) {
  main().catch((e) => {
    process.stderr.write(`${e && e.stack}\n`);
    process.exit(1);
  });
} else {
  workerMain();
}
