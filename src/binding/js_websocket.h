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

#include "binding/js_core_handle.h"
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

  // lib/ calls this (NativeServer wsDropPool) when no WebSocket that was
  // handed pool memory is open any more: the current buffer is forgotten
  // here first, then lib/ drops its hold, so an idle server keeps no pool
  // buffer in use. The next pool message asks for a new one.
  void DropPool();

 private:
  // The JS handle of ws's transport into argv[0] and, for an HTTP/2
  // stream, its id into argv[at] (*argc grows by one). False when the
  // handle is gone (no event is due).
  bool Target(WebSocketSession* ws, napi_value* argv, size_t at, size_t* argc);
  // cb(target, Buffer copy of data[, stream id]): a ping's or pong's payload.
  void CallWithPayload(WebSocketSession* ws, const char* data, size_t len,
                       const Napi::FunctionReference& cb);
  // Pool messages (a server with a requestBufferAllocator): room for `len`
  // more bytes in the current message memory, asking lib/ for a new buffer
  // (onWsAlloc) when the current one is full. False: this message is
  // copied into a Buffer of its own (the allocator is dry, failed, or its
  // buffer is too small).
  bool PoolRoom(size_t len);
  napi_env env_;
  bool pool_ = false;
  // The buffer messages are copied into, one after the other; lib/ hands
  // each out as a retained view (onWsPoolMessage) and releases its own
  // hold on the buffer when it answers the next onWsAlloc, or right after
  // DropPool. The strong reference keeps its memory ours to write until
  // then.
  Napi::ObjectReference slab_;
  char* slab_data_ = nullptr;
  size_t slab_cap_ = 0;
  size_t slab_used_ = 0;
#define SLUICE_WS_CALLBACKS(V)            \
  V(on_message_, "onWsMessage")           \
  V(on_pool_message_, "onWsPoolMessage")  \
  V(on_alloc_, "onWsAlloc")               \
  V(on_ping_, "onWsPing")                 \
  V(on_pong_, "onWsPong")                 \
  V(on_peer_close_, "onWsPeerClose")      \
  V(on_error_, "onWsError")
  SLUICE_WS_CALLBACKS(SLUICE_CALLBACK_MEMBER)
};

class Http2Session;
class WebSocketSession;
struct WsConfig;

// The ws* methods of both handles over one WebSocketSession (`s`, null
// when the socket is not open: each answers "not open"), their own
// arguments from info[a] on: JsConnection's (a = 0) and JsHttp2Session's
// (a = 1, after the stream id). Results as lib/websocket/websocket.js
// reads them (WsSendResult, booleans, counts).
struct WsCalls {
  // (data, opcode, fin, compress) -> WsSendResult or kResultBadBody
  static Napi::Value Send(const Napi::CallbackInfo& info, WebSocketSession* s, size_t a);
  // (code, reason) -> WsSendResult (code 0: a close frame without one)
  static Napi::Value Close(const Napi::CallbackInfo& info, WebSocketSession* s, size_t a);
  // () -> bytes queued, not yet written
  static Napi::Value Buffered(const Napi::CallbackInfo& info, WebSocketSession* s, size_t a);
  // (topic) -> bool
  static Napi::Value Subscribe(const Napi::CallbackInfo& info, WebSocketSession* s, size_t a);
  static Napi::Value Unsubscribe(const Napi::CallbackInfo& info, WebSocketSession* s, size_t a);
  static Napi::Value IsSubscribed(const Napi::CallbackInfo& info, WebSocketSession* s, size_t a);
  // () -> [topic]
  static Napi::Value Topics(const Napi::CallbackInfo& info, WebSocketSession* s, size_t a);
  // (topic, data, opcode, compress) -> subscribers queued (all but `s`)
  static Napi::Value Publish(const Napi::CallbackInfo& info, WebSocketSession* s, size_t a);
  // HTTP/2 wsAccept(id, headerLines, config, hub) -> 0 or an error
  // result: the extended CONNECT of stream `id` is answered 200 with
  // headerLines ("Name: value\r\n"... as the 'headers' event left them)
  // and the stream carries a WebSocket from now on.
  static Napi::Value AcceptHttp2(const Napi::CallbackInfo& info, Http2Session* s);
  // The WsConfig of wsAccept's config object (lib/'s WebSocketServer
  // _config, with `deflate` when permessage-deflate was negotiated).
  static WsConfig ConfigFrom(const Napi::Object& o);
  // The permessage-deflate part (a connection's, or the hub's shared one).
  static WsDeflateConfig DeflateConfigFrom(const Napi::Object& d);
};

// new NativeWsHub([sharedDeflate]): publish(topic, data, opcode,
// compress) -> subscribers queued, subscribers(topic) -> count,
// watchTopics(fn | null): fn([topic, hasSubscriber, ...]) once per loop
// turn in which topics gained their first or lost their last subscriber
// (the pub/sub bus). Sessions hold the WsHub too (shared), so the JS object
// may be collected while they are subscribed.
class JsWsHub final : public Napi::ObjectWrap<JsWsHub>, public WsTopicWatcher {
 public:
  static Napi::Function Init(Napi::Env env);
  explicit JsWsHub(const Napi::CallbackInfo& info);
  ~JsWsHub() override;
  // The hub's wake timer -> fn(changes) (loop thread, top level).
  void OnTopicsChanged() override;
  const std::shared_ptr<WsHub>& hub() const { return hub_; }
  // The hub of a NativeWsHub object, or null for anything else.
  static std::shared_ptr<WsHub> From(napi_env env, napi_value v);

 private:
  Napi::Value Publish(const Napi::CallbackInfo& info);
  Napi::Value Subscribers(const Napi::CallbackInfo& info);
  Napi::Value WatchTopics(const Napi::CallbackInfo& info);
  std::shared_ptr<WsHub> hub_;
  Napi::FunctionReference on_topics_;
  AsyncContext async_context_;
};

}  // namespace sluice
