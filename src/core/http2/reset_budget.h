// ResetBudget: how many streams a client may make the server reset, as a
// token bucket (a burst, refilled at a steady rate). Pure C++, no libuv,
// no nghttp2: the caller passes the time.
//
// Why: a client can make the server reset a stream whose handler already
// started — a zero WINDOW_UPDATE, DATA beyond the window or on a stream it
// ended, a malformed trailer block — and open the next at once: the
// handler's work is done, the stream's concurrency slot is free again
// (CVE-2025-8671, "MadeYouReset", the server-side twin of rapid reset).
// Only some nghttp2 versions count those resets, and sluice runs on the one
// each Node carries; the session counts them itself (Http2Session::
// NoteProvokedReset) and ends with GOAWAY(ENHANCE_YOUR_CALM) once the
// bucket is empty.
#pragma once

#include <cstdint>

namespace sluice {

class ResetBudget {
 public:
  ResetBudget(uint32_t burst, uint32_t per_second)
      : burst_(burst), per_second_(per_second), tokens_(burst) {}

  // One reset at `now_ms` (a monotonic clock). Returns false once the
  // budget is spent (the reset is over the rate).
  bool Take(uint64_t now_ms) {
    if (last_ms_ == 0) last_ms_ = now_ms;
    if (now_ms > last_ms_) {
      uint64_t add = (now_ms - last_ms_) * per_second_ / 1000;
      if (add > 0) {
        tokens_ = add >= burst_ - tokens_
                      ? burst_
                      : tokens_ + static_cast<uint32_t>(add);
        last_ms_ = now_ms;
      }
    }
    if (tokens_ == 0) return false;
    tokens_--;
    return true;
  }

 private:
  uint32_t burst_;
  uint32_t per_second_;
  uint32_t tokens_;
  uint64_t last_ms_ = 0;
};

}  // namespace sluice
