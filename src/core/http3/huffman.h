// The HPACK Huffman code (RFC 7541 Appendix B), which QPACK uses for its
// string literals too (RFC 9204 section 4.1.2). Encoding packs codes MSB
// first and pads the last byte with the high bits of EOS (ones); decoding
// walks a 4-bits-at-a-time state table built once from the code lengths
// (the code is canonical: lengths alone define it) and rejects EOS in the
// data, padding longer than 7 bits and padding that is not all ones
// (RFC 7541 section 5.2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace sluice::http3 {

// The encoded size of s in bytes.
size_t HuffmanEncodedLength(const uint8_t* s, size_t n);
// Appends the encoding of s (HuffmanEncodedLength(s, n) bytes) to out.
void HuffmanEncode(const uint8_t* s, size_t n, std::string* out);
// Appends the decoding of [s, s + n) to out; false on an invalid code
// (out then holds what was decoded before the error).
bool HuffmanDecode(const uint8_t* s, size_t n, std::string* out);

// The code of one symbol (0..255, 256 = EOS), right-aligned, and its
// length in bits: for tests.
uint32_t HuffmanCode(unsigned sym, unsigned* bits);

}  // namespace sluice::http3
