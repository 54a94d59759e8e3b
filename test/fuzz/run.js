'use strict';
// npm run fuzz -- [--seconds N] [--only http1|http2|prescan|http1_parser|http3|ws_frame_parser|quic_packet] [--jobs J]
// Builds the harnesses (test/fuzz/build.sh) and runs each for N seconds
// (default 60) at nice 19, from the seed corpus in test/fuzz/corpus/<name>
// plus a working corpus in test/fuzz/out/corpus-<name> (new units go there,
// not into the repository). Crash inputs land in test/fuzz/out/artifacts/.
// Exit status 1 when a harness found a crash.
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const args = process.argv.slice(2);
function opt(name, def) {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : def;
}
const seconds = Number(opt('seconds', 60));
const only = opt('only', null);
const jobs = Number(opt('jobs', 1));
const harnesses = (only ? [only] : ['http1', 'http2', 'prescan', 'http1_parser', 'http3', 'ws_frame_parser', 'quic_packet']);
const here = __dirname;
const out = process.env.FUZZ_OUT || path.join(here, 'out');

let r = spawnSync('bash', [path.join(here, 'build.sh'), ...harnesses], { stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status || 1);

let failed = false;
for (const name of harnesses) {
  const bin = path.join(out, `fuzz_${name}`);
  if (!fs.existsSync(bin)) {
    console.log(`fuzz: no harness ${name}`);
    continue;
  }
  const work = path.join(out, `corpus-${name}`);
  const artifacts = path.join(out, 'artifacts', name) + path.sep;
  fs.mkdirSync(work, { recursive: true });
  fs.mkdirSync(artifacts, { recursive: true });
  // The parser alone takes the HTTP/1.1 session's dictionary.
  const dict = path.join(here, `${name === 'http1_parser' ? 'http1' : name}.dict`);
  const fargs = [
    '-n', '19', bin,
    `-max_total_time=${seconds}`, '-timeout=20', '-rss_limit_mb=2560',
    '-max_len=70000', '-print_final_stats=1', `-artifact_prefix=${artifacts}`,
    ...(fs.existsSync(dict) ? [`-dict=${dict}`] : []),
    ...(jobs > 1 ? [`-fork=${jobs}`, '-ignore_crashes=1'] : []),
    work, path.join(here, 'corpus', name),
  ];
  console.log(`fuzz: ${name} for ${seconds} s`);
  const t0 = Date.now();
  r = spawnSync('nice', fargs, { stdio: ['ignore', 'inherit', 'inherit'] });
  console.log(`fuzz: ${name} exit ${r.status} after ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  if (r.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
