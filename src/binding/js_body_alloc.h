// The answer of lib/'s body allocator callback (onAlloc: a server's
// requestBufferAllocator behind lib/http1/body_memory.js), read the same
// way for an HTTP/1.1 connection (JsServer) and an HTTP/3 request stream
// (JsHttp3Endpoint): a non-empty Buffer is memory to read into; the
// numbers wire::kAllocDry / kAllocError say the pool is dry / the
// allocator threw; anything else (an empty Buffer included) means no
// memory this time. `Result` is the caller's enum: ServerDelegate's
// BufferResult or Http3BufferResult, both { kOk, kFallback, kDry, kError }.
#pragma once

#include <node_api.h>

#include <cstddef>
#include <cstdint>

#include "binding/wire_protocol.h"

namespace sluice {

// `r`: onAlloc's return value, or null when it threw (kError). On kOk,
// *base / *len are the Buffer's memory (the caller keeps it alive).
template <typename Result, typename Byte>
Result BodyAllocAnswer(napi_env env, napi_value r, Byte** base, size_t* len) {
  if (r == nullptr) return Result::kError;
  bool is_buffer = false;
  napi_is_buffer(env, r, &is_buffer);
  if (is_buffer) {
    void* data = nullptr;
    size_t n = 0;
    napi_get_buffer_info(env, r, &data, &n);
    if (n == 0) return Result::kFallback;
    *base = static_cast<Byte*>(data);
    *len = n;
    return Result::kOk;
  }
  int32_t code = 0;
  napi_get_value_int32(env, r, &code);
  if (code == wire::kAllocDry) return Result::kDry;
  if (code == wire::kAllocError) return Result::kError;
  return Result::kFallback;
}

}  // namespace sluice
