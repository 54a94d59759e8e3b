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
rm -rf "$tree"
mkdir -p "$tree"
cp -r binding.gyp package.json src "$tree/"
ln -s "$root/node_modules" "$tree/node_modules"
gyp=$(node -p "require.resolve('node-gyp/bin/node-gyp.js', { paths: [process.execPath + '/../../lib/node_modules/npm'] })" 2>/dev/null || true)
if [ -z "$gyp" ] || [ ! -f "$gyp" ]; then gyp=$(dirname "$(command -v npm)")/../lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js; fi
(cd "$tree" && node "$gyp" rebuild -j 2 --nodedir="${npm_config_nodedir:-/usr}" -- -Dsluice_asan=1 >/dev/null)
addon=$tree/build/Release/sluice.node
echo "asan build: $addon"

asan_rt=$(gcc -print-file-name=libasan.so)
ubsan_rt=$(gcc -print-file-name=libubsan.so)
export SLUICE_ADDON=$addon
export LD_PRELOAD="$asan_rt $ubsan_rt"
export ASAN_OPTIONS="detect_leaks=${SLUICE_ASAN_LEAKS:-1}:allow_user_segv_handler=1:detect_odr_violation=0:abort_on_error=1:malloc_context_size=12:fast_unwind_on_malloc=1:symbolize=1"
export LSAN_OPTIONS="suppressions=$root/test/asan/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
exec npx mocha --timeout 60000 "$@"
