'use strict';

// HTTP/2 file responses (stream.respondWithFile, and the serveStatic mount
// with its open-file cache) of ~2 MiB files truncated, renamed over and
// rewritten in place while several streams of the same and of different
// files are in flight, held by flow control. Read by a raw frame-level
// client, so what is judged is what the server put on the wire (node's
// client reports 'end' for streams of a session it destroyed itself, which
// once made the mixed soak take its own kills for short responses): every
// stream either ends (END_STREAM) with exactly the bytes of one version of
// its file — whole, or the truncated half for a response that started
// after the cut — or is reset (RST_STREAM) after a prefix of a version.
// A response that had sent more than the file's new size when it was cut
// cannot be completed: it must be reset, never ended short. The same for
// a body compressed on the fly (no content-length to fall short of: a
// gzip stream of a truncated read must not end as if whole).
//
// sluice only: node:http2's respondWithFile (v20) ends such a stream with
// END_STREAM short of the content-length it announced (1.6 MB of a 2 MiB
// file cut to half here), which is the very thing checked against.

const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const zlib = require('node:zlib');
const common = require('../common');
const h2 = require('../http2/h2common');
const { assert } = common;
const { FRAME, PREFACE, frame, parseFrames } = h2;

const MiB = 1048576;
const END_STREAM = 0x1;
const ACK = 0x1;
const END_HEADERS = 0x4;

// GET `p` (a short path): :method GET, :scheme http, :authority a, then
// :path as a literal without indexing (name: static index 4); with `gzip`,
// accept-encoding: gzip, deflate (static index 16).
function getBlock(p, gzip) {
  return Buffer.concat([Buffer.from([0x82, 0x86, 0x41, 0x01, 0x61, 0x04, p.length]),
    Buffer.from(p, 'latin1'), Buffer.from(gzip ? [0x90] : [])]);
}

function windowUpdate(id, n) {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return frame(FRAME.WINDOW_UPDATE, 0, id, b);
}

// A raw h2c connection: the streams' windows stay at the default 65,535
// bytes until grant() opens them (the connection's is opened at once), so
// every response stops after its first 64 KiB. streams: id -> { path, data: [Buffer], bytes, headers, end, rst }.
async function rawClient(port) {
  const sock = net.connect(port, '127.0.0.1');
  common.trackSocket(sock);
  await new Promise((resolve, reject) => { sock.once('connect', resolve); sock.once('error', reject); });
  const streams = new Map();
  let buf = Buffer.alloc(0);
  let goaway = null;
  sock.on('error', () => {});
  sock.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    const frames = parseFrames(buf);
    for (const f of frames) {
      buf = buf.subarray(9 + f.payload.length);
      const st = streams.get(f.streamId);
      if (f.type === FRAME.SETTINGS && !(f.flags & ACK)) sock.write(frame(FRAME.SETTINGS, ACK, 0));
      if (f.type === FRAME.GOAWAY) goaway = f.payload.readUInt32BE(4);
      if (!st) continue;
      if (st.end || st.rst !== null) st.after = true;  // nothing may follow either
      if (f.type === FRAME.HEADERS) st.headers = true;
      if (f.type === FRAME.DATA) {
        let p = f.payload;
        if (f.flags & 0x8) p = p.subarray(1, p.length - p[0]);  // PADDED
        st.data.push(p);
        st.bytes += p.length;
      }
      if ((f.type === FRAME.DATA || f.type === FRAME.HEADERS) && (f.flags & END_STREAM)) st.end = true;
      if (f.type === FRAME.RST_STREAM) st.rst = f.payload.readUInt32BE(0);
    }
  });
  sock.write(Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0), windowUpdate(0, 1 << 30)]));
  let next = 1;
  return {
    streams,
    goaway: () => goaway,
    get(p, gzip = false) {
      const id = next;
      next += 2;
      streams.set(id, { id, path: p, data: [], bytes: 0, headers: false, end: false, rst: null, after: false });
      sock.write(frame(FRAME.HEADERS, END_HEADERS | END_STREAM, id, getBlock(p, gzip)));
      return id;
    },
    // Opens each listed stream's window by `n`.
    grant(ids, n) {
      const out = [];
      for (const id of ids) out.push(windowUpdate(id, n));
      sock.write(Buffer.concat(out));
    },
    close() { sock.destroy(); },
  };
}

