// DateCache: the IMF-fixdate for the Date header, regenerated at most once
// per second. Instead of a timer it compares the loop's cached clock
// (uv_now) with the next second boundary: no wakeups when idle, no syscall
// on the hot path.
#pragma once

#include <uv.h>

#include <cstdint>
#include <string_view>

namespace sluice {

class DateCache {
 public:
  explicit DateCache(uv_loop_t* loop) : loop_(loop) {}
  // "Date: Tue, 01 Dec 2026 14:35:00 GMT\r\n"; valid until the next call.
  const char* HeaderLine();
  static constexpr size_t kHeaderLineLen = 37;
  // The value alone ("Tue, 01 Dec 2026 14:35:00 GMT"), for HTTP/2 and
  // HTTP/3 fields; a view into the same line, valid as long.
  std::string_view Value() {
    return std::string_view(HeaderLine() + kValueOffset, kHeaderLineLen - kValueOffset - 2);
  }

 private:
  static constexpr size_t kValueOffset = 6;  // "Date: "
  void Refresh();
  uv_loop_t* loop_;
  uint64_t next_refresh_ = 0;
  char line_[64] = {0};
};

}  // namespace sluice
