'use strict';
module.exports = {
  spec: ['test/**/*.test.js'],
  // test/package builds the packed tarball in a fresh project (minutes):
  // its own script, `npm run test:package`, run by .ci/run.
  ignore: ['test/package/**'],
  timeout: 20000,
  exit: false,
  recursive: true,
};
