'use strict';
module.exports = {
  spec: ['test/**/*.test.js'],
  // node's own tests, fetched by npm run test:node-compat (some fixtures
  // are named *.test.js): never part of this suite.
  ignore: ['test/node-compat/cache/**'],
  timeout: 20000,
  exit: false,
  recursive: true,
};
