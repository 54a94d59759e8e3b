'use strict';

// The `openFileCache` server option: this thread's open-file cache
// (src/core/files/open_file_cache.h), shared by every file response of the
// servers that turn it on (HTTP/1.1 and HTTP/2, compressed or not). Off by
// default, as node (which has none). The cache is per loop thread: the
// main thread and each worker have their own. A listening server with the
// option holds it on; when the last one closes, every entry is forgotten
// (descriptors close as their responses end). Several servers: the bounds
// of the one that started listening last apply.

const binding = require('../common/binding');
const { codedTypeError, codedRangeError } = require('../common/errors');

const DEFAULTS = Object.freeze({
  max: 1000,             // entries (one open descriptor each), LRU
  validMs: 60000,        // as nginx's open_file_cache_valid 60s
  smallFileSize: 64 * 1024,           // files up to this kept in memory (0: none)
  smallFileBytes: 64 * 1024 * 1024,   // total bytes kept in memory
});

// Hits put their stat here (NativeFile.open returns 1 then); read at once.
const statArray = new Float64Array(14);
binding.NativeFile.setStatArray(statArray);

let users = 0;

// Returns the normalized option (null: off). Throws ERR_INVALID_ARG_TYPE /
// ERR_OUT_OF_RANGE for a bad one.
function normalize(option) {
  if (option === undefined || option === null || option === false) return null;
  if (option === true) option = {};
  if (typeof option !== 'object') {
    throw codedTypeError('ERR_INVALID_ARG_TYPE',
      'The "options.openFileCache" property must be of type boolean or object');
  }
  const cfg = { ...DEFAULTS };
  for (const name of Object.keys(DEFAULTS)) {
    const v = option[name];
    if (v === undefined) continue;
    const min = name === 'max' || name === 'validMs' ? 1 : 0;
    if (!Number.isSafeInteger(v) || v < min) {
      throw codedRangeError('ERR_OUT_OF_RANGE',
        `The value of "options.openFileCache.${name}" is out of range. ` +
        `It must be an integer >= ${min}. Received ${String(v)}`);
    }
    cfg[name] = v;
  }
  return Object.freeze(cfg);
}

// A server with the option starts listening: the cache is on (with its
// bounds). Returns true when its responses should use the cache.
function acquire(cfg) {
  if (cfg === null) return false;
  users++;
  binding.NativeFile.configureCache(cfg.max, cfg.validMs, cfg.smallFileSize, cfg.smallFileBytes);
  return true;
}

// That server closed.
function release(acquired) {
  if (!acquired) return;
  if (--users === 0) binding.NativeFile.configureCache(0, 0, 0, 0);
}

// { enabled, hits, misses, contentHits, invalidations, expirations,
//   evictions, entries, contentBytes, fds }
function stats() {
  return binding.NativeFile.cacheStats();
}

module.exports = { normalize, acquire, release, stats, statArray, DEFAULTS };
