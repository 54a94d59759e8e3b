// PrefaceMatcher: decides a new connection's protocol from its first bytes.
// The HTTP/2 client connection preface (RFC 9113 3.4) means h2c with prior
// knowledge; anything else is HTTP/1.1. The preface may arrive split across
// any number of reads; the bytes matched so far are the preface's own, so
// nothing needs to be buffered.
//
// A mismatch after the preface's whole first line (`PRI * HTTP/2.0\r\n`,
// a request no HTTP/1.x server serves) is HTTP/2's to refuse: the session
// gets the bytes and nghttp2 rejects the bad preface (RFC 9113 3.4), rather
// than HTTP/1.1 answering 400 to a client that said it speaks HTTP/2.
#pragma once

#include <cstddef>

namespace sluice {

class PrefaceMatcher {
 public:
  enum Result { kNeedMore, kHttp2, kHttp1 };
  static constexpr const char kPreface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  static constexpr size_t kLength = 24;
  static constexpr size_t kFirstLineLength = 16;  // "PRI * HTTP/2.0\r\n"

  // Feeds the next bytes read. kHttp2 once all 24 bytes matched (the rest
  // of `data` is HTTP/2 input too) or at a mismatch after the first line;
  // kHttp1 at an earlier mismatch.
  Result Feed(const char* data, size_t len) {
    for (size_t i = 0; i < len && matched_ < kLength; i++, matched_++) {
      if (data[i] != kPreface[matched_]) {
        return matched_ >= kFirstLineLength ? kHttp2 : kHttp1;
      }
    }
    return matched_ == kLength ? kHttp2 : kNeedMore;
  }
  // Preface bytes matched before the current read (to replay them).
  size_t matched() const { return matched_; }

 private:
  size_t matched_ = 0;
};

}  // namespace sluice
