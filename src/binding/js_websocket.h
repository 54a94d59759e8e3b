// JsWebSocket: WebSockets in the binding. Turns the core's WsDelegate
// events into calls of the JS callbacks lib/ gave (onWsMessage, ...), one
// per message, with the transport's JS handle first: the connection's
// (HTTP/1.1), or the HTTP/2 session's with the stream id as the last
// argument. Sends come back through that handle (JsConnection's ws*
// methods, JsHttp2Session's ws* methods with the stream id; both in
// js_websocket.cc over WsCalls). JsWsHub is the
// JS handle of a WsHub (pub/sub topics), one per lib/ WebSocketServer.
//
// Ownership: JsServer owns its JsWebSocket and hands it to the core as
// ServerDelegate::websocket(). Loop thread only, inside a dispatch.
#pragma once

#include <napi.h>

#include <memory>

#include "core/websocket/ws_delegate.h"
#include "core/websocket/ws_hub.h"

namespace sluice {

class JsWebSocket final : public WsDelegate {
 public:
  // True when lib/ passed WebSocket callbacks.
  static bool Wanted(const Napi::Object& callbacks);
  JsWebSocket(Napi::Env env, const Napi::Object& callbacks);

  // WsDelegate
  void OnWsMessage(WebSocketSession* ws, bool binary, const char* data,
                   size_t len) override;
  void OnWsPing(WebSocketSession* ws, const char* data, size_t len) override;
  void OnWsPong(WebSocketSession* ws, const char* data, size_t len) override;
  void OnWsPeerClose(WebSocketSession* ws, int code, const char* reason,
                     size_t len) override;
  void OnWsError(WebSocketSession* ws, int code, const char* message) override;

 private:
  // The JS handle of ws's transport into argv[0] and, for an HTTP/2
  // stream, its id into argv[at] (*argc grows by one). False when the
  // handle is gone (no event is due).
  bool Target(WebSocketSession* ws, napi_value* argv, size_t at, size_t* argc);
  napi_env env_;
#define SLUICE_WS_CALLBACKS(V)            \
  V(on_message_, "onWsMessage")           \
  V(on_ping_, "onWsPing")                 \
  V(on_pong_, "onWsPong")                 \
  V(on_peer_close_, "onWsPeerClose")      \
  V(on_error_, "onWsError")
#define SLUICE_WS_CALLBACK_MEMBER(member, name) Napi::FunctionReference member;
  SLUICE_WS_CALLBACKS(SLUICE_WS_CALLBACK_MEMBER)
#undef SLUICE_WS_CALLBACK_MEMBER
};

// new NativeWsHub(): publish(topic, data, opcode) -> subscribers queued,
// subscribers(topic) -> count. Sessions hold the WsHub too (shared), so
// the JS object may be collected while they are subscribed.
class JsWsHub final : public Napi::ObjectWrap<JsWsHub> {
 public:
  static Napi::Function Init(Napi::Env env);
  explicit JsWsHub(const Napi::CallbackInfo& info);
  const std::shared_ptr<WsHub>& hub() const { return hub_; }
  // The hub of a NativeWsHub object, or null for anything else.
  static std::shared_ptr<WsHub> From(napi_env env, napi_value v);

 private:
  Napi::Value Publish(const Napi::CallbackInfo& info);
  Napi::Value Subscribers(const Napi::CallbackInfo& info);
  std::shared_ptr<WsHub> hub_;
};

}  // namespace sluice
