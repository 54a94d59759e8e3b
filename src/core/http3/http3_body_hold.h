// Http3BodyHold: the read memory one HTTP/3 request stream holds from the
// embedder (requestBufferAllocator) and the body bytes it lent out as
// views. Http3Session reads the stream into [base + used, base + len),
// hands DATA payloads lying there to the embedder as offsets (Offset), and
// counts them in `held` until the embedder gives them back (Consume).
//
// Lifetime of `base`: the embedder's (a JS Buffer it keeps alive) from
// AcquireBodyBuffer until the session calls ReleaseBodyBuffer, which it
// does right after Forget: nothing is read into it after that. Views cut
// from it stay the embedder's.
//
// Plain data, no N-API, no QUIC; loop thread only.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sluice {

struct Http3BodyHold {
  uint8_t* base = nullptr;  // the lent buffer, null when none is held
  size_t len = 0;
  size_t used = 0;          // bytes read into it so far
  bool views = false;       // a DATA payload in it was handed out
  bool waiting = false;     // the pool was dry: not read until a retry
  uint64_t held = 0;        // view bytes of this stream not given back

  bool holds() const { return base != nullptr; }
  size_t room() const { return len - used; }

  // The offset of [p, p + n) in the buffer, or -1 when it lies elsewhere
  // (the session's own read buffer: a copy).
  int64_t Offset(const uint8_t* p, size_t n) const {
    if (base == nullptr || p < base || p + n > base + used) return -1;
    return static_cast<int64_t>(p - base);
  }

  // Whether the buffer is worth keeping after a read was parsed: the body
  // goes on, something in it is lent out (else it pins memory for
  // nothing) and at least `min_free` bytes are left for the next read.
  bool Keep(bool in_body, size_t min_free) const {
    return base != nullptr && in_body && views && room() >= min_free && room() > 0;
  }

  void Take(uint8_t* b, size_t n) {
    base = b;
    len = n;
    used = 0;
    views = false;
  }

  void Forget() {
    base = nullptr;
    len = 0;
    used = 0;
    views = false;
  }
};

}  // namespace sluice
