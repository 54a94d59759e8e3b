'use strict';

// createServer's `accessLog` option: the native access log
// (src/core/observe/access_log.h, docs/observability.md), one line per
// finished HTTP/1.1 response, nginx's `combined` format or JSON lines,
// written to `path` by a thread of its own through a bounded buffer (lines
// that do not fit are dropped and counted in server.metrics()).

const binding = require('../common/binding');
const { kNative } = require('../common/symbols');
const { codedTypeError } = require('../common/errors');

const { ACCESS_LOG_COMBINED, ACCESS_LOG_JSON } = binding.constants;

const FORMATS = { combined: ACCESS_LOG_COMBINED, json: ACCESS_LOG_JSON };
const DEFAULT_BUFFER = 1024 * 1024;  // bytes of lines waiting for the disk

// Opens server's log from the option's value ({ path, format, bufferSize });
// a bad value throws ERR_INVALID_ARG_VALUE, an open failure the system error.
function openAccessLog(server, opt) {
  if (opt === undefined || opt === null || opt === false) return;
  const { path, format = 'combined', bufferSize = DEFAULT_BUFFER } = typeof opt === 'string' ? { path: opt } : opt;
  if (typeof path !== 'string' || path === '' || FORMATS[format] === undefined ||
      !Number.isInteger(bufferSize) || bufferSize < 1) {
    const err = codedTypeError('ERR_INVALID_ARG_VALUE',
      'The "options.accessLog" property must be a path or { path, format: \'combined\' | \'json\', ' +
      `bufferSize: a positive integer }. Received ${JSON.stringify(opt)}`);
    throw err;
  }
  const r = server[kNative].openAccessLog(path, FORMATS[format], bufferSize);
  if (r < 0) {
    const code = binding.errname(r);
    const err = new Error(`${code}: ${binding.strerror(r)}, open '${path}'`);
    err.code = code;
    err.errno = r;
    err.syscall = 'open';
    err.path = path;
    throw err;
  }
}

module.exports = { openAccessLog };
