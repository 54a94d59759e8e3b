// Force-included first into every translation unit of the addon on Linux
// (binding.gyp: -include). It keeps the binary loadable on glibc 2.28 and
// GCC 8's libstdc++ (GLIBCXX_3.4.25: Debian 10, RHEL 8, Ubuntu 20.04 —
// the floor of node's own official Linux binaries) although CI builds on
// Debian 12 (glibc 2.36, GCC 12). test/build/glibc_baseline.test.js reads
// the addon's versioned imports and fails when a newer one appears; when it
// does, add the symbol here (an older version of a function, or a local
// definition for a libstdc++ helper), or document it in docs/install.md.
#ifndef SLUICE_CORE_COMMON_GLIBC_BASELINE_H_
#define SLUICE_CORE_COMMON_GLIBC_BASELINE_H_

#if defined(__linux__)
#include <features.h>
#endif

#if defined(__GLIBC__)

// glibc 2.34 moved libpthread and libdl into libc and gave these functions
// a new default version (GLIBC_2.34); the original version still exists in
// every glibc since (in libpthread.so.0 / libdl.so.2 before 2.34, which
// node itself links, and as a compatibility version of libc.so.6 from
// 2.34). Binding to the original version is the same function.
#if defined(__x86_64__)
#define SLUICE_GLIBC_BASE "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define SLUICE_GLIBC_BASE "GLIBC_2.17"
#endif

#ifdef SLUICE_GLIBC_BASE
__asm__(".symver pthread_create, pthread_create@" SLUICE_GLIBC_BASE);
__asm__(".symver pthread_join, pthread_join@" SLUICE_GLIBC_BASE);
__asm__(".symver pthread_detach, pthread_detach@" SLUICE_GLIBC_BASE);
__asm__(".symver pthread_once, pthread_once@" SLUICE_GLIBC_BASE);
__asm__(".symver pthread_key_create, pthread_key_create@" SLUICE_GLIBC_BASE);
__asm__(".symver dladdr, dladdr@" SLUICE_GLIBC_BASE);
__asm__(".symver dlsym, dlsym@" SLUICE_GLIBC_BASE);
__asm__(".symver dlerror, dlerror@" SLUICE_GLIBC_BASE);
__asm__(".symver dlopen, dlopen@" SLUICE_GLIBC_BASE);
__asm__(".symver dlclose, dlclose@" SLUICE_GLIBC_BASE);
#endif

// libstdc++ 11+ (ext/atomicity.h) reads glibc 2.32's __libc_single_threaded
// to skip atomic reference counting in single-threaded processes. node is
// never single-threaded (V8 and libuv threads start before any addon
// loads), so the answer is always "no": a local constant replaces the
// glibc variable (defined in glibc_baseline.cc), and no import remains.
#define __libc_single_threaded sluice_libc_single_threaded_never

#endif  // __GLIBC__

#endif  // SLUICE_CORE_COMMON_GLIBC_BASELINE_H_
