#include "core/common/symbol_origin.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdint>

namespace sluice {

SymbolOrigin OriginOf(const void* fn) {
  SymbolOrigin o;
  Dl_info info;
  if (dladdr(fn, &info) == 0 || info.dli_fname == nullptr) return o;
  // The first object dl_iterate_phdr reports is the main program.
  struct Main {
    uintptr_t base = 0;
    bool seen = false;
  } main;
  dl_iterate_phdr(
      [](struct dl_phdr_info* pi, size_t, void* data) -> int {
        Main* m = static_cast<Main*>(data);
        for (int i = 0; i < pi->dlpi_phnum; i++) {
          if (pi->dlpi_phdr[i].p_type == PT_LOAD) {
            m->base = pi->dlpi_addr + pi->dlpi_phdr[i].p_vaddr;
            break;
          }
        }
        m->seen = true;
        return 1;  // stop after the first
      },
      &main);
  o.in_executable =
      main.seen && reinterpret_cast<uintptr_t>(info.dli_fbase) == main.base;
  o.library = info.dli_fname;
  return o;
}

}  // namespace sluice
