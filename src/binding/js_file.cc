#include "binding/js_file.h"

#include <cstring>
#include <string>

#include "binding/addon_data.h"
#include "binding/js_compress.h"
#include "binding/js_connection.h"
#include "binding/js_static_mount.h"
#include "binding/wire_protocol.h"
#include "core/http1/http1_pipe_body.h"
#include "core/http1/http1_session.h"

namespace sluice {

namespace {

uv_loop_t* LoopOf(napi_env env) {
  uv_loop_t* loop = nullptr;
  napi_get_uv_event_loop(env, &loop);
  return loop;
}

double Ms(const uv_timespec_t& t) {
  return static_cast<double>(t.tv_sec) * 1e3 +
         static_cast<double>(t.tv_nsec) / 1e6;
}

// fs.Stats order: dev, mode, nlink, uid, gid, rdev, blksize, ino, size,
// blocks, atimeMs, mtimeMs, ctimeMs, birthtimeMs.
constexpr size_t kStatValues = 14;
void StatValues(const uv_stat_t* st, double* v) {
  const double a[kStatValues] = {
      static_cast<double>(st->st_dev),     static_cast<double>(st->st_mode),
      static_cast<double>(st->st_nlink),   static_cast<double>(st->st_uid),
      static_cast<double>(st->st_gid),     static_cast<double>(st->st_rdev),
      static_cast<double>(st->st_blksize), static_cast<double>(st->st_ino),
      static_cast<double>(st->st_size),    static_cast<double>(st->st_blocks),
      Ms(st->st_atim),                     Ms(st->st_mtim),
      Ms(st->st_ctim),                     Ms(st->st_birthtim)};
  memcpy(v, a, sizeof(a));
}

}  // namespace

Napi::Function JsFile::Init(Napi::Env env) {
  return DefineClass(env, "NativeFile",
                     {
                         InstanceMethod<&JsFile::Open>("open"),
                         InstanceMethod<&JsFile::Range>("range"),
                         InstanceMethod<&JsFile::HoldHttp1>("holdHttp1"),
                         InstanceMethod<&JsFile::RespondHttp1>("respondHttp1"),
                         InstanceMethod<&JsFile::Close>("close"),
                         InstanceMethod<&JsFile::LookupStatic>("lookupStatic"),
                         StaticMethod("staticMount", NewMiddlewareMount),
                         StaticMethod<&JsFile::Stats>("stats"),
                         StaticMethod<&JsFile::SetStatArray>("setStatArray"),
                         StaticMethod<&JsFile::ConfigureCache>("configureCache"),
                         StaticMethod<&JsFile::CacheStats>("cacheStats"),
                     });
}

JsFile::JsFile(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<JsFile>(info),
      addon_(info.Env(), &AddonData::files, this) {
  // The async context is made in Open, only when a libuv callback will
  // call into JS (an open on the threadpool): a cache hit needs none.
}

JsFile::~JsFile() {
  // Collected: nothing in the core refers to us (holds_ kept us alive while
  // it did). A source never handed to a pipe closes its fd here (async).
  if (source_) source_->Close();
}

void JsFile::Teardown() {
  addon_.Forget();
  on_done_.Reset();
  CloseSource();
}

FileSource* JsFile::TakeSource() {
  FileSource* s = source_;
  source_ = nullptr;
  return s;
}

void JsFile::Hold() {
  if (holds_++ == 0) self_ = Napi::Persistent(Value());
}

void JsFile::Unhold() {
  if (holds_ > 0 && --holds_ == 0) self_.Reset();
}

void JsFile::CallJs(Napi::FunctionReference& fn, size_t argc, napi_value* argv,
                    bool from_libuv) {
  if (addon_.get() == nullptr) return;  // environment teardown: no JS
  napi_env env = Env();
  // napi_make_callback needs an object receiver: this NativeFile.
  napi_value recv = Value(), result;
  napi_status st;
  if (from_libuv) {
    // A callback from the loop: node's MakeCallback semantics (async hooks,
    // nextTicks and microtasks run after it).
    st = napi_make_callback(env, async_context_.get(), recv, fn.Value(), argc, argv,
                            &result);
  } else {
    st = napi_call_function(env, recv, fn.Value(), argc, argv, &result);
  }
  UncaughtIfThrown(env, st);
}

Napi::Value JsFile::Open(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (source_ || !on_open_.IsEmpty()) {
    return Napi::Number::New(env, UV_EALREADY);
  }
  bool is_fd = info[1].ToBoolean().Value();
  int64_t offset = info[2].As<Napi::Number>().Int64Value();
  int64_t length = info[3].As<Napi::Number>().Int64Value();
  if (!info[4].IsFunction()) return Napi::Number::New(env, UV_EINVAL);
  FileSource* src =
      FileSource::Create(LoopOf(env), PipeBufferPool::ForThisThread());
  int r;
  if (is_fd) {
    r = src->OpenFd(info[0].As<Napi::Number>().Int32Value(), offset, length,
                    this);
  } else {
    std::string path = info[0].As<Napi::String>().Utf8Value();
    AddonData* addon = addon_.get();
    OpenFileCache* cache = addon != nullptr ? addon->file_cache.get() : nullptr;
    if (cache != nullptr && addon->stat_out != nullptr &&
        info[5].ToBoolean().Value()) {
      if (CachedFile* hit = cache->Lookup(path)) {
        // No open, no fstat, no threadpool job: the source reads the
        // cached descriptor (or hands out the cached bytes).
        StatValues(&hit->stat(), addon->stat_out);
        src->OpenCached(hit, offset, length);
        source_ = src;
        return Napi::Number::New(env, 1);
      }
      CachedFile* pending = cache->BeginOpen(path);
      if (pending != nullptr) {
        r = src->OpenForCache(path.c_str(), offset, length, this, pending);
      } else {
        r = src->Open(path.c_str(), offset, length, this);
      }
    } else {
      r = src->Open(path.c_str(), offset, length, this);
    }
  }
  if (r != 0) {
    src->Close();
    return Napi::Number::New(env, r);
  }
  source_ = src;
  if (async_context_.get() == nullptr) {
    async_context_.Init(env, info.This(), "sluice.FileResponse");
  }
  on_open_ = Napi::Persistent(info[4].As<Napi::Function>());
  Hold();  // until OnFileOpened
  return Napi::Number::New(env, 0);
}

void JsFile::OnFileOpened(int err, const char* syscall, const uv_stat_t* st) {
  // From a libuv fs callback: no JS scope is open.
  napi_env env = Env();
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value argv[3];
  napi_create_int32(env, err, &argv[0]);
  napi_create_string_utf8(env, syscall, NAPI_AUTO_LENGTH, &argv[1]);
  if (err != 0) {
    // The source holds nothing worth keeping; it closes what it opened.
    if (source_) {
      source_->Close();
      source_ = nullptr;
    }
    napi_get_undefined(env, &argv[2]);
  } else {
    double v[kStatValues];
    StatValues(st, v);
    napi_value ab = nullptr, arr = nullptr;
    void* data = nullptr;
    if (napi_create_arraybuffer(env, sizeof(v), &data, &ab) != napi_ok ||
        napi_create_typedarray(env, napi_float64_array, kStatValues, ab, 0, &arr) !=
            napi_ok) {
      // The environment is stopping (a worker terminated or calling
      // process.exit(): JS can no longer run and nothing can be made; the
      // teardown hook closes the source). `data` was never set then: the
      // stat written through it corrupted the heap.
      on_open_.Reset();
      napi_close_handle_scope(env, scope);
      Unhold();
      return;
    }
    memcpy(data, v, sizeof(v));
    argv[2] = arr;
  }
  Napi::FunctionReference fn = std::move(on_open_);
  CallJs(fn, 3, argv, true);
  napi_close_handle_scope(env, scope);
  Unhold();
}

Napi::Value JsFile::Range(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Array a = Napi::Array::New(env, 3);
  if (source_) {
    a.Set(0u, Napi::Number::New(env, static_cast<double>(source_->offset())));
    a.Set(1u, Napi::Number::New(env, static_cast<double>(source_->length())));
    a.Set(2u, Napi::Boolean::New(env, source_->length_known()));
  }
  return a;
}

Napi::Value JsFile::HoldHttp1(const Napi::CallbackInfo& info) {
  JsConnection* jc = JsConnection::Unwrap(info[0].As<Napi::Object>());
  Http1Session* s = jc ? jc->http1_session() : nullptr;
  // Only for a known length: a FIFO's first bytes may take any time, and
  // its head should not wait for them (node sends it at once too).
  if (s && source_ && source_->length_known()) {
    s->HoldOutput(info[1].As<Napi::Number>().Uint32Value());
  }
  return info.Env().Undefined();
}

Napi::Value JsFile::RespondHttp1(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!source_) return Napi::Number::New(env, kResultNoRequest);
  JsConnection* jc = JsConnection::Unwrap(info[0].As<Napi::Object>());
  uint32_t seq = info[1].As<Napi::Number>().Uint32Value();
  Http1Session* s = jc ? jc->http1_session() : nullptr;
  FileSource* src = TakeSource();
  if (!s) {
    src->Close();
    return Napi::Number::New(env, kResultClosed);
  }
  if (info[2].IsFunction()) {
    on_done_ = Napi::Persistent(info[2].As<Napi::Function>());
  }
  Hold();  // the session holds us as its listener until OnPipeBodyDone
  // A negotiated content coding (args 3..5) puts the compressor between
  // the file and the socket.
  PipeSource* body = WrapCompression(info, 3, src);
  if (!body) {
    Unhold();
    return Napi::Number::New(env, kResultClosed);
  }
  int r = s->StartPipeBody(seq, body, this, body == src ? src : nullptr);
  if (r != kResultOk) Unhold();  // the listener will not be called
  return Napi::Number::New(env, r);
}

void JsFile::OnPipeBodyDone(int status) {
  // Inside a dispatch (scopes open) or a JS call into the core. A
  // cancelled body (connection closed) is reported to JS by the
  // connection's close, not here.
  if (status != UV_ECANCELED && !on_done_.IsEmpty()) {
    napi_env env = Env();
    napi_handle_scope scope;
    napi_open_handle_scope(env, &scope);
    napi_value arg;
    napi_create_int32(env, status, &arg);
    Napi::FunctionReference fn = std::move(on_done_);
    CallJs(fn, 1, &arg, false);
    napi_close_handle_scope(env, scope);
  }
  on_done_.Reset();
  Unhold();
}

Napi::Value JsFile::Close(const Napi::CallbackInfo& info) {
  CloseSource();
  return info.Env().Undefined();
}

void JsFile::CloseSource() {
  if (source_) {
    source_->Close();  // no OnFileOpened after this
    source_ = nullptr;
  }
  if (lookup_) {
    lookup_.reset();  // cancelled: no OnStatic* after this
    if (!on_static_.IsEmpty()) {
      on_static_.Reset();
      Unhold();
    }
  }
  if (!on_open_.IsEmpty()) {
    on_open_.Reset();
    Unhold();
  }
}

Napi::Value JsFile::LookupStatic(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::shared_ptr<const StaticMount> mount = MiddlewareMountOf(info[0]);
  if (!mount || source_ || lookup_ || !on_open_.IsEmpty() || !info[1].IsString() ||
      !info[3].IsArray() || !info[8].IsFunction()) {
    return Napi::Number::New(env, -1);
  }
  std::string target = info[1].As<Napi::String>().Utf8Value();
  AddonData* addon = addon_.get();
  OpenFileCache* cache = nullptr;
  if (addon != nullptr && mount->options.use_cache && info[4].ToBoolean().Value()) {
    cache = addon->file_cache.get();
  }
  StaticLookup* raw = StaticFiles::LookupFor(LoopOf(env), mount, target,
                                             info[2].ToBoolean().Value(), cache);
  if (raw == nullptr) return Napi::Number::New(env, wire::kStaticMiss);
  lookup_.reset(raw);
  Napi::Array fields = info[3].As<Napi::Array>();
  for (uint32_t i = 0; i + 1 < fields.Length(); i += 2) {
    raw->TakeHeader(fields.Get(i).As<Napi::String>().Utf8Value(),
                    fields.Get(i + 1).As<Napi::String>().Utf8Value());
  }
  want_file_ = (info[5].As<Napi::Number>().Int32Value() & wire::kStaticWantFile) != 0;
  if (info[6].IsString() || info[7].IsString()) {
    StaticValidatorOverride ov;
    if (info[6].IsString()) {
      ov.has_etag = true;
      ov.etag = info[6].As<Napi::String>().Utf8Value();
    }
    if (info[7].IsString()) {
      ov.has_last_modified = true;
      ov.last_modified = info[7].As<Napi::String>().Utf8Value();
    }
    raw->SetValidatorOverride(std::move(ov));
  }
  in_lookup_ = true;
  answer_.clear();
  StaticLookup::Start r = raw->Begin(this, 0);
  in_lookup_ = false;
  switch (r) {
    case StaticLookup::kFallThrough:
      lookup_.reset();
      return Napi::Number::New(env, wire::kStaticMiss);
    case StaticLookup::kAnswered:
      lookup_.reset();
      return Napi::String::New(env, answer_);
    case StaticLookup::kPending:
      break;
  }
  if (async_context_.get() == nullptr) {
    async_context_.Init(env, info.This(), "sluice.StaticLookup");
  }
  on_static_ = Napi::Persistent(info[8].As<Napi::Function>());
  Hold();  // until the lookup reports (or close())
  return Napi::Number::New(env, wire::kStaticPending);
}

void JsFile::OnStaticAnswer(uint64_t, StaticAnswer& a) {
  int status = a.status;
  int64_t length = a.content_length;
  const std::vector<std::pair<std::string, std::string>>* headers = a.headers;
  static const std::vector<std::pair<std::string, std::string>> kNone;
  if (a.body != nullptr) {
    if (a.file != nullptr && source_ == nullptr) {
      source_ = a.file;  // ours now, as an opened respondWithFile source
    } else {
      a.body->Close();  // not expected: middleware mounts never compress
      status = 500;
      length = 0;
      headers = &kNone;
    }
  }
  // The answer as one string (one crossing, one allocation in JS):
  // "status\0length\0flags\0value\0...[\0rel]", the values in the order of
  // kStaticAnswerFields, flags naming them (bits 0-7) and what follows.
  std::string values;
  int flags = 0;
  for (size_t k = 0; k < kStaticAnswerFieldCount; k++) {
    for (const auto& h : *headers) {
      if (h.first == kStaticAnswerFields[k]) {
        flags |= 1 << k;
        values += '\0';
        values += h.second;
        break;
      }
    }
  }
  if (source_ != nullptr) flags |= wire::kStaticAnswerBody;
  if (want_file_ && a.stat != nullptr && status < 500) {
    AddonData* addon = addon_.get();
    if (addon != nullptr && addon->stat_out != nullptr) {
      StatValues(a.stat, addon->stat_out);
      flags |= wire::kStaticAnswerFile;
      values += '\0';
      values.append(a.rel.data(), a.rel.size());
    }
  }
  answer_ = std::to_string(status);
  answer_ += '\0';
  answer_ += std::to_string(length);
  answer_ += '\0';
  answer_ += std::to_string(flags);
  answer_ += values;
  if (!in_lookup_) StaticDoneAsync(wire::kStaticAnswered);
}

void JsFile::OnStaticFallThrough(uint64_t) {
  StaticDoneAsync(lookup_ && lookup_->found_directory() ? wire::kStaticDirectory
                                                        : wire::kStaticMiss);
}

void JsFile::StaticDoneAsync(int kind) {
  // The lookup is freed when this returns (its AnswerFile / AfterJob touch
  // nothing after calling us).
  StaticLookupPtr done = std::move(lookup_);
  Napi::FunctionReference fn = std::move(on_static_);
  if (!fn.IsEmpty() && addon_.get() != nullptr) {
    napi_env env = Env();
    napi_handle_scope scope;
    napi_open_handle_scope(env, &scope);
    napi_value argv[2];
    napi_create_int32(env, kind, &argv[0]);
    if (kind == wire::kStaticAnswered) {
      napi_create_string_utf8(env, answer_.data(), answer_.size(), &argv[1]);
    } else {
      napi_get_undefined(env, &argv[1]);
    }
    CallJs(fn, 2, argv, true);
    napi_close_handle_scope(env, scope);
  }
  Unhold();
}

Napi::Value JsFile::Stats(const Napi::CallbackInfo& info) {
  Napi::Object o = Napi::Object::New(info.Env());
  o.Set("sources", Napi::Number::New(info.Env(), static_cast<double>(FileSource::live_count())));
  o.Set("buffersOutstanding", Napi::Number::New(info.Env(),
        static_cast<double>(PipeBufferPool::ForThisThread()->outstanding())));
  const SendfileStats& sf = ThreadSendfileStats();
  Napi::Object s = Napi::Object::New(info.Env());
  s.Set("bodies", Napi::Number::New(info.Env(), static_cast<double>(sf.bodies)));
  s.Set("calls", Napi::Number::New(info.Env(), static_cast<double>(sf.calls)));
  s.Set("bytes", Napi::Number::New(info.Env(), static_cast<double>(sf.bytes)));
  s.Set("waits", Napi::Number::New(info.Env(), static_cast<double>(sf.waits)));
  s.Set("fallbacks", Napi::Number::New(info.Env(), static_cast<double>(sf.fallbacks)));
  o.Set("sendfile", s);
  return o;
}

Napi::Value JsFile::SetStatArray(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  AddonData* data = GetAddonData(env);
  if (!info[0].IsTypedArray() ||
      info[0].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array ||
      info[0].As<Napi::Float64Array>().ElementLength() < kStatValues) {
    return Napi::Number::New(env, UV_EINVAL);
  }
  Napi::Float64Array a = info[0].As<Napi::Float64Array>();
  data->stat_array = Napi::Persistent(a.As<Napi::Object>());
  data->stat_out = a.Data();
  return Napi::Number::New(env, 0);
}

Napi::Value JsFile::ConfigureCache(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  AddonData* data = GetAddonData(env);
  OpenFileCache::Limits l;
  double max = info[0].ToNumber().DoubleValue();
  double valid = info[1].ToNumber().DoubleValue();
  double file_max = info[2].ToNumber().DoubleValue();
  double bytes_max = info[3].ToNumber().DoubleValue();
  l.max_entries = max > 0 ? static_cast<size_t>(max) : 0;
  l.valid_ms = valid > 0 ? static_cast<uint64_t>(valid) : 0;
  l.content_file_max = file_max > 0 ? static_cast<size_t>(file_max) : 0;
  l.content_bytes_max = bytes_max > 0 ? static_cast<size_t>(bytes_max) : 0;
  if (l.max_entries == 0 || l.valid_ms == 0) {
    // Off: forget every entry (descriptors close as responses end).
    data->file_cache.reset();
    return env.Undefined();
  }
  if (!data->file_cache) {
    data->file_cache = std::make_unique<OpenFileCache>(data->loop);
  }
  data->file_cache->Configure(l);
  return env.Undefined();
}

Napi::Value JsFile::CacheStats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  AddonData* data = GetAddonData(env);
  OpenFileCache::Stats s;
  if (data->file_cache) s = data->file_cache->stats();
  Napi::Object o = Napi::Object::New(env);
  o.Set("enabled", Napi::Boolean::New(env, data->file_cache != nullptr));
  o.Set("hits", Napi::Number::New(env, static_cast<double>(s.hits)));
  o.Set("misses", Napi::Number::New(env, static_cast<double>(s.misses)));
  o.Set("contentHits", Napi::Number::New(env, static_cast<double>(s.content_hits)));
  o.Set("invalidations", Napi::Number::New(env, static_cast<double>(s.invalidations)));
  o.Set("expirations", Napi::Number::New(env, static_cast<double>(s.expirations)));
  o.Set("evictions", Napi::Number::New(env, static_cast<double>(s.evictions)));
  o.Set("opens", Napi::Number::New(env, static_cast<double>(s.opens)));
  o.Set("coalesced", Napi::Number::New(env, static_cast<double>(s.coalesced)));
  o.Set("entries", Napi::Number::New(env, static_cast<double>(s.entries)));
  o.Set("contentBytes", Napi::Number::New(env, static_cast<double>(s.content_bytes)));
  o.Set("fds", Napi::Number::New(env, static_cast<double>(OpenFileCache::open_fds())));
  return o;
}

}  // namespace sluice
