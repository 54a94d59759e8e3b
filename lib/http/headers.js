'use strict';

// Header validation and the request-header views (headers, headersDistinct)
// node's http exposes, built lazily from the flat rawHeaders array.
//
// Validation (docs/security.md): every user string that reaches the wire
// is checked as the exact string that is written. Names must be tokens;
// values, status messages and trailers may hold HTAB, SP..~ and obs-text
// only: no CR, LF or NUL, and no character above U+00FF, which the latin1
// encoding of the head would truncate to its low byte (U+010A -> LF).

const { format } = require('util');
const { codedError, codedTypeError, codedRangeError } = require('../common/errors');

const tokenRegExp = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;
// As node's checkInvalidHeaderChar: anything but HTAB, SP..~ and obs-text.
const invalidHeaderCharRegExp = /[^\t\x20-\x7e\x80-\xff]/;

function validateHeaderName(name, label = 'Header name') {
  if (typeof name !== 'string' || !name || !tokenRegExp.test(name)) {
    throw codedTypeError('ERR_INVALID_HTTP_TOKEN',
      `${label} must be a valid HTTP token ["${name}"]`);
  }
}

function checkInvalidHeaderChar(s) {
  return invalidHeaderCharRegExp.test(s);
}

function invalidCharError(what, name) {
  return codedTypeError('ERR_INVALID_CHAR',
    name === undefined ? `Invalid character in ${what}` : `Invalid character in ${what} ["${name}"]`);
}

// A value as the string that will be written, checked. Strings and other
// primitives are checked when set (setHeader) and cannot change; objects
// (a toString, an array mutated after setHeader) are stringified here once
// and that string is what is both checked and written.
function wireValue(name, v, what = 'header content') {
  const s = typeof v === 'string' ? v : String(v);
  if (invalidHeaderCharRegExp.test(s)) throw invalidCharError(what, name);
  return s;
}

// As node's writeHead: the status message (the property or the argument)
// is checked whenever a head is serialized.
function validateStatusMessage(msg) {
  if (typeof msg === 'string' && invalidHeaderCharRegExp.test(msg)) {
    throw invalidCharError('statusMessage');
  }
}

function validateHeaderValue(name, value) {
  if (value === undefined) {
    throw codedTypeError('ERR_HTTP_INVALID_HEADER_VALUE',
      `Invalid value "${value}" for header "${name}"`);
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) checkValueChars(name, value[i]);
  } else {
    checkValueChars(name, value);
  }
}

function checkValueChars(name, v) {
  if (invalidHeaderCharRegExp.test(String(v))) throw invalidCharError('header content', name);
}

function validateStatusCode(code) {
  const original = code;
  code |= 0;
  if (code < 100 || code > 999) {
    // As node's message (util.format's %s: objects inspected, '{}').
    throw codedRangeError('ERR_HTTP_INVALID_STATUS_CODE',
      format('Invalid status code: %s', original));
  }
  return code;
}

