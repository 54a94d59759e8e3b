#include "core/common/date_cache.h"

#include <cstdio>
#include <ctime>

namespace sluice {

const char* DateCache::HeaderLine() {
  if (uv_now(loop_) >= next_refresh_) Refresh();
  return line_;
}

void DateCache::Refresh() {
  uv_timeval64_t tv;
  if (uv_gettimeofday(&tv) != 0) {
    tv.tv_sec = time(nullptr);
    tv.tv_usec = 0;
  }
  time_t secs = static_cast<time_t>(tv.tv_sec);
  struct tm tm;
  gmtime_r(&secs, &tm);
  // Formatted by hand: strftime's %a/%b follow the locale, HTTP's do not.
  static const char kDays[7][4] = {"Sun", "Mon", "Tue", "Wed",
                                   "Thu", "Fri", "Sat"};
  static const char kMonths[12][4] = {"Jan", "Feb", "Mar", "Apr",
                                      "May", "Jun", "Jul", "Aug",
                                      "Sep", "Oct", "Nov", "Dec"};
  snprintf(line_, sizeof(line_), "Date: %s, %02d %s %04d %02d:%02d:%02d GMT\r\n",
           kDays[tm.tm_wday], tm.tm_mday, kMonths[tm.tm_mon],
           tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
  // Valid until the next wall-clock second.
  next_refresh_ = uv_now(loop_) + (1000 - tv.tv_usec / 1000);
}

}  // namespace sluice
