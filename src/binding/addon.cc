// Module entry: exports the native classes and facts about the build.
#include <llhttp.h>
#include <napi.h>
#include <uv.h>

#include "binding/addon_data.h"
#include "binding/js_websocket.h"
#include "binding/js_compress.h"
#include "binding/js_connection.h"
#include "binding/js_http2.h"
#include "binding/js_http2_session.h"
#include "binding/js_http3.h"
#include "binding/js_quic_client.h"
#include "binding/js_file.h"
#include "binding/js_server.h"
#include "binding/js_tls.h"
#include "binding/wire_protocol.h"
#include "core/common/loop_tracked.h"
#include "core/files/content_types.h"
#include "core/files/open_beneath.h"
#include "core/http2/nghttp2_link.h"

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

#ifdef SLUICE_ASAN_BUILD
// Sanitizer builds only: leaks one allocation on purpose, called from JS.
// test/asan/run.sh checks that LeakSanitizer reports it, i.e. that the
// suppressions (test/asan/lsan.supp) do not hide leaks of ours made on a
// JS call path (whose stacks also hold node and V8 frames).
char* volatile g_leak_sink;
Napi::Value LeakForTest(const Napi::CallbackInfo& info) {
  g_leak_sink = new char[4099];
  g_leak_sink[0] = 1;
  g_leak_sink = nullptr;
  return info.Env().Undefined();
}
#endif

Napi::Value GetCountersJs(const Napi::CallbackInfo& info) {
  Napi::Object o = Napi::Object::New(info.Env());
  Counters& c = GetCounters();
  o.Set("bodyBytesCopied", static_cast<double>(c.body_bytes_copied));
  o.Set("bodyBytesReferenced", static_cast<double>(c.body_bytes_referenced));
  return o;
}

// ---- environment teardown ---------------------------------------------------
//
// When the environment ends (a worker terminated, the process exiting) node
// runs its cleanup hooks, finalizes our objects and closes the loop; for a
// worker that alone loaded the addon it then unloads sluice.node. Anything
// of ours still pending in libuv at that point crashes the process: a close
// callback of a connection into unloaded code, a threadpool job (file open,
// compression) or fs read keeping the loop from closing ("uv_loop_close()
// while having open handles").
//
// So an async cleanup hook (it runs before the finalizers, which node
// defers until the hook is done) closes every server, connection and file
// source of this environment without calling JS, then waits until every
// core object with libuv work has been freed (core/common/loop_tracked.h) before
// it lets node go on. Waiting means: node keeps running the loop while the
// hook is pending, so close callbacks, cancelled writes and in-flight fs and
// threadpool work complete normally.

// Owns the handle whose close callback ends the hook: the last core object
// can be freed deep inside a callback of its own (the zero count is seen in
// its destructor); ending the hook from a close callback instead, which
// libuv runs from its top level, keeps that independent of what node does
// inside napi_remove_async_cleanup_hook.
struct TeardownWait {
  uv_idle_t handle;  // never started: only closed
  napi_async_cleanup_hook_handle hook;
};

void OnTeardownDone(uv_handle_t* h) {
  TeardownWait* w = static_cast<TeardownWait*>(h->data);
  napi_async_cleanup_hook_handle hook = w->hook;
  delete w;
  // Node then lets go of the napi env (from a native immediate it still
  // runs before closing the loop): our objects are finalized and the addon
  // data freed after this.
  napi_remove_async_cleanup_hook(hook);
}

void OnNothingPending(void* arg) {
  TeardownWait* w = static_cast<TeardownWait*>(arg);
  uv_close(reinterpret_cast<uv_handle_t*>(&w->handle), OnTeardownDone);
}

// The async cleanup hook (loop thread; JS can no longer run).
void OnEnvironmentTeardown(napi_async_cleanup_hook_handle hook, void* arg) {
  AddonData* data = static_cast<AddonData*>(arg);
  data->tearing_down = true;
  // Teardown unregisters nothing itself; the sets are emptied here so no
  // destructor touches them later.
  std::unordered_set<JsServer*> servers;
  servers.swap(data->servers);
  for (JsServer* s : servers) s->Teardown();
  std::unordered_set<JsFile*> files;
  files.swap(data->files);
  for (JsFile* f : files) f->Teardown();
  std::unordered_set<JsHttp3Endpoint*> endpoints;
  endpoints.swap(data->http3_endpoints);
  for (JsHttp3Endpoint* e : endpoints) e->Teardown();
  std::unordered_set<JsQuicClient*> clients;
  clients.swap(data->quic_clients);
  for (JsQuicClient* c : clients) c->Teardown();
  // Watches close and idle descriptors close (async, LoopTracked) now;
  // an entry a closing source still holds closes its fd after it.
  data->file_cache.reset();

  TeardownWait* w = new TeardownWait;
  w->hook = hook;
  uv_idle_init(data->loop, &w->handle);
  w->handle.data = w;
  if (LoopTracked::Count() == 0) {
    OnNothingPending(w);
  } else {
    LoopTracked::NotifyWhenNone(OnNothingPending, w);
  }
}