// node's validateLinkHeaderValue (writeEarlyHints): a string or an array
// of strings shaped like '</a.css>; rel=preload'; returns the joined value.
const linkValueRegExp = /^(?:<[^>]*>)(?:\s*;\s*[^;"\s]+(?:=(")?[^;"\s]*\1)?)*$/;

function validateLinkHeaderValue(hints) {
  const bad = () => codedTypeError('ERR_INVALID_ARG_VALUE',
    'The argument \'hints\' must be an array or string of format "</styles.css>; rel=preload; as=style"');
  if (typeof hints === 'string') {
    if (!linkValueRegExp.test(hints)) throw bad();
    return hints;
  }
  if (!Array.isArray(hints)) throw bad();
  let out = '';
  for (let i = 0; i < hints.length; i++) {
    if (typeof hints[i] !== 'string' || !linkValueRegExp.test(hints[i])) throw bad();
    out += (i > 0 ? ', ' : '') + hints[i];
  }
  return out;
}

// Headers whose duplicates node drops (the first wins), per
// IncomingMessage._addHeaderLine.
const dropDuplicates = new Set([
  'content-type', 'content-length', 'user-agent', 'referer', 'host',
  'authorization', 'proxy-authorization', 'if-modified-since',
  'if-unmodified-since', 'from', 'location', 'max-forwards',
  'retry-after', 'etag', 'last-modified', 'server', 'age', 'expires',
]);

// Builds req.headers from [name, value, name, value, ...] as node does:
// lower-cased names; set-cookie an array; cookie joined with '; ';
// duplicates of the fields above dropped (joined with ', ' too when
// `join`: node's joinDuplicateHeaders); others joined with ', '.
// As node: a plain object (code calls headers.hasOwnProperty); a field
// named like an inherited property ('constructor') is an own value like
// any other, and '__proto__' is dropped (assigning a string to it is a
// no-op, as in node). `lowerCased`: the names are lower-case already
// (HTTP/2: nghttp2 refuses a request with an upper-case name).
function headersObject(raw, join, lowerCased) {
  const headers = {};
  for (let i = 0; i < raw.length; i += 2) {
    const key = lowerCased === true ? raw[i] : raw[i].toLowerCase();
    const value = raw[i + 1];
    let prev = headers[key];
    if (prev !== undefined && !Object.prototype.hasOwnProperty.call(headers, key)) prev = undefined;
    if (prev === undefined) {
      headers[key] = key === 'set-cookie' ? [value] : value;
    } else if (key === 'set-cookie') {
      prev.push(value);
    } else if (dropDuplicates.has(key)) {
      // The first one wins, unless the server joins duplicates.
      if (join) headers[key] = prev + ', ' + value;
    } else if (key === 'cookie') {
      headers[key] = prev + '; ' + value;
    } else {
      headers[key] = prev + ', ' + value;
    }
  }
  return headers;
}

// HTTP/2 fields node:http2 keeps one of (the first wins) when a request
// repeats them; other repeats join with ', ' (cookie: '; ', set-cookie:
// an array).
const h2SingleValue = new Set([
  ':status', ':method', ':authority', ':scheme', ':path', ':protocol',
  'access-control-allow-credentials', 'access-control-max-age',
  'access-control-request-method', 'age', 'authorization', 'content-encoding',
  'content-language', 'content-length', 'content-location', 'content-md5',
  'content-range', 'content-type', 'date', 'dnt', 'etag', 'expires', 'from', 'host',
  'if-match', 'if-modified-since', 'if-none-match', 'if-range', 'if-unmodified-since',
  'last-modified', 'location', 'max-forwards', 'proxy-authorization', 'range', 'referer',
  'retry-after', 'tk', 'upgrade-insecure-requests', 'user-agent', 'x-content-type-options',
]);

// The headers object of node:http2's 'stream' and 'trailers' events from
// [name, value, ...] (names lower-case already: nghttp2 refuses an
// upper-case one): null-prototype, in arrival order, duplicates as
// h2SingleValue says. Made as {} whose prototype is then set to null,
// not as `{ __proto__: null }` or Object.create(null): those start in
// dictionary mode, a thousand instructions more per request head (V8 11);
// this one keeps fast properties, and as the prototype is null before the
// first field, a field named '__proto__' or 'constructor' is an own value
// like any other, as in node.
function h2HeadersObject(raw) {
  const headers = Object.setPrototypeOf({}, null);
  for (let i = 0; i < raw.length; i += 2) addH2Field(headers, raw[i], raw[i + 1]);
  headers[sensitiveHeaders] = NO_SENSITIVE;
  return headers;
}

// node's headers[http2.sensitiveHeaders]: the fields that arrived
// never-indexed. The native head does not carry HPACK's never-indexed
// flag, so the list is always empty; one frozen array for every head
// rather than an allocation per request.
const { sensitiveHeaders } = require('http2');
const NO_SENSITIVE = Object.freeze([]);

// The same from the native side's packed head, "name\0value\0name\0value"
// (lib/http2/session.js onStream), pushing the fields onto `rawOut` (the
// 'stream' event's rawHeaders) on the way: one pass of indexOf and slice,
// cheaper than split('\0') and a second pass over its array.
function h2HeadersFromPacked(packed, rawOut) {
  const headers = Object.setPrototypeOf({}, null);
  const end = packed.length;
  let p = 0;
  while (p < end) {
    const n = packed.indexOf('\0', p);
    let e = packed.indexOf('\0', n + 1);
    if (e < 0) e = end;
    const key = knownName(packed, p, n - p);
    const value = packed.slice(n + 1, e);
    rawOut.push(key, value);
    addH2Field(headers, key, value);
    p = e + 1;
  }
  headers[sensitiveHeaders] = NO_SENSITIVE;
  return headers;
}

// The name at packed[p, p + len) — a literal when it is one of the
// common request field names: a literal is an internalized string, so
// the object's keyed loads and stores take it as is, where a fresh slice
// is first looked up in V8's string table (a third of the object's cost).
function knownName(packed, p, len) {
  let name;
  switch (len) {
    case 5: name = ':path'; break;
    case 6: name = packed.charCodeAt(p) === 97 ? 'accept' : 'cookie'; break;
    case 7: name = packed.charCodeAt(p + 1) === 109 ? ':method' : ':scheme'; break;
    case 10: name = packed.charCodeAt(p) === 58 ? ':authority' : 'user-agent'; break;
    case 15: name = packed.charCodeAt(p + 7) === 101 ? 'accept-encoding' : 'accept-language'; break;
    default: return packed.slice(p, p + len);
  }
  return packed.startsWith(name, p) ? name : packed.slice(p, p + len);
}

function addH2Field(headers, key, value) {
  const prev = headers[key];
  if (prev === undefined) {
    headers[key] = key === 'set-cookie' ? [value] : value;
  } else if (key === 'set-cookie') {
    prev.push(value);
  } else if (key === 'cookie') {
    headers[key] = prev + '; ' + value;
  } else if (!h2SingleValue.has(key)) {
    headers[key] = prev + ', ' + value;
  }
}

// Null-prototype, as node's.
function headersDistinct(raw) {
  const headers = Object.create(null);
  for (let i = 0; i < raw.length; i += 2) {
    const key = raw[i].toLowerCase();
    if (headers[key] === undefined) headers[key] = [raw[i + 1]];
    else headers[key].push(raw[i + 1]);
  }
  return headers;
}

// RFC 9113 8.2.2: fields that are connection-specific in HTTP/1.1.
const connectionHeaders = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade',
]);

