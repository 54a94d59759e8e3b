#include "core/http3/varint.h"

namespace sluice::http3 {

size_t ReadVarint(const uint8_t* p, size_t len, uint64_t* out) {
  if (len == 0) return 0;
  size_t n = VarintLengthFromFirstByte(p[0]);
  if (len < n) return 0;
  uint64_t v = p[0] & 0x3f;
  for (size_t i = 1; i < n; i++) v = (v << 8) | p[i];
  *out = v;
  return n;
}

size_t VarintSize(uint64_t v) {
  if (v < (uint64_t{1} << 6)) return 1;
  if (v < (uint64_t{1} << 14)) return 2;
  if (v < (uint64_t{1} << 30)) return 4;
  return 8;
}

size_t WriteVarint(uint8_t* p, uint64_t v) {
  size_t n = VarintSize(v);
  // The length code (0..3) is log2(n), in the two high bits.
  uint8_t code = n == 1 ? 0 : n == 2 ? 1 : n == 4 ? 2 : 3;
  for (size_t i = n; i-- > 0;) {
    p[i] = static_cast<uint8_t>(v);
    v >>= 8;
  }
  p[0] = static_cast<uint8_t>((p[0] & 0x3f) | (code << 6));
  return n;
}

}  // namespace sluice::http3
