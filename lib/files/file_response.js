'use strict';

// respondWithFile / respondWithFD for HTTP/1.1 responses (and, through
// `openNativeFile`, for any protocol whose stream can take a native
// FileSource). The file is opened and stat'ed on the libuv threadpool (or
// found in the open-file cache, lib/files/open_file_cache.js: no open at all); JS
// sees the stat once (statCheck, Content-Length); then the body flows
// natively (src/core/body/pipe.h, src/core/body/file_source.h): no JS call per
// chunk, no synchronous file I/O anywhere.
//
// Options, as node:http2's respondWithFile:
//   offset, length   byte range (length clamped to the file's end)
//   statCheck(stat, headers, statOptions)  may add headers (on `headers`);
//                    returning false cancels (the handler answers itself)
//   onError(err)     called instead of the default error answer
// Differences from node:http2, on purpose or by protocol:
//   - Without onError, an open/stat failure answers 404 (ENOENT, ENOTDIR)
//     or 500 (anything else) with an empty body, since an HTTP/1.1 response
//     has no RST_STREAM; if the failure happens mid-body (the head and its
//     Content-Length are already out), the connection is destroyed.
//   - Like node:http2, `last-modified` is not added: statCheck gets
//     stat.mtime to set it (headers['last-modified'] =
//     stat.mtime.toUTCString()). Content-Length is set after statCheck
//     from the stat and the range (as node does).
//   - statOptions changes made by statCheck are ignored (the range is fixed
//     when the file is opened, so its first read can start at once).

const { URL, fileURLToPath } = require('url');
const binding = require('../common/binding');
const compression = require('../compress/compression');
const fileCache = require('./open_file_cache');
const { inspect } = require('util');
const { codedError, codedTypeError, codedRangeError, invalidArgType } = require('../common/errors');

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFCHR = 0o020000;
const S_IFBLK = 0o060000;
const S_IFIFO = 0o010000;
const S_IFLNK = 0o120000;
const S_IFSOCK = 0o140000;

// fs.Stats-shaped view of the native fstat (fs.Stats' constructor is
// deprecated, so a look-alike).
class FileStat {
  constructor(a) {
    this.dev = a[0]; this.mode = a[1]; this.nlink = a[2]; this.uid = a[3];
    this.gid = a[4]; this.rdev = a[5]; this.blksize = a[6]; this.ino = a[7];
    this.size = a[8]; this.blocks = a[9];
    this.atimeMs = a[10]; this.mtimeMs = a[11]; this.ctimeMs = a[12];
    this.birthtimeMs = a[13];
  }
  // Dates on demand: most responses never look at them. Rounded to the
  // millisecond as fs.Stats' dates are (new Date() would truncate).
  get atime() { return new Date(Math.round(this.atimeMs)); }
  get mtime() { return new Date(Math.round(this.mtimeMs)); }
  get ctime() { return new Date(Math.round(this.ctimeMs)); }
  get birthtime() { return new Date(Math.round(this.birthtimeMs)); }
  isFile() { return (this.mode & S_IFMT) === S_IFREG; }
  isDirectory() { return (this.mode & S_IFMT) === S_IFDIR; }
  isCharacterDevice() { return (this.mode & S_IFMT) === S_IFCHR; }
  isBlockDevice() { return (this.mode & S_IFMT) === S_IFBLK; }
  isFIFO() { return (this.mode & S_IFMT) === S_IFIFO; }
  isSymbolicLink() { return (this.mode & S_IFMT) === S_IFLNK; }
  isSocket() { return (this.mode & S_IFMT) === S_IFSOCK; }
}

function uvError(errno, syscall, path) {
  const code = binding.errname(errno);
  let msg = `${code}: ${binding.strerror(errno)}, ${syscall}`;
  if (path !== undefined) msg += ` '${path}'`;
  const err = new Error(msg);
  err.errno = errno;
  err.code = code;
  err.syscall = syscall;
  if (path !== undefined) err.path = path;
  return err;
}

function toPath(p) {
  if (typeof p === 'string') return p;
  if (Buffer.isBuffer(p)) return p.toString();
  if (p instanceof URL) return fileURLToPath(p);
  throw codedTypeError('ERR_INVALID_ARG_TYPE',
    'The "path" argument must be of type string or an instance of Buffer or URL');
}

function toFd(fd) {
  if (fd !== null && typeof fd === 'object' && typeof fd.fd === 'number') fd = fd.fd; // FileHandle
  if (typeof fd !== 'number') {
    throw invalidArgType('"fd" argument', 'of type number or an instance of FileHandle', fd);
  }
  if (!Number.isInteger(fd) || fd < 0 || fd > 0x7fffffff) {
    throw codedRangeError('ERR_OUT_OF_RANGE',
      `The value of "fd" is out of range. It must be >= 0 && <= 2147483647. Received ${fd}`);
  }
  return fd;
}

