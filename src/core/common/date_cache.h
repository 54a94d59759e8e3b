// DateCache: the IMF-fixdate for the Date header, regenerated at most once
// per second. Instead of a timer it compares the loop's cached clock
// (uv_now) with the next second boundary: no wakeups when idle, no syscall
// on the hot path.
#pragma once

#include <uv.h>

#include <cstdint>

namespace sluice {

class DateCache {
 public:
  explicit DateCache(uv_loop_t* loop) : loop_(loop) {}
  // "Date: Tue, 01 Dec 2026 14:35:00 GMT\r\n"; valid until the next call.
  const char* HeaderLine();
  static constexpr size_t kHeaderLineLen = 37;

 private:
  void Refresh();
  uv_loop_t* loop_;
  uint64_t next_refresh_ = 0;
  char line_[64] = {0};
};

}  // namespace sluice
