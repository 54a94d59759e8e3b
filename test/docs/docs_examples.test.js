'use strict';

// Every ```js block of README.md and docs/*.md runs, as a reader would
// run it, and a client checks what the text around it says happens.
//
// The blanks a reader fills are filled here, in the open:
//   - ports 8080, 8443, 3000 and 443 become one free port of this machine;
//   - '/srv/...' becomes a temporary folder with srv/www/index.html,
//     srv/private/secret.txt and srv/big.iso; key.pem and cert.pem (a
//     development certificate) are in the block's working folder;
//   - names a fragment uses without defining them get a stand-in (BLANKS
//     below: `sluice`, `app`, `handler`, `server`, `key`, `cert`...), only
//     when the block does not define the name itself.
// `require('sluice')` loads this checkout (a node_modules/sluice link);
// other packages come from the repository's node_modules.
//
// A block with several files names each with a line `// name.js`; the
// first file is the one run. A marker comment on the line before the fence
// says what to check (checks separated by ';'):
//
//   <!-- docs-test: GET /ready 200 ; POST / 200 "ok" -->
//   <!-- docs-test: https ; GET / 200 "hello over" -->   (TLS client)
//   <!-- docs-test: WS /ws -->                 (a WebSocket opens there)
//   <!-- docs-test: encoding br ; GET / 200 -->  (asks for br, expects it, decodes)
//   <!-- docs-test: needs http3 ; ... -->      (skipped where Node has no HTTP/3)
//   <!-- docs-test: runs -->                   (no server: runs 1 s, no error)
//   <!-- docs-test: skip <why> -->             (not run; the list is printed)
//
// Without a marker: a block that calls listen() must listen and answer
// GET / with a status below 500; any other block must run for a second
// without an error.

const fs = require('fs');
const os = require('os');
const net = require('net');
const path = require('path');
const http = require('http');
const https = require('https');
const zlib = require('zlib');
const { spawn } = require('child_process');
const common = require('../common');
const { testCert } = require('../websocket/conformance/servers');
const { assert } = common;

const ROOT = common.ROOT;
const DOCS = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort()
  .map((f) => `docs/${f}`)];

// Stand-ins for the names fragments leave to the reader.
const BLANKS = {
  sluice: "require('sluice')",
  app: "(req, res) => { res.setHeader('content-type', 'text/plain'); res.end('app\\n'); }",
  handler: "(req, res) => { req.resume(); req.on('end', () => res.end('ok')); }",
  consume: '() => {}',
  data: "{ hello: 'world', list: Array.from({ length: 1000 }, (_, i) => i) }",
  key: "require('fs').readFileSync('key.pem')",
  cert: "require('fs').readFileSync('cert.pem')",
  server: "require('sluice').createServer((req, res) => res.end('hi\\n'))",
  wss: "new (require('sluice').WebSocketServer)({ noServer: true })",
  express: "require('express')",
  morgan: "require('morgan')",
  requireLogin: '(req, res, next) => next()',
};

function extractBlocks(file) {
  const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== '```js') continue;
    let j = i + 1;
    while (j < lines.length && lines[j].trim() !== '```') j++;
    let k = i - 1;
    while (k >= 0 && lines[k].trim() === '') k--;
    const m = k >= 0 ? /^<!--\s*docs-test:\s*(.*?)\s*-->$/.exec(lines[k].trim()) : null;
    blocks.push({ file, line: i + 1, code: lines.slice(i + 1, j).join('\n'), marker: m ? m[1] : null });
    i = j;
  }
  return blocks;
}

