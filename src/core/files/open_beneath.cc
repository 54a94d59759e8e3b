#include "core/files/open_beneath.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <uv.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstring>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

namespace sluice {

namespace {

// 1: openat2 works, 0: unknown yet, -1: missing (fallback). Threadpool
// threads race to set it; any of them is right.
std::atomic<int> g_openat2{0};
std::atomic<bool> g_force_fallback{false};

constexpr int kFlags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;

int Fail() { return uv_translate_sys_error(errno); }

int OpenPlain(const std::string& root, const std::string& rel) {
  std::string full = root;
  if (!rel.empty()) {
    full += '/';
    full += rel;
  }
  int fd;
  do {
    fd = open(full.c_str(), kFlags);
  } while (fd < 0 && errno == EINTR);
  return fd < 0 ? Fail() : fd;
}

// openat2 under the root. Sets *missing when the kernel has no openat2.
int OpenWithOpenat2(const std::string& root, const std::string& rel,
                    bool* missing) {
  int dirfd = open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) return Fail();
  struct open_how how;
  std::memset(&how, 0, sizeof(how));
  how.flags = kFlags;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  const char* p = rel.empty() ? "." : rel.c_str();
  long fd;
  do {
    fd = syscall(SYS_openat2, dirfd, p, &how, sizeof(how));
  } while (fd < 0 && (errno == EINTR || errno == EAGAIN));
  int e = errno;
  close(dirfd);
  if (fd < 0) {
    if (e == ENOSYS || e == EPERM) {
      *missing = true;
      return UV_ENOSYS;
    }
    return uv_translate_sys_error(e);
  }
  return static_cast<int>(fd);
}

int OpenWithProcCheck(const std::string& root, const std::string& rel) {
  char real_root[PATH_MAX];
  if (realpath(root.c_str(), real_root) == nullptr) return Fail();
  int fd = OpenPlain(root, rel);
  if (fd < 0) return fd;
  char link[64];
  std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  char actual[PATH_MAX];
  ssize_t n = readlink(link, actual, sizeof(actual) - 1);
  if (n < 0) {
    close(fd);
    return UV_EACCES;
  }
  actual[n] = '\0';
  size_t rl = std::strlen(real_root);
  bool inside = std::strcmp(actual, real_root) == 0 ||
                (std::strncmp(actual, real_root, rl) == 0 &&
                 (actual[rl] == '/' || (rl == 1 && real_root[0] == '/')));
  if (!inside) {
    close(fd);
    return UV_EXDEV;
  }
  return fd;
}

}  // namespace

int OpenBeneath(const std::string& root, const std::string& rel,
                bool follow_symlinks) {
  if (follow_symlinks) return OpenPlain(root, rel);
  if (!g_force_fallback.load() && g_openat2.load() >= 0) {
    bool missing = false;
    int r = OpenWithOpenat2(root, rel, &missing);
    if (!missing) {
      g_openat2.store(1);
      return r;
    }
    g_openat2.store(-1);
  }
  return OpenWithProcCheck(root, rel);
}

const char* OpenBeneathMechanism() {
  if (g_force_fallback.load() || g_openat2.load() < 0) return "procfs";
  if (g_openat2.load() == 0) {
    // Probe with the root directory itself.
    bool missing = false;
    int fd = OpenWithOpenat2("/", "", &missing);
    if (fd >= 0) close(fd);
    g_openat2.store(missing ? -1 : 1);
  }
  return g_openat2.load() > 0 ? "openat2" : "procfs";
}

void OpenBeneathForceFallback(bool on) { g_force_fallback.store(on); }

}  // namespace sluice
