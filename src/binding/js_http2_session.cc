#include "binding/js_http2_session.h"
#include "binding/js_tls.h"
#include "binding/js_values.h"
#include "binding/wire_protocol.h"

#include <string>

#include "binding/addon_data.h"
#include "binding/js_body_done.h"
#include "binding/js_compress.h"
#include "binding/js_connection.h"
#include "binding/js_file.h"
#include "core/compress/compress_job.h"
#include "core/compress/compressor.h"
#include "core/net/connection.h"
#include "core/common/date_cache.h"
#include "core/http1/http1_pipe_body.h"
#include "core/http2/http2_headers.h"
#include "core/http2/http2_session.h"
#include "core/net/listener.h"

namespace sluice {

namespace {

// Flags of JsHttp2Session.respond / end: the core's Http2RespondFlags
// (kH2EndStream, kH2WaitForTrailers) and the binding's (wire_protocol.h).
constexpr uint32_t kCoreRespondFlags = kH2EndStream | kH2WaitForTrailers;

// Bytes of a Uint8Array/Buffer (lib/ converts other views to one).
bool Bytes(napi_env env, napi_value v, const char** data, size_t* len) {
  bool is = false;
  if (napi_is_typedarray(env, v, &is) != napi_ok || !is) return false;
  napi_typedarray_type type;
  size_t length, offset;
  void* base;
  napi_value ab;
  if (napi_get_typedarray_info(env, v, &type, &length, &base, &ab,
                               &offset) != napi_ok ||
      (type != napi_uint8_array && type != napi_int8_array &&
       type != napi_uint8_clamped_array)) {
    return false;
  }
  *data = static_cast<const char*>(base);
  *len = length;
  return true;
}

// `text`: scratch for the block's bytes (nullptr: a local one).
void BuildHeaders(napi_env env, Http2Session* s, int status, napi_value block,
                  uint32_t flags, Http2HeaderList* h,
                  std::string* text = nullptr) {
  if (status > 0) h->AddStatus(status);
  if (IsString(env, block)) {
    std::string local;
    if (text == nullptr) text = &local;
    Latin1(env, block, text);
    if (flags & wire::kH2Http1Block) {
      h->AddHttp1Block(*text);
    } else {
      h->AddPairs(*text);
    }
  }
  if ((flags & wire::kH2AddDate) && !h->Has("date")) {
    h->Add("date", s->connection()->listener()->date().Value());
  }
}

// The head arguments of respond / info / respondCompressed: info[1] the
// status, info[2] the header block, info[3] the flags (into *flags; only
// `block_flags` of them shape the block). Returns the status.
int ReadHead(const Napi::CallbackInfo& info, Http2Session* s,
             uint32_t block_flags, uint32_t* flags, Http2HeaderList* h,
             std::string* text = nullptr) {
  int status = info[1].As<Napi::Number>().Int32Value();
  *flags = info[3].As<Napi::Number>().Uint32Value();
  BuildHeaders(info.Env(), s, status, info[2], *flags & block_flags, h, text);
  return status;
}

}  // namespace

Napi::Function JsHttp2Session::Init(Napi::Env env) {
  return DefineClass(
      env, "NativeHttp2Session",
      {
          InstanceMethod<&JsHttp2Session::StreamCall<&JsHttp2Session::Respond>>("respond"),
          InstanceMethod<&JsHttp2Session::StreamCall<&JsHttp2Session::Info>>("info"),
          InstanceMethod<&JsHttp2Session::Write>("write"),
          InstanceMethod<&JsHttp2Session::StreamCall<&JsHttp2Session::End>>("end"),
          InstanceMethod<&JsHttp2Session::StreamCall<&JsHttp2Session::SendTrailers>>("sendTrailers"),
          InstanceMethod<&JsHttp2Session::StreamCall<&JsHttp2Session::RstStream>>("rstStream"),
          InstanceMethod<&JsHttp2Session::PauseStream>("pauseStream"),
          InstanceMethod<&JsHttp2Session::ResumeStream>("resumeStream"),
          InstanceMethod<&JsHttp2Session::Consume>("consume"),
          InstanceMethod<&JsHttp2Session::RespondFile>("respondFile"),
          InstanceMethod<&JsHttp2Session::StreamCall<&JsHttp2Session::Compress>>("compress"),
          InstanceMethod<&JsHttp2Session::StreamCall<&JsHttp2Session::RespondCompressed>>(
              "respondCompressed"),
          InstanceMethod<&JsHttp2Session::Goaway>("goaway"),
          InstanceMethod<&JsHttp2Session::Ping>("ping"),
          InstanceMethod<&JsHttp2Session::Settings>("settings"),
          InstanceMethod<&JsHttp2Session::Setting>("setting"),
          InstanceMethod<&JsHttp2Session::SetLocalWindowSize>("setLocalWindowSize"),
          InstanceMethod<&JsHttp2Session::Altsvc>("altsvc"),
          InstanceMethod<&JsHttp2Session::Origin>("origin"),
          InstanceMethod<&JsHttp2Session::State>("state"),
          InstanceMethod<&JsHttp2Session::StreamCall<&JsHttp2Session::StreamWindow>>("streamWindow"),
          InstanceMethod<&JsHttp2Session::Destroy>("destroy"),
          InstanceMethod<&JsHttp2Session::Peer>("peer"),
          InstanceMethod<&JsHttp2Session::Local>("local"),
          InstanceMethod<&JsHttp2Session::Tls>("tls"),
          InstanceMethod<&JsHttp2Session::ConnectionHandle>("connection"),
          InstanceMethod<&JsHttp2Session::TlsQueryMethod>("tlsQuery"),
          InstanceMethod<&JsHttp2Session::WsAccept>("wsAccept"),
          InstanceMethod<&JsHttp2Session::WsFeed>("wsFeed"),
          InstanceMethod<&JsHttp2Session::WsCall<&WsCalls::Send>>("wsSend"),
          InstanceMethod<&JsHttp2Session::WsCall<&WsCalls::Close>>("wsClose"),
          InstanceMethod<&JsHttp2Session::WsCall<&WsCalls::Buffered>>("wsBuffered"),
          InstanceMethod<&JsHttp2Session::WsCall<&WsCalls::Subscribe>>("wsSubscribe"),
          InstanceMethod<&JsHttp2Session::WsCall<&WsCalls::Unsubscribe>>("wsUnsubscribe"),
          InstanceMethod<&JsHttp2Session::WsCall<&WsCalls::IsSubscribed>>("wsIsSubscribed"),
          InstanceMethod<&JsHttp2Session::WsCall<&WsCalls::Topics>>("wsTopics"),
          InstanceMethod<&JsHttp2Session::WsCall<&WsCalls::Publish>>("wsPublish"),
      });
}

Napi::Value JsHttp2Session::WsAccept(const Napi::CallbackInfo& info) {
  return WsCalls::AcceptHttp2(info, live());
}

Napi::Value JsHttp2Session::WsFeed(const Napi::CallbackInfo& info) {
  Http2Session* s = live();
  const char* data;
  size_t len;
  if (s != nullptr && info[0].IsNumber() && GetBytes(info.Env(), info[1], &data, &len) &&
      len > 0) {
    // Parsed from a copy: the Buffer is JS memory a message handler could
    // change while the parser reads it.
    std::string copy(data, len);
    s->FeedWebSocket(info[0].As<Napi::Number>().Int32Value(), copy.data(), copy.size());
  }
  return info.Env().Undefined();
}

Http2Session* JsHttp2Session::live() const {
  Http2Session* s = core();
  if (!s || s->connection()->destroyed()) return nullptr;
  return s;
}

int JsHttp2Session::Result(int32_t id, int err) const {
  if (err < 0) return err;
  Http2Session* s = live();
  return s && s->StreamNeedsDrain(id) ? wire::kResultWaitDrain : kResultOk;
}

int JsHttp2Session::WriteChunk(int32_t id, napi_value chunk) {
  napi_env env = Env();
  Http2Session* s = live();
  if (!s) return kResultClosed;
  if (IsString(env, chunk)) {
    size_t len = 0;
    napi_get_value_string_utf8(env, chunk, nullptr, 0, &len);
    std::string bytes(len + 1, '\0');
    napi_get_value_string_utf8(env, chunk, &bytes[0], len + 1, &len);
    bytes.resize(len);
    if (len < kCopyBelow) return s->Write(id, bytes.data(), len, nullptr);
    // Larger ones are handed over, not copied again (into the queue, or by
    // a compressor that queues them for the threadpool).
    OwnedBytes* ref = new OwnedBytes(std::move(bytes));
    return s->Write(id, ref->data(), len, ref);
  }
  const char* data;
  size_t len;
  if (!Bytes(env, chunk, &data, &len)) return kResultBadBody;
  if (len < kCopyBelow) return s->Write(id, data, len, nullptr);
  return s->Write(id, data, len, new NapiValueRef(env, chunk));
}

int JsHttp2Session::Respond(const Napi::CallbackInfo& info,
                            Http2Session* s, int32_t id) {
  napi_env env = info.Env();
  uint32_t flags;
  Http2HeaderList& h = head_scratch_;
  h.Clear();
  int status = ReadHead(info, s, ~0u, &flags, &h, &block_scratch_);
  bool has_body = info.Length() > 4 && !IsNullish(env, info[4]);
  if ((flags & wire::kH2EndAfterBody) && !h.Has("content-length") &&
      status != 204 && status != 304 && status >= 200 &&
      !s->IsHeadRequest(id)) {
    // The whole body is known (compat res.end(body)): as HTTP/1.1 does,
    // tell its length (not for responses that have no body).
    size_t len = 0;
    if (has_body && IsString(env, info[4])) {
      napi_get_value_string_utf8(env, info[4], nullptr, 0, &len);
    } else if (has_body) {
      const char* data;
      if (!Bytes(env, info[4], &data, &len)) len = 0;
    }
    h.Add("content-length", std::to_string(len));
  }
  int err = s->Respond(id, status, h,
                       flags & kCoreRespondFlags);
  if (err == 0 && has_body) err = WriteChunk(id, info[4]);
  if (err == 0 && (flags & wire::kH2EndAfterBody)) {
    err = EndWithTrailers(env, s, id, info.Length() > 5 ? static_cast<napi_value>(info[5]) : nullptr,
                          flags);
  }
  return Result(id, err);
}

int JsHttp2Session::EndWithTrailers(napi_env env, Http2Session* s,
                                    int32_t id, napi_value trailers,
                                    uint32_t flags) {
  Http2HeaderList list;
  if (trailers != nullptr) {
    BuildHeaders(env, s, 0, trailers, flags & wire::kH2Http1Block, &list);
  }
  return s->End(id, &list);
}

int JsHttp2Session::Info(const Napi::CallbackInfo& info,
                         Http2Session* s, int32_t id) {
  uint32_t flags;
  Http2HeaderList h;
  ReadHead(info, s, wire::kH2Http1Block, &flags, &h);
  return s->SendInformational(id, h);
}

Napi::Value JsHttp2Session::Write(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  int32_t id = info[0].As<Napi::Number>().Int32Value();
  int err = 0;
  if (!IsNullish(env, info[1])) err = WriteChunk(id, info[1]);
  if (err == 0 && info.Length() > 2 && info[2].ToBoolean().Value()) {
    Http2Session* s = live();
    err = s ? s->FlushCompression(id) : kResultClosed;
  }
  return Napi::Number::New(env, Result(id, err));
}

int JsHttp2Session::Compress(const Napi::CallbackInfo& info,
                             Http2Session* s, int32_t id) {
  CompressParams p;
  if (!CompressArgs(info, 1, &p)) return kResultInvalid;
  return s->StartCompression(id, p);
}

int JsHttp2Session::RespondCompressed(const Napi::CallbackInfo& info,
                                      Http2Session* s, int32_t id) {
  napi_env env = info.Env();
  uint32_t flags;
  CompressParams p;
  if (!CompressArgs(info, 6, &p)) return kResultBadBody;
  CompressJob* job = BodyJob(env, info[4], p);
  if (!job) return kResultBadBody;
  Http2HeaderList h;
  int status = ReadHead(info, s, ~0u, &flags, &h);
  Http2HeaderList trailers;
  if (info.Length() > 5 && !IsNullish(env, info[5])) {
    BuildHeaders(env, s, 0, info[5], flags & wire::kH2Http1Block, &trailers);
  }
  int err = s->RespondCompressed(id, status, h,
                                 flags & kCoreRespondFlags,
                                 job, &trailers);
  if (err == kResultInvalid) err = kResultCompressFailed;
  return Result(id, err);
}

int JsHttp2Session::End(const Napi::CallbackInfo& info,
                        Http2Session* s, int32_t id) {
  napi_env env = info.Env();
  uint32_t flags = info.Length() > 3 && info[3].IsNumber()
                       ? info[3].As<Napi::Number>().Uint32Value()
                       : 0;
  int err = 0;
  if (info.Length() > 1 && !IsNullish(env, info[1])) {
    err = WriteChunk(id, info[1]);
  }
  if (err == 0) {
    err = EndWithTrailers(env, s, id, info.Length() > 2 ? static_cast<napi_value>(info[2]) : nullptr,
                          flags);
  }
  return Result(id, err);
}

int JsHttp2Session::SendTrailers(const Napi::CallbackInfo& info,
                                 Http2Session* s, int32_t id) {
  napi_env env = info.Env();
  Http2HeaderList h;
  BuildHeaders(env, s, 0, info[1], 0, &h);
  return s->SendTrailers(id, h);
}

int JsHttp2Session::RstStream(const Napi::CallbackInfo& info,
                              Http2Session* s, int32_t id) {
  uint32_t code = info[1].As<Napi::Number>().Uint32Value();
  bool after_end = info.Length() > 2 && info[2].ToBoolean().Value();
  return s->ResetStream(id, code, after_end);
}

Napi::Value JsHttp2Session::PauseStream(const Napi::CallbackInfo& info) {
  if (Http2Session* s = live()) {
    s->PauseStream(info[0].As<Napi::Number>().Int32Value());
  }
  return info.Env().Undefined();
}

Napi::Value JsHttp2Session::ResumeStream(const Napi::CallbackInfo& info) {
  if (Http2Session* s = live()) {
    s->ResumeStream(info[0].As<Napi::Number>().Int32Value());
  }
  return info.Env().Undefined();
}

Napi::Value JsHttp2Session::Consume(const Napi::CallbackInfo& info) {
  if (Http2Session* s = live()) {
    int64_t n = info[1].As<Napi::Number>().Int64Value();
    if (n > 0) {
      s->Consume(info[0].As<Napi::Number>().Int32Value(),
                 static_cast<size_t>(n));
    }
  }
  return info.Env().Undefined();
}

Napi::Value JsHttp2Session::RespondFile(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  int32_t id = info[0].As<Napi::Number>().Int32Value();
  JsFile* file = JsFile::Unwrap(info[1].As<Napi::Object>());
  PipeSource* source = file ? file->TakeSource() : nullptr;
  if (!source) return Napi::Number::New(env, kResultInvalid);
  // Response compression: FileSource → CompressTransform → Http2PipeBody.
  source = WrapCompression(info, 3, source);
  if (!source) return Napi::Number::New(env, kResultCompressFailed);
  Http2Session* s = live();
  if (!s) {
    source->Close();
    return Napi::Number::New(env, kResultClosed);
  }
  JsBodyDone* done = new JsBodyDone(env, info[2]);
  int r = s->StartPipeBody(id, source, done);
  if (r != kResultOk) {
    done->Discard();  // not started: never called
  }
  return Napi::Number::New(env, r);
}

Napi::Value JsHttp2Session::Goaway(const Napi::CallbackInfo& info) {
  if (Http2Session* s = live()) {
    if (info.Length() > 0 && info[0].IsNumber() &&
        info[0].As<Napi::Number>().Uint32Value() != NGHTTP2_NO_ERROR) {
      s->Terminate(info[0].As<Napi::Number>().Uint32Value());
    } else {
      const char* data = nullptr;
      size_t len = 0;
      if (info.Length() > 1 && !GetBytes(info.Env(), info[1], &data, &len)) len = 0;
      s->Shutdown(reinterpret_cast<const uint8_t*>(data), len);
    }
  }
  return info.Env().Undefined();
}

Napi::Value JsHttp2Session::Ping(const Napi::CallbackInfo& info) {
  Http2Session* s = live();
  const char* data;
  size_t len;
  int r = kResultClosed;
  if (s != nullptr) {
    r = GetBytes(info.Env(), info[0], &data, &len) && len == 8
            ? s->SubmitPing(reinterpret_cast<const uint8_t*>(data))
            : kResultInvalid;
  }
  return Napi::Number::New(info.Env(), r);
}

Napi::Value JsHttp2Session::Settings(const Napi::CallbackInfo& info) {
  Http2Session* s = live();
  int r = kResultClosed;
  if (s != nullptr && info[0].IsArray()) {
    Napi::Array a = info[0].As<Napi::Array>();
    std::vector<nghttp2_settings_entry> iv;
    for (uint32_t i = 0; i + 1 < a.Length(); i += 2) {
      iv.push_back({a.Get(i).ToNumber().Int32Value(), a.Get(i + 1).ToNumber().Uint32Value()});
    }
    r = s->SubmitSettings(iv.data(), iv.size());
  }
  return Napi::Number::New(info.Env(), r);
}

Napi::Value JsHttp2Session::Setting(const Napi::CallbackInfo& info) {
  Http2Session* s = live();
  uint32_t v = s == nullptr ? 0 : s->Setting(info[0].ToNumber().Int32Value(), info[1].ToBoolean());
  return Napi::Number::New(info.Env(), v);
}

Napi::Value JsHttp2Session::SetLocalWindowSize(const Napi::CallbackInfo& info) {
  Http2Session* s = live();
  int r = s == nullptr ? kResultClosed : s->SetLocalWindowSize(info[0].ToNumber().Int32Value());
  return Napi::Number::New(info.Env(), r);
}

Napi::Value JsHttp2Session::Altsvc(const Napi::CallbackInfo& info) {
  Http2Session* s = live();
  int r = kResultClosed;
  if (s != nullptr) {
    std::string origin = info[1].ToString().Utf8Value();
    std::string value = info[2].ToString().Utf8Value();
    r = s->SubmitAltsvc(info[0].ToNumber().Int32Value(), origin, value);
  }
  return Napi::Number::New(info.Env(), r);
}

Napi::Value JsHttp2Session::Origin(const Napi::CallbackInfo& info) {
  Http2Session* s = live();
  int r = s == nullptr ? kResultClosed : s->SubmitOrigin(info[0].ToString().Utf8Value());
  return Napi::Number::New(info.Env(), r);
}

int JsHttp2Session::StreamWindow(const Napi::CallbackInfo&, Http2Session* s, int32_t id) {
  return s->StreamLocalWindowSize(id);
}

Napi::Value JsHttp2Session::State(const Napi::CallbackInfo& info) {
  Napi::Float64Array out = Napi::Float64Array::New(info.Env(), Http2Session::kStateFields);
  if (Http2Session* s = live()) s->State(out.Data());
  return out;
}

Napi::Value JsHttp2Session::Destroy(const Napi::CallbackInfo& info) {
  if (Http2Session* s = live()) s->connection()->Destroy();
  return info.Env().Undefined();
}

Napi::Value JsHttp2Session::Peer(const Napi::CallbackInfo& info) {
  Http2Session* s = live();
  return Napi::Value(info.Env(), AddressArray(info.Env(), s ? s->connection() : nullptr,
                                              AddressKind::kPeer));
}

Napi::Value JsHttp2Session::Tls(const Napi::CallbackInfo& info) {
  Http2Session* s = live();
  return TlsInfo(info.Env(), s ? s->connection() : nullptr);
}

Napi::Value JsHttp2Session::ConnectionHandle(const Napi::CallbackInfo& info) {
  Http2Session* s = live();
  napi_value conn = s ? ConnectionObject(info.Env(), s->connection()) : nullptr;
  return conn ? Napi::Value(info.Env(), conn) : info.Env().Undefined();
}

Napi::Value JsHttp2Session::TlsQueryMethod(const Napi::CallbackInfo& info) {
  Http2Session* s = live();
  return TlsQuery(info, s ? s->connection() : nullptr);
}

Napi::Value JsHttp2Session::Local(const Napi::CallbackInfo& info) {
  Http2Session* s = live();
  return Napi::Value(info.Env(), AddressArray(info.Env(), s ? s->connection() : nullptr,
                                              AddressKind::kLocal));
}

}  // namespace sluice
