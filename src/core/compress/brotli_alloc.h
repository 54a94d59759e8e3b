// Brotli encoder memory through a small cache of large blocks.
//
// Why: a streaming brotli encoder allocates its hash table (512 KiB at
// quality 4) and ring buffer (up to ~576 KiB at lgwin 18) lazily, on the
// first compression, which for streamed responses runs on a threadpool
// worker; the blocks are freed on the loop thread when the response ends.
// glibc serves a worker's large blocks with fresh mmaps (or from the
// worker's own arena, trimmed back on free), so every response paid
// ~170-330 page faults for the same two blocks (benchmark: 1 MiB streamed
// br responses cost 2.3x the CPU of compressing inline). Reusing freed
// blocks of the same size keeps them resident.
//
// Bounds: blocks of at least kMinBlock bytes are cached, at most
// kMaxCachedBytes in total (beyond that they are freed); smaller ones go
// straight to malloc/free. Thread-safe (one mutex): allocations happen on
// workers, frees on the loop thread.
#pragma once

#include <cstddef>

namespace sluice {

namespace brotli_alloc {

constexpr size_t kMinBlock = 64 * 1024;
constexpr size_t kMaxCachedBytes = 16 * 1024 * 1024;

// brotli_alloc_func / brotli_free_func (opaque unused).
void* Alloc(void* opaque, size_t size);
void Free(void* opaque, void* address);

// Bytes held in the cache now (tests, stats).
size_t cached_bytes();

}  // namespace brotli_alloc

}  // namespace sluice
