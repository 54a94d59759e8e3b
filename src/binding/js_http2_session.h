// JsHttp2Session: the JS handle of one HTTP/2 session (NativeHttp2Session):
// the stream methods of JsStreamSession (js_stream_session.h) and HTTP/2's
// own: goaway, ping, settings, altsvc, origin, state, stream windows,
// WebSockets over HTTP/2 (RFC 8441).
//
// Ownership: made by JsHttp2 on the session's first event, stored in
// Http2Session::user_data; holds itself strongly until the connection
// closes (JsHttp2::OnConnectionClose detaches it; its methods then return
// kResultClosed).
#pragma once

#include <napi.h>

#include <string>

#include "binding/js_core_handle.h"
#include "binding/js_stream_session.h"
#include "binding/js_websocket.h"
#include "core/common/result.h"
#include "core/stream/header_list.h"
#include "core/http2/http2_session.h"

namespace sluice {

class Http2Session;

class JsHttp2Session final : public JsStreamSession<JsHttp2Session, Http2Session> {
 public:
  static Napi::Function Init(Napi::Env env);
  using JsStreamSession<JsHttp2Session, Http2Session>::JsStreamSession;

 private:
  friend class CoreWrap<JsHttp2Session, Http2Session>;
  friend class JsStreamSession<JsHttp2Session, Http2Session>;
  Http2Session* live() const;
  // The wire id of a JS stream id (the same; none above 2^31 - 1).
  static uint64_t WireId(int64_t js) { return js < 0 ? UINT64_MAX : static_cast<uint64_t>(js); }
  template <int (JsHttp2Session::*M)(const Napi::CallbackInfo&, Http2Session*, int32_t)>
  Napi::Value StreamCall(const Napi::CallbackInfo& info) {
    return ItemCall<Http2Session, int32_t, M>(info);
  }
  // goaway(code[, opaqueData]): NO_ERROR shuts down (open streams finish)
  // with the opaque data; another code terminates the session.
  Napi::Value Goaway(const Napi::CallbackInfo& info);
  // node:http2's session methods (lib/http2/stream.js Http2SessionHandle
  // validates the arguments): ping(payload8) -> result; settings([id,
  // value, ...]) -> result; setting(id, remote) -> value;
  // setLocalWindowSize(n), altsvc(id, origin, value), origin(lines) ->
  // result; state() -> Float64Array of Http2Session::kStateFields.
  Napi::Value Ping(const Napi::CallbackInfo& info);
  Napi::Value Settings(const Napi::CallbackInfo& info);
  Napi::Value Setting(const Napi::CallbackInfo& info);
  Napi::Value SetLocalWindowSize(const Napi::CallbackInfo& info);
  Napi::Value Altsvc(const Napi::CallbackInfo& info);
  Napi::Value Origin(const Napi::CallbackInfo& info);
  Napi::Value State(const Napi::CallbackInfo& info);
  // streamWindow(id) -> the stream's local window size (0 once gone).
  int StreamWindow(const Napi::CallbackInfo& info, Http2Session* s, int32_t id);
  Napi::Value Destroy(const Napi::CallbackInfo& info);
  Napi::Value Peer(const Napi::CallbackInfo& info);
  Napi::Value Local(const Napi::CallbackInfo& info);
  // TLS facts of the connection (js_tls.h TlsInfo); null on cleartext.
  Napi::Value Tls(const Napi::CallbackInfo& info);
  // connection() -> the connection's handle (the one lib/ keeps the
  // 'connection' event's socket on), or undefined once it closed.
  Napi::Value ConnectionHandle(const Napi::CallbackInfo& info);
  // tlsQuery(what, ...): js_tls.h TlsQuery.
  Napi::Value TlsQueryMethod(const Napi::CallbackInfo& info);
  // WebSockets over HTTP/2 (RFC 8441): wsAccept(id, headerLines, config,
  // hub), then ws*(id, ...) as the connection's (js_websocket.h WsCalls)
  // on stream id's WebSocket.
  Napi::Value WsAccept(const Napi::CallbackInfo& info);
  // wsFeed(id, bytes): frames that arrived as stream id's body before
  // wsAccept, parsed by its WebSocket now.
  Napi::Value WsFeed(const Napi::CallbackInfo& info);
  template <Napi::Value (*F)(const Napi::CallbackInfo&, WebSocketSession*, size_t)>
  Napi::Value WsCall(const Napi::CallbackInfo& info) {
    Http2Session* s = live();
    WebSocketSession* ws = s != nullptr && info[0].IsNumber()
                               ? s->WebSocketOf(info[0].As<Napi::Number>().Int32Value())
                               : nullptr;
    return F(info, ws, 1);
  }

};

}  // namespace sluice
