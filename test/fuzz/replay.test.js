'use strict';

// Replays the fuzz corpus (test/fuzz/corpus/http1 and http2: the seeds and
// every crash-* input the harnesses found) against the real server over a
// raw socket, with the harness's chunking (see harness.h for the format):
// the server must neither crash nor hang — the connection closes after the
// client's FIN — and must serve a normal request afterwards.

const fs = require('node:fs');
const path = require('node:path');
const common = require('../common');
const { assert } = common;

const describeSluice = common.isNode ? describe.skip : describe;
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

// Mirrors fuzz::Decode in harness.h.
function decode(data) {
  let pos = 0;
  const next = () => (pos < data.length ? data[pos++] : 0);
  const flags = next();
  next();  // flags2
  const n = next() & 15;
  const lens = [];
  for (let i = 0; i < n; i++) {
    const code = next();
    next();  // op: driver actions the real server cannot be asked for
    lens.push(code < 128 ? code : (code & 127) * 64);
  }
  for (let i = 0; i < 8; i++) next();
  let rest = data.subarray(Math.min(pos, data.length));
  const chunks = [];
  for (const len of lens) {
    chunks.push(rest.subarray(0, len));
    rest = rest.subarray(Math.min(len, rest.length));
  }
  chunks.push(rest);
  return { flags, chunks };
}

function corpus(name) {
  const dir = path.join(__dirname, 'corpus', name);
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).sort().map((f) => ({ name: f, file: path.join(dir, f) }));
}

async function replay(port, chunks) {
  const c = await common.rawConnect(port);
  c.socket.on('error', () => {});
  for (const ch of chunks) {
    if (c.socket.destroyed) break;
    if (ch.length) c.socket.write(ch);
    await new Promise((r) => setImmediate(r));
  }
  if (!c.socket.destroyed) c.socket.end();
  await c.waitClose(4000);
}

async function healthy(port) {
  const r = await common.httpRequest(port, { path: '/after' });
  assert.strictEqual(r.statusCode, 200);
}

describeSluice('fuzz corpus replay', function () {
  this.timeout(60000);
  afterEach(common.cleanup);

  async function server() {
    return common.startServer({ headersTimeout: 1000, requestTimeout: 2000, keepAliveTimeout: 500 },
      (req, res) => {
        req.on('data', () => {});
        req.on('error', () => {});
        req.on('end', () => res.end('ok'));
      });
  }

  it('http1 corpus: no crash, no hang, the server still answers', async function () {
    const { port } = await server();
    const files = corpus('http1');
    assert.ok(files.length > 0);
    for (const f of files) {
      const { chunks } = decode(fs.readFileSync(f.file));
      await replay(port, chunks).catch((e) => { throw new Error(`${f.name}: ${e.message}`); });
    }
    await healthy(port);
  });

  it('http2 corpus (preface prepended as the harness does)', async function () {
    const { server: s, port } = await server();
    s.on('stream', (stream) => {
      stream.on('error', () => {});
      stream.respond({ ':status': 200 });
      stream.end('ok');
    });
    for (const f of corpus('http2')) {
      const { flags, chunks } = decode(fs.readFileSync(f.file));
      if (!(flags & 128)) chunks[0] = Buffer.concat([PREFACE, chunks[0]]);
      await replay(port, chunks).catch((e) => { throw new Error(`${f.name}: ${e.message}`); });
    }
    await healthy(port);
  });
});
