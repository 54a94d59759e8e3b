// Unit test of src/core/http2/reset_budget.h (pure C++): the burst, the
// refill rate, the cap at the burst, a clock that stands still or jumps.
// Built and run by test/unit/reset_budget.test.js; exits non-zero with a
// message on the first difference.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "core/http2/reset_budget.h"

using sluice::ResetBudget;

namespace {

int failures = 0;
#define CHECK(cond, ...)                                        \
  do {                                                          \
    if (!(cond)) {                                              \
      std::fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      std::fprintf(stderr, __VA_ARGS__);                        \
      std::fprintf(stderr, "\n");                               \
      if (++failures > 5) std::exit(1);                         \
    }                                                           \
  } while (0)

// How many Takes succeed at `now` until the first refusal.
int Drain(ResetBudget& b, uint64_t now) {
  int n = 0;
  while (b.Take(now)) {
    if (++n > 100000) break;
  }
  return n;
}

}  // namespace

int main() {
  {
    ResetBudget b(100, 10);
    CHECK(Drain(b, 5000) == 100, "the burst at once");
    CHECK(!b.Take(5000), "then nothing at the same time");
    CHECK(!b.Take(5099), "nothing before a token's worth of time (100 ms)");
    CHECK(b.Take(5100), "one token after 100 ms");
    CHECK(!b.Take(5100), "only one");
    CHECK(Drain(b, 6100) == 10, "ten per second");
  }
  {
    ResetBudget b(100, 10);
    CHECK(Drain(b, 1) == 100, "the burst");
    CHECK(Drain(b, 1000000) == 100, "a long pause refills up to the burst, no more");
  }
  {
    // Time going backwards (never on uv_now, but harmless): no refill.
    ResetBudget b(5, 1000);
    CHECK(Drain(b, 10000) == 5, "burst");
    CHECK(Drain(b, 9000) == 0, "no refill from an earlier time");
    CHECK(Drain(b, 10002) == 2, "refill resumes from the last refill time");
  }
  {
    // Partial intervals accumulate: 10 calls 50 ms apart at 10/s give 5.
    ResetBudget b(3, 10);
    Drain(b, 100);
    int got = 0;
    for (uint64_t t = 150; t <= 600; t += 50) got += b.Take(t) ? 1 : 0;
    CHECK(got == 5, "50 ms steps at 10/s: %d tokens, not 5", got);
  }
  if (failures) return 1;
  std::printf("reset_budget: ok\n");
  return 0;
}
