'use strict';

// Header validation and the request-header views (headers, headersDistinct)
// node's http exposes, built lazily from the flat rawHeaders array.

const { codedError, codedTypeError, codedRangeError } = require('./errors');

const tokenRegExp = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;
// As node's checkInvalidHeaderChar: anything but HTAB, SP..~ and obs-text.
const invalidHeaderCharRegExp = /[^\t\x20-\x7e\x80-\xff]/;

function validateHeaderName(name) {
  if (typeof name !== 'string' || !name || !tokenRegExp.test(name)) {
    throw codedTypeError('ERR_INVALID_HTTP_TOKEN',
      `Header name must be a valid HTTP token ["${name}"]`);
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
  if (invalidHeaderCharRegExp.test(String(v))) {
    throw codedTypeError('ERR_INVALID_CHAR',
      `Invalid character in header content ["${name}"]`);
  }
}

function validateStatusCode(code) {
  code |= 0;
  if (code < 100 || code > 999) {
    throw codedRangeError('ERR_HTTP_INVALID_STATUS_CODE',
      `Invalid status code: ${code}`);
  }
  return code;
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
// duplicates of the fields above dropped; others joined with ', '.
function headersObject(raw) {
  const headers = {};
  for (let i = 0; i < raw.length; i += 2) {
    const key = raw[i].toLowerCase();
    const value = raw[i + 1];
    const prev = headers[key];
    if (prev === undefined) {
      headers[key] = key === 'set-cookie' ? [value] : value;
    } else if (key === 'set-cookie') {
      prev.push(value);
    } else if (dropDuplicates.has(key)) {
      // first one wins
    } else if (key === 'cookie') {
      headers[key] = prev + '; ' + value;
    } else {
      headers[key] = prev + ', ' + value;
    }
  }
  return headers;
}

function headersDistinct(raw) {
  const headers = {};
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
    const name = rawName.toLowerCase();
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
    if (connectionHeaders.has(name) || (name === 'te' && String(value).toLowerCase() !== 'trailers')) {
      throw codedTypeError('ERR_HTTP2_INVALID_CONNECTION_HEADERS', `HTTP/1 Connection specific headers are forbidden: "${rawName}"`);
    }
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) {
      const s = String(v);
      if (invalidHeaderCharRegExp.test(s)) {
        throw codedTypeError('ERR_INVALID_CHAR', `Invalid character in header content ["${rawName}"]`);
      }
      block += name + '\0' + s + '\0';
    }
  }
  return [block, status];
}

function headersSentError(what) {
  return codedError('ERR_HTTP_HEADERS_SENT',
    `Cannot ${what} headers after they are sent to the client`);
}

module.exports = {
  validateHeaderName,
  validateHeaderValue,
  validateStatusCode,
  headersObject,
  headersDistinct,
  headersSentError,
  serializeHeaders,
};
