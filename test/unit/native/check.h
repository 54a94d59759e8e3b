// CHECK(cond, printf-format, ...) for the native unit tests: counts every
// check, prints each failure with its place, exits 1 after ten. Each test
// program includes it once (it defines the counters) and reports with
// CheckSummary("name") as main's return value.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace check_counts {
inline int failures = 0;
inline long checks = 0;
}  // namespace check_counts

#define CHECK(cond, ...)                                        \
  do {                                                          \
    check_counts::checks++;                                     \
    if (!(cond)) {                                              \
      std::fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      std::fprintf(stderr, __VA_ARGS__);                        \
      std::fprintf(stderr, "\n");                               \
      if (++check_counts::failures > 10) std::exit(1);          \
    }                                                           \
  } while (0)

// "name: N checks, ok" on stdout and 0, or the failure count on stderr and 1.
inline int CheckSummary(const char* name) {
  if (check_counts::failures) {
    std::fprintf(stderr, "%s: %d of %ld checks failed\n", name, check_counts::failures,
                 check_counts::checks);
    return 1;
  }
  std::printf("%s: %ld checks, ok\n", name, check_counts::checks);
  return 0;
}
