// ClientStreamIds: what a session remembers about client stream ids that
// nghttp2 no longer holds, so frames on them are the connection errors
// RFC 9113 5.1 and 5.1.1 call for, whatever nghttp2 version runs.
//
// Why sluice tracks this itself: nghttp2 answers a frame on a closed
// stream only while it still keeps that stream, and after 1.61 it keeps
// none (node 22+ run 1.69 and 1.70); it also cannot tell a skipped id from
// a stream it reset and forgot, where a client's late frames are a race
// and no error. Two lists avoid that race entirely:
// - ids the client skipped: a client's first use of an id implicitly
//   closes every lower idle id; a HEADERS on one is a PROTOCOL_ERROR
//   (5.1.1). The client knows it never used them.
// - ids the client itself closed, by END_STREAM or RST_STREAM, once the
//   stream is gone: a DATA or HEADERS on one is a STREAM_CLOSED error
//   (5.1; after the client's RST_STREAM a stream error, which 5.4.1 lets
//   an endpoint treat as a connection error). The client sent the closing
//   frame before, on the same ordered connection. Streams sluice reset
//   are not listed: the client may not have seen that reset yet.
// Both are bounded (gaps are rare: clients count up by two; closed ids
// only matter briefly) and forget their oldest entry when full, which only
// makes a check more lenient, never wrong.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sluice {

class ClientStreamIds {
 public:
  // A client-initiated (odd) stream id opened by HEADERS (or the h2c
  // upgrade's stream 1). Returns false if `id` is one the client skipped
  // earlier: the caller treats that as a connection error.
  bool Open(int32_t id) {
    if (id > highest_) {
      if (id > highest_ + 2) RememberGap(highest_ + 2, id - 2);
      highest_ = id;
      return true;
    }
    for (size_t i = 0; i < gap_count_; i++) {
      if (id >= gaps_[i].first && id <= gaps_[i].last) return false;
    }
    return true;
  }

  // Stream `id` is gone and the client had ended or reset it.
  void ClosedByClient(int32_t id) {
    closed_[closed_next_] = id;
    closed_next_ = (closed_next_ + 1) % kMaxClosed;
  }
  // Whether `id` is one ClosedByClient remembers (0 is never a stream).
  bool WasClosedByClient(int32_t id) const {
    if (id <= 0) return false;
    for (int32_t c : closed_) {
      if (c == id) return true;
    }
    return false;
  }

 private:
  static constexpr size_t kMaxGaps = 16;
  static constexpr size_t kMaxClosed = 64;
  struct Gap {
    int32_t first, last;
  };
  void RememberGap(int32_t first, int32_t last) {
    if (gap_count_ == kMaxGaps) {
      for (size_t i = 1; i < gap_count_; i++) gaps_[i - 1] = gaps_[i];
      gap_count_--;
    }
    gaps_[gap_count_++] = Gap{first, last};
  }

  int32_t highest_ = -1;  // so that the first id, 1, leaves no gap
  Gap gaps_[kMaxGaps];
  size_t gap_count_ = 0;
  int32_t closed_[kMaxClosed] = {};
  size_t closed_next_ = 0;
};

}  // namespace sluice
