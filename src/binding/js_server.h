// JsServer: the JS-facing native server (an ObjectWrap: listen, close,
// limits) and the core's ServerDelegate: the server's and connections'
// lifecycle (dispatch scopes, read memory from the allocator, drain,
// tunnel bytes, closes). It owns the protocol delegates, JsHttp1 and
// JsHttp2, which turn request and stream events into JS calls.
#pragma once

#include <napi.h>

#include <memory>

#include "binding/addon_data.h"
#include "binding/js_core_handle.h"
#include "binding/js_websocket.h"
#include "core/net/listener.h"
#include "core/net/server_delegate.h"

namespace sluice {

class JsHttp1;
class JsHttp2;

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
  BufferResult AcquireBodyBuffer(Connection* c, size_t size, char** base,
                                 size_t* len) override;
  void ReleaseBodyBuffer(Connection* c) override;
  void OnDrain(Connection* c) override;
  void OnConnectionClose(Connection* c) override;
  void OnServerClosed() override;
  void OnConnectionDropped(const DroppedConnection& d) override;
  void OnTunnelData(Connection* c, const char* data, size_t len) override;
  void OnTunnelEnd(Connection* c) override;
  void OnConnection(Connection* c) override;
  Http1Delegate* http1() override;
  Http2Delegate* http2() override;
  WsDelegate* websocket() override;
  void OnSecureConnection(Connection* c) override;
  void OnTlsClientError(Connection* c, const char* code,
                        const char* message) override;
  // SNICallback: onSni(connection, servername); lib answers with
  // connection.sniDone(context) now or later.
  void OnSniRequest(Connection* c, const char* servername) override;

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
  // chmodPipe(readableAll, writableAll) -> 0 or a libuv error: the
  // listening Unix socket's file readable / writable by everyone.
  Napi::Value ChmodPipe(const Napi::CallbackInfo& info);
  // Pins this object once listening (see self_ref_).
  void HoldSelf();
  Napi::Value Address(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);
  Napi::Value CloseAllConnections(const Napi::CallbackInfo& info);
  Napi::Value CloseIdleConnections(const Napi::CallbackInfo& info);
  Napi::Value ConnectionCount(const Napi::CallbackInfo& info);
  // server.metrics()'s native part (lib/observe/metrics.js): the
  // Listener's ServerMetrics as plain arrays, null before a listen.
  Napi::Value Metrics(const Napi::CallbackInfo& info);
  // openAccessLog(path, format, capacity): 0 or a libuv error. The log
  // lives as long as the Listener (lines queued then still reach the file).
  Napi::Value OpenAccessLog(const Napi::CallbackInfo& info);
  Napi::Value SetLimitMethod(const Napi::CallbackInfo& info);
  // ref(bool): whether the listening socket keeps the loop alive.
  Napi::Value Ref(const Napi::CallbackInfo& info);
  // wsDropPool(): JsWebSocket::DropPool (lib/websocket/native_events.js).
  Napi::Value WsDropPool(const Napi::CallbackInfo& info);
  // setAltSvc(value): the Alt-Svc of native answers ('' : none).
  Napi::Value SetAltSvc(const Napi::CallbackInfo& info);
  Napi::Value DroppedConnections(const Napi::CallbackInfo& info);
  // serveStatic(prefix, root, options) -> 0 or a UV_E* / negative code:
  // adds a mount answered natively (core/files/static_files.h).
  Napi::Value ServeStatic(const Napi::CallbackInfo& info);
  // staticFiles() -> an External sharing this server's mounts
  // (WrapStaticFiles), made empty now if there are none yet, so that
  // serveStatic calls before and after apply to its holder (the HTTP/3
  // endpoint) too; undefined after Teardown.
  Napi::Value StaticFilesHandle(const Napi::CallbackInfo& info);
  // TLS (js_tls.cc builds the contexts): setTls(context,
  // {handshakeTimeout, allowHTTP1, sniCallback}) before listen makes every
  // connection speak TLS; setSecureContext(context) and
  // addContext(hostname, context) apply to connections accepted
  // afterwards. A context is normalized options or a native context
  // (binding.tlsContext); options OpenSSL refuses throw
  // ERR_SLUICE_TLS_CONTEXT.
  Napi::Value SetTls(const Napi::CallbackInfo& info);
  Napi::Value SetSecureContext(const Napi::CallbackInfo& info);
  Napi::Value AddContext(const Napi::CallbackInfo& info);
  // ticketKeys() -> the 48 bytes; setTicketKeys(buffer) (RangeError
  // unless 48 bytes). setTls/setSecureContext take options.ticketKeys.
  Napi::Value TicketKeys(const Napi::CallbackInfo& info);
  Napi::Value SetTicketKeys(const Napi::CallbackInfo& info);

  // Null after Teardown: every JS method is then a no-op.
  Listener* listener_ = nullptr;
  AddonMember<JsServer> addon_;
  // HTTP/1.1 request events (js_http1.cc).
  std::unique_ptr<JsHttp1> http1_;
  // HTTP/2 events (js_http2.cc); null when lib/ gave no onStream callback.
  std::unique_ptr<JsHttp2> http2_;
  // WebSocket events (js_websocket.cc); null when lib/ gave no onWsMessage.
  std::unique_ptr<JsWebSocket> ws_;
  // The callbacks lib/server/server.js passes (new NativeServer(options, callbacks)).
#define SLUICE_SERVER_CALLBACKS(V)      \
  V(on_drain_, "onDrain")               \
  V(on_close_, "onClose")               \
  V(on_server_close_, "onServerClose")  \
  V(on_drop_, "onDrop")                 \
  V(on_alloc_, "onAlloc")               \
  V(on_release_body_, "onReleaseBody")  \
  V(on_tunnel_data_, "onTunnelData")    \
  V(on_tunnel_end_, "onTunnelEnd")       \
  V(on_secure_, "onSecure")             \
  V(on_tls_error_, "onTlsClientError")  \
  V(on_sni_, "onSni")                   \
  V(on_connection_, "onConnection")
  SLUICE_SERVER_CALLBACKS(SLUICE_CALLBACK_MEMBER)
  // Keeps this object (and through the callbacks, the JS Server) alive
  // while it listens or has connections: users drop the server object.
  Napi::ObjectReference self_ref_;
  // The callbacks object (weak; strong while self_held_): the callback
  // references are weak (JsCallback), so holding the server must hold them.
  Napi::ObjectReference callbacks_ref_;
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
};

// The JS shape of `m` (lib/observe/metrics.js reads it); the caller adds
// what only it knows (open connections, bytes, WebSockets, the access log).
// Shared by the TCP server and the HTTP/3 endpoint.
Napi::Object MetricsObject(Napi::Env env, const ServerMetrics& m);

}  // namespace sluice
