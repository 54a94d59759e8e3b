'use strict';

// The server's defaults that more than the option parser reads (the socket
// view reports highWaterMark for a socket whose server has none set).
// lib/server/options.js owns the rest of the option rules.

module.exports = Object.freeze({
  maxHeaderSize: 16384,
  headersTimeout: 60000,
  requestTimeout: 300000,
  keepAliveTimeout: 5000,
  highWaterMark: 65536,
});
