#include "core/http2/frame_prescan.h"

#include <algorithm>
#include <cstring>

namespace sluice {

namespace {

uint32_t Length(const uint8_t* h) {
  return (uint32_t{h[0]} << 16) | (uint32_t{h[1]} << 8) | h[2];
}

int32_t StreamId(const uint8_t* h) {
  uint32_t v = (uint32_t{h[5]} << 24) | (uint32_t{h[6]} << 16) |
               (uint32_t{h[7]} << 8) | h[8];
  return static_cast<int32_t>(v & 0x7fffffffu);
}

}  // namespace

bool FramePrescan::Asks(uint8_t type, int32_t stream_id) const {
  if (in_block_) return false;
  switch (type) {
    case kData:
    case kHeaders:
    case kPriority:
      return true;
    case kWindowUpdate:
      return stream_id != 0;  // the connection window is nghttp2's alone
    default:
      return false;
  }
}

size_t FramePrescan::PeekLength(uint8_t type, uint32_t length,
                                int32_t stream_id) {
  // Other lengths are frame size errors nghttp2 raises itself.
  if (type == kPriority && length == 5) return 5;
  if (type == kWindowUpdate && stream_id != 0 && length == 4) return 4;
  return 0;
}

size_t FramePrescan::Need(const uint8_t* h) const {
  int32_t id = StreamId(h);
  if (!Asks(h[3], id)) return kHeaderSize;
  return kHeaderSize + PeekLength(h[3], Length(h), id);
}

FramePrescan::Action FramePrescan::Decide(const uint8_t* p, Sink& sink) {
  uint32_t length = Length(p);
  uint8_t type = p[3];
  uint8_t flags = p[4];
  int32_t id = StreamId(p);
  size_t peek = 0;
  Action a = kPass;
  if (Asks(type, id)) {
    peek = PeekLength(type, length, id);
    PrescanFrame f{length, type, flags, id, p + kHeaderSize, peek};
    a = sink.OnFrame(f);
  }
  if (a == kStop) {
    state_ = kStopped;
    return a;
  }
  if (a == kPass) {
    if (type == kHeaders || type == kPushPromise) {
      in_block_ = (flags & kFlagEndHeaders) == 0;
    } else if (type == kContinuation && (flags & kFlagEndHeaders) != 0) {
      in_block_ = false;
    }
  }
  left_ = length - peek;
  state_ = left_ == 0 ? kHead : (a == kPass ? kPassBytes : kSkipBytes);
  return a;
}

void FramePrescan::Scan(const uint8_t* data, size_t len, Sink& sink) {
  // [run, pos): bytes of `data` that pass and are not fed yet. They are
  // fed in one piece before each question and at the end.
  size_t pos = 0;
  size_t run = 0;
  auto flush = [&]() {
    bool ok = pos == run || sink.Feed(data + run, pos - run);
    run = pos;
    if (!ok) state_ = kStopped;
    return ok;
  };
  while (pos < len && state_ != kStopped) {
    if (state_ == kPassBytes || state_ == kSkipBytes) {
      size_t n = static_cast<size_t>(
          std::min<uint64_t>(left_, static_cast<uint64_t>(len - pos)));
      if (state_ == kSkipBytes) {
        if (!flush()) return;
        pos += n;
        run = pos;
      } else {
        pos += n;
      }
      left_ -= n;
      if (left_ == 0) state_ = kHead;
      continue;
    }
    // kHead: a whole header (+ peek) in this read is decided in place.
    if (held_len_ == 0 && len - pos >= kHeaderSize) {
      const uint8_t* p = data + pos;
      size_t need = Need(p);
      if (len - pos >= need) {
        if (Asks(p[3], StreamId(p)) && !flush()) return;
        Action a = Decide(p, sink);
        pos += need;
        if (a != kPass) run = pos;  // dropped or stopped: not fed
        continue;
      }
    }
    // Split across reads: hold the header (+ peek) until it is whole. The
    // bytes before it go first.
    if (!flush()) return;
    size_t need = kHeaderSize;
    for (;;) {
      if (held_len_ >= kHeaderSize) {
        need = Need(held_);
      }
      if (held_len_ >= need) break;
      size_t n = std::min(need - held_len_, len - pos);
      std::memcpy(held_ + held_len_, data + pos, n);
      held_len_ += n;
      pos += n;
      run = pos;
      if (held_len_ < need && pos == len) return;  // more in a later read
    }
    Action a = Decide(held_, sink);
    if (a == kPass && !sink.Feed(held_, need)) state_ = kStopped;
    held_len_ = 0;
  }
  if (state_ != kStopped) flush();
}

}  // namespace sluice
