// Reading JS values in native code, shared by the binding's classes.
// Loop thread only; none of these throw.
#pragma once

#include <node_api.h>

#include <cstddef>
#include <string>

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

}  // namespace sluice
