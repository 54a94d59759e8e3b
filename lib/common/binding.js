'use strict';

// Loads the native addon. SLUICE_ADDON overrides the path (the sanitizer
// build lives in build-asan/). Otherwise a local build wins (build/Release:
// what `npm run build` or a from-source install makes), else node-gyp-build
// picks the package's prebuilt binary for this platform, arch and libc
// (prebuilds/linux-x64/sluice.glibc.node; docs/install.md). build/Release
// is looked at here first, before node-gyp-build (which would find it too),
// so that a copy of lib/ with a build beside it and no node_modules (the
// benchmark runner's snapshot) loads without the dependency.
const fs = require('fs');
const path = require('path');

function addonFile() {
  if (process.env.SLUICE_ADDON) return process.env.SLUICE_ADDON;
  const root = path.join(__dirname, '..', '..');
  const local = path.join(root, 'build', 'Release', 'sluice.node');
  if (fs.existsSync(local)) return local;
  return require('node-gyp-build').resolve(root);
}

const file = addonFile();
const binding = require(file);

// binding.constants is the wire protocol (src/binding/wire_protocol.h):
// every flag, packed word, result and allocator answer lib/ exchanges with
// native code, defined once in C++. Reading a name it does not define
// throws, so a misspelt constant fails when lib/ loads instead of reading
// as undefined.
binding.constants = new Proxy(binding.constants, {
  get(target, name) {
    if (typeof name === 'string' && !(name in target)) {
      throw new Error(`binding.constants has no ${name} (src/binding/wire_protocol.h)`);
    }
    return target[name];
  },
});

module.exports = binding;
