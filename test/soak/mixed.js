'use strict';
// The --mixed part of the soak (test/soak/soak.js): what it adds beside the
// base load, on the server's side (server()) and the clients' (fixtures()
// and loops()). soak.js owns the process, the counters and the checks.
//
// Server side, in the child: the base server (buffer pool, h1 + h2c,
// HTTP/2 through the 'stream' API) gets compression, a serveStatic mount
// and a WebSocketServer; a second server beside it, createSecureServer
// with a test certificate (h2 and http/1.1 by ALPN, no pool, HTTP/2
// through the compat req/res, openFileCache on so respondWithFile goes
// through the open-file cache too) gets the same routes:
//   POST /up /up-drop /up-file /up-buffer /up-iter   an upload consumed by
//        one idiom each (release each chunk; keep no reference and never
//        release; pipe to a file; buffer it whole; for await), answered
//        with the sha256 of what arrived
//   GET  /f/NAME  respondWithFile of a file that changes underneath
//   GET  /s/NAME  the same file through the native serveStatic mount
//   GET  /text?o=&l=&m=end|write|flush  a slice of a text corpus, one
//        end(), or writes with backpressure (and flush() between them)
//   /ws?role=echo|sub|pub&topic=  WebSockets (permessage-deflate offered
//        by some clients): echo, subscribe, publish to a topic and ack
//
// Files changing underneath: a mutator (client side) rewrites the served
// files while they are served, three ways: replaced whole by a rename
// (a reader gets the old or the new version whole), truncated to half (a
// response that already sent its length must end in a reset: HTTP/1.1 a
// closed connection, HTTP/2 RST_STREAM; one that starts after is the
// half, itself a valid version), and rewritten in place with the bytes it
// already holds (the inode changes, mtime and inotify fire, the bytes do
// not: any open-file / small-file cache must drop its entry, no body may
// change). An in-place rewrite with *different* bytes is not used: any
// server reading a file while it is overwritten can send a mix of both
// (a read racing a write of the same pages), which is no bug to find.
// The client checks every whole body (decompressed when it came
// compressed) by sha256 against the set of versions of that file; a body
// that ended short with no reset, or a short body whose bytes are not a
// prefix of a version, is corrupt. One exception, counted and printed as
// KNOWN sendfile-window, not failing the run: cleartext HTTP/1.1 sendfile
// (docs/files.md "sendfile" item 6) cannot see an in-place change made
// after its last file check to bytes already queued in the socket, so a
// truncation there zeroes part of a body of full length (or of one cut
// short by the check's reset). Only a body that is exactly that qualifies
// (sendfileWindow below); corrupt bodies anywhere else still fail.
const crypto = require('crypto');
const fs = require('fs');
const http = require('http');
const http2 = require('http2');
const https = require('https');
const net = require('net');
const path = require('path');
const tls = require('tls');
const zlib = require('zlib');
const { execFileSync } = require('child_process');

const STATIC = [
  // name, size of version 0 (versions 1, 2 are a little longer), text?
  ['a.txt', 3000, true],       // small-file cache (content in memory)
  ['b.json', 40000, true],     // small-file cache
  ['c.txt', 300000, true],     // open-file cache, read per response
  ['d.bin', 2 * 1048576, false],  // not compressible: sendfile on HTTP/1.1
];
const VERSIONS = 3;
const CORPUS = 1048576;
const sha = (b) => crypto.createHash('sha256').update(b).digest('hex');
const CTYPE = { '.txt': 'text/plain; charset=utf-8', '.json': 'application/json; charset=utf-8', '.bin': 'application/octet-stream' };

// ---------------------------------------------------------------------------
// Server (child process)

function consumeBody(sluice, idiom, src, uploadDir, done) {
  let finished = false;
  const finish = (err, r) => { if (!finished) { finished = true; done(err, r); } };
  src.on('error', (e) => finish(e));
  src.on('aborted', () => finish(new Error('aborted')));
  src.on('close', () => { if (!src.readableEnded) finish(new Error('closed')); });
  const h = crypto.createHash('sha256');
  let n = 0;
  const ok = () => finish(null, { digest: h.digest('hex'), n });
  switch (idiom) {
    case '/up':
      src.on('data', (c) => { h.update(c); n += c.length; sluice.releaseBuffer(c); });
      src.on('end', ok);
      break;
    case '/up-drop':
      // Keeps no reference and never releases: the pool gets the chunk
      // back when the collector finds it.
      src.on('data', (c) => { h.update(c); n += c.length; });
      src.on('end', ok);
      break;
    case '/up-buffer': {
      const parts = [];
      src.on('data', (c) => parts.push(c));
      src.on('end', () => { const b = Buffer.concat(parts); h.update(b); n = b.length; ok(); });
      break;
    }
    case '/up-iter':
      (async () => {
        for await (const c of src) { h.update(c); n += c.length; }
      })().then(ok, finish);
      break;
    case '/up-file': {
      const f = path.join(uploadDir, `${process.pid}-${Date.now()}-${Math.random()}`);
      const w = fs.createWriteStream(f);
      src.pipe(w);
      const drop = (e) => { w.destroy(); fs.rm(f, { force: true }, () => {}); finish(e); };
      src.on('error', drop);
      src.on('aborted', () => drop(new Error('aborted')));
      src.on('close', () => { if (!src.readableEnded) drop(new Error('closed')); });
      w.on('error', drop);
      w.on('finish', () => {
        fs.readFile(f, (e, b) => {
          fs.rm(f, { force: true }, () => {});
          if (e) return finish(e);
          h.update(b); n = b.length; ok();
        });
      });
      break;
    }
    default:
      src.resume();
      src.on('end', () => finish(new Error('no such idiom')));
  }
}

// Writes body in 16 KiB pieces, waiting for 'drain' when write() says so;
// flush() after each piece when asked (res.flush: compression's SSE path).
function writePieces(out, body, flush, cb) {
  let p = 0;
  const step = () => {
    while (p < body.length) {
      if (out.destroyed) return;
      const piece = body.subarray(p, p + 16384);
      p += piece.length;
      const more = out.write(piece);
      if (flush && typeof out.flush === 'function') out.flush();
      if (!more) { out.once('drain', step); return; }
    }
    out.end();
    if (cb) cb();
  };
  step();
}

