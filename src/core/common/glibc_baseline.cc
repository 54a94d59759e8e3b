// Local definitions that keep the addon's imports at the glibc 2.28 /
// GLIBCXX_3.4.25 baseline (glibc_baseline.h, force-included, explains it).
// The exports map (src/binding/exports.map) keeps both local: references
// bind to them at link time, nothing is imported or exported.
#include "core/common/glibc_baseline.h"

#include <cstdlib>

#if defined(__GLIBC__)
// Stands in for glibc's __libc_single_threaded (see the header): node's
// process always has more than one thread.
extern "C" {
char sluice_libc_single_threaded_never = 0;
}
#endif

#if defined(__GLIBCXX__) && defined(_GLIBCXX_RELEASE) && _GLIBCXX_RELEASE >= 11
namespace std {
// GCC 11's allocators call this (GLIBCXX_3.4.29) when asked for more
// elements than fit in size_t: an impossible size, which the addon (built
// with -fno-exceptions, so libstdc++'s own version would abort too) treats
// as the fatal error it is.
[[noreturn]] void __throw_bad_array_new_length() { std::abort(); }
}  // namespace std
#endif
