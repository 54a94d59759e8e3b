'use strict';
module.exports = {
  spec: ['test/**/*.test.js'],
  // node's own tests, fetched by npm run test:node-compat (some fixtures
  // are named *.test.js), and test/package, which builds the packed tarball
  // in a fresh project (minutes): each has its own npm script, run by
  // .ci/run, and is never part of this suite.
  ignore: ['test/node-compat/cache/**', 'test/package/**'],
  timeout: 20000,
  exit: false,
  recursive: true,
};