function server(sluice, main, counts) {
  const dir = process.env.SOAK_DIR;
  const staticDir = path.join(dir, 'static');
  const uploadDir = path.join(dir, 'up');
  const corpus = fs.readFileSync(path.join(dir, 'corpus.txt'));
  const bump = (k) => { counts[k] = (counts[k] || 0) + 1; };
  const textSlice = (url) => {
    const u = new URL(url, 'http://x');
    const o = Number(u.searchParams.get('o')) || 0;
    const l = Number(u.searchParams.get('l')) || 0;
    return { body: corpus.subarray(o, o + l), m: u.searchParams.get('m') || 'end' };
  };
  const fileOf = (url) => {
    const name = url.slice(3);
    return { p: path.join(staticDir, name), ct: CTYPE[path.extname(name)] || 'application/octet-stream' };
  };

  // The node:http-shaped handler: HTTP/1.1 on both servers, HTTP/2 compat
  // on the TLS server. Returns false for what it does not know.
  function handle(req, res) {
    if (req.method === 'POST') {
      bump(`post${req.url}`);
      consumeBody(sluice, req.url, req, uploadDir, (err, r) => {
        if (err) { if (!res.headersSent && !res.destroyed) { res.statusCode = 500; res.end(); } return; }
        res.setHeader('x-bytes', String(r.n));
        res.end(r.digest);
      });
      return true;
    }
    if (req.url.startsWith('/f/')) {
      bump('respondWithFile');
      const { p, ct } = fileOf(req.url);
      res.respondWithFile(p, { 'content-type': ct });
      return true;
    }
    if (req.url.startsWith('/s/')) {
      bump('static-miss');  // the native mount answers hits: this is a miss
      res.statusCode = 404;
      res.end();
      return true;
    }
    if (req.url.startsWith('/text')) {
      bump('text');
      const { body, m } = textSlice(req.url);
      res.setHeader('content-type', 'text/plain; charset=utf-8');
      if (m === 'end') res.end(body);
      else writePieces(res, body, m === 'flush');
      return true;
    }
    return false;
  }

  // The 'stream' API of the base server (h2c).
  function handleStream(stream, headers) {
    const url = headers[':path'];
    if (headers[':method'] === 'POST') {
      bump(`h2post${url}`);
      consumeBody(sluice, url, stream, uploadDir, (err, r) => {
        if (err) { if (!stream.destroyed && !stream.headersSent) stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR); return; }
        if (stream.destroyed) return;
        stream.respond({ ':status': 200, 'x-bytes': String(r.n) });
        stream.end(r.digest);
      });
      return true;
    }
    if (url.startsWith('/f/')) {
      bump('h2respondWithFile');
      const { p, ct } = fileOf(url);
      stream.respondWithFile(p, { 'content-type': ct }, { onError: () => { if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR); } });
      return true;
    }
    if (url.startsWith('/s/')) {
      bump('static-miss');
      stream.respond({ ':status': 404 });
      stream.end();
      return true;
    }
    if (url.startsWith('/text')) {
      bump('h2text');
      const { body, m } = textSlice(url);
      stream.respond({ ':status': 200, 'content-type': 'text/plain; charset=utf-8' });
      if (m === 'end') stream.end(body);
      else writePieces(stream, body, false);
      return true;
    }
    return false;
  }

  const onWs = (wss, label) => {
    wss.on('connection', (ws, req) => {
      bump(`ws-${label}`);
      const u = new URL(req.url, 'http://x');
      const role = u.searchParams.get('role');
      const topic = u.searchParams.get('topic');
      ws.on('error', () => {});
      if (role === 'echo') {
        ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
      } else if (role === 'sub') {
        ws.subscribe(topic);
        ws.send('ok');
      } else if (role === 'pub') {
        let n = 0;
        ws.on('message', (data) => {
          // Half the time through the socket (everyone but the sender),
          // half through the server (everyone subscribed).
          if (n++ % 2) ws.publish(topic, data, { binary: true });
          else wss.publish(topic, data, { binary: true });
          ws.send(`ack ${n}`);
        });
      } else {
        ws.close(1008, 'role');
      }
    });
  };

  main.serveStatic('/s', staticDir);
  const mainWss = new sluice.WebSocketServer({ server: main, path: '/ws', perMessageDeflate: { threshold: 1024 } });
  onWs(mainWss, 'ws');

  const secure = sluice.createSecureServer({
    key: fs.readFileSync(path.join(dir, 'key.pem')),
    cert: fs.readFileSync(path.join(dir, 'cert.pem')),
    compression: true,
    openFileCache: true,
    headersTimeout: 3000,
    requestTimeout: 60000,
    keepAliveTimeout: 60000,
  }, (req, res) => {
    if (!handle(req, res)) { res.statusCode = 404; res.end(); }
  });
  secure.serveStatic('/s', staticDir);
  const tlsWss = new sluice.WebSocketServer({ server: secure, path: '/ws', perMessageDeflate: { threshold: 1024 } });
  onWs(tlsWss, 'wss');
  return {
    handle,
    handleStream,
    listen(cb) { secure.listen(0, '127.0.0.1', () => cb(secure.address().port)); },
    close() {
      for (const w of [mainWss, tlsWss]) for (const c of w.clients) c.terminate();
      secure.close();
      if (secure.closeAllConnections) secure.closeAllConnections();
    },
    extraStats() { return { fileCache: sluice.openFileCacheStats() }; },
  };
}

// ---------------------------------------------------------------------------
// Client side (this process)

