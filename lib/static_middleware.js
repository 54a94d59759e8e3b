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
const binding = require('./binding');
const compression = require('./compression');
const { codedError, codedTypeError } = require('./errors');
const { kConn } = require('./symbols');
const { ServerResponse } = require('./response');
const staticFiles = require('./static_files');

const NativeFile = binding.NativeFile;

// The request fields the lookup decides on (lower-case, as req.headers).
const FIELDS = ['if-match', 'if-unmodified-since', 'if-none-match', 'if-modified-since',
  'range', 'if-range', 'cache-control', 'accept-encoding'];

const MISS = 0;
const ANSWERED = 1;
const PENDING = 2;
const DIRECTORY = 3;

const kHandle = Symbol('sluice.serveStatic.handle');

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

function serveStaticMiddleware(root, options) {
  if (typeof root !== 'string' || root === '') {
    throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "root" argument must be a non-empty string');
  }
  const opts = staticFiles.normalizeOptions(options, { fallthrough: true, redirect: true });
  const fallthrough = opts.fallthrough;
  const redirect = opts.redirect;
  // Whether a request uses the open-file cache is its server's
  // openFileCache option (res._fileCache), asked per request.
  opts.useCache = true;
  const mount = NativeFile.staticMount(staticFiles.resolveRoot(root), opts);

  // A miss (kind MISS / DIRECTORY) or a refusal (status >= 400), as
  // serve-static: next() with fallthrough, next(err) without it.
  function pass(req, res, next, status, headers) {
    if (fallthrough) next();
    else next(httpError(status, headers));
  }

  function answer(req, res, next, file, served) {
    const a = file.staticAnswer();
    const status = a[0];
    if (status >= 400) {
      file.close();
      let headers;
      for (let i = 2; i < a.length; i += 2) {
        if (a[i] === 'Content-Range') headers = { 'Content-Range': a[i + 1] };
      }
      pass(req, res, next, status, headers);
      return;
    }
    served();
    res.statusCode = status;
    // As send: what the application set before (Content-Type, Cache-Control,
    // ETag...) is kept.
    for (let i = 2; i < a.length; i += 2) {
      if (!res.hasHeader(a[i])) res.setHeader(a[i], a[i + 1]);
    }
    const length = a[1];
    if (length >= 0) res.setHeader('Content-Length', length);
    if (file.range()[2] === undefined) {
      // No body: HEAD, 304, an empty file.
      res.end();
      return;
    }
    // Response compression (the server's `compression` option), as
    // respondWithFile's (lib/compression.js, which leaves a 206 alone).
    res._fileCoding = res._compressCfg ?
      compression.prepare(res, res._compressCfg, length) : 0;
    const r = respondWithNativeFile.call(res, file, () => {
      // The body broke after its head went out: nothing else can be said.
      res.destroy();
    });
    if (r < 0) file.close();
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
          pass(req, res, next, 404);
        }
        return;
      }
    }
    const fields = [];
    const h = req.headers;
    for (let i = 0; i < FIELDS.length; i++) {
      const v = h[FIELDS[i]];
      if (v !== undefined) fields.push(FIELDS[i], String(v));
    }
    const file = new NativeFile();
    const done = (kind) => {
      res.removeListener('close', gone);
      if (res.headersSent || res.destroyed) {
        file.close();
        return;
      }
      if (kind === ANSWERED) {
        answer(req, res, next, file, served);
      } else if (kind === DIRECTORY && redirect) {
        served();
        redirectDirectory(req, res);
      } else {
        pass(req, res, next, 404);
      }
    };
    // The client left mid-lookup: cancel it (its descriptor is closed).
    const gone = () => file.close();
    const kind = file.lookupStatic(mount, url, req.method === 'HEAD', fields,
      res._fileCache === true, done);
    if (kind === PENDING) res.once('close', gone);
    else if (kind < 0) next(codedError('ERR_SLUICE_STATIC_LOOKUP', 'serveStatic lookup failed'));
    else done(kind);
  }

  const noop = () => {};
  const middleware = function serveStatic(req, res, next) { handle(req, res, next, noop); };
  middleware[kHandle] = handle;
  return middleware;
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