// The marker as { skip, needs, https, runs, checks: [{ method, path, status, text } | { ws }] }.
function parseMarker(marker, code) {
  const out = { skip: null, needs: null, https: false, encoding: null, runs: false, checks: [] };
  if (marker === null) {
    if (/\.listen\(/.test(code)) out.checks.push({ method: 'GET', path: '/', maxStatus: 499 });
    else out.runs = true;
    return out;
  }
  for (const part of marker.split(';').map((s) => s.trim()).filter(Boolean)) {
    let m;
    if ((m = /^skip\s+(.+)$/.exec(part))) out.skip = m[1];
    else if ((m = /^needs\s+(\w+)$/.exec(part))) out.needs = m[1];
    else if (part === 'https') out.https = true;
    else if ((m = /^encoding\s+(br|gzip)$/.exec(part))) out.encoding = m[1];
    else if (part === 'runs') out.runs = true;
    else if ((m = /^WS\s+(\S+)$/.exec(part))) out.checks.push({ ws: m[1] });
    else if ((m = /^([A-Z]+)\s+(\S+)\s+(\d{3})(?:\s+"(.*)")?$/.exec(part))) {
      out.checks.push({ method: m[1], path: m[2], status: Number(m[3]), text: m[4] });
    } else {
      throw new Error(`unreadable docs-test marker part: ${part}`);
    }
  }
  return out;
}

// Splits a block into files at lines `// name.js` (the first file may have
// no such line: it is main.js).
function splitFiles(code) {
  const files = [];
  let cur = { name: 'main.js', lines: [] };
  for (const line of code.split('\n')) {
    const m = /^\/\/ ([\w.-]+\.c?js)$/.exec(line.trim());
    if (m) {
      if (cur.lines.some((l) => l.trim() !== '')) files.push(cur);
      cur = { name: m[1], lines: [] };
    } else {
      cur.lines.push(line);
    }
  }
  files.push(cur);
  return files.map((f) => ({ name: f.name, code: f.lines.join('\n') }));
}

function declares(code, name) {
  return new RegExp(`\\b(?:const|let|var|function|class)\\s+${name}\\b|\\{[^}]*\\b${name}\\b[^}]*\\}\\s*=`).test(code);
}

// The block's code with the blanks filled.
function fill(code, port, dir) {
  let out = code.replace(/\b(8080|8443|3000|443)\b/g, String(port)).replace(/(['"])\/srv\//g, `$1${dir}/srv/`);
  const prelude = [];
  for (const [name, value] of Object.entries(BLANKS)) {
    if (new RegExp(`\\b${name}\\b`).test(out) && !declares(out, name)) prelude.push(`const ${name} = ${value};`);
  }
  if (prelude.length) out = `${prelude.join('\n')}\n${out}`;
  return out;
}

let workDir;
let tlsPair;

function makeWorkDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-docs-'));
  fs.mkdirSync(path.join(dir, 'node_modules'));
  fs.symlinkSync(ROOT, path.join(dir, 'node_modules', 'sluice'));
  fs.mkdirSync(path.join(dir, 'srv', 'www'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'srv', 'private'));
  fs.writeFileSync(path.join(dir, 'srv', 'www', 'index.html'), '<!doctype html><p>www index</p>\n');
  fs.writeFileSync(path.join(dir, 'srv', 'private', 'secret.txt'), 'private\n');
  fs.writeFileSync(path.join(dir, 'srv', 'big.iso'), Buffer.alloc(256 * 1024, 7));
  const { key, cert } = testCert();
  fs.writeFileSync(path.join(dir, 'key.pem'), key);
  fs.writeFileSync(path.join(dir, 'cert.pem'), cert);
  tlsPair = { ca: cert };
  return dir;
}

function canConnect(port) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.on('connect', () => { s.destroy(); resolve(true); });
    s.on('error', () => resolve(false));
  });
}

function request(port, tls, check, encoding) {
  return new Promise((resolve, reject) => {
    const mod = tls ? https : http;
    const body = check.method === 'POST' ? Buffer.alloc(100000, 'x') : null;
    const req = mod.request({ host: '127.0.0.1', port, method: check.method, path: check.path,
      servername: 'localhost', ...(tls ? tlsPair : {}), agent: false,
      headers: { ...(body ? { 'content-length': body.length } : {}),
        ...(encoding ? { 'accept-encoding': encoding } : {}) } }, (res) => {
      const chunks = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () => {
        let raw = Buffer.concat(chunks);
        const coding = res.headers['content-encoding'];
        if (encoding && coding !== encoding) {
          reject(new Error(`${check.method} ${check.path}: content-encoding ${coding}, expected ${encoding}`));
          return;
        }
        if (coding === 'br') raw = zlib.brotliDecompressSync(raw);
        else if (coding === 'gzip') raw = zlib.gunzipSync(raw);
        resolve({ status: res.statusCode, body: raw.toString() });
      });
    });
    req.setTimeout(5000, () => req.destroy(new Error(`${check.method} ${check.path}: no answer in 5 s`)));
    req.on('error', reject);
    req.end(body);
  });
}

