'use strict';

// npm run test:node-compat: node's own test/parallel/test-http-*.js server
// tests, unmodified, run twice: with node:http (the baseline) and with
// http.createServer / http.Server swapped for sluice's (preload.js). Prints
// each test that passes on node and fails on sluice, then "N/M pass": M
// server tests that pass on node (outside excluded.js), N of them also on
// sluice. Tests come from Debian's nodejs source package (fetch.sh).
//
// With --http2 the same for node's test/parallel/test-http2-*.js server
// tests: http2.createServer / createSecureServer swapped for sluice's
// (preload-http2.js), exclusions in excluded-http2.js.
//
// usage: node test/node-compat/run.js [--http2] [--tests DIR] [--jobs N]
//        [--filter RE] [--timeout MS] [--list-failures]

const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn, execFileSync } = require('child_process');

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(name);
  return i === -1 ? def : args[i + 1];
};
const HERE = __dirname;
const h2 = args.includes('--http2');
const excluded = require(h2 ? './excluded-http2' : './excluded');
const preloadFile = path.join(HERE, h2 ? 'preload-http2.js' : 'preload.js');
let testsDir = opt('--tests', process.env.SLUICE_NODE_TESTS);
if (!testsDir) {
  const cache = path.join(HERE, 'cache', 'extract');
  let found = fs.existsSync(cache) && fs.readdirSync(cache).find((d) => d.startsWith('node-v'));
  // A cache unpacked before fetch.sh took the HTTP/2 tests: fetch again.
  if (found && h2 && !fs.existsSync(path.join(cache, found, 'test', 'parallel', 'test-http2-connect.js'))) {
    found = undefined;
  }
  testsDir = found ? path.join(cache, found, 'test') :
    execFileSync('bash', [path.join(HERE, 'fetch.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
      .trim().split('\n').pop();
}
const jobs = Number(opt('--jobs', Math.max(1, os.cpus().length)));
const timeout = Number(opt('--timeout', 30000));
const filter = new RegExp(opt('--filter', '.'));
const parallel = path.join(testsDir, 'parallel');

// Server tests: those that make an HTTP (or HTTP/2) server.
const serverRe = h2 ? /\bcreate(Secure)?Server\(/ :
  /\bhttp\.createServer\b|\bcreateServer\(|new http\.Server\b|\bhttp\.Server\(/;
const fileRe = h2 ? /^test-http2-.*\.js$/ : /^test-http-.*\.js$/;
const all = fs.readdirSync(parallel)
  .filter((f) => fileRe.test(f) && filter.test(f))
  .filter((f) => serverRe.test(fs.readFileSync(path.join(parallel, f), 'utf8')))
  .sort();

function flagsOf(file) {
  const m = /^\/\/ Flags: (.*)$/m.exec(fs.readFileSync(file, 'utf8'));
  return m ? m[1].trim().split(/\s+/) : [];
}

function runOne(file, preload) {
  return new Promise((resolve) => {
    const full = path.join(parallel, file);
    const argv = [...flagsOf(full)];
    if (preload) argv.push('-r', preloadFile);
    argv.push(full);
    const child = spawn(process.execPath, argv, {
      cwd: testsDir,
      env: { ...process.env, NODE_TEST_DIR: path.join(testsDir, '.tmp') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => { if (out.length < 4000) out += d; });
    child.stderr.on('data', (d) => { if (out.length < 4000) out += d; });
    const t = setTimeout(() => child.kill('SIGKILL'), timeout);
    child.on('close', (code, signal) => {
      clearTimeout(t);
      resolve({ ok: code === 0, code, signal, out });
    });
  });
}

async function pool(items, fn) {
  const results = new Map();
  let i = 0;
  await Promise.all(Array.from({ length: jobs }, async () => {
    while (i < items.length) {
      const item = items[i++];
      results.set(item, await fn(item));
    }
  }));
  return results;
}

(async () => {
  // HTTP/2 tests run with --expose-internals read node's internal modules
  // (internal/http2/util and the like): another server cannot have them.
  const isExcluded = (f) => excluded[f] ||
    (h2 && flagsOf(path.join(parallel, f)).includes('--expose-internals'));
  const skipped = all.filter(isExcluded);
  const candidates = all.filter((f) => !isExcluded(f));
  fs.mkdirSync(path.join(testsDir, '.tmp'), { recursive: true });
  const started = Date.now();
  const base = await pool(candidates, (f) => runOne(f, false));
  const onNode = candidates.filter((f) => base.get(f).ok);
  const sl = await pool(onNode, (f) => runOne(f, true));
  const failing = onNode.filter((f) => !sl.get(f).ok);
  for (const f of failing) {
    const r = sl.get(f);
    console.log(`FAIL ${f} (${r.signal || `exit ${r.code}`})`);
    if (args.includes('--list-failures')) {
      console.log(r.out.split('\n').slice(0, 12).map((l) => `    ${l}`).join('\n'));
    }
  }
  console.log(`node tests from ${testsDir}`);
  console.log(`${all.length} server tests, ${skipped.length} excluded (test/node-compat/README.md), ` +
    `${candidates.length - onNode.length} fail on node:http itself (not counted), ` +
    `${((Date.now() - started) / 1000).toFixed(0)} s`);
  console.log(`${onNode.length - failing.length}/${onNode.length} pass`);
})();
