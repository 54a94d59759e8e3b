// SkippedStreamIds: the client stream ids a peer skipped, so a HEADERS on
// one of them is a connection error (RFC 9113 5.1.1).
//
// Why sluice tracks this itself: a client's first use of a stream id
// implicitly closes every lower idle id it skipped, and a HEADERS frame on
// such an id is a PROTOCOL_ERROR. nghttp2 only reports that for ids it
// still holds as closed; others it ignores (it cannot tell a skipped id
// from a stream it reset and forgot, where a client's late trailers are no
// error). A skipped id was never opened, so no such race exists for it:
// the client knows it never used it. The gaps are few (clients count up
// by two); the list is bounded and forgets its oldest gap when full, which
// only makes the check more lenient, never wrong.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sluice {

class SkippedStreamIds {
 public:
  // A client-initiated (odd) stream id opened by HEADERS (or the h2c
  // upgrade's stream 1). Returns false if `id` is one the client skipped
  // earlier: the caller treats that as a connection error.
  bool Open(int32_t id) {
    if (id > highest_) {
      if (id > highest_ + 2) Remember(highest_ + 2, id - 2);
      highest_ = id;
      return true;
    }
    for (size_t i = 0; i < count_; i++) {
      if (id >= gaps_[i].first && id <= gaps_[i].last) return false;
    }
    return true;
  }
  int32_t highest() const { return highest_; }

 private:
  static constexpr size_t kMaxGaps = 16;
  struct Gap {
    int32_t first, last;
  };
  void Remember(int32_t first, int32_t last) {
    if (count_ == kMaxGaps) {
      for (size_t i = 1; i < count_; i++) gaps_[i - 1] = gaps_[i];
      count_--;
    }
    gaps_[count_++] = Gap{first, last};
  }

  int32_t highest_ = -1;  // so that the first id, 1, leaves no gap
  Gap gaps_[kMaxGaps];
  size_t count_ = 0;
};

}  // namespace sluice
