'use strict';
const fs = require('fs');

// `npx mocha test/dir/file.test.js` runs just those files: mocha adds a
// config's spec to the command line's, so the whole suite is the default
// only when the command line names no test file or folder.
const named = process.argv.slice(2).some((a) => !a.startsWith('-') &&
  (a.endsWith('.test.js') || (fs.existsSync(a) && fs.statSync(a).isDirectory())));

module.exports = {
  ...(named ? {} : { spec: ['test/**/*.test.js'] }),
  // node's own tests, fetched by npm run test:node-compat (some fixtures
  // are named *.test.js), and test/package, which builds the packed tarball
  // in a fresh project (minutes): each has its own npm script, run by
  // .ci/run, and is never part of this suite.
  ignore: ['test/node-compat/cache/**', 'test/package/**'],
  timeout: 20000,
  exit: false,
  recursive: true,
};