// binding.constants: the wire protocol (wire_protocol.h), frozen.
Napi::Object WireConstants(Napi::Env env) {
  Napi::Object o = Napi::Object::New(env);
#define SLUICE_SET_RESULT(cpp, js, value, meaning) \
  o.Set(#js, Napi::Number::New(env, cpp));
  SLUICE_RESULT_LIST(SLUICE_SET_RESULT)
#undef SLUICE_SET_RESULT
#define SLUICE_SET_BINDING(cpp, js, value) \
  o.Set(#js, Napi::Number::New(env, wire::cpp));
  SLUICE_WIRE_BINDING_LIST(SLUICE_SET_BINDING)
#undef SLUICE_SET_BINDING
#define SLUICE_SET_CORE(js, value) o.Set(#js, Napi::Number::New(env, value));
  SLUICE_WIRE_CORE_LIST(SLUICE_SET_CORE)
#undef SLUICE_SET_CORE
  o.Freeze();
  return o;
}

// staticContentTypes() -> [[ext, type], ...]: serveStatic's table (docs).
Napi::Value StaticContentTypes(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  size_t n = 0;
  const ContentTypeEntry* t = ContentTypeTable(&n);
  Napi::Array a = Napi::Array::New(env, n);
  for (size_t i = 0; i < n; i++) {
    Napi::Array row = Napi::Array::New(env, 3);
    row.Set(0u, Napi::String::New(env, t[i].ext));
    row.Set(1u, Napi::String::New(env, t[i].type));
    row.Set(2u, Napi::Boolean::New(env, t[i].compressible));
    a.Set(static_cast<uint32_t>(i), row);
  }
  return a;
}

// staticOpenBeneath([forceFallback]) -> "openat2" | "procfs": how
// serveStatic opens files beneath a root; tests force the fallback.
Napi::Value StaticOpenBeneath(const Napi::CallbackInfo& info) {
  if (info.Length() > 0 && info[0].IsBoolean()) {
    OpenBeneathForceFallback(info[0].As<Napi::Boolean>().Value());
  }
  return Napi::String::New(info.Env(), OpenBeneathMechanism());
}

}  // namespace

Napi::Object InitAddon(Napi::Env env, Napi::Object exports) {
  AddonData* data = new AddonData();
  data->connection_ctor = Napi::Persistent(JsConnection::Init(env));
  data->http2_session_ctor = Napi::Persistent(JsHttp2Session::Init(env));
  napi_get_uv_event_loop(env, &data->loop);
  env.SetInstanceData(data);
  // The hook's handle holds a reference on the napi env: node finalizes
  // nothing of ours until the hook is removed.
  napi_add_async_cleanup_hook(env, OnEnvironmentTeardown, data, nullptr);

  exports.Set("NativeServer", JsServer::Init(env));
  exports.Set("NativeConnection", data->connection_ctor.Value());
  {
    napi_value fn = nullptr;
    napi_create_function(env, "respondHttp1", NAPI_AUTO_LENGTH,
                         JsConnection::RespondFast, nullptr, &fn);
    exports.Set("respondHttp1", Napi::Value(env, fn));
  }
  {
    napi_value fn = nullptr;
    napi_create_function(env, "wsSendHttp1", NAPI_AUTO_LENGTH,
                         JsConnection::WsSendFast, nullptr, &fn);
    exports.Set("wsSendHttp1", Napi::Value(env, fn));
  }
  exports.Set("NativeFile", JsFile::Init(env));
  exports.Set("NativeWsHub", JsWsHub::Init(env));
  exports.Set("constants", WireConstants(env));
  exports.Set("errname", Napi::Function::New(env, ErrName));
  exports.Set("strerror", Napi::Function::New(env, StrError));
  exports.Set("counters", Napi::Function::New(env, GetCountersJs));
  exports.Set("staticContentTypes", Napi::Function::New(env, StaticContentTypes));
  // The field names of a serveStatic middleware answer, in its bit order.
  Napi::Array fields = Napi::Array::New(env, kStaticAnswerFieldCount);
  for (size_t i = 0; i < kStaticAnswerFieldCount; i++) {
    fields.Set(static_cast<uint32_t>(i), Napi::String::New(env, kStaticAnswerFields[i]));
  }
  exports.Set("staticAnswerFields", fields);
  exports.Set("staticOpenBeneath", Napi::Function::New(env, StaticOpenBeneath));
#ifdef SLUICE_ASAN_BUILD
  exports.Set("leakForTest", Napi::Function::New(env, LeakForTest));
#endif
  InitCompression(env, exports);
  InitTls(env, exports);
  InitHttp3(env, exports);

  // The llhttp compiled into this addon (not node's own copy, which the
  // hidden visibility keeps from interposing).
  Napi::Object versions = Napi::Object::New(env);
  versions.Set("llhttp", std::to_string(LLHTTP_VERSION_MAJOR) + "." +
                             std::to_string(LLHTTP_VERSION_MINOR) + "." +
                             std::to_string(LLHTTP_VERSION_PATCH));
  exports.Set("versions", versions);
  // nghttp2: node's own copy (docs/http2.md), as dladdr finds it.
  Nghttp2LinkInfo ng = GetNghttp2LinkInfo();
  Napi::Object ngi = Napi::Object::New(env);
  ngi.Set("headerVersion", ng.header_version);
  ngi.Set("library", ng.origin.library);
  ngi.Set("inExecutable", ng.origin.in_executable);
  exports.Set("nghttp2Info", ngi);
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
