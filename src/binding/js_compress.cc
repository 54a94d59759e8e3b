#include "binding/js_compress.h"
#include "binding/js_values.h"

#include <memory>
#include <string>

#include "binding/js_connection.h"
#include "core/compress_job.h"
#include "core/compress_transform.h"
#include "core/compressor.h"
#include "core/connection.h"
#include "core/http1_session.h"
#include "core/listener.h"

namespace sluice {

namespace {

constexpr uint32_t kRespondEnd = 1u << 8;  // as in js_connection.cc
constexpr int kErrBadBody = -10;
constexpr int kErrCompress = -11;
// Compressed output below this is copied into the output buffer.
constexpr size_t kCopyBelow = 4096;

// Owns compressed bytes while they sit in an OutputQueue.
class StringRef final : public ExternalRef {
 public:
  explicit StringRef(std::string&& s) : s_(std::move(s)) {}
  const std::string& str() const { return s_; }
  void Release() override { delete this; }

 private:
  std::string s_;
};

void AppendOwned(OutputQueue& q, std::string&& s) {
  if (s.size() < kCopyBelow) {
    q.Append(s.data(), s.size());
    return;
  }
  StringRef* r = new StringRef(std::move(s));
  q.AppendExternal(r->str().data(), r->str().size(), r);
}

bool ParseParams(const Napi::CallbackInfo& info, size_t at,
                 CompressParams* p) {
  int coding = info[at].As<Napi::Number>().Int32Value();
  if (coding < 1 || coding > 3) return false;
  p->coding = static_cast<Coding>(coding);
  p->level = info[at + 1].IsNumber()
                 ? info[at + 1].As<Napi::Number>().Int32Value() : -1;
  p->brotli_quality = info[at + 2].IsNumber()
                          ? info[at + 2].As<Napi::Number>().Int32Value() : 4;
  return true;
}

Http1Session* SessionOf(const Napi::Value& v) {
  if (!v.IsObject()) return nullptr;
  JsConnection* jc = JsConnection::Unwrap(v.As<Napi::Object>());
  return jc ? jc->http1_session() : nullptr;
}

// JsConnection::Result: positive bit 0 asks JS to wait for 'drain'.
int Result(Http1Session* s, int err) {
  if (err < 0) return err;
  if (s && s->NeedsDrain()) {
    s->connection()->WantDrain();
    return 1;
  }
  return 0;
}

// The head and the whole compressed body of one response.
struct HeadParts {
  uint32_t seq = 0;
  int status = 200;
  uint32_t flags = 0;
  std::string reason;
  std::string block;
  std::string trailers;
};

int WriteWhole(Http1Session* s, const HeadParts& h, CompressJob* job) {
  int err = 0;
  OutputQueue* q = s->BeginHead(h.seq, h.status, h.reason, &err);
  if (!q) return err;
  q->Append(h.block.data(), h.block.size());
  err = s->FinishHead(h.seq, h.flags & 0xff, job->output_size());
  if (err != 0) return err;
  size_t n = job->output_size();
  if (n > 0) {
    OutputQueue* b = s->BeginBody(h.seq, n, &err);
    if (b) {
      job->MoveOutputTo(*b);
      s->EndBody(h.seq);
    } else if (err != 0) {
      return err;
    }
  }
  return s->End(h.seq, h.trailers);
}

// A response waiting for its body's compression on the threadpool. Holds
// the JS connection object (and so the JsConnection) alive; the session
// may be gone by the time the work is done (client reset): then the
// result is dropped.
class PendingResponse final : public CompressJob::Client {
 public:
  PendingResponse(napi_env env, napi_value conn, JsConnection* jc,
                  HeadParts&& head)
      : env_(env), jc_(jc), head_(std::move(head)) {
    napi_create_reference(env, conn, 1, &conn_ref_);
  }
  ~PendingResponse() override { napi_delete_reference(env_, conn_ref_); }

  void OnCompressDone(CompressJob* job, int status) override {
    Http1Session* s = jc_->http1_session();
    if (s != nullptr) {
      Connection* c = s->connection();
      Listener* l = c->listener();
      // Ending the response may start the next one's file pipe (JS
      // callbacks): the scopes of a dispatch, and one flush at its end.
      l->BeginDispatch();
      int err = status == 0 ? WriteWhole(s, head_, job) : status;
      if (err != 0 && !c->closing()) c->Destroy();
      l->EndDispatch();
    }
    job->Destroy();
    delete this;
  }

