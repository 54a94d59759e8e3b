'use strict';

// Option parsing and validation for Server: createServer(options) →
// the values Server keeps and the NativeServer's option object, listen()'s
// argument forms → one shape, and the rules the server properties apply
// when they are set later (node has the limits and timeouts as
// properties too).

const { codedError, codedTypeError, codedRangeError, invalidArgType } = require('../common/errors');
const defaults = require('../common/defaults');

// Limits enforced natively (src/core/common/options.h), as createServer options
// and as server properties: name -> default.
// null / undefined / Infinity mean "no limit" except for maxHeadersCount
// (null: node's default, 2000; 0: no limit).
const limitDefaults = {
  maxHeadersCount: null,
  maxRequestsPerSocket: 0,
  maxConnections: undefined,
  maxRequestBodySize: Infinity,
  maxOutputBuffer: 16 * 1024 * 1024,
};

function validateLimit(name, v) {
  if (v === undefined || v === null) return v;
  if (typeof v !== 'number' || Number.isNaN(v) || v < 0) {
    throw codedTypeError('ERR_INVALID_ARG_TYPE', `The "${name}" property must be a non-negative number`);
  }
  return v;
}

// The value the native server is given for a limit.
function nativeLimit(name, v) {
  if (name === 'maxHeadersCount' && (v === null || v === undefined)) return 2000;
  return v === null || v === undefined ? Infinity : v;
}


function validateTimeout(name, v) {
  if (v === undefined) return defaults[name];
  if (typeof v !== 'number' || Number.isNaN(v) || v < 0) {
    throw codedTypeError('ERR_INVALID_ARG_VALUE', `The "options.${name}" property must be a non-negative number`);
  }
  return v;
}

// node's keepAliveTimeoutBuffer option (Node 22+; Node 20 has the same
// fixed 1000 ms): an integer >= 0, in ms.
function validateKeepAliveTimeoutBuffer(v) {
  if (v === undefined) return 1000;
  if (typeof v !== 'number') throw invalidArgType('"keepAliveTimeoutBuffer" argument', 'of type number', v);
  if (!Number.isInteger(v)) {
    throw codedRangeError('ERR_OUT_OF_RANGE',
      `The value of "keepAliveTimeoutBuffer" is out of range. It must be an integer. Received ${v}`);
  }
  if (v < 0 || v > Number.MAX_SAFE_INTEGER) {
    throw codedRangeError('ERR_OUT_OF_RANGE',
      `The value of "keepAliveTimeoutBuffer" is out of range. It must be >= 0 && <= ${Number.MAX_SAFE_INTEGER}. Received ${v}`);
  }
  return v;
}

// The native server's value for a timeout property set later: anything
// that is not a non-negative number, and Infinity, mean "none" (0).
function nativeTimeout(v) {
  const ms = typeof v === 'number' && v >= 0 ? v : 0;
  return ms === Infinity ? 0 : ms;
}

function validateInt(name, v, min, max) {
  if (v === undefined) return undefined;
  if (!Number.isInteger(v) || v < min || v > max) {
    throw codedTypeError('ERR_INVALID_ARG_VALUE', `The "options.${name}" property must be an integer in [${min}, ${max}]`);
  }
  return v;
}