function validateOptions(options) {
  if (options === undefined || options === null) options = {};
  else if (typeof options !== 'object') {
    throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "options" argument must be of type object');
  }
  // As node:http2: a value of the wrong type is ERR_INVALID_ARG_VALUE
  // (its message shows the value); a number out of range ERR_OUT_OF_RANGE.
  for (const [name, type] of [['offset', 'number'], ['length', 'number'], ['statCheck', 'function'],
    ['onError', 'function']]) {
    const v = options[name];
    if (v !== undefined && typeof v !== type) {
      throw codedTypeError('ERR_INVALID_ARG_VALUE',
        `The property 'options.${name}' is invalid. Received ${inspect(v)}`);
    }
  }
  let offset = options.offset;
  let length = options.length;
  if (offset === undefined) offset = 0;
  else if (!Number.isSafeInteger(offset) || offset < 0) {
    throw codedRangeError('ERR_OUT_OF_RANGE', 'The value of "options.offset" is out of range');
  }
  if (length === undefined || length === -1) length = -1;
  else if (!Number.isSafeInteger(length) || length < 0) {
    throw codedRangeError('ERR_OUT_OF_RANGE', 'The value of "options.length" is out of range');
  }
  return {
    offset, length,
    hasOffset: options.offset !== undefined,
    hasLength: length >= 0,
    statCheck: options.statCheck,
    onError: options.onError,
  };
}

// Opens `target` (a path, or an fd when isFd) natively and calls
// onStat(err, stat, file) once, never from inside this call; `file` is the
// NativeFile whose opened source a protocol sink takes (file.respondHttp1,
// or an HTTP/2 stream). With useCache a path goes through the open-file
// cache (lib/files/open_file_cache.js): a hit is open at once, its stat comes back in
// fileCache.statArray and onStat follows on the next tick (no threadpool).
function openNativeFile(target, isFd, opts, onStat, useCache) {
  const file = new binding.NativeFile();
  const r = file.open(target, isFd, opts.offset, opts.length, (errno, syscall, st) => {
    if (errno !== 0) onStat(uvError(errno, syscall, isFd ? undefined : target), null, file);
    else onStat(null, new FileStat(st), file);
  }, useCache === true);
  if (r === 1) {
    process.nextTick(onStat, null, new FileStat(fileCache.statArray), file);
  } else if (r !== 0) {
    const err = uvError(r, isFd ? 'fstat' : 'open', isFd ? undefined : target);
    process.nextTick(onStat, err, null, file);
  }
  return file;
}

// The default answer to an error before anything was sent.
function answerError(res, err) {
  if (res.destroyed || res.writableEnded) return;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const status = err && (err.code === 'ENOENT' || err.code === 'ENOTDIR') ? 404 : 500;
  // sluice's own answer: the user's headers go, nothing else changes
  // (removeHeader would also suppress Date / Connection / framing, as node's).
  for (const name of res.getHeaderNames()) res._dropHeader(name);
  res.statusCode = status;
  res.setHeader('content-length', 0);
  res.end();
}

function respond(res, target, isFd, headers, options) {
  if (res.headersSent || res.writableEnded || res._nativeFile) {
    throw codedError('ERR_HTTP_HEADERS_SENT', 'Response has already been initiated.');
  }
  if (headers !== undefined && headers !== null && typeof headers !== 'object') {
    throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "headers" argument must be of type object');
  }
  target = isFd ? toFd(target) : toPath(target);
  const opts = validateOptions(options);
  if (options && options.precompressed && !isFd) {
    // path.br / path.gz when acceptable, present and not older (compress/compression.js).
    compression.precompressed(res, target, (path) => {
      if (!res.headersSent && !res.writableEnded && !res.destroyed) {
        respond(res, path, false, headers, { ...options, precompressed: false });
      }
    });
    return;
  }
  // Headers given here join those already set on res; ':status' sets the
  // status as on an HTTP/2 stream.
  if (headers) {
    for (const key of Object.keys(headers)) {
      const v = headers[key];
      if (v === undefined) continue;
      if (key === ':status') res.statusCode = Number(v);
      else if (key[0] !== ':') res.setHeader(key, v);
    }
  }
  // What the head would carry now is checked now (a throw here is the
  // caller's); statCheck's additions are checked again in start().
  res._checkHead();
  res._nativeFile = serveFile(new ResponseFileTarget(res), target, isFd, opts);
}

