#include "core/brotli_alloc.h"

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
std::vector<Header*> g_free;  // cached blocks, most recent last
size_t g_cached = 0;

}  // namespace

void* Alloc(void*, size_t size) {
  if (size >= kMinBlock) {
    std::lock_guard<std::mutex> lock(g_mu);
    for (size_t i = g_free.size(); i-- > 0;) {
      if (g_free[i]->size == size) {
        Header* h = g_free[i];
        g_free[i] = g_free.back();
        g_free.pop_back();
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
      g_free.push_back(h);  // may allocate: the vector grows to a few dozen
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
