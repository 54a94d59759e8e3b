'use strict';

// server.serveStatic(urlPrefix, root[, options]): files under `root`
// answered by the core for GET / HEAD requests under `urlPrefix`, with no
// JS call per request (src/core/files/static_files.h, docs/files.md
// "serveStatic"). This file only validates the options and registers the
// mount; everything per request is native.

const fs = require('fs');
const path = require('path');
const { codedError, codedTypeError } = require('../common/errors');

const DOTFILES = Object.freeze({ ignore: 0, deny: 1, allow: 2 });

const BOOLEAN_OPTIONS = {
  precompressed: false,
  followSymlinks: false,
  etag: true,
  lastModified: true,
  cacheControl: true,
  immutable: false,
  acceptRanges: true,
};

// The other options both kinds of mount take (each checked below).
const OTHER_OPTIONS = new Set(['index', 'extensions', 'dotfiles', 'maxAge', 'maxage']);

// send caps max-age at one year.
const MAX_AGE_MS = 365 * 24 * 60 * 60 * 1000;

// Duration units as the `ms` package (which send uses for maxAge strings)
// reads them: milliseconds per unit.
const SECOND = 1000;
const DAY = 86400 * SECOND;
const DURATION_UNITS = {
  ms: 1, msec: 1, msecs: 1, millisecond: 1, milliseconds: 1,
  s: SECOND, sec: SECOND, secs: SECOND, second: SECOND, seconds: SECOND,
  m: 60 * SECOND, min: 60 * SECOND, mins: 60 * SECOND, minute: 60 * SECOND, minutes: 60 * SECOND,
  h: 3600 * SECOND, hr: 3600 * SECOND, hrs: 3600 * SECOND, hour: 3600 * SECOND, hours: 3600 * SECOND,
  d: DAY, day: DAY, days: DAY,
  w: 7 * DAY, week: 7 * DAY, weeks: 7 * DAY,
  y: 365.25 * DAY, yr: 365.25 * DAY, yrs: 365.25 * DAY, year: 365.25 * DAY, years: 365.25 * DAY,
};

// '1d', '2 h', '1.5hours', '500' (ms) -> milliseconds, or NaN.
function parseDuration(s) {
  if (s.length > 100) return NaN;
  const m = /^(-?\d*\.?\d+) *([a-z]*)$/i.exec(s);
  if (m === null) return NaN;
  const unit = m[2] === '' ? 1 : DURATION_UNITS[m[2].toLowerCase()];
  return unit === undefined ? NaN : Number(m[1]) * unit;
}

// maxAge (or serve-static's spelling maxage): milliseconds as a number, or
// a duration string as send reads it.
function normalizeMaxAge(options) {
  const key = options.maxAge !== undefined ? 'maxAge' : 'maxage';
  const v = options[key];
  if (v === undefined) return 0;
  const ms = typeof v === 'string' ? parseDuration(v) : v;
  if (typeof ms !== 'number' || !(ms >= 0) || !Number.isFinite(ms)) {
    throw codedTypeError('ERR_INVALID_ARG_VALUE',
      `The "options.${key}" property must be a non-negative number of milliseconds ` +
      `or a duration string such as '1d'. Received ${JSON.stringify(v)}`);
  }
  return Math.min(Math.floor(ms), MAX_AGE_MS);
}

// index / extensions as send takes them: a string, an array of strings, or
// false for none. `check` refuses names that could not be one file name
// (index) or one name suffix (extensions).
function normalizeNames(options, key, dflt, check) {
  let v = options[key];
  if (v === undefined) return dflt;
  if (v === true && key === 'index') return dflt;  // sluice's boolean form
  if (v === false || v === null || v === '') return [];
  if (typeof v === 'string') v = [v];
  if (!Array.isArray(v) || !v.every((n) => typeof n === 'string')) {
    throw codedTypeError('ERR_INVALID_ARG_TYPE',
      `The "options.${key}" property must be a string, an array of strings or false`);
  }
  for (const n of v) {
    if (!check(n)) {
      throw codedTypeError('ERR_INVALID_ARG_VALUE',
        `The "options.${key}" property holds an unusable name: ${JSON.stringify(n)}`);
    }
  }
  return v.slice();
}

// An index name is a path relative to the directory asked for: no NUL, no
// backslash, not absolute, no empty / "." / ".." segment.
function isIndexName(n) {
  return n !== '' && !/[\0\\]/.test(n) &&
    n.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..');
}

// An extension is appended after a '.': no separator, no NUL.
function isExtension(n) {
  return n !== '' && !/[\0/\\]/.test(n);
}

// `extra`: more boolean options the caller takes ({ name: default }),
// returned with the rest (the middleware's fallthrough and redirect);
// `takes`: other option names the caller checks itself (setHeaders).
function normalizeOptions(options, extra, takes) {
  if (options === undefined || options === null) options = {};
  if (typeof options !== 'object') {
    throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "options" argument must be of type object');
  }
  const out = {};
  for (const key of Object.keys(options)) {
    if (!(key in BOOLEAN_OPTIONS) && !OTHER_OPTIONS.has(key) &&
        !(extra !== undefined && key in extra) && !(takes !== undefined && takes.includes(key))) {
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
  out.index = normalizeNames(options, 'index', ['index.html'], isIndexName);
  out.extensions = normalizeNames(options, 'extensions', [], isExtension);
  out.maxAge = normalizeMaxAge(options);
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

module.exports = { serveStatic, normalizeOptions, resolveRoot, parseDuration };
