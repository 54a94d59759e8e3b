#include "core/compress/brotli_alloc.h"

#include <cstdlib>
#include <mutex>
#include <vector>

namespace sluice {

namespace brotli_alloc {

namespace {

// Every block starts with its size, so Free knows what it returns.
struct alignas(16) Header {
  size_t size;
};

std::mutex g_mu;
// Cached blocks, most recent last. Never destroyed: workers may still
// free into it while the process exits, and the blocks stay reachable
// (not leaks) for LeakSanitizer after static destructors ran.
std::vector<Header*>& FreeList() {
  static std::vector<Header*>* list = new std::vector<Header*>();
  return *list;
}
size_t g_cached = 0;

}  // namespace

void* Alloc(void*, size_t size) {
  if (size >= kMinBlock) {
    std::lock_guard<std::mutex> lock(g_mu);
    std::vector<Header*>& list = FreeList();
    for (size_t i = list.size(); i-- > 0;) {
      if (list[i]->size == size) {
        Header* h = list[i];
        list[i] = list.back();
        list.pop_back();
        g_cached -= size;
        return h + 1;
      }
    }
  }
  Header* h = static_cast<Header*>(malloc(sizeof(Header) + size));
  if (h == nullptr) return nullptr;
  h->size = size;
  return h + 1;
}

void Free(void*, void* address) {
  if (address == nullptr) return;
  Header* h = static_cast<Header*>(address) - 1;
  if (h->size >= kMinBlock) {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_cached + h->size <= kMaxCachedBytes) {
      FreeList().push_back(h);  // may allocate: it grows to a few dozen
      g_cached += h->size;
      return;
    }
  }
  free(h);
}

size_t cached_bytes() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_cached;
}

}  // namespace brotli_alloc

}  // namespace sluice
