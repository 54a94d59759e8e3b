// JsServer: the JS-facing native server (an ObjectWrap) and the core's
// ServerDelegate: turns core events into JS calls, one per request on the
// common path. The only place, with js_connection.*, that speaks N-API.
#pragma once

#include <napi.h>

#include <string>

#include <memory>

#include "binding/js_core_handle.h"
#include "core/net/listener.h"
#include "core/net/server_delegate.h"

namespace sluice {

class JsHttp2;
struct AddonData;

class JsServer final : public Napi::ObjectWrap<JsServer>,
                       public ServerDelegate {
 public:
  static Napi::Function Init(Napi::Env env);
  // new NativeServer(options, callbacks)
  explicit JsServer(const Napi::CallbackInfo& info);
  ~JsServer() override;

  // ServerDelegate (loop thread, inside a dispatch).
  void OnDispatchBegin() override;
  void OnDispatchEnd() override;
  void OnRequest(Connection* c, const RequestHead& head) override;
  void OnBody(Connection* c, uint32_t seq, const char* data, size_t len,
              int64_t user_offset) override;
  BufferResult AcquireBodyBuffer(Connection* c, size_t size, char** base,
                                 size_t* len) override;
  void ReleaseBodyBuffer(Connection* c) override;
  void OnRequestEnd(Connection* c, uint32_t seq,
                    const std::vector<std::pair<std::string_view,
                                                std::string_view>>& trailers)
      override;
  void OnDrain(Connection* c) override;
  void OnClientError(Connection* c, const ClientError& err) override;
  void OnConnectionClose(Connection* c) override;
  void OnServerClosed() override;
  void OnConnectionDropped(const DroppedConnection& d) override;
  void OnUpgrade(Connection* c, uint32_t seq, const char* head,
                 size_t len) override;
  void OnTunnelData(Connection* c, const char* data, size_t len) override;
  void OnTunnelEnd(Connection* c) override;
  void OnConnection(Connection* c) override;
  Http2Delegate* http2() override;

  // Environment teardown (addon.cc; JS can no longer run): detaches the
  // JS connection objects without calling JS, releases the listener (its
  // connections close; no delegate call follows) and forgets the addon
  // data. The core objects free themselves once libuv is done with them;
  // the teardown waits for that (core/common/loop_tracked.h).
  void Teardown();

 private:
  // Drops the JS side of `c` (its JsConnection and HTTP/2 session object).
  void DetachConnection(Connection* c);
  Napi::Value Listen(const Napi::CallbackInfo& info);
  // listenPipe(path, backlog) -> 0 or a libuv error (a Unix socket).
  Napi::Value ListenPipe(const Napi::CallbackInfo& info);
  // Pins this object once listening (see self_ref_).
  void HoldSelf();
  Napi::Value Address(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);
  Napi::Value CloseAllConnections(const Napi::CallbackInfo& info);
  Napi::Value CloseIdleConnections(const Napi::CallbackInfo& info);
  Napi::Value ConnectionCount(const Napi::CallbackInfo& info);
  Napi::Value SetLimitMethod(const Napi::CallbackInfo& info);
  // ref(bool): whether the listening socket keeps the loop alive.
  Napi::Value Ref(const Napi::CallbackInfo& info);
  Napi::Value DroppedConnections(const Napi::CallbackInfo& info);

  // The JS object for `c`, created on first use.
  napi_value ConnectionObject(Connection* c);

  // Null after Teardown: every JS method is then a no-op.
  Listener* listener_ = nullptr;
  // Null after Teardown (the addon data may be freed before this object).
  AddonData* addon_ = nullptr;
  // HTTP/2 events (js_http2.cc); null when lib/ gave no onStream callback.
  std::unique_ptr<JsHttp2> http2_;
  // The callbacks lib/server.js passes (new NativeServer(options, callbacks)).
#define SLUICE_SERVER_CALLBACKS(V)      \
  V(on_request_, "onRequest")           \
  V(on_body_, "onBody")                 \
  V(on_end_, "onEnd")                   \
  V(on_drain_, "onDrain")               \
  V(on_client_error_, "onClientError")  \
  V(on_close_, "onClose")               \
  V(on_server_close_, "onServerClose")  \
  V(on_drop_, "onDrop")                 \
  V(on_alloc_, "onAlloc")               \
  V(on_release_body_, "onReleaseBody")  \
  V(on_upgrade_, "onUpgrade")           \
  V(on_tunnel_data_, "onTunnelData")    \
  V(on_tunnel_end_, "onTunnelEnd")      \
  V(on_connection_, "onConnection")
#define SLUICE_CALLBACK_MEMBER(member, name) Napi::FunctionReference member;
  SLUICE_SERVER_CALLBACKS(SLUICE_CALLBACK_MEMBER)
#undef SLUICE_CALLBACK_MEMBER
  // Keeps this object (and through the callbacks, the JS Server) alive
  // while it listens or has connections: users drop the server object.
  Napi::ObjectReference self_ref_;
  bool self_held_ = false;
  // Dispatch scopes: the callback scope runs nextTicks and microtasks when
  // the outermost dispatch ends, as node does after a socket read.
  Napi::ObjectReference resource_;
  AsyncContext async_context_;
  napi_handle_scope handle_scope_ = nullptr;
  napi_callback_scope callback_scope_ = nullptr;
  // >0 while JS is calling into this server: dispatches opened then must
  // not open a callback scope (it would run microtasks mid-call).
  int js_calls_ = 0;
  // Reused buffer for the packed request headers (OnRequest).
  std::string header_scratch_;
};

}  // namespace sluice
