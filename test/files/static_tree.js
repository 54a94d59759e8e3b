'use strict';

// The file tree and request tables shared by the serveStatic tests
// (serve_static.test.js: the native mount; serve_static_middleware.test.js:
// the middleware), each compared with what serve-static answers.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const common = require('../common');

const SECRET = 'TOP-SECRET-OUTSIDE-ROOT\n';
const BODY_1000 = Buffer.alloc(1000, 0);
for (let i = 0; i < BODY_1000.length; i++) BODY_1000[i] = 97 + (i % 26);

// tmp/secret.txt outside, tmp/root inside with files, dotfiles, an index,
// and symbolic links in and out of the root.
function makeTree() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-static-'));
  const root = path.join(tmp, 'root');
  fs.mkdirSync(path.join(root, 'sub'), { recursive: true });
  fs.mkdirSync(path.join(root, 'dir'));
  fs.mkdirSync(path.join(root, 'noindex'));
  fs.mkdirSync(path.join(tmp, 'outdir'));
  fs.writeFileSync(path.join(tmp, 'secret.txt'), SECRET);
  fs.writeFileSync(path.join(tmp, 'outdir', 'secret.txt'), SECRET);
  fs.writeFileSync(path.join(root, 'a.txt'), 'hello\n');
  fs.writeFileSync(path.join(root, 'k.txt'), BODY_1000);
  fs.writeFileSync(path.join(root, 'sub', 'b.txt'), 'bee\n');
  fs.writeFileSync(path.join(root, 'dir', 'index.html'), '<h1>index</h1>\n');
  fs.writeFileSync(path.join(root, '.env'), 'DOTFILE\n');
  fs.writeFileSync(path.join(root, 'page.html'), '<p>page</p>\n');
  fs.writeFileSync(path.join(root, 'style.css'), 'p{}\n');
  fs.writeFileSync(path.join(root, 'app.js'), 'x=1\n');
  fs.writeFileSync(path.join(root, 'data.json'), '{}\n');
  fs.writeFileSync(path.join(root, 'pic.svg'), '<svg/>\n');
  fs.writeFileSync(path.join(root, 'blob.unknownext'), 'blob\n');
  fs.writeFileSync(path.join(root, 'noext'), 'noext\n');
  fs.symlinkSync('../secret.txt', path.join(root, 'escape'));
  fs.symlinkSync(path.join(tmp, 'secret.txt'), path.join(root, 'escape-abs'));
  fs.symlinkSync('../outdir', path.join(root, 'escdir'));
  fs.symlinkSync('a.txt', path.join(root, 'inlink'));
  fs.symlinkSync('../../root/sub/b.txt', path.join(root, 'sub', 'updown'));  // out and back in
  fs.symlinkSync('../sub/b.txt', path.join(root, 'dir', 'across'));  // within the root
  return { tmp, root };
}

// One raw request (bytes exactly as given) on a fresh connection.
// (An interim 100 Continue is skipped: the final response is returned.)
async function raw(port, target, headers = {}, method = 'GET') {
  let head = `${method} ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n`;
  for (const k of Object.keys(headers)) head += `${k}: ${headers[k]}\r\n`;
  const c = await common.rawUntilClose(port, Buffer.from(head + '\r\n', 'latin1'));
  const all = common.parseAll(c.data, { methods: [method] });
  return all[all.length - 1];
}

// Targets probing traversal (encoded, double-encoded, overlong UTF-8,
// NUL, backslashes, symbolic links out of the root).
const TRAVERSAL_ROWS = [
  '/a.txt', '/sub/b.txt', '/inlink', '/sub/updown', '/dir/across', '/sub/../a.txt',
  '/../secret.txt', '/%2e%2e/secret.txt', '/%2E%2e/secret.txt', '/.%2e/secret.txt',
  '/..%2fsecret.txt', '/sub/..%2f..%2fsecret.txt', '/sub%2fb.txt',
  '/..%5csecret.txt', '/..\\secret.txt', '/sub\\..\\..\\secret.txt',
  '/%252e%252e/secret.txt', '/%252e%252e%252fsecret.txt',
  '/%c0%ae%c0%ae/secret.txt', '/%c0%af', '/%e0%80%ae%e0%80%ae/secret.txt',
  '/a.txt%00', '/a.txt%00.html', '/%00',
  '/escape', '/escape-abs', '/escdir/secret.txt',
  'http://x/../secret.txt', 'http://x/a.txt', '/sub/../../secret.txt',
  '/sub/%2e%2e/%2e%2e/secret.txt', '//../secret.txt', '/./../secret.txt',
  '/a.txt?../../secret.txt', '/%2e%2e%2f%2e%2e%2fsecret.txt',
];

// Conditional and range request headers for a file whose ETag and
// Last-Modified are `etag`, `lm`.
function conditionalRows(etag, lm) {
  const older = new Date(Date.parse(lm) - 1000).toUTCString();
  const newer = new Date(Date.parse(lm) + 86400000).toUTCString();
  return [
    {},
    { 'If-None-Match': etag },
    { 'If-None-Match': etag.slice(2) },  // the strong form of the weak tag
    { 'If-None-Match': '"mismatch"' },
    { 'If-None-Match': `"x", ${etag}` },
    { 'If-None-Match': '*' },
    { 'If-None-Match': etag, 'Cache-Control': 'no-cache' },
    { 'If-Modified-Since': lm },
    { 'If-Modified-Since': older },
    { 'If-Modified-Since': newer },
    { 'If-Modified-Since': 'not a date' },
    { 'If-None-Match': '"mismatch"', 'If-Modified-Since': newer },
    { 'If-Match': '"mismatch"' },
    { 'If-Match': etag },
    { 'If-Unmodified-Since': older },
    { Range: 'bytes=0-0' },
    { Range: 'bytes=-500' },
    { Range: 'bytes=500-' },
    { Range: 'bytes=990-5000' },
    { Range: 'bytes=1000-' },
    { Range: 'bytes=5000-6000' },
    { Range: 'bytes=-0' },
    { Range: 'bytes=0-1,5-6' },
    { Range: 'bytes=0-1,2-6' },
    { Range: 'bytes=abc' },
    { Range: 'items=0-5' },
    { Range: 'bytes=0-0', 'If-Range': etag },
    { Range: 'bytes=0-0', 'If-Range': '"stale"' },
    { Range: 'bytes=0-0', 'If-Range': lm },
    { Range: 'bytes=0-0', 'If-Range': older },
    { Range: 'bytes=5-9', 'If-None-Match': '"mismatch"' },
  ];
}

module.exports = { SECRET, BODY_1000, makeTree, raw, TRAVERSAL_ROWS, conditionalRows };