 private:
  napi_env env_;
  napi_ref conn_ref_ = nullptr;
  JsConnection* jc_;
  HeadParts head_;
};

Napi::Value RespondCompressed(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  Http1Session* s = SessionOf(info[0]);
  if (!s) return Napi::Number::New(env, kRespClosed);
  HeadParts h;
  h.seq = info[1].As<Napi::Number>().Uint32Value();
  uint32_t sf = info[2].As<Napi::Number>().Uint32Value();
  h.status = static_cast<int>(sf & 0x3ff);
  uint32_t flags = sf >> 10;
  h.flags = flags;
  if (IsString(env, info[3])) Latin1(env, info[3], &h.reason);
  if (IsString(env, info[4])) Latin1(env, info[4], &h.block);
  if (IsString(env, info[6])) Latin1(env, info[6], &h.trailers);
  CompressParams p;
  if (!ParseParams(info, 7, &p)) return Napi::Number::New(env, kErrBadBody);
  napi_value body = info[5];
  CompressJob* job;
  if (IsString(env, body)) {
    std::string utf8;
    Utf8(env, body, &utf8);
    job = CompressJob::Create(p, std::move(utf8));
  } else if (IsNullish(env, body)) {
    job = CompressJob::Create(p, std::string());
  } else {
    const char* data;
    size_t len;
    if (!GetBytes(env, body, &data, &len)) {
      return Napi::Number::New(env, kErrBadBody);
    }
    // Small bodies are compressed before this call returns: no reference.
    ExternalRef* owner = len >= CompressJob::kAsyncThreshold
                             ? new NapiValueRef(env, body) : nullptr;
    job = CompressJob::Create(p, data, len, owner);
  }
  if (!(flags & kRespondEnd)) {
    job->Destroy();
    return Napi::Number::New(env, kErrBadBody);
  }
  if (job->input_size() >= CompressJob::kAsyncThreshold) {
    // Nothing of this response is queued until the work is done; later
    // pipelined responses are staged behind it by the session meanwhile.
    JsConnection* jc = JsConnection::Unwrap(info[0].As<Napi::Object>());
    PendingResponse* pr = new PendingResponse(env, info[0], jc, std::move(h));
    uv_loop_t* loop = s->connection()->listener()->loop();
    int r = job->Queue(loop, pr);
    if (r == 0) return Napi::Number::New(env, Result(s, 0));
    delete pr;
    job->Destroy();
    return Napi::Number::New(env, kErrCompress);
  }
  int err = job->RunInline();
  if (err == 0) err = WriteWhole(s, h, job);
  else err = kErrCompress;
  job->Destroy();
  return Napi::Number::New(env, Result(s, err));
}

// ---- streaming -----------------------------------------------------------

class JsCompressor final : public Napi::ObjectWrap<JsCompressor> {
 public:
  static Napi::Function Init(Napi::Env env) {
    return DefineClass(env, "NativeCompressor",
                       {
                           InstanceMethod<&JsCompressor::Write>("write"),
                           InstanceMethod<&JsCompressor::End>("end"),
                           InstanceMethod<&JsCompressor::Close>("close"),
                       });
  }

  explicit JsCompressor(const Napi::CallbackInfo& info)
      : Napi::ObjectWrap<JsCompressor>(info) {
    CompressParams p;
    if (!ParseParams(info, 0, &p)) {
      Napi::TypeError::New(info.Env(), "bad compression coding")
          .ThrowAsJavaScriptException();
      return;
    }
    c_.reset(new Compressor());
    if (c_->Init(p) != 0) {
      c_.reset();
      Napi::Error::New(info.Env(), "compressor init failed")
          .ThrowAsJavaScriptException();
    }
  }

 private:
  // Compresses `chunk` (nullish: none) with `flush` and queues the output
  // as one body chunk of `seq`.
  int Feed(Http1Session* s, uint32_t seq, napi_value chunk,
           Compressor::Flush flush) {
    napi_env env = Env();
    if (!c_) return kRespNoRequest;
    std::string utf8;
    const char* data = nullptr;
    size_t len = 0;
    if (IsString(env, chunk)) {
      Utf8(env, chunk, &utf8);
      data = utf8.data();
      len = utf8.size();
    } else if (!IsNullish(env, chunk) && !GetBytes(env, chunk, &data, &len)) {
      return kErrBadBody;
    }
    std::string out;
    if (c_->ProcessAll(reinterpret_cast<const uint8_t*>(data), len, flush,
                       &out) != 0) {
      return kErrCompress;
    }
    if (out.empty()) return kRespOk;
    int err = 0;
    OutputQueue* q = s->BeginBody(seq, out.size(), &err);
    if (!q) return err;
    AppendOwned(*q, std::move(out));
    s->EndBody(seq);
    return kRespOk;
  }

