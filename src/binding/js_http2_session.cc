#include "binding/js_http2_session.h"

#include <string>
#include <vector>

#include "binding/js_connection.h"
#include "binding/js_tls.h"
#include "binding/js_values.h"
#include "core/http2/http2_session.h"
#include "core/net/connection.h"

namespace sluice {

Napi::Function JsHttp2Session::Init(Napi::Env env) {
  return DefineClass(
      env, "NativeHttp2Session",
      Methods({
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
      }));
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
