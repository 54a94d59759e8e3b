'use strict';

// The HTTP/3 endpoint's UDP socket holds a client's burst while the loop is
// busy. A browser sends what its congestion window allows in one go (an
// upload, a page's requests); chromium uploading 3 MiB to the server
// (test/http3/browser.test.js) had ~480 of its datagrams dropped by the
// kernel at the server's socket with the default 208 KiB receive buffer,
// each drop a loss recovery that halves its window. Here a worker thread
// sends 700 datagrams of 1200 bytes (840 KB, about the 768 KiB connection
// flow-control window the server grants: what a client may legitimately
// have in flight) while the main thread — the server's loop — is blocked;
// the kernel's per-socket drop counter (/proc/net/udp) must stay at 0, and
// the endpoint then serves a request. [sluice-only]; Linux only; skipped
// where net.core.rmem_max caps receive buffers below what the burst needs.

const fs = require('node:fs');
const { Worker } = require('node:worker_threads');
const common = require('../common');
const { assert } = common;
const { h3, startH3Server } = require('./h3common');
const { H3Client } = require('./quic_client');

const run = common.isSluice && h3 ? describe : describe.skip;

const COUNT = 700;
const SIZE = 1200;

// The drop counter of the UDP socket bound to 127.0.0.1:port, or null.
function socketDrops(port) {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  for (const line of fs.readFileSync('/proc/net/udp', 'latin1').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f[1] === local) return Number(f[f.length - 1]);
  }
  return null;
}

// Sends COUNT datagrams to the port once the main thread says it is
// blocked (flags[1]), then wakes it (flags[0]). The datagrams look like
// short-header packets of no connection: discarded once read.
const SENDER = `
const dgram = require('node:dgram');
const { parentPort, workerData: { port, count, size, flags } } = require('node:worker_threads');
const sock = dgram.createSocket('udp4');
sock.bind(0, '127.0.0.1', () => {
  parentPort.postMessage('ready');
  Atomics.wait(flags, 1, 0, 10000);
  let left = count;
  for (let i = 0; i < count; i++) {
    const b = Buffer.alloc(size, i & 0xff);
    b[0] = 0x40 | (i & 0x3f);
    sock.send(b, port, '127.0.0.1', () => {
      if (--left === 0) {
        sock.close();
        Atomics.store(flags, 0, 1);
        Atomics.notify(flags, 0);
      }
    });
  }
});
`;

run('HTTP/3 UDP receive buffer [sluice-only]', function () {
  this.timeout(30000);
  afterEach(common.cleanup);

  it(`a burst of ${COUNT} x ${SIZE} B datagrams while the loop is blocked: none dropped, then served`, async function () {
    if (!fs.existsSync('/proc/net/udp')) {
      console.log('      skipped: no /proc/net/udp (Linux only)');
      this.skip();
    }
    // Linux doubles what SO_RCVBUF asks for, capped at rmem_max; the burst
    // needs ~1.7 MB of buffer (a 1200 B datagram costs ~2.3 KB there).
    const rmemMax = Number(fs.readFileSync('/proc/sys/net/core/rmem_max', 'latin1'));
    if (rmemMax < 1024 * 1024) {
      console.log(`      skipped: net.core.rmem_max is ${rmemMax}: UDP receive buffers are capped below the burst`);
      this.skip();
    }
    const { port } = await startH3Server({}, (req, res) => res.end('after the burst'));
    assert.strictEqual(socketDrops(port), 0);
    const flags = new Int32Array(new SharedArrayBuffer(8));
    const worker = new Worker(SENDER, { eval: true, workerData: { port, count: COUNT, size: SIZE, flags } });
    try {
      await common.once(worker, 'message', 10000, 'the sender ready');
      // From here until the sender is done, this thread (the server's
      // loop) does nothing: every datagram waits in the socket's buffer.
      Atomics.store(flags, 1, 1);
      Atomics.notify(flags, 1);
      const woke = Atomics.wait(flags, 0, 0, 10000);
      const drops = socketDrops(port);
      assert.notStrictEqual(woke, 'timed-out', 'the sender finished');
      assert.strictEqual(drops, 0, `datagrams the kernel dropped at the server's socket (of ${COUNT})`);
    } finally {
      await worker.terminate();
    }
    const c = new H3Client();
    try {
      await c.connect(port);
      const r = await common.withTimeout(c.request('GET', '/', [], null, port), 10000, 'GET after the burst');
      assert.strictEqual(r.status, 200);
      assert.strictEqual(r.body.toString(), 'after the burst');
    } finally {
      c.destroy();
    }
  });
});