  Napi::Value Write(const Napi::CallbackInfo& info) {
    Http1Session* s = SessionOf(info[0]);
    if (!s) return Napi::Number::New(info.Env(), kRespClosed);
    uint32_t seq = info[1].As<Napi::Number>().Uint32Value();
    Compressor::Flush f = info[3].ToBoolean().Value() ? Compressor::kSyncFlush
                                                      : Compressor::kNoFlush;
    return Napi::Number::New(info.Env(), Result(s, Feed(s, seq, info[2], f)));
  }

  Napi::Value End(const Napi::CallbackInfo& info) {
    Http1Session* s = SessionOf(info[0]);
    if (!s) {
      c_.reset();
      return Napi::Number::New(info.Env(), kRespClosed);
    }
    uint32_t seq = info[1].As<Napi::Number>().Uint32Value();
    int err = Feed(s, seq, info[2], Compressor::kFinish);
    c_.reset();  // the state (hundreds of KiB) goes now, not at GC
    if (err == 0) {
      std::string trailers;
      if (IsString(info.Env(), info[3])) Latin1(info.Env(), info[3], &trailers);
      err = s->End(seq, trailers);
    }
    return Napi::Number::New(info.Env(), Result(s, err));
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    c_.reset();
    return info.Env().Undefined();
  }

  std::unique_ptr<Compressor> c_;
};

// ---- tests and diagnostics ---------------------------------------------------

Napi::Value CompressBuffer(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  CompressParams p;
  const char* data;
  size_t len;
  if (!ParseParams(info, 0, &p) || !GetBytes(env, info[3], &data, &len)) {
    Napi::TypeError::New(env, "compressBuffer(coding, level, quality, buffer)")
        .ThrowAsJavaScriptException();
    return env.Undefined();
  }
  Compressor c;
  std::string out;
  // No size hint: the same settings as node's zlib.brotliCompressSync with
  // only the quality set, so tests can compare bytes.
  if (c.Init(p) != 0 ||
      c.ProcessAll(reinterpret_cast<const uint8_t*>(data), len,
                   Compressor::kFinish, &out) != 0) {
    Napi::Error::New(env, "compression failed").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  return Napi::Buffer<char>::Copy(env, out.data(), out.size());
}

Napi::Value CompressionInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  CompressionLinkInfo li = GetCompressionLinkInfo();
  Napi::Object o = Napi::Object::New(env);
  Napi::Object z = Napi::Object::New(env);
  z.Set("headerVersion", li.zlib_header_version);
  z.Set("runtimeVersion", li.zlib_runtime_version);
  z.Set("library", li.zlib_library);
  z.Set("inExecutable", li.zlib_in_executable);
  Napi::Object b = Napi::Object::New(env);
  b.Set("runtimeVersion", li.brotli_runtime_version);
  b.Set("library", li.brotli_library);
  b.Set("inExecutable", li.brotli_in_executable);
  o.Set("zlib", z);
  o.Set("brotli", b);
  o.Set("asyncThreshold",
        Napi::Number::New(env, static_cast<double>(CompressJob::kAsyncThreshold)));
  return o;
}

Napi::Value CompressionStats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("compressors",
        Napi::Number::New(env, static_cast<double>(Compressor::live_count())));
  o.Set("jobs",
        Napi::Number::New(env, static_cast<double>(CompressJob::live_count())));
  o.Set("transforms", Napi::Number::New(env, static_cast<double>(
                                                 CompressTransform::live_count())));
  return o;
}

}  // namespace

PipeSource* WrapCompression(const Napi::CallbackInfo& info, size_t at,
                            PipeSource* src) {
  if (info.Length() <= at || !info[at].IsNumber()) return src;
  CompressParams p;
  if (!ParseParams(info, at, &p)) return src;  // 0: identity
  uv_loop_t* loop = nullptr;
  napi_get_uv_event_loop(info.Env(), &loop);
  CompressTransform* t =
      CompressTransform::Create(loop, PipeBufferPool::ForThisThread(), p);
  if (t == nullptr) {
    src->Close();
    return nullptr;
  }
  t->SetUpstream(src);
  return t;
}

void InitCompression(Napi::Env env, Napi::Object exports) {
  exports.Set("respondCompressed", Napi::Function::New(env, RespondCompressed));
  exports.Set("NativeCompressor", JsCompressor::Init(env));
  exports.Set("compressBuffer", Napi::Function::New(env, CompressBuffer));
  exports.Set("compressionInfo", Napi::Function::New(env, CompressionInfo));
  exports.Set("compressionStats", Napi::Function::New(env, CompressionStats));
}

}  // namespace sluice
