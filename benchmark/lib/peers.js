'use strict';
// The other JavaScript runtimes' servers as benchmark rows: Bun.serve and
// Deno.serve. Neither is a dependency of sluice: each comes from its npm
// binary package, installed on first use into benchmark/.cache/peers/
// (git-ignored) with the npm client beside the runner's node, or from the
// binary named by $SLUICE_BENCH_BUN / $SLUICE_BENCH_DENO. When neither
// gives a binary that runs (offline, no npm, a CPU the build does not
// support), the row is skipped with the reason, as uWebSockets.js's is.
// SLUICE_BENCH_PEERS=off skips both without trying.

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const CACHE = path.join(__dirname, '..', '.cache', 'peers');

// name -> the npm package of its Linux x64 build, the version measured,
// and where the package keeps the executable.
const PEERS = {
  bun: { env: 'SLUICE_BENCH_BUN', pkg: '@oven/bun-linux-x64', version: '1.4.5', bin: 'bin/bun' },
  deno: { env: 'SLUICE_BENCH_DENO', pkg: '@deno/linux-x64-glibc', version: '2.9.6', bin: 'deno' },
};

const found = new Map(); // name -> { bin } or { why }

function prefixOf(peer) {
  return path.join(CACHE, `${peer.pkg.replace(/[@/]/g, '_')}-${peer.version}`);
}

function packageBinary(peer) {
  return path.join(prefixOf(peer), 'node_modules', ...peer.pkg.split('/'), peer.bin);
}

// Install the package into the cache (once per version). npm is the one
// that ships with the runner's node when it is not on PATH.
function install(peer) {
  const prefix = prefixOf(peer);
  fs.mkdirSync(prefix, { recursive: true });
  const npmCli = path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js');
  const [cmd, pre] = fs.existsSync(npmCli) ? [process.execPath, [npmCli]] : ['npm', []];
  process.stderr.write(`installing ${peer.pkg}@${peer.version} into ${path.relative(process.cwd(), prefix)} (benchmark rows only)\n`);
  // --force: the packages declare their os / cpu, and a mismatch should
  // show up as "does not run" below rather than as an npm refusal.
  execFileSync(cmd, [...pre, 'install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund',
    '--no-package-lock', '--loglevel=error', `${peer.pkg}@${peer.version}`],
  { stdio: ['ignore', 'ignore', 'pipe'], timeout: 300000 });
}

function probe(name) {
  const peer = PEERS[name];
  if (!peer) return { why: `unknown peer ${name}` };
  if (/^(off|0|no)$/i.test(process.env.SLUICE_BENCH_PEERS || '')) return { why: 'SLUICE_BENCH_PEERS=off' };
  let bin = process.env[peer.env];
  if (!bin) {
    bin = packageBinary(peer);
    if (!fs.existsSync(bin)) {
      try {
        install(peer);
      } catch (err) {
        const text = String(err.stderr || err.message).trim().split('\n').filter(Boolean);
        return { why: `${peer.pkg}@${peer.version} could not be installed (${text.slice(-1)[0] || 'npm failed'}); set ${peer.env} to a ${name} binary` };
      }
      if (!fs.existsSync(bin)) return { why: `${peer.pkg}@${peer.version} installed without ${peer.bin}` };
    }
  }
  try {
    const v = execFileSync(bin, ['--version'], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 20000 });
    return { bin, version: String(v).trim().split('\n')[0] };
  } catch (err) {
    return { why: `${bin} does not run: ${String(err.stderr || err.message).trim().split('\n')[0]}` };
  }
}

function peer(name) {
  if (!found.has(name)) found.set(name, probe(name));
  return found.get(name);
}

// Why the row of `name` cannot run here, or null (the runner's
// variant.unavailable).
function peerUnavailable(name) {
  const p = peer(name);
  return p.why ? `${name === 'bun' ? 'Bun' : 'Deno'} skipped: ${p.why}` : null;
}

// argv to run `script` with `args` under the peer (its binary first).
function peerCommand(name, script, args) {
  const p = peer(name);
  if (p.why) throw new Error(p.why);
  if (name === 'deno') return [p.bin, 'run', '--allow-all', '--quiet', '--no-prompt', script, ...args];
  return [p.bin, script, ...args];
}

// The variants of a case file: one row per peer, skipped when absent.
function peerVariants(mode, extraArgs = []) {
  return ['bun', 'deno'].map((name) => ({
    label: name === 'bun' ? 'Bun.serve' : 'Deno.serve',
    impl: name,
    script: path.join(__dirname, '..', 'http', 'peer_server.js'),
    args: ['--mode', mode, ...extraArgs],
    optional: true,
    reference: true,
    unavailable: () => peerUnavailable(name),
  }));
}

module.exports = { peerUnavailable, peerCommand, peerVariants, PEERS };
