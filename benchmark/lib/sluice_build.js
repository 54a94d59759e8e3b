'use strict';
// The sluice build the benchmark servers load: where it is, a snapshot of
// it for the run, which commit it is, and whether it loads at all.

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const REPO = path.resolve(__dirname, '..', '..');

// Where sluice is loaded from: $SLUICE_MODULE (another checkout, or the
// snapshot below), else this repository. Read at call time: the runner may
// point it at a snapshot after start-up, and the servers inherit it.
function sluicePath() {
  return path.resolve(process.env.SLUICE_MODULE || REPO);
}

// Copy the package as it is now (package.json, lib/, the built addon) to a
// temporary directory and point SLUICE_MODULE at it, so that a rebuild of
// the working tree during a long run cannot break or mix the servers.
// Returns { dir, addon } or throws; the copy is removed when the runner exits.
function snapshotSluice() {
  const src = REPO;
  const addon = process.env.SLUICE_ADDON || path.join(src, 'build', 'Release', 'sluice.node');
  if (!fs.existsSync(addon)) throw new Error(`no built addon at ${addon}`);
  const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'sluice-bench-'));
  process.on('exit', () => { try { fs.rmSync(dir, { recursive: true, force: true }); } catch {} });
  fs.copyFileSync(path.join(src, 'package.json'), path.join(dir, 'package.json'));
  fs.cpSync(path.join(src, 'lib'), path.join(dir, 'lib'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'build', 'Release'), { recursive: true });
  fs.copyFileSync(addon, path.join(dir, 'build', 'Release', 'sluice.node'));
  // lib/common/binding.js loads ../build/Release/sluice.node unless SLUICE_ADDON
  // names another file: then that file was copied, and the copy is used.
  if (process.env.SLUICE_ADDON) process.env.SLUICE_ADDON = path.join(dir, 'build', 'Release', 'sluice.node');
  process.env.SLUICE_MODULE = dir;
  sluiceLoadError = undefined;
  return { dir, addon, mtime: fs.statSync(addon).mtime };
}

function gitDescribe() {
  try {
    const head = execFileSync('git', ['-C', REPO, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['-C', REPO, 'status', '--porcelain', '--', 'lib', 'src', 'binding.gyp'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return dirty ? `${head} + uncommitted changes in lib/ or src/` : head;
  } catch {
    return 'unknown';
  }
}

// Does `require('/work/main')` load? Checked in a child so a crashing addon
// cannot take the runner down. Returns null when it loads, else the error.
let sluiceLoadError;
function sluiceLoadProblem({ fresh = false } = {}) {
  if (fresh) sluiceLoadError = undefined;
  if (sluiceLoadError === undefined) {
    try {
      execFileSync(process.execPath, ['-e', `
        const s = require(${JSON.stringify(sluicePath())});
        for (const f of ['createServer', 'createBufferPool', 'releaseBuffer'])
          if (typeof s[f] !== 'function') throw new Error('sluice.' + f + ' is not a function');
      `], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 20000, encoding: 'utf8' });
      sluiceLoadError = null;
    } catch (err) {
      const text = String(err.stderr || err.message || err);
      const lines = text.split('\n');
      const line = lines.find((l) => /^\s*\w*Error\b/.test(l)) || lines.find((l) => /error/i.test(l));
      sluiceLoadError = (line || lines[0] || 'unknown error').trim();
    }
  }
  return sluiceLoadError;
}

module.exports = { REPO, sluicePath, snapshotSluice, gitDescribe, sluiceLoadProblem };
