'use strict';

// sluice.serveStatic(root[, options]): a (req, res, next) middleware for
// Express / Connect (and Koa through koaServeStatic) that answers from the
// same native machinery as server.serveStatic (src/core/files/
// static_files.h: traversal-proof open beneath the root, the open-file and
// small-file caches, ETag / Last-Modified / Cache-Control, 304 / 206 /
// 416, precompressed siblings), but runs where the application mounts it:
// after its auth and logging middleware, on the path Express left in
// req.url. docs/files.md, "The serveStatic middleware".
//
// Per request: one native lookup (NativeFile.lookupStatic), answered at
// once from the cache or after one threadpool job. A hit comes back to JS
// once, as the status, the headers and (for a body) the opened file; the
// response then goes out as respondWithFile's does (head and the file's
// first bytes in one write, the body piped natively, no JS per chunk), so
// res.statusCode, res.getHeader(), res.headersSent, 'finish' and 'close'
// are what any other response shows. A miss calls next().

const http = require('http');
const binding = require('../common/binding');
const compression = require('../compress/compression');
const { codedError, codedTypeError } = require('../common/errors');
const { FileStat } = require('../files/file_response');
const fileCache = require('../files/open_file_cache');
const { kConn, kHeaders } = require('../common/symbols');
const { ServerResponse } = require('../http/response');
const staticFiles = require('../files/static_mount');

const NativeFile = binding.NativeFile;
const {
  STATIC_PENDING, STATIC_DIRECTORY, STATIC_WANT_FILE,
  STATIC_ANSWER_BODY, STATIC_ANSWER_FILE,
} = binding.constants;

// The request fields the lookup decides on (lower-case, as req.headers).
const FIELDS = ['if-match', 'if-unmodified-since', 'if-none-match', 'if-modified-since',
  'range', 'if-range', 'cache-control', 'accept-encoding'];

// An answer's fields in the bit order of its flags (the core's table), as
// [key, name] pairs with the key lower-cased once here.
const ANSWER_FIELDS = binding.staticAnswerFields.map((name) => [name.toLowerCase(), name]);
const CONTENT_RANGE = binding.staticAnswerFields.indexOf('Content-Range');

// What send removes from res for a 304 (removeContentHeaderFields).
const NOT_MODIFIED_DROPS = ['content-encoding', 'content-language', 'content-length',
  'content-range', 'content-type'];

const kHandle = Symbol('sluice.serveStatic.handle');
const kPending = Symbol('sluice.serveStatic.pending');

const protoSetHeader = ServerResponse.prototype.setHeader;
const respondWithNativeFile = ServerResponse.prototype._respondWithNativeFile;

// An error as serve-static's next(err) carries it (http-errors' shape:
// Express's final handler answers err.status with err.headers).
function httpError(status, headers) {
  const err = new Error(http.STATUS_CODES[status] || String(status));
  err.status = status;
  err.statusCode = status;
  err.expose = status < 500;
  if (headers) err.headers = headers;
  return err;
}

