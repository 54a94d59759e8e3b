'use strict';

// Loads the native addon. SLUICE_ADDON overrides the path (the sanitizer
// build lives in build-asan/).
const path = require('path');

const file = process.env.SLUICE_ADDON ||
  path.join(__dirname, '..', 'build', 'Release', 'sluice.node');

module.exports = require(file);
