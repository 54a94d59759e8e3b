// Unit test of src/core/http2/frame_prescan.* (no nghttp2, no N-API):
// a frame stream with every kind of frame the scanner treats differently,
// scanned whole, split at every one and every two positions, byte by byte,
// and with a sink that fails part-way. Built and run by
// test/unit/frame_prescan.test.js; exits non-zero with a message on the
// first difference.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/http2/frame_prescan.h"

using sluice::FramePrescan;
using sluice::PrescanFrame;

namespace {

int failures = 0;
#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (!(cond)) {                                         \
      std::fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      std::fprintf(stderr, __VA_ARGS__);                   \
      std::fprintf(stderr, "\n");                          \
      if (++failures > 5) std::exit(1);                    \
    }                                                      \
  } while (0)

struct Frame {
  uint8_t type, flags;
  int32_t id;
  std::string payload;
  // What the test sink answers when asked, and whether it is asked.
  bool asked;
  FramePrescan::Action action;
  size_t peeked;
};

std::string Be32(uint32_t v) {
  return std::string{char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
}

std::string Encode(const Frame& f) {
  size_t n = f.payload.size();
  std::string h{char(n >> 16), char(n >> 8), char(n), char(f.type),
                char(f.flags)};
  return h + Be32(uint32_t(f.id)) + f.payload;
}

const char kPreface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

std::vector<Frame> MakeFrames() {
  using A = FramePrescan;
  std::vector<Frame> v;
  auto add = [&](uint8_t type, uint8_t flags, int32_t id, std::string p,
                 bool asked, FramePrescan::Action a = A::kPass,
                 size_t peeked = 0) {
    v.push_back(Frame{type, flags, id, std::move(p), asked, a, peeked});
  };
  add(0x4, 0, 0, std::string(6, '\x01'), false);              // SETTINGS
  add(0x1, 0, 1, "hdrs1", true);                              // HEADERS, block open
  add(0x2, 0, 1, Be32(1) + "x", false);                       // PRIORITY inside the block: not asked
  add(0x9, 0x4, 1, "end", false);                             // CONTINUATION END_HEADERS
  add(0x0, 0, 1, "0123456789", true);                         // DATA
  add(0x2, 0, 3, Be32(3) + "\xff", true, A::kDrop, 5);        // self-dependent PRIORITY: dropped
  add(0x8, 0, 1, Be32(7), true, A::kPass, 4);                 // stream WINDOW_UPDATE
  add(0x8, 0, 0, Be32(9), false);                             // connection WINDOW_UPDATE
  add(0x1, 0x5, 5, "hd5", true);                              // HEADERS END_STREAM|END_HEADERS
  add(0x0, 0x1, 5, "", true);                                 // empty DATA
  add(0x8, 0, 5, Be32(0x7fffffff), true, A::kDrop, 4);        // overflow: dropped
  add(0x2, 0, 5, std::string(6, 'p'), true);                  // PRIORITY of length 6: no peek
  add(0x8, 0, 5, std::string(5, 'w'), true);                  // WINDOW_UPDATE of length 5: no peek
  add(0x0, 0, 1, std::string(3000, 'b'), true);              // big DATA
  add(0x0, 0, 3, std::string(300, 'd'), true, A::kDrop);      // dropped DATA
  add(0x6, 0, 0, std::string(8, 'P'), false);                 // PING
  add(0x0, 0, 7, "stop", true, A::kStop);                     // connection error
  add(0x6, 0, 0, std::string(8, 'Q'), false);                 // never fed
  return v;
}

const std::vector<Frame>& Frames() {
  static const std::vector<Frame> frames = MakeFrames();
  return frames;
}

struct Expected {
  std::string input, fed;
  std::vector<std::string> questions;  // "type id peeked payload at"
};

std::string Question(const PrescanFrame& f, size_t fed_so_far) {
  return std::to_string(f.type) + " " + std::to_string(f.stream_id) + " " +
         std::to_string(f.length) + " " + std::to_string(f.peeked) + " " +
         std::string(reinterpret_cast<const char*>(f.payload), f.peeked) +
         " @" + std::to_string(fed_so_far);
}

Expected Build() {
  Expected e;
  e.input = std::string(kPreface, 24);
  e.fed = e.input;
  bool stopped = false;
  for (const Frame& f : Frames()) {
    std::string bytes = Encode(f);
    e.input += bytes;
    if (stopped) continue;
    if (f.asked) {
      PrescanFrame q{uint32_t(f.payload.size()), f.type, f.flags, f.id,
                     reinterpret_cast<const uint8_t*>(f.payload.data()),
                     f.peeked};
      e.questions.push_back(Question(q, e.fed.size()));
    }
    if (f.action == FramePrescan::kStop) {
      stopped = true;
      continue;
    }
    if (f.action == FramePrescan::kPass) e.fed += bytes;
  }
  return e;
}

class TestSink final : public FramePrescan::Sink {
 public:
  explicit TestSink(size_t fail_after = SIZE_MAX) : fail_after_(fail_after) {}
  bool Feed(const uint8_t* data, size_t len) override {
    CHECK(len > 0, "empty Feed");
    fed.append(reinterpret_cast<const char*>(data), len);
    return fed.size() < fail_after_;
  }
  FramePrescan::Action OnFrame(const PrescanFrame& f) override {
    questions.push_back(Question(f, fed.size()));
    for (const Frame& fr : Frames()) {
      if (fr.type == f.type && fr.id == f.stream_id &&
          fr.payload.size() == f.length && fr.asked) {
        if (f.peeked == 0 || fr.payload.compare(0, f.peeked,
              std::string(reinterpret_cast<const char*>(f.payload),
                          f.peeked)) == 0) {
          return fr.action;
        }
      }
    }
    CHECK(false, "asked about an unexpected frame: %s",
          questions.back().c_str());
    return FramePrescan::kPass;
  }
  std::string fed;
  std::vector<std::string> questions;

 private:
  size_t fail_after_;
};

void Run(const Expected& e, const std::vector<size_t>& cuts,
         const char* what) {
  FramePrescan scan;
  TestSink sink;
  size_t prev = 0;
  std::vector<size_t> all = cuts;
  all.push_back(e.input.size());
  for (size_t c : all) {
    scan.Scan(reinterpret_cast<const uint8_t*>(e.input.data()) + prev,
              c - prev, sink);
    prev = c;
  }
  CHECK(sink.fed == e.fed, "%s: fed %zu bytes, expected %zu", what,
        sink.fed.size(), e.fed.size());
  CHECK(sink.questions == e.questions, "%s: %zu questions, expected %zu",
        what, sink.questions.size(), e.questions.size());
  for (size_t i = 0; i < sink.questions.size() && i < e.questions.size();
       i++) {
    CHECK(sink.questions[i] == e.questions[i], "%s: question %zu: %s != %s",
          what, i, sink.questions[i].c_str(), e.questions[i].c_str());
  }
  CHECK(scan.stopped(), "%s: not stopped after kStop", what);
}

}  // namespace

