// Reading JS values in native code, shared by the binding's classes.
// Loop thread only; none of these throw.
#pragma once

#include <node_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/net/address.h"
#include "core/net/output_queue.h"

namespace sluice {

// Keeps a JS value (a Buffer whose bytes an OutputQueue or a worker uses)
// alive until Release(), which the core calls on the loop thread.
class NapiValueRef final : public ExternalRef {
 public:
  NapiValueRef(napi_env env, napi_value value);
  void Release() override;

 private:
  napi_env env_;
  napi_ref ref_ = nullptr;
};

bool IsString(napi_env env, napi_value v);
// undefined or null (or a value whose type cannot be read).
bool IsNullish(napi_env env, napi_value v);
// The bytes of a Buffer / TypedArray / DataView / ArrayBuffer.
bool GetBytes(napi_env env, napi_value v, const char** data, size_t* len);
// A JS string as latin1 (header blocks, reasons) or UTF-8.
void Latin1(napi_env env, napi_value v, std::string* out);
void Utf8(napi_env env, napi_value v, std::string* out);

// Making JS values (nullptr when the environment is stopping).
napi_value Int(napi_env env, int64_t n);
napi_value Latin1String(napi_env env, std::string_view s);
// A new Buffer holding a copy of [data, data + len) (data may be null when
// len is 0); null when the environment is stopping (no Buffer can be made).
napi_value BufferCopy(napi_env env, const char* data, size_t len);
// [name, value, name, value, ...] of latin1 strings (headers, trailers).
template <typename Fields>
napi_value FieldArray(napi_env env, const Fields& fields) {
  napi_value arr;
  napi_create_array_with_length(env, fields.size() * 2, &arr);
  uint32_t i = 0;
  for (const auto& f : fields) {
    napi_set_element(env, arr, i++, Latin1String(env, f.first));
    napi_set_element(env, arr, i++, Latin1String(env, f.second));
  }
  return arr;
}
class Connection;
// [address, port, family] of `c`'s peer or local end, as lib/net/socket.js
// reads it; undefined when `c` is null or the address cannot be read.
napi_value AddressArray(napi_env env, const Connection* c, AddressKind kind);

}  // namespace sluice
