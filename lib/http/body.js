'use strict';

// What a response write / end accepts as a body chunk, for both protocols
// (ServerResponse, ServerHttp2Stream). Native code takes a string (sent
// as UTF-8) or a Uint8Array; other encodings and binary views become a
// Buffer here (a view, no copy).
//
// Native writers keep chunks of 2 KiB and more by reference until they are
// on the wire. A view of pool memory (a request body chunk being echoed) is
// copied here: the user may release it right after write(), and the pool
// then reads the next request bytes into that memory while it is queued.

const { invalidArgType } = require('../common/errors');
const { isPoolMemory } = require('../uploads/buffer_pool');

function toChunk(chunk, encoding) {
  if (typeof chunk === 'string') {
    if (!encoding || encoding === 'utf8' || encoding === 'utf-8' || encoding === 'buffer') return chunk;
    return Buffer.from(chunk, encoding);
  }
  if (chunk instanceof Uint8Array) return isPoolMemory(chunk) ? Buffer.from(chunk) : chunk;
  if (ArrayBuffer.isView(chunk)) {
    const view = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    return isPoolMemory(view) ? Buffer.from(view) : view;
  }
  if (chunk instanceof ArrayBuffer) return Buffer.from(chunk);
  throw invalidArgType('"chunk" argument',
    'of type string or an instance of Buffer or Uint8Array', chunk);
}

module.exports = { toChunk };