// The one flow of a native file response, for both protocols: open and
// stat natively, refuse what node:http2 refuses, statCheck, the length,
// then `target` sends the head and hands the file to its pipe sink.
// `target` (ResponseFileTarget below, Http2StreamFileTarget in
// lib/http2/stream.js) adapts the flow to its response object:
//   opened()             the open finished (drop the pending NativeFile)
//   useCache()           true: open through the open-file cache
//   gone()               true when nothing can be sent any more
//   fail(err)            the default answer to an error (no onError)
//   statCheckHeaders()   the headers object statCheck may change
//   applyStatCheck(h)    takes back what statCheck changed
//   cancelled()          statCheck returned false, or onError took an
//                        error: the handler answers
//   start(file, length, onMidBodyError)   sends; length < 0: unknown
// Returns the NativeFile (file.close() cancels).
function serveFile(target, path, isFd, opts) {
  const name = isFd ? undefined : path;
  const fail = (err) => {
    if (opts.onError) {
      target.cancelled();  // onError answers
      opts.onError(err);
    } else {
      target.fail(err);
    }
  };
  const file = openNativeFile(path, isFd, opts, (err, stat) => {
    target.opened();
    if (target.gone()) {
      file.close();
      return;
    }
    if (err) {
      fail(err);
      return;
    }
    const bad = statError(stat, opts);
    if (bad) {
      file.close();
      fail(bad);
      return;
    }
    const [, length, known] = file.range();
    if (opts.statCheck) {
      const h = target.statCheckHeaders();
      if (!runStatCheck(file, opts, stat, h)) {
        target.cancelled();
        return;
      }
      if (target.gone()) {
        file.close();
        return;
      }
      target.applyStatCheck(h);
    }
    target.start(file, known ? length : -1, (status) => {
      // The body broke after its head went out (a cancel, the response
      // closing first, reaches the response as 'close').
      if (status === 0 || binding.errname(status) === 'ECANCELED') return;
      if (opts.onError) opts.onError(uvError(status, 'read', name));
    });
  }, !isFd && target.useCache());
  return file;
}

// serveFile's target for a ServerResponse (HTTP/1.1, or HTTP/2 compat).
class ResponseFileTarget {
  constructor(res) { this.res = res; }

  opened() { this.res._nativeFile = null; }

  useCache() { return this.res._fileCache === 2; }  // fileCache.ALL

  gone() {
    const res = this.res;
    return res.destroyed || res.writableEnded || res.headersSent;
  }

  fail(err) { answerError(this.res, err); }

  statCheckHeaders() {
    const h = this.res.getHeaders();
    h[':status'] = this.res.statusCode;
    return h;
  }

  applyStatCheck(h) {
    const res = this.res;
    try {
      for (const key of Object.keys(h)) {
        if (key === ':status') res.statusCode = Number(h[key]);
        else if (key[0] !== ':' && h[key] !== undefined && res.getHeader(key) !== h[key]) {
          res.setHeader(key, h[key]);
        }
      }
    } catch (e) {
      this.headError = e;  // start() destroys the response with it
    }
  }

  cancelled() {}

  start(file, length, onMidBodyError) {
    const res = this.res;
    // statCheck, or the handler since the call, may have changed the head:
    // a head that cannot be written is refused before anything is sent.
    if (!this.headError) {
      try {
        res._checkHead();
      } catch (e) {
        this.headError = e;
      }
    }
    if (this.headError) {
      headFailed(res, file, this.headError);
      return;
    }
    if (length >= 0) res.setHeader('content-length', length);
    else res._dropHeader('content-length');
    // Response compression (lib/compress/compression.js): a compressible body goes
    // through the native compressor in the pipe (then chunked).
    if (res._compressCfg) res._fileCoding = compression.prepare(res, res._compressCfg, length);
    const r = res._respondWithNativeFile(file, onMidBodyError);
    if (r < 0) file.close();
  }
}

// The head cannot be written (a header or status statCheck set, or one
// changed after the call): nothing was sent; as node:http2 does for its
// stream, the response is destroyed with the error.
function headFailed(res, file, err) {
  file.close();
  res._fail(err);
}

// What node:http2 refuses to send once the file is stat'ed: an Error, or
// null. Shared by res.respondWithFile and stream.respondWithFile.
function statError(stat, opts) {
  if (stat.isDirectory()) {
    return codedError('ERR_HTTP2_SEND_FILE', 'Directories cannot be sent');
  }
  if (!stat.isFile() && (opts.hasOffset || opts.hasLength)) {
    return codedError('ERR_HTTP2_SEND_FILE_NOSEEK',
      'Offset or length can only be specified for regular files');
  }
  return null;
}

// Calls opts.statCheck(stat, headers, { offset, length }) as node:http2
// does. Returns false when it cancelled the response (returned false); the
// file is closed then, and also when statCheck throws (the throw goes on).
function runStatCheck(file, opts, stat, headers) {
  let ok;
  try {
    // As node:http2: the offset and length asked for (0 and -1 when not).
    ok = opts.statCheck(stat, headers, { offset: opts.offset, length: opts.length });
  } catch (e) {
    file.close();
    throw e;
  }
  if (ok === false) {
    file.close();
    return false;
  }
  return true;
}

module.exports = { respond, serveFile, openNativeFile, FileStat, validateOptions, uvError, toPath, toFd };
