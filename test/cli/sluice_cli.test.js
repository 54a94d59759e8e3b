'use strict';

// `npx sluice [dir]` (lib/cli/sluice.js, docs/cli.md): the package's bin
// started as a child process on a temporary folder and checked with curl
// (HTTP/1.1, h2c, HTTPS + HTTP/2), h2load and chromium. sluice-only (the
// bin is sluice's); each child is killed in afterEach.

const fs = require('fs');
const os = require('os');
const path = require('path');
const zlib = require('zlib');
const { spawn, execFile } = require('child_process');
const common = require('../common');
const { assert } = common;

const BIN = path.join(common.ROOT, 'lib', 'cli', 'sluice.js');
const BIG = Buffer.from('sluice static text. '.repeat(5000));

function makeSite() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-cli-'));
  fs.writeFileSync(path.join(dir, 'index.html'),
    '<!doctype html><title>site</title><script src="/app.js"></script><p>index</p>');
  fs.writeFileSync(path.join(dir, 'app.js'),
    "window.loaded = fetch('/data.txt').then((r) => r.text());\n");
  fs.writeFileSync(path.join(dir, 'data.txt'), 'some data\n');
  fs.writeFileSync(path.join(dir, 'big.txt'), BIG);
  fs.writeFileSync(path.join(dir, 'pre.css'), 'body { color: red }\n');
  fs.writeFileSync(path.join(dir, 'pre.css.br'), zlib.brotliCompressSync('body { color: red }\n'));
  fs.writeFileSync(path.join(dir, '.env'), 'SECRET=1\n');
  fs.mkdirSync(path.join(dir, 'docs'));
  fs.writeFileSync(path.join(dir, 'docs', 'a.txt'), 'a\n');
  fs.symlinkSync('/etc/hostname', path.join(dir, 'outside'));
  return dir;
}

// Starts the bin; resolves { child, port, banner, out } once it listens.
function start(args, { env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: common.nodeChildEnv({ PORT: '', ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const state = { child, banner: '', out: '' };
    started.push(child);
    child.stdout.on('data', (d) => { state.out += d; });
    child.stderr.on('data', (d) => {
      state.banner += d;
      const m = /:\/\/localhost:(\d+)/.exec(state.banner);
      if (m && state.port === undefined) {
        state.port = Number(m[1]);
        resolve(state);
      }
    });
    child.on('exit', (code) => reject(new Error(`sluice exited (${code}) before listening: ${state.banner}`)));
  });
}

// Runs the bin to its exit: { code, stdout, stderr }.
function runToExit(args, env = {}) {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: common.nodeChildEnv(env), timeout: 10000 },
      (err, stdout, stderr) => resolve({ code: err ? err.code : 0, stdout, stderr }));
  });
}

const started = [];
let site;

function head(text) {
  const [status, ...lines] = text.split('\r\n\r\n')[0].split('\r\n');
  const h = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    h[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
  }
  return { status: Number(status.split(' ')[1]), h };
}

async function get(port, urlPath, extra = []) {
  const r = await common.curl(['-i', ...extra, `http://127.0.0.1:${port}${urlPath}`]);
  const text = r.stdout.toString('latin1');
  return { ...head(text), body: r.stdout.subarray(r.stdout.indexOf('\r\n\r\n') + 4) };
}

