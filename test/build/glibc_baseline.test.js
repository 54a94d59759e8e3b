'use strict';

// [sluice-only] The glibc baseline of the binaries users run. The
// prebuilt binaries (prebuilds/linux-x64, prebuilds/linux-arm64) are built
// on Debian 12 (glibc 2.36, GCC 12) but must load wherever node's own
// official Linux binaries do: glibc 2.28 and GCC 8's libstdc++
// (GLIBCXX_3.4.25) — Debian 10, RHEL 8, Ubuntu 20.04. The dynamic linker
// refuses a library that imports a symbol version the system lacks, so the
// versioned imports ARE the baseline: read them (readelf -V, any ELF
// architecture) and compare. src/core/common/glibc_baseline.h holds what
// keeps them there; docs/install.md the table.

const assert = require('node:assert');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const common = require('../common');

const ROOT = path.join(__dirname, '..', '..');

// Highest allowed version per version-name prefix.
const BASELINE = { GLIBC: '2.28', GLIBCXX: '3.4.25', CXXABI: '1.3.11', GCC: '8.0.0' };
// What the addon may link: glibc, libstdc++, libgcc; never a library a
// bare machine lacks (llhttp is compiled in; nghttp2, zlib, brotli and
// OpenSSL are node's own).
const ALLOWED_NEEDED = /^(libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|libstdc\+\+\.so\.6|libgcc_s\.so\.1|ld-linux-(x86-64|aarch64)\.so\.[12])$/;

function cmpVersion(a, b) {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if ((x[i] || 0) !== (y[i] || 0)) return (x[i] || 0) - (y[i] || 0);
  }
  return 0;
}

// { needed: [lib], versions: [{ file, name }] } from readelf.
function imports(file) {
  const dyn = execFileSync('readelf', ['-d', '-W', file], { encoding: 'utf8' });
  const needed = [...dyn.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1]);
  const ver = execFileSync('readelf', ['-V', '-W', file], { encoding: 'utf8' });
  const versions = [];
  let lib = null;
  let inNeeds = false;
  for (const line of ver.split('\n')) {
    if (/^Version needs section/.test(line)) { inNeeds = true; continue; }
    if (/^Version (definition|symbols) section/.test(line)) { inNeeds = false; continue; }
    if (!inNeeds) continue;
    const f = /File: (\S+)/.exec(line);
    if (f) { lib = f[1]; continue; }
    const n = /Name: (\S+)/.exec(line);
    if (n) versions.push({ file: lib, name: n[1] });
  }
  return { needed, versions };
}

// The imports above the baseline, as "libc.so.6: GLIBC_2.34" strings.
function aboveBaseline(file) {
  const { versions } = imports(file);
  const bad = [];
  for (const { file: lib, name } of versions) {
    const m = /^([A-Z]+)_([0-9.]+)$/.exec(name);
    if (!m || !(m[1] in BASELINE)) continue;
    if (cmpVersion(m[2], BASELINE[m[1]]) > 0) bad.push(`${lib}: ${name}`);
  }
  return bad;
}

function binaries() {
  const list = [];
  // The ASan build (SLUICE_ADDON) links the sanitizer runtimes and is never
  // shipped: only the normal build and the prebuilds are checked.
  const local = path.join(ROOT, 'build', 'Release', 'sluice.node');
  if (fs.existsSync(local)) list.push(local);
  const pre = path.join(ROOT, 'prebuilds');
  for (const dir of fs.existsSync(pre) ? fs.readdirSync(pre) : []) {
    for (const f of fs.readdirSync(path.join(pre, dir))) {
      if (f.endsWith('.node')) list.push(path.join(pre, dir, f));
    }
  }
  return list;
}

function hasReadelf() {
  try { execFileSync('readelf', ['--version'], { stdio: 'ignore' }); return true; } catch { return false; }
}

(common.isSluice ? describe : describe.skip)('build: glibc baseline of the addon [sluice-only]', function () {
  this.timeout(60000);

  before(function () {
    // binutils comes with the compiler the build needs; without it this
    // file cannot check anything and must say so rather than pass.
    assert.ok(hasReadelf(), 'readelf (binutils) is needed to check the addon\'s imports');
    assert.ok(binaries().length > 0, 'no addon to check: run npm run build (or npm run prebuild)');
  });

  it(`imports no glibc symbol newer than ${BASELINE.GLIBC}, no libstdc++ newer than GLIBCXX_${BASELINE.GLIBCXX}`, function () {
    for (const file of binaries()) {
      assert.deepStrictEqual(aboveBaseline(file), [], `${path.relative(ROOT, file)} needs a newer glibc/libstdc++ than the baseline`);
    }
  });

  it('links only glibc, libstdc++ and libgcc (nothing a bare machine lacks)', function () {
    for (const file of binaries()) {
      const { needed } = imports(file);
      assert.ok(needed.includes('libc.so.6'), `${file}: ${needed}`);
      assert.deepStrictEqual(needed.filter((n) => !ALLOWED_NEEDED.test(n)), [], path.relative(ROOT, file));
    }
  });

  it('the prebuilt binaries are for the arch their folder names', function () {
    const pre = path.join(ROOT, 'prebuilds');
    const machine = { x64: 62, arm64: 183 }; // ELF e_machine: EM_X86_64, EM_AARCH64
    for (const file of binaries().filter((f) => f.startsWith(pre + path.sep))) {
      const arch = path.basename(path.dirname(file)).split('-')[1];
      const head = fs.readFileSync(file).subarray(0, 20);
      assert.strictEqual(head.readUInt16LE(18), machine[arch], file);
    }
    if (!fs.existsSync(pre)) this.skip(); // no prebuilds here (npm run prebuild makes them)
  });

  it('the check itself catches a newer import (a library calling glibc 2.36\'s arc4random)', function () {
    // The test must be able to fail: build a one-function library that
    // imports arc4random@GLIBC_2.36 and check the checker flags it.
    const glibc = process.report.getReport().header.glibcVersionRuntime;
    if (!glibc || cmpVersion(glibc, '2.36') < 0) this.skip();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-glibc-'));
    try {
      fs.writeFileSync(path.join(dir, 'r.c'), '#include <stdlib.h>\nunsigned r(void) { return arc4random(); }\n');
      try {
        execFileSync('cc', ['-shared', '-fPIC', '-o', path.join(dir, 'r.so'), path.join(dir, 'r.c')], { stdio: 'ignore' });
      } catch {
        this.skip(); // no C compiler
      }
      assert.deepStrictEqual(aboveBaseline(path.join(dir, 'r.so')), ['libc.so.6: GLIBC_2.36']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

module.exports = { imports, aboveBaseline, BASELINE };
