// QUIC variable-length integers (RFC 9000 section 16), as HTTP/3 uses them
// for frame types, lengths, stream types and settings (RFC 9114 section
// 1.2). The two high bits of the first byte give the length (1, 2, 4, 8
// bytes); the rest is the value, big endian. Non-minimal encodings are
// valid input. Pure functions: no allocation, no state.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sluice::http3 {

// The largest value a varint carries: 2^62 - 1.
constexpr uint64_t kMaxVarint = (uint64_t{1} << 62) - 1;

// Reads one varint at p. Returns the bytes consumed (1, 2, 4 or 8) and
// stores the value, or returns 0 (out untouched) if len is too short for
// the length the first byte announces (including len == 0).
size_t ReadVarint(const uint8_t* p, size_t len, uint64_t* out);

// The length of v's shortest encoding, 1..8. v must be <= kMaxVarint.
size_t VarintSize(uint64_t v);

// Writes v's shortest encoding at p (VarintSize(v) bytes, the caller's
// room). v must be <= kMaxVarint. Returns the bytes written.
size_t WriteVarint(uint8_t* p, uint64_t v);

// The length a varint whose first byte is b has: 1, 2, 4 or 8.
inline size_t VarintLengthFromFirstByte(uint8_t b) {
  return size_t{1} << (b >> 6);
}

}  // namespace sluice::http3
