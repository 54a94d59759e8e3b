#include "binding/js_static_mount.h"

#include <string>
#include <vector>

#include "binding/js_core_handle.h"

namespace sluice {

namespace {

// What the External points at; tagged so that no other External passes.
struct MountBox {
  static constexpr uint32_t kTag = 0x5374614d;  // "StaM"
  uint32_t tag = kTag;
  std::shared_ptr<const StaticMount> mount;
};

// Marks the Externals WrapStaticFiles makes (a random 128-bit tag).
const napi_type_tag kStaticFilesTag = {0x3b7e91c4d2a05f68ULL, 0xa41f6c0e97d3b852ULL};

}  // namespace

void ReadStaticMountOptions(const Napi::Object& o, StaticMountOptions* so) {
  // index / extensions: arrays of strings (lib/files/static_mount.js checked).
  so->index = StringList(o.Get("index"));
  so->extensions = StringList(o.Get("extensions"));
  so->dotfiles = static_cast<StaticMountOptions::Dotfiles>(
      o.Get("dotfiles").As<Napi::Number>().Int32Value());
  so->follow_symlinks = o.Get("followSymlinks").ToBoolean().Value();
  so->use_cache = o.Get("useCache").ToBoolean().Value();
  so->headers.etag = o.Get("etag").ToBoolean().Value();
  so->headers.last_modified = o.Get("lastModified").ToBoolean().Value();
  so->headers.cache_control = o.Get("cacheControl").ToBoolean().Value();
  so->headers.immutable = o.Get("immutable").ToBoolean().Value();
  so->headers.accept_ranges = o.Get("acceptRanges").ToBoolean().Value();
  so->headers.max_age_ms =
      static_cast<uint64_t>(o.Get("maxAge").As<Napi::Number>().DoubleValue());
  so->precompressed = o.Get("precompressed").ToBoolean().Value();
  Napi::Value enc = o.Get("encodings");
  if (enc.IsArray()) {
    Napi::Array a = enc.As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); i++) {
      int c = a.Get(i).As<Napi::Number>().Int32Value();
      if (c >= 1 && c <= 3) so->encodings.push_back(static_cast<Coding>(c));
    }
    so->compress_threshold =
        static_cast<uint64_t>(o.Get("threshold").As<Napi::Number>().DoubleValue());
    so->compress_level = o.Get("level").As<Napi::Number>().Int32Value();
    so->brotli_quality = o.Get("brotliQuality").As<Napi::Number>().Int32Value();
  }
}

void SetStaticMountRoot(const std::string& abs, StaticMount* m) {
  m->root = abs;
  while (m->root.size() > 1 && m->root.back() == '/') m->root.pop_back();
  if (m->root == "/") m->root.clear();
}

Napi::Value NewMiddlewareMount(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString() || !info[1].IsObject()) {
    Napi::TypeError::New(env, "staticMount(root, options)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  auto m = std::make_shared<StaticMount>();
  m->prefix = "/";
  SetStaticMountRoot(info[0].As<Napi::String>().Utf8Value(), m.get());
  ReadStaticMountOptions(info[1].As<Napi::Object>(), &m->options);
  // The response's compression runs in JS's file path (lib/
  // compression.js), as for respondWithFile: never in the lookup.
  m->options.encodings.clear();
  m->options.keep_refusal_fields = true;
  m->id = StaticFiles::NextMountId();
  auto* box = new MountBox();
  box->mount = std::move(m);
  return Napi::External<MountBox>::New(
      env, box, [](Napi::Env, MountBox* b) { delete b; });
}

std::shared_ptr<const StaticMount> MiddlewareMountOf(const Napi::Value& v) {
  if (!v.IsExternal()) return nullptr;
  auto* box = v.As<Napi::External<MountBox>>().Data();
  if (box == nullptr || box->tag != MountBox::kTag) return nullptr;
  return box->mount;
}

Napi::Value WrapStaticFiles(Napi::Env env, std::shared_ptr<StaticFiles> files) {
  using Box = std::shared_ptr<StaticFiles>;
  auto* box = new Box(std::move(files));
  Napi::External<Box> ext =
      Napi::External<Box>::New(env, box, [](Napi::Env, Box* b) { delete b; });
  napi_type_tag_object(env, ext, &kStaticFilesTag);
  return ext;
}

std::shared_ptr<StaticFiles> StaticFilesOf(const Napi::Value& v) {
  bool ours = false;
  if (!v.IsExternal() ||
      napi_check_object_type_tag(v.Env(), v, &kStaticFilesTag, &ours) != napi_ok || !ours) {
    return nullptr;
  }
  auto* box = v.As<Napi::External<std::shared_ptr<StaticFiles>>>().Data();
  return box != nullptr ? *box : nullptr;
}

}  // namespace sluice
