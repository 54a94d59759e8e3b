#include "binding/js_compress.h"
#include "binding/js_values.h"
#include "binding/wire_protocol.h"

#include <memory>
#include <string>

#include "binding/js_connection.h"
#include "core/compress/compress_gate.h"
#include "core/compress/compress_job.h"
#include "core/websocket/ws_deflate_job.h"
#include "core/compress/compress_stream.h"
#include "core/compress/compress_transform.h"
#include "core/compress/compressor.h"
#include "core/net/connection.h"
#include "core/http1/http1_session.h"
#include "core/net/listener.h"
#include "core/compress/worker_priority.h"

namespace sluice {

bool CompressArgs(const Napi::CallbackInfo& info, size_t at,
                  CompressParams* p) {
  if (info.Length() <= at || !info[at].IsNumber()) return false;
  int coding = info[at].As<Napi::Number>().Int32Value();
  if (coding < 1 || coding > 3) return false;
  p->coding = static_cast<Coding>(coding);
  p->level = info.Length() > at + 1 && info[at + 1].IsNumber()
                 ? info[at + 1].As<Napi::Number>().Int32Value() : -1;
  p->brotli_quality = info.Length() > at + 2 && info[at + 2].IsNumber()
                          ? info[at + 2].As<Napi::Number>().Int32Value() : 4;
  return true;
}

CompressJob* BodyJob(napi_env env, napi_value body, const CompressParams& p) {
  if (IsString(env, body)) {
    std::string utf8;
    Utf8(env, body, &utf8);
    return CompressJob::Create(p, std::move(utf8));
  }
  if (IsNullish(env, body)) return CompressJob::Create(p, std::string());
  const char* data;
  size_t len;
  if (!GetBytes(env, body, &data, &len)) return nullptr;
  // Small bodies are compressed before the caller returns: no reference;
  // larger ones keep the JS buffer alive while a worker reads it.
  ExternalRef* owner = len >= CompressJob::kAsyncThreshold
                           ? new NapiValueRef(env, body) : nullptr;
  return CompressJob::Create(p, data, len, owner);
}

namespace {


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
    return wire::kResultWaitDrain;
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
  err = s->FinishHead(h.seq, h.flags & wire::kCoreHeadFlagsMask, job->output_size());
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
  if (!s) return Napi::Number::New(env, kResultClosed);
  HeadParts h;
  h.seq = info[1].As<Napi::Number>().Uint32Value();
  uint32_t sf = info[2].As<Napi::Number>().Uint32Value();
  h.status = static_cast<int>(sf & wire::kStatusMask);
  uint32_t flags = sf >> wire::kStatusFlagsShift;
  h.flags = flags;
  if (IsString(env, info[3])) Latin1(env, info[3], &h.reason);
  if (IsString(env, info[4])) Latin1(env, info[4], &h.block);
  if (IsString(env, info[6])) Latin1(env, info[6], &h.trailers);
  CompressParams p;
  if (!CompressArgs(info, 7, &p)) return Napi::Number::New(env, kResultBadBody);
  CompressJob* job = BodyJob(env, info[5], p);
  if (!job) return Napi::Number::New(env, kResultBadBody);
  if (!(flags & wire::kHeadEnd)) {
    job->Destroy();
    return Napi::Number::New(env, kResultBadBody);
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
    return Napi::Number::New(env, kResultCompressFailed);
  }
  int err = job->RunInline();
  if (err == 0) err = WriteWhole(s, h, job);
  else err = kResultCompressFailed;
  job->Destroy();
  return Napi::Number::New(env, Result(s, err));
}

// ---- streaming -----------------------------------------------------------

// The JS object of a streamed response's compressor (NativeCompressor).
// Compression runs through a CompressStream: small writes inline, large
// ones on the threadpool, in order (see core/compress/compress_stream.h). While
// work is queued the object holds itself and the JS connection alive (a
// response whose res was dropped after end() must still end), and a
// queued end() is carried out when its job returns: later pipelined
// responses are staged behind this one by the session until then.
class JsCompressor final : public Napi::ObjectWrap<JsCompressor>,
                           public CompressStream::Sink {
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
    if (!CompressArgs(info, 0, &p)) {
      Napi::TypeError::New(info.Env(), "bad compression coding")
          .ThrowAsJavaScriptException();
      return;
    }
    uv_loop_t* loop = nullptr;
    napi_get_uv_event_loop(info.Env(), &loop);
    stream_ = CompressStream::Create(loop, p, this);
    if (stream_ == nullptr) {
      Napi::Error::New(info.Env(), "compressor init failed")
          .ThrowAsJavaScriptException();
    }
  }