function escapeHtml(s) {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

// What a URL may hold unescaped (encodeurl's set): the rest, and '%' not
// starting an escape, is percent-encoded.
function encodeUrl(s) {
  return s.replace(/%(?![0-9A-Fa-f]{2})|[^\x21\x23-\x3B\x3D\x3F-\x5F\x61-\x7A\x7C\x7E]/g,
    (c) => (c === '%' ? '%25' : encodeURI(c)));
}

// The URL as the client sent it (Express strips the mount from req.url and
// keeps the whole in req.originalUrl) and where its path ends (? or #).
function originalUrl(req) {
  const original = typeof req.originalUrl === 'string' ? req.originalUrl : req.url;
  return { original, cut: original.search(/[?#]/) };
}

// serve-static's answer for a directory asked for without its slash.
function redirectDirectory(req, res) {
  const { original, cut } = originalUrl(req);
  const pathname = cut < 0 ? original : original.slice(0, cut);
  const search = cut < 0 || original[cut] === '#' ? '' :
    original.slice(cut, original.includes('#', cut) ? original.indexOf('#', cut) : undefined);
  const loc = encodeUrl((pathname + '/').replace(/^\/+/, '/') + search);
  const doc = '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n' +
    '<title>Redirecting</title>\n</head>\n<body>\n<pre>Redirecting to ' + escapeHtml(loc) +
    '</pre>\n</body>\n</html>\n';
  res.statusCode = 301;
  res.setHeader('Content-Type', 'text/html; charset=UTF-8');
  res.setHeader('Content-Length', Buffer.byteLength(doc));
  res.setHeader('Content-Security-Policy', "default-src 'none'");
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Location', loc);
  res.end(doc);
}

// A response field as a string (send compares res.getHeader() values).
function headerString(res, name) {
  const v = res.getHeader(name);
  return v === undefined ? undefined : String(v);
}

// Sets `name` on res (as setHeader; straight into the header table when
// res.setHeader is sluice's own, the values being the core's, valid).
function put(res, key, name, value) {
  if (res.setHeader !== protoSetHeader) {
    res.setHeader(name, value);
    return;
  }
  let h = res[kHeaders];
  if (h === null) h = res[kHeaders] = Object.create(null);
  h[key] = [name, value];
}

// Puts the answer's fields (parts from index 3, one per bit set in `bits`)
// on res. As send: what the application (or setHeaders) set before is kept
// (Content-Type, Cache-Control, ETag...); Content-Range is the answer's.
// Returns the answer's Content-Range, if any. (Content-Length is not among
// the fields: the answer carries it as its length.)
function putAnswerFields(res, parts, bits) {
  let j = 3;
  let range;
  for (let k = 0; k < ANSWER_FIELDS.length; k++) {
    if ((bits & (1 << k)) === 0) continue;
    const v = parts[j++];
    const f = ANSWER_FIELDS[k];
    if (k === CONTENT_RANGE) range = v;
    if (k === CONTENT_RANGE || !res.hasHeader(f[0])) put(res, f[0], f[1], v);
  }
  return range;
}

function serveStaticMiddleware(root, options) {
  if (typeof root !== 'string' || root === '') {
    throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "root" argument must be a non-empty string');
  }
  const opts = staticFiles.normalizeOptions(options, { fallthrough: true, redirect: true },
    ['setHeaders']);
  const setHeaders = options ? options.setHeaders : undefined;
  if (setHeaders !== undefined && typeof setHeaders !== 'function') {
    throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "options.setHeaders" property must be of type function');
  }
  const fallthrough = opts.fallthrough;
  const redirect = opts.redirect;
  // Whether a request uses the open-file cache is its server's
  // openFileCache option (res._fileCache: on unless `false`), asked per
  // request.
  opts.useCache = true;
  const absRoot = staticFiles.resolveRoot(root);
  const rootSlash = absRoot.endsWith('/') ? absRoot : `${absRoot}/`;
  const mount = NativeFile.staticMount(absRoot, opts);
  const flags = setHeaders ? STATIC_WANT_FILE : 0;

  // Not served (a miss, or a refusal before a file was found), as
  // serve-static: next() with fallthrough, next(err) without it (and for a
  // 5xx). Once a file was found (412, 416) the error always goes on.
  function pass(next, status, headers, found) {
    if (fallthrough && !found && status < 500) next();
    else next(httpError(status, headers));
  }

  // The lookup's answer (the string lookupStatic gives, see
  // src/binding/js_file.h); `validators`: the ETag / Last-Modified the
  // lookup compared with ([undefined, undefined]: the file's own), null
  // when setHeaders already ran for this request.
  function answer(req, res, next, served, file, ans, validators) {
    const parts = ans.split('\0');
    const status = +parts[0];
    const length = +parts[1];
    const bits = +parts[2];
    if ((bits & STATIC_ANSWER_FILE) !== 0 && validators !== null) {
      // send's 'headers' event: the file is known, nothing of send's is on
      // res yet. What it sets wins over send's own fields; if it changed a
      // validator a conditional request depends on, the answer is decided
      // again with the new ones (as send compares with res's).
      try {
        setHeaders(res, rootSlash + parts[parts.length - 1], new FileStat(fileCache.statArray));
      } catch (err) {
        file.close();
        next(err);
        return;
      }
      if (res.headersSent || res.destroyed) {
        file.close();
        return;
      }
      const etag = headerString(res, 'etag');
      const lastModified = headerString(res, 'last-modified');
      const h = req.headers;
      if ((etag !== validators[0] || lastModified !== validators[1]) &&
          (h['if-match'] || h['if-unmodified-since'] || h['if-none-match'] ||
           h['if-modified-since'] || h['if-range'])) {
        file.close();
        lookup(req, res, next, served, etag, lastModified, null);
        return;
      }
    }
    if (status >= 400) {
      file.close();
      // send leaves the fields it has set on res (412 / 416) for the error
      // handler, Content-Range among them.
      const range = putAnswerFields(res, parts, bits);
      pass(next, status, range === undefined ? undefined : { 'Content-Range': range },
        status === 412 || status === 416);
      return;
    }
    served();
    res.statusCode = status;
    if (status === 304) {
      for (let k = 0; k < NOT_MODIFIED_DROPS.length; k++) {
        if (res.hasHeader(NOT_MODIFIED_DROPS[k])) res.removeHeader(NOT_MODIFIED_DROPS[k]);
      }
    }
    putAnswerFields(res, parts, bits);
    if (length >= 0) put(res, 'content-length', 'Content-Length', length);
    if ((bits & STATIC_ANSWER_BODY) === 0) {
      // No body: HEAD, 304, an empty file.
      file.close();
      res.end();
      return;
    }
    // Response compression (the server's `compression` option), as
    // respondWithFile's (lib/compress/compression.js, which leaves a 206 alone).
    res._fileCoding = res._compressCfg ?
      compression.prepare(res, res._compressCfg, length) : 0;
    const r = respondWithNativeFile.call(res, file, () => {
      // The body broke after its head went out: nothing else can be said.
      res.destroy();
    });
    if (r < 0) file.close();
  }

  function missed(req, res, next, served, kind) {
    if (kind === STATIC_DIRECTORY && redirect) {
      served();
      redirectDirectory(req, res);
    } else {
      pass(next, 404, undefined, false);
    }
  }

  // One lookup of req.url; etag / lastModified: validators res carries
  // (the conditionals compare with them); validators null: setHeaders ran.
  function lookup(req, res, next, served, etag, lastModified, validators) {
    const fields = [];
    const h = req.headers;
    for (let i = 0; i < FIELDS.length; i++) {
      const v = h[FIELDS[i]];
      if (v !== undefined) fields.push(FIELDS[i], String(v));
    }
    const file = new NativeFile();
    const r = file.lookupStatic(mount, req.url, req.method === 'HEAD', fields,
      res._fileCache > 0, validators === null ? 0 : flags, etag, lastModified, onLookup);
    if (typeof r === 'string') {
      answer(req, res, next, served, file, r, validators);
    } else if (r === STATIC_PENDING) {
      // The client left mid-lookup: cancel it (its descriptor is closed).
      const gone = () => file.close();
      res.once('close', gone);
      file[kPending] = (kind, ans) => {
        res.removeListener('close', gone);
        if (res.headersSent || res.destroyed) file.close();
        else if (typeof ans === 'string') answer(req, res, next, served, file, ans, validators);
        else missed(req, res, next, served, kind);
      };
    } else if (r < 0) {
      next(codedError('ERR_SLUICE_STATIC_LOOKUP', 'serveStatic lookup failed'));
    } else {
      missed(req, res, next, served, r);
    }
  }

  // served(): called once when this middleware answers (before the answer
  // is written), never when it calls next.
  function handle(req, res, next, served) {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      if (fallthrough) {
        next();
        return;
      }
      served();
      res.statusCode = 405;
      res.setHeader('Allow', 'GET, HEAD');
      res.setHeader('Content-Length', '0');
      res.end();
      return;
    }
    if (res === null || typeof res !== 'object' || res[kConn] === undefined) {
      next(codedError('ERR_SLUICE_STATIC_NOT_SLUICE',
        'sluice.serveStatic() serves only requests of a sluice server'));
      return;
    }
    const url = req.url;
    // The mount's own path without its slash ("/static" under
    // app.use('/static', ...), where req.url is "/"): a directory.
    if (url === '/' || url.startsWith('/?')) {
      const { original, cut } = originalUrl(req);
      if ((cut < 0 ? original : original.slice(0, cut)).slice(-1) !== '/') {
        if (redirect) {
          served();
          redirectDirectory(req, res);
        } else {
          pass(next, 404, undefined, false);
        }
        return;
      }
    }
    // send's conditionals compare with the validators on res: an ETag /
    // Last-Modified set before this middleware ran is the one.
    const etag = headerString(res, 'etag');
    const lastModified = headerString(res, 'last-modified');
    lookup(req, res, next, served, etag, lastModified, [etag, lastModified]);
  }

  const noop = () => {};
  const middleware = function serveStatic(req, res, next) { handle(req, res, next, noop); };
  middleware[kHandle] = handle;
  return middleware;
}

// A pending lookup's answer (called with the NativeFile as `this`): the
// request's continuation, kept on the file only while it waits.
function onLookup(kind, ans) {
  const cont = this[kPending];
  this[kPending] = undefined;
  if (cont !== undefined) cont(kind, ans);
}

// The same for Koa: `app.use(sluice.koaServeStatic(root, options))`. Runs
// the middleware on ctx.req / ctx.res; a hit marks ctx.respond = false (the
// response is sluice's), a miss awaits next().
function koaServeStatic(root, options) {
  const handle = serveStaticMiddleware(root, options)[kHandle];
  return function koaServeStatic(ctx, next) {
    return new Promise((resolve, reject) => {
      handle(ctx.req, ctx.res, (err) => {
        if (err) reject(err);
        else resolve(false);
      }, () => {
        ctx.respond = false;  // the response is ours
        resolve(true);
      });
    }).then((served) => (served ? undefined : next()));
  };
}

module.exports = { serveStaticMiddleware, koaServeStatic };
