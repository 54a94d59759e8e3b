'use strict';
// HTTP/3 framing for the tools that speak it from JS: QUIC variable-length
// integers (RFC 9000 §16) and HTTP/3 frames (RFC 9114 §7.1). Shared by the
// benchmark's load client (h3load.js) and the tests' client
// (test/http3/quic_client.js).

function varint(v) {
  if (v < 0x40) return Buffer.from([v]);
  if (v < 0x4000) return Buffer.from([0x40 | (v >> 8), v & 0xff]);
  if (v < 0x40000000) {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(v + 0x80000000);
    return b;
  }
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(v) + (0xc0n << 56n));
  return b;
}

// [value, offset after it], or null when buf ends inside it.
function readVarint(buf, off) {
  if (off >= buf.length) return null;
  const len = 1 << (buf[off] >> 6);
  if (off + len > buf.length) return null;
  let v = buf[off] & 0x3f;
  for (let i = 1; i < len; i++) v = v * 256 + buf[off + i];
  return [v, off + len];
}

function frame(type, payload) {
  return Buffer.concat([varint(type), varint(payload.length), payload]);
}

module.exports = { varint, readVarint, frame };
