// libFuzzer harness of the HTTP/2 frame prescan (src/core/http2/
// frame_prescan.*) alone, against a reference model: any byte stream, read
// in pieces the fuzzer chooses, must be fed, asked about and dropped
// exactly as the reference (one pass over the whole input, frame by frame)
// says, with every byte in front of a frame fed before the frame is asked
// about. The sink's answers are a function of the frame (so both sides
// answer alike): a few frames are dropped, a rare one stops the scan.
// (fuzz_http2.cc covers the prescan inside the real session.)
//
// Input: byte 0: number of cuts (& 7); then 2 bytes per cut (a length, big
// endian, taken modulo what is left); the rest is the stream (no preface).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/http2/frame_prescan.h"

using sluice::FramePrescan;
using sluice::PrescanFrame;

namespace {

FramePrescan::Action Answer(uint8_t type, uint8_t flags, int32_t id,
                            uint32_t length, const uint8_t* peek,
                            size_t peeked) {
  uint32_t h = type * 31u + flags * 7u + static_cast<uint32_t>(id) * 13u +
               length;
  for (size_t i = 0; i < peeked; i++) h = h * 33u + peek[i];
  if (h % 61 == 0) return FramePrescan::kStop;
  if (h % 5 == 0) return FramePrescan::kDrop;
  return FramePrescan::kPass;
}

std::string Question(uint8_t type, int32_t id, uint32_t length,
                     const uint8_t* peek, size_t peeked, size_t at) {
  return std::to_string(type) + "/" + std::to_string(id) + "/" +
         std::to_string(length) + "/" +
         std::string(reinterpret_cast<const char*>(peek), peeked) + "@" +
         std::to_string(at);
}

struct Result {
  std::string fed;
  std::vector<std::string> questions;
};

// The model: whole frames in one pass. A trailing partial frame header is
// never fed; a partial peek is never fed; a partial payload of a passed
// frame is.
Result Reference(const uint8_t* p, size_t n) {
  Result r;
  size_t pos = 0;
  bool in_block = false;
  while (pos + 9 <= n) {
    const uint8_t* h = p + pos;
    uint32_t length = (uint32_t{h[0]} << 16) | (uint32_t{h[1]} << 8) | h[2];
    uint8_t type = h[3], flags = h[4];
    int32_t id = static_cast<int32_t>(((uint32_t{h[5]} << 24) |
                                       (uint32_t{h[6]} << 16) |
                                       (uint32_t{h[7]} << 8) | h[8]) &
                                      0x7fffffffu);
    bool asks = !in_block && (type == 0 || type == 1 || type == 2 ||
                              (type == 8 && id != 0));
    size_t peek = 0;
    if (asks && type == 2 && length == 5) peek = 5;
    if (asks && type == 8 && length == 4) peek = 4;
    if (pos + 9 + peek > n) break;
    FramePrescan::Action a = FramePrescan::kPass;
    if (asks) {
      r.questions.push_back(Question(type, id, length, h + 9, peek,
                                     r.fed.size()));
      a = Answer(type, flags, id, length, h + 9, peek);
    }
    if (a == FramePrescan::kStop) return r;
    size_t total = std::min<size_t>(9 + size_t{length}, n - pos);
    if (a == FramePrescan::kPass) {
      r.fed.append(reinterpret_cast<const char*>(h), total);
      if (type == 1 || type == 5) {
        in_block = (flags & 4) == 0;
      } else if (type == 9 && (flags & 4)) {
        in_block = false;
      }
    }
    pos += total;
  }
  return r;
}

class Sink final : public FramePrescan::Sink {
 public:
  bool Feed(const uint8_t* data, size_t len) override {
    if (len == 0) std::abort();
    r.fed.append(reinterpret_cast<const char*>(data), len);
    return true;
  }
  FramePrescan::Action OnFrame(const PrescanFrame& f) override {
    r.questions.push_back(Question(f.type, f.stream_id, f.length, f.payload,
                                   f.peeked, r.fed.size()));
    return Answer(f.type, f.flags, f.stream_id, f.length, f.payload,
                  f.peeked);
  }
  Result r;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  size_t ncuts = data[0] & 7;
  size_t pos = 1;
  std::vector<size_t> lens;
  for (size_t i = 0; i < ncuts && pos + 2 <= size; i++, pos += 2) {
    lens.push_back((size_t{data[pos]} << 8) | data[pos + 1]);
  }
  const uint8_t* s = data + pos;
  size_t n = size - pos;
  Result want = Reference(s, n);
  FramePrescan scan(false);
  Sink sink;
  size_t at = 0;
  for (size_t l : lens) {
    size_t k = n - at == 0 ? 0 : l % (n - at + 1);
    scan.Scan(s + at, k, sink);
    at += k;
  }
  scan.Scan(s + at, n - at, sink);
  if (sink.r.fed != want.fed || sink.r.questions != want.questions) {
    std::abort();
  }
  return 0;
}
