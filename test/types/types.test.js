'use strict';
// The TypeScript declarations (lib/index.d.ts) against the compiler and the
// runtime: usage.ts (every API) compiles under `strict`; every line of
// must_fail.ts marked `@ts-expect-error` is a compile error, exactly those
// lines (checked with the directives stripped); and the declared value
// exports are exactly lib/index.js's exports.

const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFile } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..', '..');
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const DTS = path.join(ROOT, 'lib', 'index.d.ts');

function tsc(args, cwd) {
  return new Promise((resolve) => {
    execFile(process.execPath, [TSC, ...args], { cwd, maxBuffer: 1 << 24 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out: stdout + stderr });
    });
  });
}

describe('TypeScript declarations (lib/index.d.ts)', function () {
  this.timeout(120000);

  it('usage.ts compiles and every @ts-expect-error in must_fail.ts is used (tsc -p test/types)', async function () {
    const r = await tsc(['-p', path.join(__dirname, 'tsconfig.json')], ROOT);
    assert.strictEqual(r.code, 0, r.out);
  });

  it('without the directives, exactly the marked lines of must_fail.ts fail to compile', async function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-types-'));
    try {
      const lines = fs.readFileSync(path.join(__dirname, 'must_fail.ts'), 'utf8').split('\n');
      const expected = [];
      const stripped = lines.map((line, i) => {
        if (!/^\s*\/\/ @ts-expect-error/.test(line)) return line;
        expected.push(i + 2); // 1-based number of the line after the directive
        return '//';
      });
      assert.ok(expected.length >= 20, `only ${expected.length} expectations`);
      fs.writeFileSync(path.join(dir, 'must_fail.ts'), stripped.join('\n'));
      fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
        compilerOptions: {
          strict: true, noEmit: true, target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext',
          types: ['node'], typeRoots: [path.join(ROOT, 'node_modules', '@types')],
          paths: { sluice: [DTS] },
        },
        files: ['must_fail.ts'],
      }));
      const r = await tsc(['-p', path.join(dir, 'tsconfig.json')], dir);
      assert.notStrictEqual(r.code, 0, 'stripped must_fail.ts compiled');
      const errorLines = new Set();
      for (const m of r.out.matchAll(/must_fail\.ts\((\d+),\d+\): error TS\d+/g)) errorLines.add(Number(m[1]));
      assert.deepStrictEqual([...errorLines].sort((a, b) => a - b), expected, r.out);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('declares exactly the values lib/index.js exports', function () {
    const text = fs.readFileSync(DTS, 'utf8');
    const declared = new Set();
    for (const m of text.matchAll(/^export declare (?:class|function|const) (\w+)/gm)) declared.add(m[1]);
    const runtime = Object.keys(require(ROOT));
    const missing = runtime.filter((k) => !declared.has(k));
    const extra = [...declared].filter((k) => !runtime.includes(k));
    assert.deepStrictEqual({ missing, extra }, { missing: [], extra: [] },
      'lib/index.js and lib/index.d.ts disagree: declare every export in lib/index.d.ts (and test/types/usage.ts)');
  });
});