// options.http2 { maxConcurrentStreams, initialWindowSize,
// connectionWindowSize } (or node's options.settings for the first two) →
// the NativeServer's option names. Unset ones keep the core's defaults
// (100 streams, 1 MiB stream window, 16 MiB connection window).
function http2NativeOptions(options) {
  const h2 = options.http2 || {};
  // As node:http2: settings, when given, is an object.
  if (options.settings !== undefined && (options.settings === null || typeof options.settings !== 'object')) {
    throw invalidArgType('"options.settings" property', 'of type object', options.settings);
  }
  const settings = options.settings || {};
  const out = {};
  const mcs = validateInt('http2.maxConcurrentStreams',
    h2.maxConcurrentStreams !== undefined ? h2.maxConcurrentStreams : settings.maxConcurrentStreams,
    0, 0xffffffff);
  const iws = validateInt('http2.initialWindowSize',
    h2.initialWindowSize !== undefined ? h2.initialWindowSize : settings.initialWindowSize,
    0, 0x7fffffff);
  const cws = validateInt('http2.connectionWindowSize', h2.connectionWindowSize, 65535, 0x7fffffff);
  if (mcs !== undefined) out.http2MaxConcurrentStreams = mcs;
  if (iws !== undefined) out.http2StreamWindow = iws;
  if (cws !== undefined) out.http2ConnectionWindow = cws;
  // node's settings.enableConnectProtocol: SETTINGS_ENABLE_CONNECT_PROTOCOL
  // (RFC 8441 extended CONNECT) in every session's SETTINGS. An attached
  // WebSocketServer turns it on too (lib/websocket/websocket_server.js).
  if (settings.enableConnectProtocol !== undefined && typeof settings.enableConnectProtocol !== 'boolean') {
    throw codedTypeError('ERR_HTTP2_INVALID_SETTING_VALUE',
      'Invalid value for setting "enableConnectProtocol": ' + settings.enableConnectProtocol);
  }
  if (settings.enableConnectProtocol === true) out.http2ConnectProtocol = 1;
  // node:http2's header list limits, enforced as node does (RST_STREAM
  // ENHANCE_YOUR_CALM): settings.maxHeaderListSize (or its alias
  // maxHeaderSize), advertised instead of the top-level maxHeaderSize and
  // its 431; maxHeaderListPairs, pseudo-headers included, at least 4 (node's
  // floor: a request's own pseudo-headers).
  const mhls = validateInt('settings.maxHeaderListSize',
    settings.maxHeaderListSize !== undefined ? settings.maxHeaderListSize : settings.maxHeaderSize,
    0, 0xffffffff);
  if (mhls !== undefined) out.http2MaxHeaderListSize = mhls;
  const pairs = validateInt('maxHeaderListPairs', options.maxHeaderListPairs, 0, 0xffffffff);
  if (pairs !== undefined) out.http2MaxHeaderPairs = Math.max(pairs, 4);
  // maxSessionInvalidFrames (node's default 1000: invalid frames before
  // the session is closed) and maxSettings (entries per SETTINGS frame,
  // default 32).
  const invalid = validateInt('maxSessionInvalidFrames', options.maxSessionInvalidFrames, 0, 0xffffffff);
  if (invalid !== undefined) out.http2MaxInvalidFrames = invalid;
  const maxSettings = validateInt('maxSettings', options.maxSettings, 1, 0xffffffff);
  if (maxSettings !== undefined) out.http2MaxSettings = maxSettings;
  return out;
}

// createServer([options][, requestListener]) → { options, requestListener }
// with options an object.
function serverArgs(options, requestListener) {
  if (typeof options === 'function') return { options: {}, requestListener: options };
  if (options == null) return { options: {}, requestListener };
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw invalidArgType('"options" argument', 'of type object', options);
  }
  return { options, requestListener };
}

// createServer's options → what Server keeps (`server`) and the
// NativeServer's option object (`native`, without the HTTP/2 part).
function serverOptions(options) {
  const maxHeaderSize = options.maxHeaderSize === undefined ?
    defaults.maxHeaderSize : options.maxHeaderSize;
  if (!Number.isInteger(maxHeaderSize) || maxHeaderSize <= 0) {
    throw codedTypeError('ERR_INVALID_ARG_VALUE', 'The "options.maxHeaderSize" property must be a positive integer');
  }
  const requestTimeout = validateTimeout('requestTimeout', options.requestTimeout);
  // As node: an unset headersTimeout is the lesser of its default and
  // requestTimeout (so requestTimeout alone may lower it).
  const headersTimeout = options.headersTimeout === undefined ?
    Math.min(defaults.headersTimeout, requestTimeout) :
    validateTimeout('headersTimeout', options.headersTimeout);
  const keepAliveTimeout = validateTimeout('keepAliveTimeout', options.keepAliveTimeout);
  const keepAliveTimeoutBuffer = validateKeepAliveTimeoutBuffer(options.keepAliveTimeoutBuffer);
  if (requestTimeout > 0 && headersTimeout > 0 && headersTimeout > requestTimeout) {
    // As node: the headers cannot be given longer than the whole request.
    throw codedRangeError('ERR_OUT_OF_RANGE',
      `The value of "headersTimeout" is out of range. It must be <= requestTimeout. Received ${headersTimeout}`);
  }
  const limits = {};
  const nativeLimits = {};
  for (const name of Object.keys(limitDefaults)) {
    const v = options[name] === undefined ? limitDefaults[name] : validateLimit(name, options[name]);
    limits[name] = v;
    nativeLimits[name] = nativeLimit(name, v);
  }
  for (const name of ['noDelay', 'keepAlive', 'rejectNonStandardBodyWrites', 'insecureHTTPParser',
    'joinDuplicateHeaders']) {
    if (options[name] !== undefined && typeof options[name] !== 'boolean') {
      throw invalidArgType(`"options.${name}" property`, 'of type boolean', options[name]);
    }
  }
  // As node: the option, else the process flag (--insecure-http-parser,
  // on the command line or in NODE_OPTIONS).
  const insecureHTTPParser = options.insecureHTTPParser !== undefined ?
    options.insecureHTTPParser : insecureParserFlag();
  const allocator = options.requestBufferAllocator;
  if (allocator !== undefined && allocator !== null && typeof allocator !== 'function') {
    throw codedTypeError('ERR_INVALID_ARG_TYPE',
      'The "options.requestBufferAllocator" property must be of type function');
  }
  if (options.sendfile !== undefined && typeof options.sendfile !== 'boolean') {
    throw codedTypeError('ERR_INVALID_ARG_TYPE',
      'The "options.sendfile" property must be of type boolean');
  }
  return {
    server: {
      maxHeaderSize,
      headersTimeout,
      requestTimeout,
      keepAliveTimeout,
      keepAliveTimeoutBuffer,
      limits,
      // As node (RFC 9112 3.2): an HTTP/1.1 request without Host gets 400.
      requireHostHeader: options.requireHostHeader !== false,
      requestBufferAllocator: allocator || null,
      // As node's http.Server (net.Server's properties).
      noDelay: options.noDelay !== false,
      keepAlive: options.keepAlive === true,
      keepAliveInitialDelay: Math.max(0, ~~(options.keepAliveInitialDelay / 1000)),
      rejectNonStandardBodyWrites: options.rejectNonStandardBodyWrites === true,
      // As node: undefined unless given.
      joinDuplicateHeaders: options.joinDuplicateHeaders,
      insecureHTTPParser: options.insecureHTTPParser,
      // The native backpressure threshold (res.writableHighWaterMark,
      // socket.writableHighWaterMark).
      highWaterMark: options.highWaterMark || defaults.highWaterMark,
    },
    native: {
      maxHeaderSize,
      headersTimeout,
      requestTimeout,
      keepAliveTimeout,
      keepAliveTimeoutBuffer,
      highWaterMark: options.highWaterMark || defaults.highWaterMark,
      bodyAllocator: !!allocator,
      // Cleartext HTTP/1.1 file bodies with sendfile(2) (docs/files.md).
      sendfile: options.sendfile !== false,
      noDelay: options.noDelay !== false,
      tcpKeepAlive: options.keepAlive === true,
      tcpKeepAliveDelay: Math.max(0, ~~(options.keepAliveInitialDelay / 1000)),
      insecureHTTPParser,
      ...nativeLimits,
      ...http2NativeOptions(options),
    },
  };
}

