#!/usr/bin/env bash
# npm run test:asan — builds the addon with AddressSanitizer and
# UndefinedBehaviorSanitizer into build-asan/ (the normal build/ is left
# alone) and runs the whole mocha suite against it, with the sanitizer
# runtime preloaded into node (node itself is not instrumented).
#
# Memory errors (use after free, overflows, UB) abort the run. Leaks: see
# test/asan/lsan.supp — LeakSanitizer is on; allocations whose recorded
# stack is entirely node/V8's own are suppressed, ours are reported.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
tree=$root/build-asan/tree

node src/check_deps.js
# Incremental: the sources are copied with their mtimes, so make rebuilds
# only what changed; gyp reconfigures when binding.gyp is newer. Copied
# mtimes can leave an object built from an older copy of a header looking
# newer than the header (a stale object: once a false heap-buffer-overflow
# report), so any change to the headers' contents rebuilds every object.
mkdir -p "$tree"
headers_sum=$(find src -name '*.h' -type f | LC_ALL=C sort | xargs cat | sha256sum | cut -d' ' -f1)
if [ "$(cat "$tree/headers.sha256" 2>/dev/null)" != "$headers_sum" ]; then
  rm -rf "$tree/build/Release/obj.target"
fi
mkdir -p "$tree/src" && cp -a src/. "$tree/src/"
echo "$headers_sum" > "$tree/headers.sha256"
cp -p binding.gyp package.json "$tree/"
[ -e "$tree/node_modules" ] || ln -s "$root/node_modules" "$tree/node_modules"
gyp=$(node -p "require.resolve('node-gyp/bin/node-gyp.js', { paths: [process.execPath + '/../../lib/node_modules/npm'] })" 2>/dev/null || true)
if [ -z "$gyp" ] || [ ! -f "$gyp" ]; then gyp=$(dirname "$(command -v npm)")/../lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js; fi
nodedir="${npm_config_nodedir:-/usr}"
if [ ! -f "$tree/build/Makefile" ] || [ "$tree/binding.gyp" -nt "$tree/build/Makefile" ]; then
  (cd "$tree" && node "$gyp" configure --nodedir="$nodedir" -- -Dsluice_asan=1 >/dev/null 2>&1)
fi
(cd "$tree" && node "$gyp" build -j 2 --nodedir="$nodedir" >/dev/null 2>"$tree/build.log") || { cat "$tree/build.log"; exit 1; }
addon=$tree/build/Release/sluice.node
echo "asan build: $addon"

asan_rt=$(gcc -print-file-name=libasan.so)
ubsan_rt=$(gcc -print-file-name=libubsan.so)
for rt in "$asan_rt" "$ubsan_rt"; do
  # gcc prints the bare name when it has no such runtime.
  [ -f "$rt" ] || { echo "asan: $rt not found: the sanitizer runtimes come with gcc (apt-get install g++)"; exit 1; }
done
export SLUICE_ADDON=$addon
# mocha's node gets the runtime preloaded; test/asan/setup.js removes it from
# the environment children inherit and test/common.js gives it back to node
# children (SLUICE_ASAN_PRELOAD).
export SLUICE_ASAN_PRELOAD="$asan_rt $ubsan_rt"
# malloc_context_size=3: see test/asan/lsan.supp (a suppression matches any
# recorded frame: the recorded stacks are kept short enough that a leak of
# ours made on a JS call does not reach node's and V8's frames). Allocation
# and free stacks in ASan reports are as short; SLUICE_ASAN_CONTEXT=30 shows
# more when diagnosing (suppressions then hide more, too).
export ASAN_OPTIONS="detect_leaks=${SLUICE_ASAN_LEAKS:-1}:allow_user_segv_handler=1:detect_odr_violation=0:abort_on_error=1:malloc_context_size=${SLUICE_ASAN_CONTEXT:-3}:fast_unwind_on_malloc=1:symbolize=1"
export LSAN_OPTIONS="suppressions=$root/test/asan/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

# LeakSanitizer self-check: a leak of ours on a JS call path is reported
# (binding.leakForTest, sanitizer builds only), and node's own allocations
# lost at process.exit() are not (they are suppressed).
if [ "${SLUICE_ASAN_LEAKS:-1}" = "1" ]; then
  if out=$(LD_PRELOAD="$SLUICE_ASAN_PRELOAD" node -e "require('$root/lib/common/binding').leakForTest()" 2>&1); then
    echo "asan: LeakSanitizer did not report a deliberate leak of the addon (see test/asan/lsan.supp)"
    exit 1
  fi
  if ! grep -q "Direct leak of 4099 byte" <<<"$out"; then
    echo "asan: the deliberate leak check failed otherwise:"; echo "$out" | head -40
    exit 1
  fi
  if ! out=$(LD_PRELOAD="$SLUICE_ASAN_PRELOAD" node -e "
      const s = require('$root').createServer((req, res) => res.end('x'));
      s.listen(0, '127.0.0.1', () => require('net').connect(s.address().port, '127.0.0.1',
        () => setTimeout(() => process.exit(0), 50)));" 2>&1); then
    echo "asan: node's own exit-time allocations are reported (extend test/asan/lsan.supp):"; echo "$out" | head -60
    exit 1
  fi
  echo "asan: LeakSanitizer self-check ok"
fi

# mocha's node gets the runtime preloaded; test/asan/setup.js removes it from
# the environment children inherit and test/common.js gives it back to node
# children (SLUICE_ASAN_PRELOAD). mocha's own bin, not npx: npm and a shell
# would run preloaded too.
export LD_PRELOAD="$SLUICE_ASAN_PRELOAD"
exec node "$root/node_modules/mocha/bin/mocha.js" --require "$root/test/asan/setup.js" --timeout 60000 "$@"
