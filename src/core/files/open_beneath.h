// Opening a file under a root directory so that the result can never lie
// outside it: the last line of serveStatic's traversal defence (the path
// was already decoded and normalised by static_path.h, so it holds no
// "..", but a symbolic link inside the root can still point anywhere).
//
// Blocking system calls: call it on the threadpool, never on the loop.
//
//   follow_symlinks false (the default of serveStatic): with openat2(2)
//     (Linux 5.6+) the root is opened O_PATH and the file with
//     RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS: the kernel refuses, with
//     EXDEV, any resolution that leaves the root (a symlink to /etc, an
//     absolute symlink, ".." through a symlink). Where openat2 is missing
//     (ENOSYS, or EPERM from a seccomp filter) the fallback opens the path
//     and checks what it actually opened: /proc/self/fd/N must name a
//     path under realpath(root) ("/" appended), else EXDEV. No /proc:
//     EACCES (refuse rather than guess).
//   follow_symlinks true: a plain open of root + "/" + rel (symbolic links
//     are followed wherever they lead, as serve-static does).
// Flags: O_RDONLY | O_CLOEXEC | O_NONBLOCK (a FIFO must not block the
// thread: see core/body/file_source.h).
#pragma once

#include <string>

namespace sluice {

// Returns a descriptor, or a negative errno-style UV_E* code (UV_EXDEV
// for an escape).
int OpenBeneath(const std::string& root, const std::string& rel,
                bool follow_symlinks);

// Which mechanism OpenBeneath uses on this kernel: "openat2" or
// "procfs" (tests and docs).
const char* OpenBeneathMechanism();

// Tests: force the /proc fallback (as if openat2 were missing).
void OpenBeneathForceFallback(bool on);

}  // namespace sluice
