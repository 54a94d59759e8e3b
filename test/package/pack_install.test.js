'use strict';
// The package as a user gets it: `npm pack` this repository, `npm install`
// the tarball into a fresh temporary project (which builds the addon there,
// through the package's own install script), and run a tiny app from that
// project (fixture_app.js) against real clients: an upload through a buffer
// pool with node's http client, respondWithFile over HTTP/1.1 with curl and
// node's http client, and over HTTP/2 (h2c) with node's http2 client and
// curl. Slow (the addon compiles: about a minute), so not in `npm test`:
// `npm run test:package`, run by .ci/run.

const assert = require('node:assert');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const http2 = require('node:http2');
const os = require('node:os');
const path = require('node:path');
const { execFile, spawn } = require('node:child_process');
const { promisify } = require('node:util');

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

describe('npm pack → npm install in a fresh project', function () {
  this.timeout(15 * 60 * 1000);
  let work;
  let tarball;
  let app;
  let port;
  let resolved;
  let packFiles;
  const fileBytes = crypto.randomBytes(300 * 1024 + 7);
  const filePath = () => path.join(work, 'payload.bin');

  before(async function () {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-pack-'));
    const packed = await run(NPM, ['pack', '--json', '--pack-destination', work], { cwd: ROOT, maxBuffer: 1 << 24 });
    const info = JSON.parse(packed.stdout)[0];
    tarball = path.join(work, info.filename);
    packFiles = info.files.map((f) => f.path);

    const project = path.join(work, 'app');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'sluice-pack-test', version: '1.0.0', private: true }));
    try {
      await run(NPM, ['install', '--no-audit', '--no-fund', tarball], { cwd: project, maxBuffer: 1 << 26 });
    } catch (err) {
      throw new Error(`npm install of the tarball failed:\n${String(err.stderr || '').split('\n').slice(-40).join('\n')}`);
    }
    fs.copyFileSync(path.join(__dirname, 'fixture_app.js'), path.join(project, 'app.js'));
    fs.writeFileSync(filePath(), fileBytes);

    app = spawn(process.execPath, ['app.js', filePath()], { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    app.stderr.on('data', (d) => { stderr += d; });
    [port, resolved] = await new Promise((resolve, reject) => {
      let out = '';
      app.stdout.on('data', (d) => {
        out += d;
        const m = /^PORT (\d+) (.+)\n/.exec(out);
        if (m) resolve([Number(m[1]), m[2]]);
      });
      app.on('exit', (code, sig) => reject(new Error(`app exited (${code ?? sig}): ${stderr}`)));
    });
  });

  after(async function () {
    if (app && app.exitCode === null) {
      await new Promise((resolve) => { app.once('exit', resolve); app.kill('SIGTERM'); });
    }
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('ships the runtime, the sources the install builds, the types and the license, and nothing else', function () {
    const files = packFiles;
    for (const f of ['package.json', 'README.md', 'LICENSE', 'binding.gyp', 'lib/index.js', 'lib/index.d.ts',
      'src/check_deps.js', 'src/deps/llhttp_api.c', 'src/binding/addon.cc', 'src/core/net/listener.cc']) {
      assert.ok(files.includes(f), `${f} missing from the tarball`);
    }
    const stray = files.filter((f) => /^(test|benchmark|build|docs|node_modules|\.ci)\//.test(f));
    assert.deepStrictEqual(stray, []);
  });

  it('loads sluice from the installed package, with the addon built there', function () {
    assert.ok(resolved.startsWith(path.join(work, 'app', 'node_modules', 'sluice') + path.sep), resolved);
    assert.ok(fs.existsSync(path.join(work, 'app', 'node_modules', 'sluice', 'build', 'Release', 'sluice.node')));
  });

  it('an upload through the pool (node http client, chunked and with Content-Length)', async function () {
    const body = crypto.randomBytes(1024 * 1024 + 3);
    const want = `${body.length} ${crypto.createHash('sha256').update(body).digest('hex')}`;
    for (const chunked of [false, true]) {
      const got = await new Promise((resolve, reject) => {
        const req = http.request({ port, host: '127.0.0.1', method: 'POST', path: '/upload',
          headers: chunked ? {} : { 'content-length': body.length } }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d) => { text += d; });
          res.on('end', () => resolve({ status: res.statusCode, text }));
        });
        req.on('error', reject);
        if (chunked) {
          for (let i = 0; i < body.length; i += 100000) req.write(body.subarray(i, i + 100000));
          req.end();
        } else {
          req.end(body);
        }
      });
      assert.strictEqual(got.status, 200);
      assert.strictEqual(got.text, want);
    }
    const stats = await new Promise((resolve, reject) => {
      http.get({ port, host: '127.0.0.1', path: '/pool' }, (res) => {
        let text = '';
        res.on('data', (d) => { text += d; });
        res.on('end', () => resolve(JSON.parse(text)));
      }).on('error', reject);
    });
    assert.ok(stats.allocated > 0, `the pool was never used: ${JSON.stringify(stats)}`);
    assert.strictEqual(stats.inUse, 0, `buffers not returned: ${JSON.stringify(stats)}`);
  });

  it('respondWithFile over HTTP/1.1 (curl and node http client)', async function () {
    const out = path.join(work, 'curl-h1.bin');
    const { stdout } = await run('curl', ['-sS', '--http1.1', '-o', out, '-w', '%{http_code} %{http_version} %{size_download}',
      `http://127.0.0.1:${port}/file`]);
    assert.strictEqual(stdout, `200 1.1 ${fileBytes.length}`);
    assert.ok(fs.readFileSync(out).equals(fileBytes));
    const got = await new Promise((resolve, reject) => {
      http.get({ port, host: '127.0.0.1', path: '/file' }, (res) => {
        const chunks = [];
        res.on('data', (d) => chunks.push(d));
        res.on('end', () => resolve({ res, body: Buffer.concat(chunks) }));
      }).on('error', reject);
    });
    assert.strictEqual(got.res.headers['content-length'], String(fileBytes.length));
    assert.strictEqual(got.res.headers['content-type'], 'application/octet-stream');
    assert.ok(got.body.equals(fileBytes));
  });

  it('respondWithFile over HTTP/2 (node http2 client and curl, h2c prior knowledge)', async function () {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    try {
      const got = await new Promise((resolve, reject) => {
        const req = session.request({ ':path': '/file' });
        let headers;
        const chunks = [];
        req.on('response', (h) => { headers = h; });
        req.on('data', (d) => chunks.push(d));
        req.on('end', () => resolve({ headers, body: Buffer.concat(chunks) }));
        req.on('error', reject);
        session.on('error', reject);
      });
      assert.strictEqual(got.headers[':status'], 200);
      assert.strictEqual(got.headers['content-length'], String(fileBytes.length));
      assert.ok(got.body.equals(fileBytes));
    } finally {
      session.close();
    }
    const out = path.join(work, 'curl-h2.bin');
    const { stdout } = await run('curl', ['-sS', '--http2-prior-knowledge', '-o', out, '-w', '%{http_code} %{http_version} %{size_download}',
      `http://127.0.0.1:${port}/file`]);
    assert.strictEqual(stdout, `200 2 ${fileBytes.length}`);
    assert.ok(fs.readFileSync(out).equals(fileBytes));
  });
});
