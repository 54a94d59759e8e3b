'use strict';

// server.serveStatic(urlPrefix, root[, options]): files under `root`
// answered by the core for GET / HEAD requests under `urlPrefix`, with no
// JS call per request (src/core/files/static_files.h, docs/files.md
// "serveStatic"). This file only validates the options and registers the
// mount; everything per request is native.

const fs = require('fs');
const path = require('path');
const { codedError, codedTypeError } = require('./errors');

const DOTFILES = Object.freeze({ ignore: 0, deny: 1, allow: 2 });

const BOOLEAN_OPTIONS = {
  index: true,
  precompressed: false,
  followSymlinks: false,
  etag: true,
  lastModified: true,
  cacheControl: true,
  immutable: false,
  acceptRanges: true,
};

// `extra`: more boolean options the caller takes ({ name: default }),
// returned with the rest (the middleware's fallthrough and redirect).
function normalizeOptions(options, extra) {
  if (options === undefined || options === null) options = {};
  if (typeof options !== 'object') {
    throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "options" argument must be of type object');
  }
  const out = {};
  for (const key of Object.keys(options)) {
    if (!(key in BOOLEAN_OPTIONS) && key !== 'dotfiles' && key !== 'maxAge' &&
        !(extra !== undefined && key in extra)) {
      throw codedTypeError('ERR_INVALID_ARG_VALUE', `The option 'options.${key}' is not supported by serveStatic`);
    }
  }
  const booleans = extra === undefined ? BOOLEAN_OPTIONS : { ...BOOLEAN_OPTIONS, ...extra };
  for (const key of Object.keys(booleans)) {
    const v = options[key];
    if (v === undefined) out[key] = booleans[key];
    else if (typeof v !== 'boolean') {
      throw codedTypeError('ERR_INVALID_ARG_TYPE', `The "options.${key}" property must be of type boolean`);
    } else out[key] = v;
  }
  const dot = options.dotfiles === undefined ? 'ignore' : options.dotfiles;
  if (!Object.prototype.hasOwnProperty.call(DOTFILES, dot)) {
    throw codedTypeError('ERR_INVALID_ARG_VALUE',
      'The "options.dotfiles" property must be one of \'ignore\', \'deny\', \'allow\'');
  }
  out.dotfiles = DOTFILES[dot];
  const maxAge = options.maxAge === undefined ? 0 : options.maxAge;
  if (typeof maxAge !== 'number' || !(maxAge >= 0) || !Number.isFinite(maxAge)) {
    throw codedTypeError('ERR_INVALID_ARG_VALUE',
      'The "options.maxAge" property must be a non-negative number of milliseconds');
  }
  // send caps max-age at one year.
  out.maxAge = Math.min(Math.floor(maxAge), 365 * 24 * 60 * 60 * 1000);
  return out;
}

// Registers the mount on `native` (a NativeServer). useCache: the server
// has the openFileCache option.
// compression: the server's normalized `compression` config (null: off).
function serveStatic(native, urlPrefix, root, options, useCache, compression) {
  if (typeof urlPrefix !== 'string') {
    throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "urlPrefix" argument must be of type string');
  }
  if (typeof root !== 'string' || root === '') {
    throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "root" argument must be a non-empty string');
  }
  const opts = normalizeOptions(options);
  opts.useCache = useCache;
  if (compression) {
    opts.encodings = compression.encodings;
    opts.threshold = Math.min(compression.threshold, Number.MAX_SAFE_INTEGER);
    opts.level = compression.level;
    opts.brotliQuality = compression.brotliQuality;
  }
  const abs = resolveRoot(root);
  const r = native.serveStatic(urlPrefix, abs, opts);
  if (r !== 0) {
    throw codedTypeError('ERR_INVALID_ARG_VALUE',
      `The "urlPrefix" argument '${urlPrefix}' is not a usable path prefix`);
  }
}

// The absolute root; it must be a directory now (ERR_SLUICE_STATIC_ROOT).
function resolveRoot(root) {
  const abs = path.resolve(root);
  let st;
  try {
    st = fs.statSync(abs);
  } catch (e) {
    throw codedError('ERR_SLUICE_STATIC_ROOT', `serveStatic root '${abs}' cannot be used: ${e.code}`);
  }
  if (!st.isDirectory()) {
    throw codedError('ERR_SLUICE_STATIC_ROOT', `serveStatic root '${abs}' is not a directory`);
  }
  return abs;
}

module.exports = { serveStatic, normalizeOptions, resolveRoot };
