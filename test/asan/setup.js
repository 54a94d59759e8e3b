'use strict';

// mocha --require for npm run test:asan (test/asan/run.sh).
//
// run.sh starts node with the sanitizer runtime in LD_PRELOAD (it must be
// the first DSO loaded for the instrumented addon to work). Children must
// not inherit that: curl, h2load, nghttp, nm... are not instrumented, and
// with the runtime preloaded LeakSanitizer reports their exit-time
// allocations (the command then fails) or the tool hangs. So LD_PRELOAD is
// dropped from this process's environment here, and the runtime path stays
// in SLUICE_ASAN_PRELOAD: test/common.js puts it back for node children
// that load the addon (runNodeScript).

if (process.env.SLUICE_ASAN_PRELOAD) delete process.env.LD_PRELOAD;