function wsOpens(port, urlPath) {
  const WebSocket = require('ws');
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${urlPath}`);
    const t = setTimeout(() => { ws.terminate(); reject(new Error(`WS ${urlPath}: not open in 5 s`)); }, 5000);
    ws.on('open', () => { clearTimeout(t); ws.close(); resolve(); });
    ws.on('error', (e) => { clearTimeout(t); reject(e); });
  });
}

// Runs one block; resolves once its checks passed, rejects with the
// block's stderr on failure. The child (and its workers: own process group)
// is killed at the end.
async function runBlock(block, spec) {
  const port = await common.freePort();
  const dir = fs.mkdtempSync(path.join(workDir, 'block-'));
  for (const f of ['key.pem', 'cert.pem']) fs.copyFileSync(path.join(workDir, f), path.join(dir, f));
  // The files go to a folder of their own, run from its parent (where
  // key.pem is), as `node app/main.js`: a path the example resolves from
  // the current folder instead of its own is caught.
  const files = splitFiles(block.code);
  fs.mkdirSync(path.join(dir, 'app'));
  for (const f of files) fs.writeFileSync(path.join(dir, 'app', f.name), fill(f.code, port, workDir));
  const child = spawn(process.execPath, [path.join('app', files[0].name)], {
    cwd: dir,
    detached: true,
    env: common.nodeChildEnv({ NODE_PATH: path.join(ROOT, 'node_modules') }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  child.stdout.resume();
  let exited = null;
  const exitP = new Promise((r) => child.on('exit', (code, signal) => { exited = { code, signal }; r(); }));
  const fail = (msg) => new Error(`${block.file}:${block.line}: ${msg}\n--- code run ---\n${
    fill(files[0].code, port, workDir)}\n--- stderr ---\n${stderr}`);
  try {
    if (spec.runs && !spec.checks.length) {
      await Promise.race([exitP, common.sleep(1000)]);
      if (exited && exited.code !== 0) throw fail(`exited with ${exited.code}`);
      if (stderr.trim()) throw fail('wrote to stderr');
      return;
    }
    const until = Date.now() + 8000;
    while (!(await canConnect(port))) {
      if (exited) throw fail(`exited (${exited.code}) without listening`);
      if (Date.now() > until) throw fail('did not listen within 8 s');
      await common.sleep(50);
    }
    for (const c of spec.checks) {
      if (c.ws) {
        await wsOpens(port, c.ws);
        continue;
      }
      let r;
      try {
        r = await request(port, spec.https, c, spec.encoding);
      } catch (e) {
        throw fail(e.message);
      }
      if (c.maxStatus !== undefined ? r.status > c.maxStatus : r.status !== c.status) {
        throw fail(`${c.method} ${c.path}: status ${r.status}, expected ${c.maxStatus ? `< ${c.maxStatus + 1}` : c.status}`);
      }
      if (c.text !== undefined && !r.body.includes(c.text)) {
        throw fail(`${c.method} ${c.path}: body ${JSON.stringify(r.body.slice(0, 200))} lacks "${c.text}"`);
      }
    }
  } finally {
    if (!exited) {
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
      await exitP;
    }
  }
}

const blocks = DOCS.flatMap(extractBlocks);

describe('docs: every ```js example runs (README.md, docs/*.md)', function () {
  this.timeout(20000);
  before(() => { workDir = makeWorkDir(); });
  after(() => { if (workDir) fs.rmSync(workDir, { recursive: true, force: true }); });

  it('finds the examples, and skips only those its markers name', () => {
    assert.ok(blocks.length >= 15, `only ${blocks.length} blocks found`);
    const skipped = blocks.filter((b) => parseMarker(b.marker, b.code).skip);
    // The skip list, kept short on purpose: each names why.
    assert.ok(skipped.length <= 3, `skipped: ${skipped.map((b) => `${b.file}:${b.line}`).join(', ')}`);
  });

  for (const block of blocks) {
    const spec = parseMarker(block.marker, block.code);
    const title = `${block.file}:${block.line}${block.marker ? ` (${block.marker})` : ''}`;
    if (spec.skip) {
      it.skip(`${title}`);
      continue;
    }
    const run = common.isNode ? it.skip : it;
    run(title, async function () {
      if (spec.needs === 'http3' && !require('../..').features.http3) this.skip();
      await runBlock(block, spec);
    });
  }
});

module.exports = { extractBlocks, parseMarker, fill };