int main() {
  Expected e = Build();
  size_t n = e.input.size();
  Run(e, {}, "whole");
  char what[64];
  for (size_t i = 0; i <= n; i++) {
    std::snprintf(what, sizeof what, "split at %zu", i);
    Run(e, {i}, what);
  }
  // Two cuts: every pair around the small frames (the big DATA's middle
  // adds nothing but time).
  size_t small_end = 24 + 200;
  for (size_t i = 0; i <= small_end; i++) {
    for (size_t j = i; j <= small_end; j++) {
      std::snprintf(what, sizeof what, "split at %zu and %zu", i, j);
      Run(e, {i, j}, what);
    }
  }
  std::vector<size_t> bytes;
  for (size_t i = 1; i < n; i++) bytes.push_back(i);
  Run(e, bytes, "byte by byte");
  // A sink whose engine fails part-way: nothing more is fed or asked.
  for (size_t fail : {size_t(10), size_t(24), size_t(60), size_t(400)}) {
    FramePrescan scan;
    TestSink sink(fail);
    for (size_t i = 0; i < n; i += 7) {
      scan.Scan(reinterpret_cast<const uint8_t*>(e.input.data()) + i,
                std::min<size_t>(7, n - i), sink);
    }
    CHECK(scan.stopped(), "fail after %zu: not stopped", fail);
    CHECK(sink.fed.size() >= fail && sink.fed.size() < fail + 9 + 7,
          "fail after %zu: fed %zu", fail, sink.fed.size());
    CHECK(e.fed.compare(0, sink.fed.size(), sink.fed) == 0,
          "fail after %zu: wrong bytes", fail);
  }
  if (failures) return 1;
  std::printf("frame_prescan: %zu input bytes, %zu questions, ok\n", n,
              e.questions.size());
  return 0;
}
