// Module entry: exports the native classes and facts about the build.
#include <llhttp.h>
#include <napi.h>
#include <uv.h>

#include "binding/addon_data.h"
#include "binding/js_compress.h"
#include "binding/js_connection.h"
#include "binding/js_http2.h"
#include "binding/js_file.h"
#include "binding/js_server.h"

namespace sluice {
namespace {

Napi::Value ErrName(const Napi::CallbackInfo& info) {
  int code = info[0].As<Napi::Number>().Int32Value();
  return Napi::String::New(info.Env(), uv_err_name(code));
}

Napi::Value StrError(const Napi::CallbackInfo& info) {
  int code = info[0].As<Napi::Number>().Int32Value();
  return Napi::String::New(info.Env(), uv_strerror(code));
}

Napi::Value GetCountersJs(const Napi::CallbackInfo& info) {
  Napi::Object o = Napi::Object::New(info.Env());
  Counters& c = GetCounters();
  o.Set("bodyBytesCopied", static_cast<double>(c.body_bytes_copied));
  o.Set("bodyBytesReferenced", static_cast<double>(c.body_bytes_referenced));
  return o;
}

}  // namespace

Napi::Object InitAddon(Napi::Env env, Napi::Object exports) {
  AddonData* data = new AddonData();
  data->connection_ctor = Napi::Persistent(JsConnection::Init(env));
  data->http2_session_ctor = Napi::Persistent(JsHttp2Session::Init(env));
  env.SetInstanceData(data);

  exports.Set("NativeServer", JsServer::Init(env));
  exports.Set("NativeConnection", data->connection_ctor.Value());
  exports.Set("NativeFile", JsFile::Init(env));
  exports.Set("errname", Napi::Function::New(env, ErrName));
  exports.Set("strerror", Napi::Function::New(env, StrError));
  exports.Set("counters", Napi::Function::New(env, GetCountersJs));
  InitCompression(env, exports);

  // The llhttp compiled into this addon (not node's own copy, which the
  // hidden visibility keeps from interposing).
  Napi::Object versions = Napi::Object::New(env);
  versions.Set("llhttp", std::to_string(LLHTTP_VERSION_MAJOR) + "." +
                             std::to_string(LLHTTP_VERSION_MINOR) + "." +
                             std::to_string(LLHTTP_VERSION_PATCH));
  exports.Set("versions", versions);
  // Method names by llhttp_method_t value, for req.method.
  // (llhttp_method_name aborts on unknown values; the map has gaps.)
  Napi::Array methods = Napi::Array::New(env);
#define SLUICE_METHOD(num, name, string) \
  methods.Set(static_cast<uint32_t>(num), Napi::String::New(env, #string));
  HTTP_ALL_METHOD_MAP(SLUICE_METHOD)
#undef SLUICE_METHOD
  exports.Set("methods", methods);
  return exports;
}

}  // namespace sluice

static Napi::Object InitSluice(Napi::Env env, Napi::Object exports) {
  return sluice::InitAddon(env, exports);
}

NODE_API_MODULE(sluice, InitSluice)