  ~JsCompressor() override {
    DropStream();
    ReleaseHold();
  }

  // CompressStream::Sink. On the loop thread when a queued job is done:
  // its output joins the response's body, a finished stream ends the
  // response, `drain` asks the connection for a 'drain' (JS may write,
  // end or close from inside EndDispatch).
  void OnCompressed(CompressStream*, CompressStream::Result& r) override {
    Http1Session* s = jc_ != nullptr ? jc_->http1_session() : nullptr;
    if (s != nullptr) {
      Connection* c = s->connection();
      Listener* l = c->listener();
      l->BeginDispatch();
      int err = r.error != 0 ? kResultCompressFailed : 0;
      if (err == 0) err = QueueBody(s, std::move(r.out));
      if (err == 0 && r.finished) {
        DropStream();  // the state (hundreds of KiB) goes now, not at GC
        err = s->End(seq_, trailers_);
      }
      if (err == 0 && r.drain && !c->closing()) {
        c->WantDrain();
        c->MarkDirty();  // the flush at EndDispatch emits it
      }
      if (err != 0 && !c->closing()) c->Destroy();
      l->EndDispatch();
    } else {
      DropStream();  // the connection is gone: the rest is not needed
    }
    if (stream_ == nullptr || !stream_->busy()) ReleaseHold();
  }

 private:
  // Compressed bytes as one body chunk of seq_ (chunk-framed by the session).
  int QueueBody(Http1Session* s, std::string&& out) {
    if (out.empty()) return kResultOk;
    int err = 0;
    OutputQueue* q = s->BeginBody(seq_, out.size(), &err);
    if (!q) return err;
    q->AppendOwned(std::move(out));
    s->EndBody(seq_);
    return kResultOk;
  }

  // Hands `chunk` (nullish: none) to the stream. Returns a
  // CompressStream::Status (inline output in *out) or an error.
  int Submit(napi_value chunk, bool finish, Compressor::Flush flush,
             std::string* out) {
    napi_env env = Env();
    if (IsString(env, chunk)) {
      std::string utf8;
      Utf8(env, chunk, &utf8);
      if (stream_->WouldRunInline(utf8.size())) {
        return finish ? stream_->Finish(utf8.data(), utf8.size(), nullptr, out)
                      : stream_->Write(utf8.data(), utf8.size(), flush,
                                       nullptr, out);
      }
      return finish ? stream_->Finish(std::move(utf8), out)
                    : stream_->Write(std::move(utf8), flush, out);
    }
    const char* data = nullptr;
    size_t len = 0;
    if (!IsNullish(env, chunk) && !GetBytes(env, chunk, &data, &len)) {
      return kResultBadBody;
    }
    // Queued bytes stay in the caller's Buffer, kept alive by a reference.
    ExternalRef* owner = len > 0 && !stream_->WouldRunInline(len)
                             ? new NapiValueRef(env, chunk) : nullptr;
    return finish ? stream_->Finish(data, len, owner, out)
                  : stream_->Write(data, len, flush, owner, out);
  }

  // Work was queued: keep this object and the connection alive until the
  // stream is idle again (ReleaseHold).
  void Hold(const Napi::Value& conn) {
    if (conn_ref_ != nullptr) return;
    napi_create_reference(Env(), conn, 1, &conn_ref_);
    jc_ = JsConnection::Unwrap(conn.As<Napi::Object>());
    Ref();
  }

  void ReleaseHold() {
    if (conn_ref_ == nullptr) return;
    napi_delete_reference(Env(), conn_ref_);
    conn_ref_ = nullptr;
    jc_ = nullptr;
    Unref();
  }

  void DropStream() {
    if (stream_ == nullptr) return;
    stream_->Destroy();  // frees itself once a job in flight returns
    stream_ = nullptr;
  }

