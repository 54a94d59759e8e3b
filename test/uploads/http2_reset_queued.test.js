'use strict';

// A request body chunk still queued in the stream when the client resets
// it: sluice gives its pool reference back in _destroy, but a Readable
// still emits its queue until 'close' (a resume() scheduled before the
// reset flows it). The documented idiom — 'data', then releaseBuffer(c) —
// must then neither throw ERR_SLUICE_BUFFER_RELEASED (an uncaught
// exception in a handler: the mixed soak's crash) nor hand out memory the
// pool may reuse. Found by the mixed soak (test/soak/mixed.js).

const net = require('node:net');
const common = require('../common');
const h2 = require('../http2/h2common');
const { pool, waitInUseZero } = require('./pool_helpers');
const { assert } = common;

// POST / in HPACK: :method POST (static 3), :scheme http, :path /,
// :authority "a".
const POST_SLASH = Buffer.from([0x83, 0x86, 0x84, 0x41, 0x01, 0x61]);
const ROUNDS = 60;

describe(`uploads: HTTP/2, a chunk queued when the client resets [${common.implName}]`, function () {
  afterEach(common.cleanup);
  this.timeout(60000);

  for (const api of ['stream', 'compat']) {
    common.sluiceOnly(`${api}: 'data' + releaseBuffer never meets a chunk sluice released`, async function () {
      const p = pool(64);
      const threw = [];
      const wrong = [];
      let streams = 0;
      const onBody = (body) => {
        streams++;
        body.on('error', () => {});
        // The listener is added at once; the reset may already be read.
        body.on('data', (c) => {
          if (!c.every((x) => x === 0x5a)) wrong.push(c.length);
          try { common.impl.releaseBuffer(c); } catch (e) { threw.push(e.code); }
        });
      };
      const options = { requestBufferAllocator: p.alloc };
      let port;
      if (api === 'compat') {
        ({ port } = await common.startServer(options, (req) => onBody(req)));
      } else {
        const s = await common.startServer(options, null);
        s.server.on('stream', (st) => onBody(st));
        port = s.port;
      }
      // HEADERS, DATA and RST_STREAM of each stream in one write, so that
      // the server reads them together; some rounds with the DATA split.
      const sock = net.connect(port, '127.0.0.1');
      sock.on('error', () => {});
      await new Promise((r) => sock.once('connect', r));
      sock.write(Buffer.concat([h2.PREFACE, h2.frame(h2.FRAME.SETTINGS, 0, 0)]));
      const cancel = Buffer.alloc(4);
      cancel.writeUInt32BE(8);
      for (let i = 0; i < ROUNDS; i++) {
        const id = 1 + 2 * i;
        const data = Buffer.alloc(100 + 97 * i, 0x5a);
        const frames = [h2.frame(h2.FRAME.HEADERS, 0x4, id, POST_SLASH)];
        if (i % 2) frames.push(h2.frame(h2.FRAME.DATA, 0, id, data.subarray(0, 50)), h2.frame(h2.FRAME.DATA, 0, id, data.subarray(50)));
        else frames.push(h2.frame(h2.FRAME.DATA, 0, id, data));
        frames.push(h2.frame(h2.FRAME.RST_STREAM, 0, id, cancel));
        sock.write(Buffer.concat(frames));
        await new Promise((r) => setTimeout(r, 10));
      }
      await h2.waitFor(() => streams === ROUNDS, 20000);
      await new Promise((r) => setTimeout(r, 200));
      sock.destroy();
      assert.deepStrictEqual(threw, [], `releaseBuffer threw for ${threw.length} chunks of ${ROUNDS} reset streams`);
      assert.deepStrictEqual(wrong, [], 'chunks with wrong bytes');
      await waitInUseZero(p);
    });
  }
});
