'use strict';

// Response compression for the HTTP/2 'stream' API. The rules are
// HTTP/1.1's (lib/compress/compression.js prepare: HEAD, 204/304, Content-Encoding,
// Cache-Control: no-transform, filter / compressible type, threshold,
// Accept-Encoding negotiation, Vary), applied to a node:http2 headers object
// through a small res-shaped view of it; the encoding is native
// (src/core/http2/http2_session.h StartCompression / RespondCompressed, and the
// CompressTransform of the file pipe).
//
// When the decision is made: stream.respond(headers) is where node:http2
// sends the head, but the threshold needs the body's length. So:
//   - content-length in the respond headers: decided at respond() (the
//     threshold applies to it), compressed bodies stream;
//   - no content-length, and everything but the threshold says compress:
//     the head waits (headersSent is true at once) until the first write,
//     end or the next tick, whichever comes first. A whole body given to
//     end(body) before any write is then compressed in one pass (on the
//     threadpool above 32 KiB) with its compressed content-length, or sent
//     as it is when it is under the threshold; a head that leaves on a
//     write or the next tick streams (the threshold cannot apply).
// Nothing is lost by the wait: the session sends frames only when the
// current dispatch ends, after the nextTick queue has run.

const compression = require('../compress/compression');
const { kReq } = require('../common/symbols');

// The parts of ServerResponse that compression.prepare / precompressed
// read and write, over a headers object with lower-case names (pseudo
// headers kept as they are).
class ResponseShim {
  constructor(requestHeaders, status, headers) {
    const h = {};
    if (headers) {
      for (const key of Object.keys(headers)) {
        if (headers[key] !== undefined) h[key[0] === ':' ? key : key.toLowerCase()] = headers[key];
      }
    }
    this.headers = h;
    this.statusCode = status;
    this.compress = undefined;
    this[kReq] = {
      method: requestHeaders[':method'],
      url: requestHeaders[':path'],
      headers: requestHeaders,
      httpVersion: '2.0',
    };
  }

  getHeader(name) { return this.headers[name.toLowerCase()]; }

  setHeader(name, value) { this.headers[name.toLowerCase()] = value; }

  removeHeader(name) { delete this.headers[name.toLowerCase()]; }

  // What lib/compress/compression.js sets on a ServerResponse past writeHead().
  _putHeader(name, value) { this.setHeader(name, value); }

  _dropHeader(name) { this.removeHeader(name); }

  hasHeader(name) { return this.headers[name.toLowerCase()] !== undefined; }

  getHeaders() { return { ...this.headers }; }
}

// Decides for a response of stream `requestHeaders` with `status` and
// `headers`. bodyLength: the whole body's length, or -1 (then a
// content-length header stands for it). Returns [coding, headers,
// lengthUnknown]: coding 0 (identity) or a CODING value; headers with
// vary / content-encoding added and content-length removed as
// compression.prepare does; lengthUnknown when the threshold could not
// be applied.
function decide(requestHeaders, cfg, status, headers, bodyLength) {
  const shim = new ResponseShim(requestHeaders, status, headers);
  const lengthUnknown = bodyLength < 0 && shim.headers['content-length'] === undefined;
  const coding = compression.prepare(shim, cfg, bodyLength);
  return [coding, shim.headers, lengthUnknown];
}

// respondWithFile(path, headers, { precompressed: true }) on a stream:
// calls back with the path to serve and the headers (content-encoding and
// vary set when a sibling fits).
function precompressed(requestHeaders, status, headers, path, cb) {
  const shim = new ResponseShim(requestHeaders, status, headers);
  compression.precompressed(shim, path, (p) => cb(p, shim.headers));
}

module.exports = { decide, precompressed, ResponseShim };
