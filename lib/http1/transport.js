'use strict';

// The HTTP/1.1 transport: a NativeConnection (src/binding/js_connection.h)
// already has respond, write, end, writeContinue, pause, resume, destroy,
// peer and local; this adds the three calls that other native objects
// carry out for it, so that an HTTP/1.1 connection and an HTTP/2 stream
// (lib/http2/session.js StreamConn) offer ServerResponse and
// IncomingRequest the same interface, docs/transport.md.

const binding = require('../common/binding');

const proto = binding.NativeConnection.prototype;

// res.end(body) with a negotiated coding: head, compressed body and end in
// one native call (src/binding/js_compress.h respondCompressed).
proto.respondCompressed = function respondCompressed(seq, statusWord, reason, block, body,
  trailers, coding, level, quality) {
  return binding.respondCompressed(this, seq, statusWord, reason, block, body, trailers,
    coding, level, quality);
};

// A streamed response's compressor (write, end, close).
proto.newCompressor = function newCompressor(coding, cfg) {
  return new binding.NativeCompressor(coding, cfg.level, cfg.brotliQuality);
};

// The head, then the opened NativeFile into this connection's pipe sink.
// The head is held back until the file's first bytes so both leave in one
// write. coding (optional): a native compressor between file and socket.
proto.respondWithNativeFile = function respondWithNativeFile(seq, statusWord, reason, block,
  file, onDone, coding, level, quality) {
  file.holdHttp1(this, seq);
  const r = this.respond(seq, statusWord, reason, block, undefined, undefined);
  if (r < 0) return r;
  return coding ? file.respondHttp1(this, seq, onDone, coding, level, quality) :
    file.respondHttp1(this, seq, onDone);
};