// HTTP/2: serializes a headers object into the native "name\0value\0"
// form (lower-cased names; node:http2's checks).
// Returns [block, status]. `allowStatus`: response headers (else trailers).
function serializeHeaders(headers, allowStatus) {
  let block = '';
  let status = 200;
  if (headers == null) return [block, status];
  if (typeof headers !== 'object') {
    throw codedTypeError('ERR_INVALID_ARG_TYPE', 'The "headers" argument must be of type object');
  }
  for (const rawName of Object.keys(headers)) {
    const value = headers[rawName];
    if (value === undefined) continue;
    let name = h2Names.get(rawName);
    if (name === undefined) {
      name = rawName.toLowerCase();
      if (name[0] === ':') {
        if (name === ':status' && allowStatus) {
          status = value | 0;
          continue;
        }
        throw codedTypeError('ERR_HTTP2_INVALID_PSEUDOHEADER', `"${rawName}" is an invalid pseudoheader or is used incorrectly`);
      }
      if (!tokenRegExp.test(name)) {
        throw codedTypeError('ERR_INVALID_HTTP_TOKEN', `Header name must be a valid HTTP token ["${rawName}"]`);
      }
      if (name === 'te') {
        if (String(value).toLowerCase() !== 'trailers') throw connectionHeaderError(rawName);
      } else if (connectionHeaders.has(name)) {
        throw connectionHeaderError(rawName);
      } else if (h2Names.size < H2_NAMES_MAX) {
        h2Names.set(rawName, name);
      }
    }
    // One value (the common case) without a per-header array.
    if (!Array.isArray(value)) {
      block += h2Field(rawName, name, value);
      continue;
    }
    for (const v of value) block += h2Field(rawName, name, v);
  }
  return [block, status];
}

function connectionHeaderError(rawName) {
  return codedTypeError('ERR_HTTP2_INVALID_CONNECTION_HEADERS', `HTTP/1 Connection specific headers are forbidden: "${rawName}"`);
}

// serializeHeaders' names that passed its checks, by the exact string
// given: their lower-case form. A handler's response names are a few
// constants, so the lower-casing and the token test run once per name,
// not once per response. Pseudo-headers and 'te' (whose check depends on
// the value) are never kept; bounded, so that names made up per request
// cannot grow it without end (past the bound, names are checked each time).
const h2Names = new Map();
const H2_NAMES_MAX = 1024;

// One "name\0value\0" field of serializeHeaders, its value checked (a
// number's string form needs no check).
function h2Field(rawName, name, v) {
  if (typeof v === 'number') return name + '\0' + v + '\0';
  const s = typeof v === 'string' ? v : String(v);
  if (invalidHeaderCharRegExp.test(s)) {
    throw codedTypeError('ERR_INVALID_CHAR', `Invalid character in header content ["${rawName}"]`);
  }
  return name + '\0' + s + '\0';
}

function headersSentError(what) {
  return codedError('ERR_HTTP_HEADERS_SENT',
    `Cannot ${what} headers after they are sent to the client`);
}

module.exports = {
  validateHeaderName,
  validateHeaderValue,
  validateStatusCode,
  validateStatusMessage,
  validateLinkHeaderValue,
  checkInvalidHeaderChar,
  invalidCharError,
  wireValue,
  headersObject,
  h2HeadersObject,
  h2HeadersFromPacked,
  headersDistinct,
  headersSentError,
  serializeHeaders,
};