function versionsOf(size, n) {
  return Array.from({ length: n }, () => crypto.randomBytes(size));
}

const describeSluice = common.isNode ? describe.skip : describe;

describeSluice('http2 file responses while their files change', function () {
  let dir;

  beforeEach(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-h2change-'));
  });

  afterEach(async function () {
    await common.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  // Each stream's verdict: 'whole' (END_STREAM, the bytes of a version —
  // after `decode` for a compressed body), 'reset' (RST_STREAM after a
  // prefix of a version; any prefix of a compressed body). Anything else
  // fails.
  function judge(st, versions, decode) {
    const compressed = decode !== undefined;
    assert.ok(st.headers, `${st.path} (stream ${st.id}): no response head`);
    assert.ok(!st.after, `${st.path} (stream ${st.id}): frames after END_STREAM or RST_STREAM`);
    const body = Buffer.concat(st.data);
    if (st.rst !== null) {
      if (compressed) return 'reset';  // a prefix of a compressed body
      assert.ok(versions.some((v) => v.length >= body.length && v.subarray(0, body.length).equals(body)),
        `${st.path} (stream ${st.id}): reset after ${body.length} bytes that are no version's prefix`);
      return 'reset';
    }
    assert.ok(st.end, `${st.path} (stream ${st.id}): neither ended nor reset`);
    let plain = body;
    if (compressed) {
      assert.doesNotThrow(() => { plain = decode(body); },
        `${st.path} (stream ${st.id}): END_STREAM after ${body.length} bytes that do not decode`);
    }
    const sha = common.sha256(plain);
    assert.ok(versions.some((v) => common.sha256(v) === sha),
      `${st.path} (stream ${st.id}): END_STREAM after ${body.length} bytes that are no version ` +
      `(versions: ${versions.map((v) => v.length).join(', ')} bytes)`);
    return 'whole';
  }

  for (const cache of ['default', 'on', 'off']) {
    it(`truncated past what was sent, renamed over, rewritten in place: whole or reset, never short (openFileCache ${cache})`, async function () {
      this.timeout(30000);
      const SIZE = 2 * MiB + 34;
      const files = {
        't.bin': { versions: versionsOf(SIZE, 1) },  // truncated to half
        'r.bin': { versions: versionsOf(SIZE + 17, 2) },  // renamed over: v1 replaces v0
        'w.bin': { versions: versionsOf(SIZE, 1) },  // rewritten in place, same bytes
      };
      for (const [name, f] of Object.entries(files)) {
        f.path = path.join(dir, name);
        fs.writeFileSync(f.path, f.versions[0]);
      }
      const half = files['t.bin'].versions[0].subarray(0, SIZE >> 1);
      const options = cache === 'on' ? { openFileCache: true } : cache === 'off' ? { openFileCache: false } : {};
      const onStream = (stream, headers) => {
        stream.on('error', () => {});
        stream.respondWithFile(path.join(dir, headers[':path'].slice(3)), { 'content-type': 'application/octet-stream' });
      };
      const { server, port } = await common.startServer(options);
      server.on('stream', onStream);
      server.serveStatic('/s', dir);
      const prefixes = ['/f/', '/s/'];
      const c = await rawClient(port);
      // Two streams of each file by each route, all held at 64 KiB.
      const first = [];
      for (const name of Object.keys(files)) {
        for (const p of prefixes) for (let i = 0; i < 2; i++) first.push(c.get(`${p}${name}`));
      }
      const got = (ids, n) => () => ids.every((id) => c.streams.get(id).bytes >= n || c.streams.get(id).rst !== null);
      await h2.waitFor(got(first, 65535), 10000);
      // Past the half of each file: the truncated file's responses have
      // sent more than its new size (and read ahead further).
      c.grant(first, 1.5 * MiB);
      await h2.waitFor(got(first, 1.5 * MiB + 65535), 10000);
      fs.truncateSync(files['t.bin'].path, SIZE >> 1);
      const tmp = path.join(dir, 'r.bin.tmp');
      fs.writeFileSync(tmp, files['r.bin'].versions[1]);
      fs.renameSync(tmp, files['r.bin'].path);
      const fd = fs.openSync(files['w.bin'].path, 'r+');
      fs.writeSync(fd, files['w.bin'].versions[0], 0, SIZE, 0);
      fs.closeSync(fd);
      // Responses that start after the changes, held again at 64 KiB.
      const later = [];
      for (const name of Object.keys(files)) for (const p of prefixes) later.push(c.get(`${p}${name}`));
      await h2.waitFor(got(later, Math.min(65535, SIZE >> 1)), 10000);
      // The rest of everything.
      c.grant([...first, ...later], 4 * MiB);
      const all = [...first, ...later];
      await h2.waitFor(() => all.every((id) => c.streams.get(id).end || c.streams.get(id).rst !== null), 15000);
      assert.strictEqual(c.goaway(), null, 'no GOAWAY');
      const verdicts = {};
      for (const id of all) {
        const st = c.streams.get(id);
        const name = st.path.slice(3);
        const versions = name === 't.bin' ? [files[name].versions[0], half] : files[name].versions;
        const v = judge(st, versions);
        (verdicts[`${st.path}${first.includes(id) ? '' : ' later'}`] ||= []).push(v);
      }
      // Cut after 1.5 MiB of a 2 MiB file had been sent: no way to finish.
      for (const p of prefixes) {
        assert.deepStrictEqual(verdicts[`${p}t.bin`], ['reset', 'reset'], `${p}t.bin: ${JSON.stringify(verdicts)}`);
        // The file held open before the rename is still whole.
        assert.deepStrictEqual(verdicts[`${p}r.bin`], ['whole', 'whole'], `${p}r.bin: ${JSON.stringify(verdicts)}`);
        assert.deepStrictEqual(verdicts[`${p}w.bin`], ['whole', 'whole'], `${p}w.bin: ${JSON.stringify(verdicts)}`);
      }
      c.close();
    });
  }

  // Compressed on the fly (the file goes through the compressor in the
  // pipe, no content-length): a truncation before the source has read the
  // whole file can only end in a reset; a complete gzip body of the
  // truncated file may not pass for the response.
  for (const cache of ['default', 'off']) {
    it(`compressed: a file truncated while its response is held is reset (openFileCache ${cache})`, async function () {
      this.timeout(30000);
      const SIZE = 2 * MiB + 34;
      const full = Buffer.from(crypto.randomBytes(SIZE).toString('hex').slice(0, SIZE));
      const half = full.subarray(0, SIZE >> 1);
      const file = path.join(dir, 'z.txt');
      fs.writeFileSync(file, full);
      const { server, port } = await common.startServer({ compression: true, ...(cache === 'off' ? { openFileCache: false } : {}) });
      server.on('stream', (stream, headers) => {
        stream.on('error', () => {});
        stream.respondWithFile(path.join(dir, headers[':path'].slice(3)), { 'content-type': 'text/plain' });
      });
      server.serveStatic('/s', dir);
      const c = await rawClient(port);
      const first = [];
      for (const p of ['/f/', '/s/']) for (let i = 0; i < 2; i++) first.push(c.get(`${p}z.txt`, true));
      const got = (ids, n) => () => ids.every((id) => c.streams.get(id).bytes >= n || c.streams.get(id).rst !== null);
      await h2.waitFor(got(first, 65535), 10000);
      fs.truncateSync(file, SIZE >> 1);
      const later = c.get('/f/z.txt', true);
      const all = [...first, later];
      c.grant(all, 4 * MiB);
      await h2.waitFor(() => all.every((id) => c.streams.get(id).end || c.streams.get(id).rst !== null), 15000);
      const unzip = (b) => zlib.unzipSync(b);  // gzip or deflate, by its header
      for (const id of first) {
        const st = c.streams.get(id);
        assert.ok(st.bytes >= 65535 && st.bytes < full.length, `${st.path}: ${st.bytes} compressed bytes`);
        assert.strictEqual(judge(st, [full], unzip), 'reset', `${st.path} (stream ${id})`);
      }
      assert.strictEqual(judge(c.streams.get(later), [half], unzip), 'whole', 'a response started after the cut: the half');
      c.close();
    });
  }
});