(common.isNode ? describe.skip : describe)('npx sluice: the static file server bin', function () {
  this.timeout(30000);
  before(() => { site = makeSite(); });
  after(() => fs.rmSync(site, { recursive: true, force: true }));
  afterEach(async () => {
    for (const c of started.splice(0)) {
      if (c.exitCode === null && c.signalCode === null) {
        c.kill('SIGKILL');
        await new Promise((r) => c.once('exit', r));
      }
    }
  });

  it('serves files with validators, ranges, 304, compression and precompressed siblings', async () => {
    const { port, banner } = await start([site, '-p', '0']);
    assert.match(banner, /HTTP\/1\.1, HTTP\/2 \(h2c\)/);
    const a = await get(port, '/data.txt');
    assert.strictEqual(a.status, 200);
    assert.strictEqual(a.body.toString(), 'some data\n');
    assert.ok(a.h.etag, 'ETag');
    assert.ok(a.h['last-modified'], 'Last-Modified');
    assert.strictEqual(a.h['cache-control'], 'public, max-age=0');
    assert.strictEqual((await get(port, '/data.txt', ['-H', `if-none-match: ${a.h.etag}`])).status, 304);
    const r = await get(port, '/big.txt', ['-r', '10-19']);
    assert.strictEqual(r.status, 206);
    assert.strictEqual(r.body.toString(), BIG.subarray(10, 20).toString());
    const gz = await get(port, '/big.txt', ['-H', 'accept-encoding: gzip']);
    assert.strictEqual(gz.h['content-encoding'], 'gzip');
    assert.ok(zlib.gunzipSync(gz.body).equals(BIG));
    const br = await get(port, '/pre.css', ['-H', 'accept-encoding: br']);
    assert.strictEqual(br.h['content-encoding'], 'br');
    assert.strictEqual(zlib.brotliDecompressSync(br.body).toString(), 'body { color: red }\n');
    assert.strictEqual((await get(port, '/')).body.toString().includes('<p>index</p>'), true);
  });

  it('refuses what is outside the folder, hides dotfiles, lists only when asked', async () => {
    const { port } = await start([site, '-p', '0']);
    assert.strictEqual((await get(port, '/outside')).status, 403);
    assert.strictEqual((await get(port, '/%2e%2e/%2e%2e/etc/passwd')).status, 403);
    assert.strictEqual((await get(port, '/.env')).status, 404);
    assert.strictEqual((await get(port, '/nothing')).status, 404);
    const d = await get(port, '/docs');
    assert.strictEqual(d.status, 301);
    assert.strictEqual(d.h.location, '/docs/');
    assert.strictEqual((await get(port, '/docs/')).status, 404);
    assert.strictEqual((await get(port, '/data.txt', ['-X', 'POST'])).status, 405);

    const listed = await start([site, '-p', '0', '--list']);
    const l = await get(listed.port, '/docs/');
    assert.strictEqual(l.status, 200);
    assert.match(l.body.toString(), /<a href="a\.txt">a\.txt<\/a>/);
    assert.doesNotMatch((await get(listed.port, '/docs/')).body.toString(), /\.env/);
  });

  it('--single, --cors and --log (the middleware path) keep the same refusals', async () => {
    const s = await start([site, '-p', '0', '--single', '--cors', '--log']);
    const spa = await get(s.port, '/some/client/route');
    assert.strictEqual(spa.status, 200);
    assert.match(spa.body.toString(), /<p>index<\/p>/);
    const f = await get(s.port, '/data.txt', ['-H', 'origin: http://example.test']);
    assert.strictEqual(f.h['access-control-allow-origin'], '*');
    assert.strictEqual(f.body.toString(), 'some data\n');
    const pre = await get(s.port, '/data.txt', ['-X', 'OPTIONS', '-H', 'access-control-request-method: GET']);
    assert.strictEqual(pre.status, 204);
    assert.strictEqual((await get(s.port, '/outside')).status, 403);
    assert.strictEqual((await get(s.port, '/%2e%2e/etc/passwd')).status, 403);
    await common.sleep(50);
    const lines = s.out.trim().split('\n');
    assert.strictEqual(lines.length, 5, s.out);
    assert.match(lines[0], /HTTP\/1\.1 GET \/some\/client\/route 200 /);
    assert.match(lines[4], /GET \/%2e%2e\/etc\/passwd 403 /);
  });

  it('answers h2c (curl prior knowledge, h2load) and HTTPS + HTTP/2 with a development certificate', async function () {
    const { port } = await start([site, '-p', '0']);
    const h2 = await common.curl(['--http2-prior-knowledge', '-o', '/dev/null', '-w', '%{http_version} %{http_code}',
      `http://127.0.0.1:${port}/data.txt`]);
    assert.strictEqual(h2.stdout.toString(), '2 200');
    const load = await new Promise((resolve) => execFile('h2load', ['-n', '400', '-c', '4', '-m', '8',
      `http://127.0.0.1:${port}/big.txt`], { timeout: 20000 }, (err, stdout) => resolve({ err, stdout })));
    if (load.err && load.err.code === 'ENOENT') this.skip();
    assert.match(load.stdout, /400 succeeded, 0 failed/);
    assert.match(load.stdout, /status codes: 400 2xx/);

    const tls = await start([site, '-p', '0', '--tls']);
    assert.match(tls.banner, /https:\/\/localhost:\d+/);
    assert.match(tls.banner, /development certificate/);
    const r = await common.curl(['-k', '-o', '-', '-w', '\n%{http_version}', `https://localhost:${tls.port}/data.txt`]);
    assert.strictEqual(r.stdout.toString(), 'some data\n\n2');
  });

  it('with --tls, HTTP/3 where the Node has it: Alt-Svc, and gtlsclient gets a file over QUIC', async function () {
    const { h3, haveClient, gtls } = require('../http3/h3common');
    if (!h3 || !haveClient) this.skip();
    const s = await start([site, '-p', '0', '--tls', '--log']);
    assert.match(s.banner, /HTTP\/3 \(UDP\)/);
    const r = await common.curl(['-k', '-D', '-', '-o', '/dev/null', `https://localhost:${s.port}/data.txt`]);
    assert.match(r.stdout.toString(), new RegExp(`alt-svc: h3=":${s.port}"`, 'i'));
    const got = await gtls(s.port, ['/data.txt']);
    const res = got.responses.get('/data.txt');
    assert.ok(res, got.log.slice(-2000));
    assert.strictEqual(res.status, 200);
    assert.strictEqual(res.body.toString(), 'some data\n');
    await common.sleep(50);
    assert.match(s.out, /HTTP\/3\.0 GET \/data\.txt 200 /);
  });

  it('serves a page chromium loads, on http:// and https:// (HTTP/2)', async function () {
    const why = common.chromiumMissing();
    if (why) this.skip();
    const plain = await start([site, '-p', '0']);
    const tls = await start([site, '-p', '0', '--tls']);
    const browser = await common.launchChromium(['--ignore-certificate-errors']);
    try {
      for (const [url, proto] of [[`http://127.0.0.1:${plain.port}/`, 'http/1.1'],
        [`https://localhost:${tls.port}/`, 'h2']]) {
        const page = await browser.newPage();
        await page.goto(url);
        const out = await page.evaluate(async () => ({
          data: await window.loaded,
          proto: performance.getEntriesByType('navigation')[0].nextHopProtocol,
        }));
        assert.deepStrictEqual(out, { data: 'some data\n', proto });
        await page.close();
      }
    } finally {
      await browser.closeAndClean();
    }
  });

  it('exits with a clear message on a busy port, a missing folder, a bad option', async () => {
    const s = await start([site, '-p', '0']);
    const busy = await runToExit([site, '-p', String(s.port)]);
    assert.strictEqual(busy.code, 1);
    assert.match(busy.stderr, new RegExp(`port ${s.port} is already in use`));
    const missing = await runToExit([path.join(site, 'no-such-dir')]);
    assert.strictEqual(missing.code, 2);
    assert.match(missing.stderr, /cannot serve .*no-such-dir: no such folder/);
    const file = await runToExit([path.join(site, 'data.txt')]);
    assert.match(file.stderr, /not a folder/);
    const bad = await runToExit(['--frobnicate']);
    assert.strictEqual(bad.code, 2);
    assert.match(bad.stderr, /unknown option --frobnicate/);
    const help = await runToExit(['--help']);
    assert.strictEqual(help.code, 0);
    assert.match(help.stdout, /Usage: sluice \[options\] \[dir\]/);
  });

  it('takes PORT from the environment when no --port is given', async () => {
    const busy = await start([site, '-p', '0']);
    const r = await runToExit([site], { PORT: String(busy.port) });
    assert.match(r.stderr, new RegExp(`port ${busy.port} is already in use`));
  });
});