  Napi::Value Write(const Napi::CallbackInfo& info) {
    Http1Session* s = SessionOf(info[0]);
    if (!s) return Napi::Number::New(info.Env(), kResultClosed);
    if (stream_ == nullptr) return Napi::Number::New(info.Env(), kResultNoRequest);
    seq_ = info[1].As<Napi::Number>().Uint32Value();
    Compressor::Flush f = info[3].ToBoolean().Value() ? Compressor::kSyncFlush
                                                      : Compressor::kNoFlush;
    std::string out;
    int r = Submit(info[2], false, f, &out);
    int err = 0;
    if (r < 0) {
      err = r == kResultBadBody ? r : kResultCompressFailed;
    } else if (r == CompressStream::kInline) {
      err = QueueBody(s, std::move(out));
    } else {
      Hold(info[0]);
    }
    int res = Result(s, err);
    // Bit 0: wait for 'drain' (the compressor's backlog is over its bound).
    if (res >= 0 && r == CompressStream::kQueuedFull) res |= wire::kResultWaitDrain;
    return Napi::Number::New(info.Env(), res);
  }

  Napi::Value End(const Napi::CallbackInfo& info) {
    Http1Session* s = SessionOf(info[0]);
    if (!s) {
      DropStream();
      return Napi::Number::New(info.Env(), kResultClosed);
    }
    if (stream_ == nullptr) return Napi::Number::New(info.Env(), kResultNoRequest);
    seq_ = info[1].As<Napi::Number>().Uint32Value();
    if (IsString(info.Env(), info[3])) Latin1(info.Env(), info[3], &trailers_);
    std::string out;
    int r = Submit(info[2], true, Compressor::kFinish, &out);
    int err = 0;
    if (r < 0) {
      err = r == kResultBadBody ? r : kResultCompressFailed;
    } else if (r == CompressStream::kInline) {
      DropStream();  // the state (hundreds of KiB) goes now, not at GC
      err = QueueBody(s, std::move(out));
      if (err == 0) err = s->End(seq_, trailers_);
    } else {
      Hold(info[0]);  // the session ends it when the job returns
    }
    return Napi::Number::New(info.Env(), Result(s, err));
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    DropStream();
    ReleaseHold();
    return info.Env().Undefined();
  }

  CompressStream* stream_ = nullptr;
  napi_ref conn_ref_ = nullptr;  // while work is queued
  JsConnection* jc_ = nullptr;   // valid while conn_ref_ is held
  uint32_t seq_ = 0;
  std::string trailers_;
};

// ---- tests and diagnostics ---------------------------------------------------

Napi::Value CompressBuffer(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  CompressParams p;
  const char* data;
  size_t len;
  if (!CompressArgs(info, 0, &p) || !GetBytes(env, info[3], &data, &len)) {
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
  Napi::Object wp = Napi::Object::New(env);
  wp.Set("supported", WorkerPriorityScope::Supported());
  wp.Set("enabled", WorkerPriorityScope::enabled());
  wp.Set("niceIncrement", WorkerPriorityScope::increment());
  o.Set("workerPriority", wp);
  o.Set("maxJobs", Napi::Number::New(env, static_cast<double>(compress_gate::limit())));
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
  o.Set("streams", Napi::Number::New(env, static_cast<double>(
                                              CompressStream::live_count())));
  o.Set("brotliStreams", Napi::Number::New(env, static_cast<double>(
                             CompressStream::live_brotli_count())));
  o.Set("running", Napi::Number::New(env, static_cast<double>(compress_gate::running())));
  o.Set("waiting", Napi::Number::New(env, static_cast<double>(compress_gate::waiting())));
  o.Set("transforms", Napi::Number::New(env, static_cast<double>(
                                                 CompressTransform::live_count())));
  // WebSocket messages deflated on the threadpool (core/websocket/ws_deflate_job.h).
  o.Set("wsDeflateJobs", Napi::Number::New(env, static_cast<double>(
                                                    WsDeflateJob::live_count())));
  return o;
}

// Per streamed response (lib/compress/compression.js startStream): one number, no
// object.
Napi::Value LiveBrotliStreams(const Napi::CallbackInfo& info) {
  return Napi::Number::New(
      info.Env(), static_cast<double>(CompressStream::live_brotli_count()));
}

}  // namespace

PipeSource* WrapCompression(const Napi::CallbackInfo& info, size_t at,
                            PipeSource* src) {
  if (info.Length() <= at || !info[at].IsNumber()) return src;
  CompressParams p;
  if (!CompressArgs(info, at, &p)) return src;  // 0: identity
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
  exports.Set("liveBrotliStreams", Napi::Function::New(env, LiveBrotliStreams));
}

}  // namespace sluice
