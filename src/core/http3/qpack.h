// QPACK (RFC 9204) with a dynamic table capacity of 0: field sections
// decoded and encoded with the static table (Appendix A) and literals,
// Huffman (huffman.h) where it is shorter, and the two QPACK stream
// readers such a peer still needs. With capacity 0 (this side's SETTINGS
// advertise no QPACK_MAX_TABLE_CAPACITY) no field section can refer to a
// dynamic table, so no stream is ever blocked and decoding a section is a
// pure function of its bytes: no connection state, no section
// acknowledgments to send, and this side's QPACK encoder and decoder
// streams may stay unopened (RFC 9204 section 4.2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/http3/frames.h"

namespace sluice::http3 {

struct HeaderField {
  std::string name;
  std::string value;
};

enum class QpackStatus { kOk, kDecompressionFailed, kTooLarge };

// Decodes one HEADERS payload (field section) with dynamic table capacity
// 0. *out is cleared first, then receives the fields in order. Required
// Insert Count other than 0, any dynamic-table reference (indexed or
// name reference, relative or post-base), a static index past the table,
// a truncated section, an integer over 2^62 and invalid Huffman →
// kDecompressionFailed (a connection error, QPACK_DECOMPRESSION_FAILED);
// a field list larger than max_field_section_size (RFC 9114 section
// 4.2.2: name + value + 32 per field) → kTooLarge (the section is valid
// so far; the server may answer 431 or reset the stream), decoding stops
// there. Names and values are not checked here (lowercase names,
// pseudo-header rules: message.h, H3_MESSAGE_ERROR).
QpackStatus DecodeFieldSection(const uint8_t* data, size_t len,
                               uint64_t max_field_section_size,
                               std::vector<HeaderField>* out);

// Encodes with static-table references (exact match → indexed field line,
// name match → literal with name reference), literals otherwise, Huffman
// when shorter; no dynamic table (Required Insert Count 0). Appends the
// whole field section (prefix included) to out. Names are sent as given:
// the caller lowercases them (RFC 9114 section 4.2).
void EncodeFieldSection(const HeaderField* fields, size_t n, std::string* out);

// The static table (RFC 9204 Appendix A): 99 entries, index 0..98.
constexpr size_t kQpackStaticTableSize = 99;
struct StaticEntry {
  const char* name;
  const char* value;
};
const StaticEntry& QpackStaticEntry(size_t index);  // index < 99

// QPACK prefixed integers (RFC 7541 section 5.1 as RFC 9204 section
// 4.1.1 uses them). Decode: *p at the byte holding the prefix; on success
// *p moves past the integer. False when the input ends first or the value
// exceeds 2^62 - 1.
bool DecodePrefixInt(const uint8_t** p, const uint8_t* end, unsigned prefix_bits,
                     uint64_t* out);
// Appends v with the given prefix; `flags` holds the bits above the prefix.
void AppendPrefixInt(std::string* out, uint8_t flags, unsigned prefix_bits,
                     uint64_t v);

// The peer's QPACK encoder stream (after its type byte), read by a decoder
// whose capacity is max_capacity (0 unless the dynamic-table decoder is
// used). Set Dynamic Table Capacity up to max_capacity is accepted; above
// it, and any Insert or Duplicate (no entry fits in capacity 0, none
// exists to duplicate) → QPACK_ENCODER_STREAM_ERROR. Its end is the
// transport's H3_CLOSED_CRITICAL_STREAM.
class QpackEncoderStreamReader {
 public:
  explicit QpackEncoderStreamReader(uint64_t max_capacity = 0)
      : max_capacity_(max_capacity) {}
  H3Error Feed(const uint8_t* data, size_t len);

 private:
  uint64_t max_capacity_;
  std::string partial_;  // an instruction split across reads (<= 10 bytes)
  H3Error error_ = H3Error::kNoError;
};

// The peer's QPACK decoder stream (after its type byte), read by an
// encoder that never uses the dynamic table (EncodeFieldSection): Stream
// Cancellation is accepted; Section Acknowledgment (no section had a
// dynamic reference) and Insert Count Increment (nothing was inserted) →
// QPACK_DECODER_STREAM_ERROR (RFC 9204 section 4.4).
class QpackDecoderStreamReader {
 public:
  H3Error Feed(const uint8_t* data, size_t len);

 private:
  std::string partial_;
  H3Error error_ = H3Error::kNoError;
};

}  // namespace sluice::http3
