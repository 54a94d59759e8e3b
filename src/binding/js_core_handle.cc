#include "binding/js_core_handle.h"

namespace sluice {

void UncaughtIfThrown(napi_env env, napi_status st) {
  if (st != napi_pending_exception) return;
  napi_value err;
  napi_get_and_clear_last_exception(env, &err);
  napi_fatal_exception(env, err);
}

std::vector<std::string> StringList(const Napi::Value& v) {
  std::vector<std::string> out;
  if (!v.IsArray()) return out;
  Napi::Array a = v.As<Napi::Array>();
  for (uint32_t i = 0; i < a.Length(); i++) {
    Napi::Value e = a.Get(i);
    if (e.IsString()) {
      out.push_back(e.As<Napi::String>().Utf8Value());
    } else if (e.IsBuffer()) {
      auto b = e.As<Napi::Buffer<char>>();
      out.emplace_back(b.Data(), b.Length());
    }
  }
  return out;
}

Napi::FunctionReference JsCallback(const Napi::Object& callbacks,
                                   const char* name) {
  Napi::Value v = callbacks.Get(name);
  if (!v.IsFunction()) return Napi::FunctionReference();
  // Weak: a strong reference is a GC root, and the callbacks close over
  // the JS Server, which holds this native server: a server created and
  // dropped without listening would never be collected. The callbacks
  // object stays alive through lib's Server (which keeps it) and, while
  // the server listens or has connections, through JsServer::HoldSelf.
  return Napi::Weak(v.As<Napi::Function>());
}

napi_value CallJs(napi_env env, const Napi::FunctionReference& fn,
                  size_t argc, const napi_value* argv) {
  if (fn.IsEmpty()) return nullptr;
  for (size_t i = 0; i < argc; i++) {
    if (argv[i] == nullptr) return nullptr;
  }
  napi_value undefined, result;
  napi_get_undefined(env, &undefined);
  napi_status st =
      napi_call_function(env, undefined, fn.Value(), argc, argv, &result);
  UncaughtIfThrown(env, st);
  return st == napi_ok ? result : nullptr;
}

}  // namespace sluice