// node's --insecure-http-parser, which node reads through its internal
// option parser: the public places it can be are the process's own
// arguments and NODE_OPTIONS.
function insecureParserFlag() {
  if (process.execArgv.includes('--insecure-http-parser')) return true;
  const env = process.env.NODE_OPTIONS;
  return typeof env === 'string' && /(?:^|\s)--insecure-http-parser(?:\s|$)/.test(env);
}

// As net: a string that reads as a number is a port, any other a path.
function isPipeName(v) {
  return typeof v === 'string' && !(Number(v) >= 0);
}

// listen()'s forms, as net.Server.listen: (port[, host][, backlog][, cb]),
// (port[, backlog][, cb]), (path[, backlog][, cb]), (options[, cb]) → one
// shape; `path` set means a Unix domain socket. reusePort stays undefined
// when the caller did not say (the cluster default decides).
function listenArgs(args) {
  args = args.slice();
  const out = {
    port: 0, host: undefined, path: undefined, backlog: 511, reusePort: undefined,
    exclusive: false, cb: undefined,
  };
  if (typeof args[args.length - 1] === 'function') out.cb = args.pop();
  let given = args[0];
  if (args[0] !== null && typeof args[0] === 'object') {
    const o = args[0];
    given = o.port;
    if (o.port === undefined && o.path !== undefined && o.path !== null) {
      // As net: { path } without a port (a port wins when both are given).
      if (typeof o.path !== 'string' || o.path === '') {
        throw codedTypeError('ERR_INVALID_ARG_VALUE', 'The "options.path" property must be a non-empty string');
      }
      out.path = o.path;
      if (o.backlog !== undefined) out.backlog = o.backlog;
      out.readableAll = o.readableAll === true;
      out.writableAll = o.writableAll === true;
      return out;
    }
    if (o.port !== undefined) out.port = o.port;
    out.host = o.host;
    if (o.backlog !== undefined) out.backlog = o.backlog;
    if (o.reusePort !== undefined) {
      if (typeof o.reusePort !== 'boolean') {
        throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "options.reusePort" property must be of type boolean');
      }
      out.reusePort = o.reusePort;
    }
    out.exclusive = o.exclusive === true;
  } else if (isPipeName(args[0])) {
    out.path = args[0];
    if (typeof args[1] === 'number') out.backlog = args[1];
    return out;
  } else {
    if (args[0] !== undefined && args[0] !== null) out.port = args[0];
    if (typeof args[1] === 'string') {
      out.host = args[1];
      if (typeof args[2] === 'number') out.backlog = args[2];
    } else if (typeof args[1] === 'number') {
      out.backlog = args[1];
    }
  }
  const port = Number(out.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw codedError('ERR_SOCKET_BAD_PORT', `Port should be >= 0 and < 65536. Received ${given}.`);
  }
  out.port = port;
  return out;
}

module.exports = {
  defaults,
  limitDefaults,
  validateLimit,
  nativeLimit,
  nativeTimeout,
  serverArgs,
  serverOptions,
  listenArgs,
};
