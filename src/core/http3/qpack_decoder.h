// A QPACK decoder with a bounded dynamic table (RFC 9204 sections 3, 4.3,
// 4.4, 4.5), for a server that advertises SETTINGS_QPACK_MAX_TABLE_
// CAPACITY > 0. Separate from DecodeFieldSection (qpack.h), which stays
// the simple capacity-0 path; with this class the connection holds state:
// the table the peer's encoder stream builds, the streams blocked on
// inserts not yet received, and the decoder-stream instructions owed to
// the peer.
//
// Bounds: the table never exceeds max_table_capacity bytes (entry = name +
// value + 32); an instruction being gathered from the encoder stream never
// exceeds the capacity plus a few bytes of integers; at most
// max_blocked_streams streams are blocked (one more →
// QPACK_DECOMPRESSION_FAILED). The transport keeps a blocked stream's
// HEADERS payload and decodes it again once TakeUnblocked lists it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "core/http3/frames.h"
#include "core/http3/qpack.h"

namespace sluice::http3 {

class QpackDecoder {
 public:
  enum class Result { kOk, kBlocked, kDecompressionFailed, kTooLarge };

  // max_table_capacity and max_blocked_streams: what this side advertised
  // in SETTINGS (QPACK_MAX_TABLE_CAPACITY, QPACK_BLOCKED_STREAMS).
  QpackDecoder(uint64_t max_table_capacity, uint64_t max_blocked_streams);

  // Bytes of the peer's encoder stream (after its type), any split: Set
  // Dynamic Table Capacity (<= max), Insert With Name Reference (static or
  // dynamic), Insert With Literal Name, Duplicate. A capacity above the
  // maximum, an entry larger than the capacity, a reference to a missing
  // entry, bad Huffman or integer → QPACK_ENCODER_STREAM_ERROR (sticky).
  H3Error FeedEncoderStream(const uint8_t* data, size_t len);

  // Decodes one field section of request stream stream_id. *out is
  // cleared, then filled. kBlocked: it needs inserts not received yet (the
  // stream is remembered; keep the payload and call again once
  // TakeUnblocked names the stream). kDecompressionFailed: a connection
  // error. kTooLarge: the list passed max_field_section_size (name + value
  // + 32 per field); the section was still read whole, so the table state
  // and acknowledgment stay right. A decoded section with a Required
  // Insert Count > 0 owes a Section Acknowledgment (TakeDecoderStream).
  Result Decode(uint64_t stream_id, const uint8_t* data, size_t len,
                uint64_t max_field_section_size, std::vector<HeaderField>* out);

  // A request stream was reset or its reading abandoned before its end
  // (RFC 9204 4.4.2): forgets it if blocked and owes a Stream
  // Cancellation, so the peer's encoder releases what its sections on the
  // stream referenced. Not for streams that ended normally.
  void StreamCancelled(uint64_t stream_id);

  // Streams blocked earlier that the inserts since can now decode; each
  // is listed once (and no longer counted as blocked).
  void TakeUnblocked(std::vector<uint64_t>* out);

  // Appends the decoder-stream bytes owed to the peer (Section
  // Acknowledgments, Stream Cancellations, one Insert Count Increment for
  // inserts not yet acknowledged otherwise) and forgets them. The transport
  // sends them on this side's decoder stream (type 0x03).
  void TakeDecoderStream(std::string* out);

  uint64_t insert_count() const { return inserts_; }
  uint64_t capacity() const { return capacity_; }
  uint64_t table_size() const { return size_; }
  size_t blocked_streams() const { return blocked_.size(); }

 private:
  struct Entry {
    std::string name;
    std::string value;
    uint64_t size() const { return name.size() + value.size() + 32; }
  };
  // Parses one encoder-stream instruction at [p, end): 1 = done (p moved),
  // 0 = needs more bytes (*need: total bytes, when known), -1 = error.
  int ParseInstruction(const uint8_t** p, const uint8_t* end, size_t* need);
  bool Insert(std::string name, std::string value);
  void Evict(uint64_t capacity);
  const Entry* Absolute(uint64_t index) const;  // nullptr: evicted or absent
  H3Error EncoderError() { return encoder_error_ = H3Error::kQpackEncoderStream; }

  uint64_t max_capacity_;
  uint64_t max_blocked_;
  uint64_t capacity_ = 0;
  uint64_t size_ = 0;
  std::deque<Entry> table_;  // oldest first; absolute index of front: dropped_
  uint64_t dropped_ = 0;
  uint64_t inserts_ = 0;
  std::string pending_;      // an encoder-stream instruction split across reads
  size_t pending_need_ = 0;  // bytes pending_ must reach before parsing again
  H3Error encoder_error_ = H3Error::kNoError;
  std::map<uint64_t, uint64_t> blocked_;  // stream id → Required Insert Count
  uint64_t known_received_ = 0;           // the peer encoder's view of inserts_
  std::string decoder_out_;
};

}  // namespace sluice::http3
