'use strict';
module.exports = {
  spec: ['test/**/*.test.js'],
  timeout: 20000,
  exit: false,
  recursive: true,
};
