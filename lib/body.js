'use strict';

// What a response write / end accepts as a body chunk, for both protocols
// (ServerResponse, ServerHttp2Stream). Native code takes a string (sent
// as UTF-8) or a Uint8Array; other encodings and binary views become a
// Buffer here (a view, no copy).

const { codedTypeError } = require('./errors');

function toChunk(chunk, encoding) {
  if (typeof chunk === 'string') {
    if (!encoding || encoding === 'utf8' || encoding === 'utf-8' || encoding === 'buffer') return chunk;
    return Buffer.from(chunk, encoding);
  }
  if (chunk instanceof Uint8Array) return chunk;
  if (ArrayBuffer.isView(chunk)) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (chunk instanceof ArrayBuffer) return Buffer.from(chunk);
  throw codedTypeError('ERR_INVALID_ARG_TYPE',
    'The "chunk" argument must be of type string or an instance of Buffer or Uint8Array');
}

module.exports = { toChunk };
