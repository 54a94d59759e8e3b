'use strict';

// The `openFileCache` server option: this thread's open-file cache
// (src/core/files/open_file_cache.h). Not given (the default): static
// mounts (server.serveStatic) and the sluice.serveStatic middleware use it,
// with the DEFAULTS bounds; respondWithFile does not (node has no cache,
// and a handler calling it may expect each call to open the path).
// `true` or an object: every file response of the server uses it (HTTP/1.1
// and HTTP/2, compressed or not). `false`: nothing does. The cache is per
// loop thread: the main thread and each worker have their own. A listening
// server using it holds it on; when the last one closes, every entry is
// forgotten (descriptors close as their responses end). Several servers:
// the bounds of the one that started listening last apply.

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

// Who uses a server's cache (res._fileCache, stream._fileCache).
const OFF = 0;
const STATIC = 1;  // static mounts and the middleware
const ALL = 2;     // and every respondWithFile

const STATIC_DEFAULT = Object.freeze({ ...DEFAULTS, mode: STATIC });

// Returns the normalized option (null: off). Throws ERR_INVALID_ARG_TYPE /
// ERR_OUT_OF_RANGE for a bad one.
function normalize(option) {
  if (option === undefined) return STATIC_DEFAULT;
  if (option === null || option === false) return null;
  if (option === true) option = {};
  if (typeof option !== 'object') {
    throw codedTypeError('ERR_INVALID_ARG_TYPE',
      'The "options.openFileCache" property must be of type boolean or object');
  }
  const cfg = { ...DEFAULTS, mode: ALL };
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

// A server using the cache starts listening: the cache is on (with its
// bounds). Returns who uses it (OFF, STATIC or ALL).
function acquire(cfg) {
  if (cfg === null) return OFF;
  users++;
  binding.NativeFile.configureCache(cfg.max, cfg.validMs, cfg.smallFileSize, cfg.smallFileBytes);
  return cfg.mode;
}

// That server closed.
function release(acquired) {
  if (!acquired) return;
  if (--users === 0) binding.NativeFile.configureCache(0, 0, 0, 0);
}

// { enabled, hits, misses, contentHits, invalidations, expirations,
//   evictions, opens, coalesced, entries, contentBytes, fds }
function stats() {
  return binding.NativeFile.cacheStats();
}

module.exports = { normalize, acquire, release, stats, statArray, DEFAULTS, OFF, STATIC, ALL };
