#include "binding/js_http2.h"

#include "binding/addon_data.h"
#include "binding/js_connection.h"
#include "binding/js_core_handle.h"
#include "binding/js_http2_session.h"
#include "binding/js_values.h"
#include "core/net/connection.h"
#include "core/http2/http2_session.h"

namespace sluice {

bool JsHttp2::Wanted(const Napi::Object& callbacks) {
  return callbacks.Get("onStream").IsFunction();
}

JsHttp2::JsHttp2(Napi::Env env, const Napi::Object& cbs) : env_(env) {
  SLUICE_HTTP2_CALLBACKS(SLUICE_CALLBACK_READ)
}

napi_value JsHttp2::SessionObject(Http2Session* s) {
  return HandleFor<JsHttp2Session>(s, GetAddonData(env_)->http2_session_ctor);
}

napi_value JsHttp2::Fields(const Http2Fields& fields) {
  return FieldArray(env_, fields);
}

napi_value JsHttp2::PackedFields(const Http2Fields& fields) {
  packed_.clear();
  for (const auto& f : fields) {
    if (f.first.find('\0') != std::string_view::npos ||
        f.second.find('\0') != std::string_view::npos) {
      return FieldArray(env_, fields);
    }
    if (!packed_.empty()) packed_.push_back('\0');
    packed_.append(f.first);
    packed_.push_back('\0');
    packed_.append(f.second);
  }
  return Latin1String(env_, packed_);
}

void JsHttp2::OnConnectionClose(Connection* c) {
  Http2Session* s = dynamic_cast<Http2Session*>(c->session());
  if (!s || !s->user_data) return;
  JsHttp2Session* js = static_cast<JsHttp2Session*>(s->user_data);
  napi_value argv[1] = {js->Value()};
  DetachConnection(c);
  CallJs(env_, on_session_close_, 1, argv);
}

void JsHttp2::DetachConnection(Connection* c) {
  Http2Session* s = dynamic_cast<Http2Session*>(c->session());
  if (!s || !s->user_data) return;
  static_cast<JsHttp2Session*>(s->user_data)->Detach();
  s->user_data = nullptr;
}

void JsHttp2::OnSessionStart(Http2Session* s) {
  napi_value argv[1] = {SessionObject(s)};
  CallJs(env_, on_session_start_, 1, argv);
}

void JsHttp2::OnStream(Http2Session* s, int32_t id, const Http2Fields& headers,
                       bool end_stream) {
  napi_value end;
  napi_get_boolean(env_, end_stream, &end);
  napi_value argv[4] = {SessionObject(s), Int(env_, id), PackedFields(headers), end};
  CallJs(env_, on_stream_, 4, argv);
}

void JsHttp2::OnStreamData(Http2Session* s, int32_t id, const char* data,
                           size_t len, int64_t user_offset) {
  if (user_offset >= 0) {
    // No copy: the buffer is the connection's (JsServer::AcquireBodyBuffer
    // gave it to the core), lib/ knows it by the connection object.
    napi_value argv[5] = {SessionObject(s), Int(env_, id),
                          Int(env_, user_offset),
                          Int(env_, static_cast<int64_t>(len)),
                          ConnectionObject(env_, s->connection())};
    CallJs(env_, on_data_, 5, argv);
    return;
  }
  napi_value argv[3] = {SessionObject(s), Int(env_, id), BufferCopy(env_, data, len)};
  CallJs(env_, on_data_, 3, argv);
}

void JsHttp2::OnStreamEnd(Http2Session* s, int32_t id,
                          const Http2Fields& trailers) {
  napi_value t;
  if (trailers.empty()) {
    napi_get_undefined(env_, &t);
  } else {
    t = Fields(trailers);
  }
  napi_value argv[3] = {SessionObject(s), Int(env_, id), t};
  CallJs(env_, on_end_, 3, argv);
}

void JsHttp2::OnStreamBodyTooLarge(Http2Session* s, int32_t id, int status) {
  napi_value argv[3] = {SessionObject(s), Int(env_, id), Int(env_, status)};
  CallJs(env_, on_body_too_large_, 3, argv);
}

void JsHttp2::OnStreamDrain(Http2Session* s, int32_t id) {
  napi_value argv[2] = {SessionObject(s), Int(env_, id)};
  CallJs(env_, on_drain_, 2, argv);
}

void JsHttp2::OnStreamWantTrailers(Http2Session* s, int32_t id) {
  napi_value argv[2] = {SessionObject(s), Int(env_, id)};
  CallJs(env_, on_want_trailers_, 2, argv);
}

void JsHttp2::OnStreamFrameError(Http2Session* s, int32_t id, uint8_t type,
                                 uint32_t code) {
  napi_value argv[4] = {SessionObject(s), Int(env_, id), Int(env_, type),
                        Int(env_, code)};
  CallJs(env_, on_frame_error_, 4, argv);
}

void JsHttp2::OnStreamClose(Http2Session* s, int32_t id, uint32_t code) {
  napi_value argv[3] = {SessionObject(s), Int(env_, id), Int(env_, code)};
  CallJs(env_, on_stream_close_, 3, argv);
}

void JsHttp2::OnGoaway(Http2Session* s, uint32_t code, int32_t last_id) {
  napi_value argv[3] = {SessionObject(s), Int(env_, code), Int(env_, last_id)};
  CallJs(env_, on_goaway_, 3, argv);
}

void JsHttp2::OnPing(Http2Session* s, const uint8_t* payload, bool ack) {
  napi_value a;
  napi_get_boolean(env_, ack, &a);
  napi_value argv[3] = {SessionObject(s),
                        BufferCopy(env_, reinterpret_cast<const char*>(payload), 8), a};
  CallJs(env_, on_ping_, 3, argv);
}

void JsHttp2::OnSettings(Http2Session* s, bool ack) {
  napi_value a;
  napi_get_boolean(env_, ack, &a);
  napi_value argv[2] = {SessionObject(s), a};
  CallJs(env_, on_settings_, 2, argv);
}

}  // namespace sluice