// Makes the files, the corpus, and a self-signed certificate for
// localhost (openssl, as test/tls does). Returns what the loops need.
function fixtures(dir) {
  fs.mkdirSync(path.join(dir, 'static'));
  fs.mkdirSync(path.join(dir, 'tmp'));
  fs.mkdirSync(path.join(dir, 'up'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
    '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '2', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const corpus = Buffer.from(crypto.randomBytes(CORPUS / 2).toString('hex'));
  fs.writeFileSync(path.join(dir, 'corpus.txt'), corpus);
  const files = {};
  for (const [name, size, text] of STATIC) {
    const versions = [];
    for (let v = 0; v < VERSIONS; v++) {
      const n = size + v * 17;
      versions.push(text ? Buffer.from(crypto.randomBytes(Math.ceil(n / 2)).toString('hex').slice(0, n)) : crypto.randomBytes(n));
    }
    // Every body a reader may get whole: each version and its first half.
    const valid = new Set();
    for (const b of versions) { valid.add(sha(b)); valid.add(sha(b.subarray(0, b.length >> 1))); }
    // log: the in-place changes (truncate, rewrite) of the last minutes,
    // for the sendfile window (sendfileWindow in loops()).
    files[name] = { name, versions, valid, cur: 0, truncated: false, log: [], path: path.join(dir, 'static', name) };
    fs.writeFileSync(files[name].path, versions[0]);
  }
  return { dir, corpus, files, ca: fs.readFileSync(path.join(dir, 'cert.pem')) };
}

function loops(ctx) {
  const { stats, error, corrupt, known, rand, sleep, until, port, tlsPort, fx } = ctx;
  // The mutator and every client loop run in this process: one clock for
  // a request's window and the files' changes.
  const now = () => performance.now();
  const served = (kind, bytes) => {
    stats.served[kind] = (stats.served[kind] || 0) + 1;
    stats.verified += bytes || 0;
  };
  const reset = (kind) => { stats.resets[kind] = (stats.resets[kind] || 0) + 1; };
  const names = Object.keys(fx.files);
  const pick = (a) => a[rand(a.length)];
  const ENCODINGS = [null, null, 'gzip', 'br', 'gzip, br', 'deflate'];
  const TIMEOUT = 60000;

  function decode(enc, body) {
    if (!enc || enc === 'identity') return body;
    if (enc === 'gzip') return zlib.gunzipSync(body);
    if (enc === 'br') return zlib.brotliDecompressSync(body);
    if (enc === 'deflate') return zlib.inflateSync(body);
    throw new Error(`content-encoding ${enc}`);
  }
  // Where a wrong body parts from the versions of its length (to tell a
  // stale cache, a zero fill or a mix of two versions apart).
  function describe(f, b) {
    const out = [];
    f.versions.forEach((v, i) => {
      let j = 0;
      const n = Math.min(v.length, b.length);
      while (j < n && v[j] === b[j]) j++;
      let k = j;
      while (k < b.length && b[k] === 0) k++;
      const other = f.versions.findIndex((w) => w.length > j && b.length > j && w.subarray(j, Math.min(w.length, b.length)).equals(b.subarray(j, Math.min(w.length, b.length))));
      const own = k > j && k < b.length && v.length >= b.length && v.subarray(k, b.length).equals(b.subarray(k));
      out.push(`v${i}(${v.length}) same for ${j} bytes${k > j ? `, then ${k - j} zero bytes` : ''}${own ? `, then its own to the end` : ''}${other >= 0 ? `, the rest is v${other}'s` : ''}`);
    });
    return ` [${out.join('; ')}; file now v${f.cur}${f.truncated ? ' truncated' : ''}]`;
  }
  // The sendfile window (docs/files.md "sendfile" item 6): on cleartext
  // HTTP/1.1 the base server (soak.js: sendfile left at its default, on)
  // sends the bodies of /f/ (respondWithFile) and /s/ (its serveStatic
  // mount) not compressed with sendfile(2), and the socket holds
  // references to the file's page cache until the client reads them; an
  // in-place change made after the server's last fstat check changes those
  // queued bytes (a truncation zeroes the partial folio past the new end;
  // a write in place puts its bytes there) and the response, already
  // wholly handed over, ends with its full length, or, cut by the reset
  // the check made, short with zeroed bytes before the cut. Known and
  // documented, so such a body is counted apart instead of failing the
  // run, but only when it is exactly that: win (the request went to a
  // sendfile route in cleartext HTTP/1.1, not compressed: the caller's
  // part) and an in-place change of this file, on the inode of the
  // body's version, made between the request's send and the body's end,
  // and bytes that are the body's version except zeros at or past a cut
  // made in that window, or bytes an in-place write in that window put
  // there. complete: the full announced length (the caller checked it
  // equals body.length); else a short body ended by a reset. Returns a
  // description, or null: then it stays a corrupt body. The small files
  // (a.txt, b.json) never reach sendfile (one write from memory): a
  // damaged body of theirs can match only if the server has a new bug,
  // and a truncation to half cuts them after 1.5 KB / 20 KB, where the
  // zeros would sit, so they are not exempted by name; all the same, none
  // has been seen.
  function sendfileWindow(f, b, complete, win) {
    if (!win || !f) return null;
    const end = now();
    const inWindow = f.log.filter((m) => m.t0 <= end && m.t1 >= win.sent);
    if (!inWindow.length) return null;
    for (let vi = 0; vi < f.versions.length; vi++) {
      const v = f.versions[vi];
      if (complete ? v.length !== b.length : v.length < b.length) continue;
      const cuts = inWindow.filter((m) => m.op === 'truncate' && m.version === vi);
      const writes = inWindow.filter((m) => m.op === 'rewrite' && m.version === vi);
      if (!cuts.length && !writes.length) continue;
      const cut = cuts.length ? Math.min(...cuts.map((m) => m.cut)) : Infinity;
      let first = -1;
      let zeros = 0;
      let written = 0;
      let i = 0;
      for (; i < b.length; i++) {
        if (b[i] === v[i]) continue;
        if (first < 0) first = i;
        if (b[i] === 0 && i >= cut) { zeros++; continue; }
        if (writes.some((m) => i < m.bytes.length && m.bytes[i] === b[i])) { written++; continue; }
        break;
      }
      if (i < b.length || first < 0) continue;
      const ms = (t) => `${Math.round(t - win.sent)} ms`;
      const what = inWindow.filter((m) => m.op !== 'rename' && m.version === vi).map((m) => `${m.op} #${m.n}${m.op === 'truncate' ? ` to ${m.cut}` : ` of ${m.bytes.length} bytes`} at ${ms(m.t0)}..${ms(m.t1)}`);
      return `${b.length} bytes${complete ? '' : ' then a reset'}: v${vi}(${v.length}) from byte ${first} on ${zeros} zero bytes` +
        `${written ? ` and ${written} bytes an in-place write put there` : ''}; in the window (request sent .. body end at ${ms(end)}): ${what.join(', ')}`;
    }
    return null;
  }
  // The file's changes from 3 s before the request to now, times from the
  // request's send: what a corrupt body on a sendfile route is told with.
  function changesAround(f, win) {
    const t = now();
    const ms = (x) => `${Math.round(x - win.sent)}`;
    const near = f.log.filter((m) => m.t1 >= win.sent - 3000);
    const lastCut = f.log.filter((m) => m.op === 'truncate' && m.t1 < win.sent - 3000).pop();
    if (lastCut) near.unshift(lastCut);
    return ` [the last earlier truncate and the changes from 3 s before the request (ms from its send; body end ${ms(t)}): ${near.map((m) => `${m.op}${m.op === 'rename' ? ` to v${m.to}` : ` v${m.version}`} ${ms(m.t0)}..${ms(m.t1)}`).join(', ') || 'none'}]`;
  }
  function isPrefixOfVersion(f, b) {
    return f.versions.some((v) => v.length >= b.length && v.subarray(0, b.length).equals(b));
  }
  // What to expect from GET `url`: check(status, headers, body, complete)
  // → true when counted as served.
  function expectation(url) {
    if (url.startsWith('/text')) {
      const u = new URL(url, 'http://x');
      const o = Number(u.searchParams.get('o'));
      const l = Number(u.searchParams.get('l'));
      return { kind: 'text', want: sha(fx.corpus.subarray(o, o + l)), file: null };
    }
    if (url.startsWith('/file')) return { kind: 'file', want: ctx.fileHash, file: null };
    return { kind: url.startsWith('/s/') ? 'static' : 'rwf', want: null, file: fx.files[url.slice(3)] };
  }
  // Judges one response. complete: it ended without error. win: { sent }
  // when the request went to a sendfile route in cleartext HTTP/1.1 (see
  // sendfileWindow), null otherwise.
  function judge(kind, url, status, headers, body, complete, win = null) {
    const e = expectation(url);
    const enc = headers['content-encoding'];
    const cl = headers['content-length'] !== undefined ? Number(headers['content-length']) : -1;
    if (status !== 200) { corrupt(kind, `${url}: status ${status}`); return; }
    if (!complete) {
      reset(kind);
      if (cl >= 0 && body.length > cl) corrupt(kind, `${url}: ${body.length} bytes past content-length ${cl}`);
      if (!enc && e.file && !isPrefixOfVersion(e.file, body)) {
        const w = sendfileWindow(e.file, body, false, win);
        if (w) known(kind, `${url}: ${w}`);
        else corrupt(kind, `${url}: a short body (${body.length} bytes, then a reset) that is no version's prefix${describe(e.file, body)}${win ? changesAround(e.file, win) : ''}`);
      }
      if (!enc && !e.file && e.kind === 'text') {
        const u = new URL(url, 'http://x');
        const o = Number(u.searchParams.get('o'));
        if (!fx.corpus.subarray(o, o + body.length).equals(body)) corrupt(kind, `${url}: a short body whose bytes are wrong`);
      }
      return;
    }
    if (cl >= 0 && cl !== body.length) { corrupt(kind, `${url}: ${body.length} bytes, content-length ${cl}, no reset`); return; }
    let plain;
    try { plain = decode(enc, body); } catch (err) {
      corrupt(kind, `${url}: ${enc} body of ${body.length} bytes does not decode (${err.code || err.message})`);
      return;
    }
    const d = sha(plain);
    const ok = e.file ? e.file.valid.has(d) : d === e.want;
    const w = !ok && !enc && e.file ? sendfileWindow(e.file, plain, true, win) : null;
    if (w) known(kind, `${url}: ${w}`);
    else if (!ok) corrupt(kind, `${url}${enc ? ` (${enc})` : ''}: ${plain.length} bytes, sha256 ${d.slice(0, 16)} is no version${e.file ? describe(e.file, plain) : ''}${e.file && win && !enc ? changesAround(e.file, win) : ''}${headers.etag ? ` etag ${headers.etag}` : ''}`);
    else served(`${kind}${enc ? '-z' : ''}`, plain.length);
  }

  // The window of a GET sent at `sent` to the base server's sendfile
  // routes in cleartext HTTP/1.1 (judge: win), or null.
  const sendfileRoute = (secure, url, sent) => (!secure && /^\/[fs]\//.test(url) ? { sent } : null);

  function randomGet() {
    const r = rand(10);
    if (r < 3) return `/f/${pick(names)}`;
    if (r < 6) return `/s/${pick(names)}`;
    const l = 1 + rand(rand(4) ? 65536 : CORPUS / 2);
    return `/text?o=${rand(CORPUS - l)}&l=${l}&m=${pick(['end', 'write', 'flush'])}`;
  }

  // --- HTTP/1.1 (plain or TLS) GET through an agent, or with agent:false
  // for slow readers and aborts. opts.pauseMs: pause reading that long
  // after the first chunk; opts.abortAfter: destroy after that many bytes.
  function h1Get(secure, agent, url, enc, opts = {}) {
    return new Promise((resolve) => {
      const mod = secure ? https : http;
      const headers = enc ? { 'accept-encoding': enc } : {};
      const req = mod.get({
        host: '127.0.0.1', port: secure ? tlsPort : port, path: url, agent, headers,
        ca: fx.ca, servername: 'localhost',
      }, (res) => {
        const parts = [];
        let len = 0;
        let paused = false;
        let done = false;
        const fin = (complete) => {
          if (done) return;
          done = true;
          resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(parts), complete });
        };
        res.on('data', (c) => {
          parts.push(c);
          len += c.length;
          if (opts.pauseMs && !paused) {
            paused = true;
            res.pause();
            setTimeout(() => res.resume(), opts.pauseMs);
          }
          if (opts.abortAfter !== undefined && len >= opts.abortAfter) {
            done = true;
            if (secure || rand(2)) req.destroy(); else res.socket && res.socket.resetAndDestroy();
            resolve({ aborted: true });
          }
        });
        res.on('end', () => fin(true));
        res.on('aborted', () => fin(false));
        res.on('error', () => fin(false));
        res.on('close', () => fin(res.complete));
      });
      req.on('error', (e) => resolve({ error: e }));
      req.setTimeout(TIMEOUT, () => {
        console.log(`STALL ${secure ? 'https' : 'http'} GET ${url} (${enc || 'identity'}): no progress for ${TIMEOUT / 1000} s`);
        req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEOUT' }));
      });
    });
  }

  async function h1GetLoop(kind, secure) {
    const agent = new (secure ? https : http).Agent({ keepAlive: true, maxSockets: 4 });
    while (Date.now() < until()) {
      const url = randomGet();
      const sent = now();
      const r = await h1Get(secure, agent, url, pick(ENCODINGS));
      if (r.error) { error(kind, r.error); await sleep(20); continue; }
      judge(kind, url, r.status, r.headers, r.body, r.complete, sendfileRoute(secure, url, sent));
    }
    agent.destroy();
  }

  async function h1SlowLoop(kind, secure) {
    while (Date.now() < until()) {
      const url = rand(2) ? `/f/${pick(names)}` : `/text?o=0&l=${CORPUS}&m=${pick(['end', 'write'])}`;
      const sent = now();
      const r = await h1Get(secure, false, url, pick(ENCODINGS), { pauseMs: 1000 + rand(4000) });
      if (r.error) { error(kind, r.error); await sleep(20); continue; }
      judge(kind, url, r.status, r.headers, r.body, r.complete, sendfileRoute(secure, url, sent));
    }
  }

  // Clients that leave mid-head, mid-body (upload) or mid-response.
  async function abortLoop(kind, secure) {
    while (Date.now() < until()) {
      const how = rand(3);
      if (how === 2) {
        const url = rand(2) ? `/f/${pick(names)}` : `/text?o=0&l=${CORPUS}&m=write`;
        const r = await h1Get(secure, false, url, pick(ENCODINGS), { abortAfter: rand(500000) });
        if (r.error && r.error.code === 'ETIMEOUT') error(kind, r.error);
        else if (!r.error) served(`${kind}-mid-response`);
        continue;
      }
      await new Promise((resolve) => {
        const sock = secure
          ? tls.connect({ host: '127.0.0.1', port: tlsPort, ca: fx.ca, servername: 'localhost', ALPNProtocols: ['http/1.1'] })
          : net.connect(port, '127.0.0.1');
        sock.on('error', () => {});
        sock.on('close', resolve);
        sock.on(secure ? 'secureConnect' : 'connect', () => {
          const head = `POST ${pick(['/up', '/up-drop', '/up-file', '/up-buffer', '/up-iter'])} HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n`;
          const data = how === 0 ? head.slice(0, rand(head.length)) : head + 'x'.repeat(rand(1000000));
          sock.write(data, () => setTimeout(() => {
            served(`${kind}-${how === 0 ? 'mid-head' : 'mid-body'}`);
            if (!secure && rand(2)) sock.resetAndDestroy(); else sock.destroy();
          }, rand(20)));
        });
        setTimeout(() => sock.destroy(), TIMEOUT).unref();
      });
    }
  }

  // Uploads by every idiom, HTTP/1.1 (keep-alive), to the pool server or
  // the TLS one without a pool.
  async function h1UploadLoop(kind, secure) {
    const agent = new (secure ? https : http).Agent({ keepAlive: true, maxSockets: 4 });
    while (Date.now() < until()) {
      const idiom = pick(['/up', '/up-drop', '/up-file', '/up-buffer', '/up-iter']);
      const size = rand(4) === 0 ? 1 + rand(2 * 1048576) : 1 + rand(128 * 1024);
      const off = rand(ctx.random.length - size);
      const body = ctx.random.subarray(off, off + size);
      const chunked = rand(3) === 0;
      const r = await new Promise((resolve) => {
        const req = (secure ? https : http).request({
          host: '127.0.0.1', port: secure ? tlsPort : port, method: 'POST', path: idiom, agent,
          ca: fx.ca, servername: 'localhost',
          headers: chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': size },
        }, (res) => {
          const parts = [];
          res.on('data', (c) => parts.push(c));
          res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(parts).toString(), n: res.headers['x-bytes'] }));
          res.on('error', (e) => resolve({ error: e }));
        });
        req.on('error', (e) => resolve({ error: e }));
        req.setTimeout(TIMEOUT, () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEOUT' })));
        let p = 0;
        while (p < size) { const n = Math.min(size - p, 1 + rand(128 * 1024)); req.write(body.subarray(p, p + n)); p += n; }
        req.end();
      });
      if (r.error) { error(`${kind}${idiom}`, r.error); await sleep(20); continue; }
      if (r.status !== 200 || r.body !== sha(body)) corrupt(`${kind}${idiom}`, `status ${r.status} size ${size} server saw ${r.n}`);
      else served(`${kind}${idiom}`, size);
    }
    agent.destroy();
  }

  // --- HTTP/2: h2c to the base server ('stream' API, pool) or h2 over TLS
  // (compat API, no pool). Each session runs a few rounds of concurrent
  // streams: GETs (some paused for seconds: slow readers; some cancelled
  // mid-response), uploads by every idiom (some cancelled mid-body); and
  // sometimes the whole session is destroyed mid-flight.
  async function h2Loop(kind, secure) {
    while (Date.now() < until()) {
      const session = secure
        ? http2.connect(`https://127.0.0.1:${tlsPort}`, { ca: fx.ca })
        : http2.connect(`http://127.0.0.1:${port}`);
      session.on('error', () => {});
      const killAt = rand(8) === 0 ? 200 + rand(3000) : -1;
      let killed = false;
      const killer = killAt >= 0 ? setTimeout(() => { killed = true; served(`${kind}-session-destroyed`); session.destroy(); }, killAt) : null;
      try {
        for (let round = 0; round < 6 && !killed && !session.destroyed && Date.now() < until(); round++) {
          await Promise.all(Array.from({ length: 1 + rand(6) }, () => h2One(kind, session, () => killed, secure)));
        }
      } catch (e) {
        error(kind, e);
      }
      if (killer) clearTimeout(killer);
      if (!session.destroyed) await new Promise((r) => { session.close(r); setTimeout(r, TIMEOUT).unref(); });
    }
  }

  function h2One(kind, session, killed, secure) {
    if (session.destroyed || session.closed) return Promise.resolve();
    const r = rand(10);
    if (r < 3) return h2Upload(kind, session, killed, secure);
    return new Promise((resolve) => {
      const url = randomGet();
      const enc = pick(ENCODINGS);
      const slow = rand(6) === 0;
      const cancelAt = rand(8) === 0 ? rand(300000) : -1;
      const k = slow ? `${kind}-slow` : kind;
      let req;
      try {
        req = session.request({ ':path': url, ...(enc ? { 'accept-encoding': enc } : {}) }, { endStream: true });
      } catch (e) { resolve(); return; }
      let headers = null;
      const parts = [];
      let len = 0;
      let done = false;
      let paused = false;
      const fin = (complete) => {
        if (done) return;
        done = true;
        // Once this client destroyed the session no verdict is possible:
        // node's client (v20 at least) then ends the streams it had open,
        // 'end' and rstCode 0, with whatever bytes had arrived, so a
        // response cut by the kill looks complete and short.
        if (killed()) { resolve(); return; }
        if (!headers) { error(k, req.rstCode !== undefined ? `rst ${req.rstCode}` : 'no head'); resolve(); return; }
        judge(k, url, Number(headers[':status']), headers, Buffer.concat(parts), complete);
        resolve();
      };
      req.on('response', (h) => { headers = h; });
      req.on('data', (c) => {
        parts.push(c);
        len += c.length;
        if (slow && !paused) { paused = true; req.pause(); setTimeout(() => req.resume(), 1000 + rand(4000)); }
        if (cancelAt >= 0 && len >= cancelAt && !done) {
          done = true;
          served(`${kind}-cancel-mid-response`);
          req.close(http2.constants.NGHTTP2_CANCEL);
          resolve();
        }
      });
      req.on('end', () => fin(true));
      req.on('error', () => fin(false));
      req.on('close', () => fin(req.rstCode === 0 && req.readableEnded));
      req.setTimeout(TIMEOUT, () => {
        console.log(`STALL ${k} GET ${url} (${enc || 'identity'}): ${headers ? `head, ${len} bytes` : 'no head'} after ${TIMEOUT / 1000} s`);
        error(k, { code: 'ETIMEOUT' });
        req.close(http2.constants.NGHTTP2_CANCEL);
      });
    });
  }

  function h2Upload(kind, session, killed, secure) {
    return new Promise((resolve) => {
      const idiom = pick(['/up', '/up-drop', '/up-file', '/up-buffer', '/up-iter']);
      let size = rand(4) === 0 ? 1 + rand(2 * 1048576) : 1 + rand(128 * 1024);
      // HTTP/2 with a pool credits the stream window (1 MiB) only as chunks
      // are released (docs/uploads.md "HTTP/2"): a handler that buffers
      // the body whole in 'data' chunks deadlocks past the window until
      // the request times out. Known and documented; kept within it here.
      if (!secure && idiom === '/up-buffer') size = Math.min(size, 1000000);
      const off = rand(ctx.random.length - size);
      const body = ctx.random.subarray(off, off + size);
      const cancel = rand(8) === 0;
      const k = `${kind}${idiom}`;
      let req;
      try { req = session.request({ ':method': 'POST', ':path': idiom }); } catch (e) { resolve(); return; }
      const parts = [];
      let status = 0;
      let done = false;
      const fin = (e) => {
        if (done) return;
        done = true;
        if (cancel || killed()) { resolve(); return; }
        if (e) { error(k, e); resolve(); return; }
        const got = Buffer.concat(parts).toString();
        if (status !== 200 || got !== sha(body)) corrupt(k, `status ${status} size ${size}`);
        else served(k, size);
        resolve();
      };
      req.on('response', (h) => { status = Number(h[':status']); });
      req.on('data', (c) => parts.push(c));
      req.on('end', () => fin(null));
      req.on('error', (e) => fin(e));
      req.on('close', () => fin(req.rstCode ? { code: `rst ${req.rstCode}` } : null));
      req.setTimeout(TIMEOUT, () => {
        if (!cancel) { console.log(`STALL ${k} POST of ${size} bytes: no progress for ${TIMEOUT / 1000} s`); error(k, { code: 'ETIMEOUT' }); }
        req.close(http2.constants.NGHTTP2_CANCEL);
      });
      if (cancel) {
        const stop = rand(size);
        req.write(body.subarray(0, stop), () => {
          setTimeout(() => { served(`${kind}-cancel-mid-upload`); req.close(http2.constants.NGHTTP2_CANCEL); }, rand(20));
        });
        return;
      }
      let p = 0;
      const step = () => {
        while (p < size) {
          const n = Math.min(size - p, 1 + rand(128 * 1024));
          const more = req.write(body.subarray(p, p + n));
          p += n;
          if (!more) { req.once('drain', step); return; }
        }
        req.end();
      };
      step();
    });
  }

  // --- Pipelined HTTP/1.1 mixing in-JS answers and native static ones:
  // the order must hold while static lookups wait for the threadpool.
  async function pipelineStaticLoop(kind) {
    while (Date.now() < until()) {
      const sock = net.connect(port, '127.0.0.1');
      let buf = Buffer.alloc(0);
      let waiter = null;
      let closed = false;
      sock.on('data', (d) => { buf = Buffer.concat([buf, d]); if (waiter) waiter(); });
      sock.on('error', () => {});
      sock.on('close', () => { closed = true; if (waiter) waiter(); });
      const more = () => new Promise((r) => { waiter = () => { waiter = null; r(); }; });
      try {
        await new Promise((resolve, reject) => { sock.once('connect', resolve); sock.once('error', reject); });
        for (let batch = 0; batch < 10 && Date.now() < until(); batch++) {
          const urls = Array.from({ length: 1 + rand(12) }, (_, i) => (rand(2) ? `/s/${pick(names)}` : `/text?o=${i}&l=${100 + rand(5000)}&m=end`));
          const sent = now();
          sock.write(urls.map((u) => `GET ${u} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''));
          for (const url of urls) {
            let headEnd;
            while ((headEnd = buf.indexOf('\r\n\r\n')) < 0) {
              if (closed) throw Object.assign(new Error('closed mid-pipeline'), { code: 'EPIPELINECLOSED' });
              await more();
            }
            const head = buf.subarray(0, headEnd).toString('latin1');
            const m = /\r\ncontent-length: *(\d+)/i.exec(head);
            const etag = /\r\netag: *([^\r]*)/i.exec(head);
            if (!/^HTTP\/1\.1 200 /.test(head) || !m) { corrupt(kind, `bad head for ${url}: ${JSON.stringify(head.slice(0, 80))}`); throw new Error('bad'); }
            const len = Number(m[1]);
            while (buf.length < headEnd + 4 + len) {
              if (closed) {
                // A truncated file: its response ends in a closed connection.
                judge(kind, url, 200, { 'content-length': String(len) }, buf.subarray(headEnd + 4), false, sendfileRoute(false, url, sent));
                throw new Error('bad');
              }
              await more();
            }
            judge(kind, url, 200, { 'content-length': String(len), ...(etag ? { etag: etag[1] } : {}) }, buf.subarray(headEnd + 4, headEnd + 4 + len), true, sendfileRoute(false, url, sent));
            buf = buf.subarray(headEnd + 4 + len);
          }
        }
      } catch (e) {
        if (e.message !== 'bad') error(kind, e);
      }
      sock.destroy();
    }
  }

  // --- The files' mutator. Each change goes into its file's log with the
  // version of the inode it changed and the times around it (t0 before the
  // call, t1 once it returned), for the sendfile window; a rename changes
  // no served inode in place. The entry goes in before the call, with t1
  // open (Infinity) until the call returns: a truncate is three threadpool
  // steps (open, ftruncate, close) and its promise settles a loop turn
  // after the file changed, while the client loops in this process keep
  // judging bodies the change already reached. Logged only after the
  // await, those bodies looked like damage with no change in their window
  // (the "open finding" of 2026-12-05; nginx with sendfile showed the same
  // under this bookkeeping).
  async function mutatorLoop() {
    let seq = 0;
    let n = 0;
    while (Date.now() < until()) {
      await sleep(50 + rand(250));
      const f = fx.files[pick(names)];
      const op = f.truncated ? pick(['rename', 'rewrite']) : pick(['rename', 'rename', 'truncate', 'rewrite']);
      const entry = { op, n: n++, version: f.cur, t0: now(), t1: Infinity };
      f.log.push(entry);
      try {
        if (op === 'rename') {
          const v = (f.cur + 1 + rand(VERSIONS - 1)) % VERSIONS;
          entry.to = v;
          const tmp = path.join(fx.dir, 'tmp', `${f.name}.${seq++}`);
          await fs.promises.writeFile(tmp, f.versions[v]);
          await fs.promises.rename(tmp, f.path);
          f.cur = v;
          f.truncated = false;
        } else if (op === 'truncate') {
          entry.cut = f.versions[f.cur].length >> 1;
          f.truncated = true;
          await fs.promises.truncate(f.path, entry.cut);
        } else {
          const b = f.versions[f.cur];
          entry.bytes = f.truncated ? b.subarray(0, b.length >> 1) : b;
          const fh = await fs.promises.open(f.path, 'r+');
          await fh.write(entry.bytes, 0, undefined, 0);
          await fh.close();
        }
        entry.t1 = now();
        // No window is longer than a request's timeout.
        if (f.log.length > 64) f.log = f.log.filter((m) => m.t1 > now() - 2 * TIMEOUT);
        stats.mutations[op] = (stats.mutations[op] || 0) + 1;
      } catch (e) {
        entry.t1 = now();
        error('mutator', e);
      }
    }
  }

  // --- WebSockets.
  const WebSocket = require('ws');
  const wsUrl = (secure, q) => (secure ? `wss://127.0.0.1:${tlsPort}/ws?${q}` : `ws://127.0.0.1:${port}/ws?${q}`);
  const open = (ws) => new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
    ws.once('close', () => reject(Object.assign(new Error('closed before open'), { code: 'EWSCLOSED' })));
    setTimeout(() => reject(Object.assign(new Error('no open'), { code: 'ETIMEOUT' })), TIMEOUT).unref();
    ws.once('unexpected-response', (_, res) => reject(new Error(`status ${res.statusCode}`)));
  });

  async function wsEchoLoop(kind, secure) {
    while (Date.now() < until()) {
      const deflate = rand(2) === 0;
      const ws = new WebSocket(wsUrl(secure, 'role=echo'), { perMessageDeflate: deflate, ca: fx.ca });
      const k = `${kind}-echo${deflate ? '-deflate' : ''}`;
      const inbox = [];
      let wake = null;
      let closed = false;
      ws.on('message', (d, isBinary) => { inbox.push({ d, isBinary }); if (wake) wake(); });
      ws.on('close', () => { closed = true; if (wake) wake(); });
      ws.on('error', () => {});
      try {
        await open(ws);
        const vanishAt = rand(4) === 0 ? rand(20) : -1;
        for (let i = 0; i < 20 && Date.now() < until(); i++) {
          const size = rand(4) === 0 ? rand(512 * 1024) : rand(4096);
          const text = rand(2) === 0;
          const off = rand(fx.corpus.length - size);
          const msg = text ? fx.corpus.subarray(off, off + size).toString() : ctx.random.subarray(off, off + size);
          if (i === vanishAt) {
            // Vanish mid-message: the send is queued, the TCP connection cut.
            ws.send(msg);
            setImmediate(() => (rand(2) ? ws.terminate() : ws._socket && ws._socket.destroy()));
            served(`${kind}-vanish`);
            break;
          }
          ws.send(msg, { binary: !text });
          const t0 = Date.now();
          while (!inbox.length) {
            if (closed) throw Object.assign(new Error('closed'), { code: 'EWSCLOSED' });
            if (Date.now() - t0 > TIMEOUT) throw Object.assign(new Error('timeout'), { code: 'ETIMEOUT' });
            await new Promise((r) => { wake = r; setTimeout(r, 1000); });
            wake = null;
          }
          const { d, isBinary } = inbox.shift();
          const want = sha(text ? Buffer.from(msg) : msg);
          if (isBinary === text || sha(d) !== want) corrupt(k, `echo of ${size} bytes (${text ? 'text' : 'binary'}): ${d.length} bytes back, isBinary ${isBinary}`);
          else served(k, size);
        }
      } catch (e) {
        error(k, e);
      }
      if (!closed && ws.readyState === WebSocket.OPEN) ws.close();
      await new Promise((r) => { if (closed || ws.readyState === WebSocket.CLOSED) r(); else { ws.once('close', r); setTimeout(() => { ws.terminate(); r(); }, 5000).unref(); } });
    }
  }

  // A publisher and three subscribers on a topic of their own. Messages
  // carry their sequence number and the sha256 of their payload; each
  // subscriber must get every message, whole and in order, unless it
  // vanished (one in four vanishes mid-stream).
  async function wsPubSubLoop(kind, secure, id) {
    let round = 0;
    while (Date.now() < until()) {
      const topic = `t${id}-${round++}`;
      const subs = [];
      try {
        for (let i = 0; i < 3; i++) {
          const ws = new WebSocket(wsUrl(secure, `role=sub&topic=${topic}`), { ca: fx.ca });
          const s = { ws, next: 0, vanished: false, closed: false, ready: null };
          s.ready = new Promise((resolve, reject) => {
            ws.once('error', reject);
            ws.once('close', () => reject(Object.assign(new Error('closed before ok'), { code: 'EWSCLOSED' })));
            ws.once('message', (m) => (String(m) === 'ok' ? resolve() : reject(new Error(`said ${m}`))));
            setTimeout(() => reject(Object.assign(new Error('no ok'), { code: 'ETIMEOUT' })), TIMEOUT).unref();
          });
          ws.on('error', () => {});
          ws.on('close', () => { s.closed = true; });
          subs.push(s);
        }
        await Promise.all(subs.map((s) => s.ready));
        for (const s of subs) {
          s.ws.on('message', (m) => {
            const seq = m.readUInt32BE(0);
            const ok = sha(m.subarray(36)) === m.subarray(4, 36).toString('hex');
            if (!ok || seq !== s.next) corrupt(`${kind}-sub`, `message seq ${seq} (expected ${s.next}), ${m.length} bytes, digest ${ok ? 'ok' : 'wrong'}`);
            s.next = seq + 1;
            served(`${kind}-delivered`, m.length - 36);
          });
        }
        const pub = new WebSocket(wsUrl(secure, `role=pub&topic=${topic}`), { ca: fx.ca });
        pub.on('error', () => {});
        await open(pub);
        let acks = 0;
        let ackWake = null;
        pub.on('message', () => { acks++; if (ackWake) ackWake(); });
        const total = 10 + rand(40);
        const vanishAt = rand(4) === 0 ? rand(total) : -1;
        for (let seq = 0; seq < total; seq++) {
          if (seq === vanishAt) {
            const s = pick(subs);
            s.vanished = true;
            if (rand(2)) s.ws.terminate(); else s.ws._socket && s.ws._socket.destroy();
            served(`${kind}-vanish`);
          }
          const size = rand(3) === 0 ? rand(200000) : rand(2000);
          const off = rand(ctx.random.length - size);
          const payload = ctx.random.subarray(off, off + size);
          const m = Buffer.alloc(36 + size);
          m.writeUInt32BE(seq, 0);
          Buffer.from(sha(payload), 'hex').copy(m, 4);
          payload.copy(m, 36);
          pub.send(m);
          served(`${kind}-published`);
          // Up to four messages in flight.
          const t0 = Date.now();
          while (acks < seq - 3) {
            if (Date.now() - t0 > TIMEOUT) throw Object.assign(new Error('ack timeout'), { code: 'ETIMEOUT' });
            await new Promise((r) => { ackWake = r; setTimeout(r, 1000); });
          }
        }
        const t0 = Date.now();
        while (acks < total) {
          if (Date.now() - t0 > TIMEOUT) throw Object.assign(new Error('ack timeout'), { code: 'ETIMEOUT' });
          await new Promise((r) => { ackWake = r; setTimeout(r, 1000); });
        }
        // Every message is queued on every subscriber's connection once
        // the last ack came: wait for them to arrive.
        const t1 = Date.now();
        while (subs.some((s) => !s.vanished && s.next < total) && Date.now() - t1 < TIMEOUT) await sleep(50);
        for (const s of subs) {
          if (!s.vanished && s.next < total) corrupt(`${kind}-sub`, `a subscriber got ${s.next} of ${total} messages`);
        }
        pub.close();
      } catch (e) {
        error(`${kind}-pubsub`, e);
      }
      for (const s of subs) if (!s.vanished) s.ws.close();
      await sleep(100);
    }
  }

  // Each loop's promise carries a label: soak.js names the loops still
  // running when the load generator stalls.
  const labelled = (label, p) => Object.assign(p, { label });
  return [
    labelled('h1GetLoop h1-keepalive', h1GetLoop('h1-keepalive', false)),
    labelled('h1GetLoop h1-keepalive', h1GetLoop('h1-keepalive', false)),
    labelled('h1GetLoop h1-tls-keepalive', h1GetLoop('h1-tls-keepalive', true)),
    labelled('h1SlowLoop h1-slow', h1SlowLoop('h1-slow', false)),
    labelled('h1SlowLoop h1-tls-slow', h1SlowLoop('h1-tls-slow', true)),
    labelled('h1UploadLoop h1-nopool-tls', h1UploadLoop('h1-nopool-tls', true)),
    labelled('h1UploadLoop h1-pool', h1UploadLoop('h1-pool', false)),
    labelled('abortLoop h1-abort', abortLoop('h1-abort', false)),
    labelled('abortLoop h1-tls-abort', abortLoop('h1-tls-abort', true)),
    labelled('h2Loop h2c', h2Loop('h2c', false)),
    labelled('h2Loop h2c', h2Loop('h2c', false)),
    labelled('h2Loop h2tls', h2Loop('h2tls', true)),
    labelled('h2Loop h2tls', h2Loop('h2tls', true)),
    labelled('pipelineStaticLoop h1-pipeline-static', pipelineStaticLoop('h1-pipeline-static')),
    labelled('mutatorLoop', mutatorLoop()),
    labelled('wsEchoLoop ws', wsEchoLoop('ws', false)),
    labelled('wsEchoLoop ws', wsEchoLoop('ws', false)),
    labelled('wsEchoLoop wss', wsEchoLoop('wss', true)),
    labelled('wsPubSubLoop ws', wsPubSubLoop('ws', false, 0)),
    labelled('wsPubSubLoop wss', wsPubSubLoop('wss', true, 1)),
  ];
}

module.exports = { server, fixtures, loops };
