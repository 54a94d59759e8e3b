'use strict';

// Loads the native addon. SLUICE_ADDON overrides the path (the sanitizer
// build lives in build-asan/).
const path = require('path');

const file = process.env.SLUICE_ADDON ||
  path.join(__dirname, '..', '..', 'build', 'Release', 'sluice.node');

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
