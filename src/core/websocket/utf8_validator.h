// Utf8Validator: incremental UTF-8 validation (RFC 3629) for WebSocket
// text messages, fed one span at a time as frames and fragments arrive,
// so that a message is refused at its first invalid byte (RFC 6455 8.1
// "fail fast") rather than when it is complete. Refuses overlong forms,
// surrogates (U+D800..U+DFFF) and code points past U+10FFFF.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace sluice {

class Utf8Validator {
 public:
  // Validates the next bytes of the sequence. False at the first byte
  // that cannot be part of valid UTF-8 (the validator is then spent until
  // Reset). A multi-byte character may be split across calls.
  bool Feed(const uint8_t* p, size_t n) {
    size_t i = 0;
    while (i < n) {
      if (need_ == 0) {
        // ASCII runs, eight bytes per test: most text is ASCII.
        while (i + 8 <= n) {
          uint64_t w;
          memcpy(&w, p + i, 8);
          if (w & 0x8080808080808080ULL) break;
          i += 8;
        }
        if (i == n) break;
        const uint8_t c = p[i++];
        if (c < 0x80) continue;
        // Lead bytes: C0/C1 would only encode ASCII (overlong), F5..FF
        // code points past U+10FFFF. The second byte's range excludes the
        // remaining overlongs (E0, F0), the surrogates (ED) and past
        // U+10FFFF (F4).
        if (c < 0xC2) return false;
        lo_ = 0x80;
        hi_ = 0xBF;
        if (c < 0xE0) {
          need_ = 1;
        } else if (c < 0xF0) {
          need_ = 2;
          if (c == 0xE0) lo_ = 0xA0;
          if (c == 0xED) hi_ = 0x9F;
        } else if (c < 0xF5) {
          need_ = 3;
          if (c == 0xF0) lo_ = 0x90;
          if (c == 0xF4) hi_ = 0x8F;
        } else {
          return false;
        }
      } else {
        const uint8_t c = p[i++];
        if (c < lo_ || c > hi_) return false;
        need_--;
        lo_ = 0x80;
        hi_ = 0xBF;
      }
    }
    return true;
  }
  // True when the bytes fed so far end on a character boundary.
  bool complete() const { return need_ == 0; }
  void Reset() { need_ = 0; lo_ = 0x80; hi_ = 0xBF; }

  // A whole span at once (close reasons).
  static bool Valid(const char* p, size_t n) {
    Utf8Validator v;
    return v.Feed(reinterpret_cast<const uint8_t*>(p), n) && v.complete();
  }

 private:
  uint8_t need_ = 0;   // continuation bytes still due
  uint8_t lo_ = 0x80;  // range of the next continuation byte
  uint8_t hi_ = 0xBF;
};

}  // namespace sluice
