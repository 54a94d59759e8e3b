// NativeQuicClient: a QUIC client connection (core/quic/quic_client.h) for
// tests and benchmarks — raw streams, exact bytes — plus the HTTP/3 core's
// QPACK field-section encoder and decoder as static methods, so a JS test
// client can speak HTTP/3 (valid or hostile) to the server.
//
//   new NativeQuicClient({ onConnect(), onData(id, buf, fin),
//                          onReset(id, code), onClose(code, transport, reason) })
//   connect(ip, port, alpn, sni[, session DER]) -> 0 | -errno (throws with OpenSSL's reason)
//   openStream(uni) -> id | -1;  write(id, buf, fin);  reset(id, code);
//   abandon(id) (free the stream: STOP_SENDING for its unread response)
//   close(code);  destroy()
//   NativeQuicClient.encodeFieldSection([name, value, ...]) -> Buffer
//   NativeQuicClient.decodeFieldSection(buf[, max]) -> [name, value, ...] | 'failed' | 'too large'
//
// Stream ids and codes cross as numbers (exact below 2^53). Holds itself
// strongly while connected; collected after close/destroy.
#pragma once

#include <napi.h>

#include "binding/addon_data.h"
#include "binding/js_core_handle.h"
#include "core/quic/quic_client.h"

namespace sluice {

class JsQuicClient final : public Napi::ObjectWrap<JsQuicClient>, public QuicClientDelegate {
 public:
  static Napi::Function Init(Napi::Env env);
  explicit JsQuicClient(const Napi::CallbackInfo& info);
  ~JsQuicClient() override;

  // Environment teardown (addon.cc): the connection is dropped, no JS.
  void Teardown();
  void OnConnected() override;
  void OnStreamData(uint64_t id, const uint8_t* data, size_t len, bool fin) override;
  void OnStreamReset(uint64_t id, uint64_t code) override;
  void OnClosed(uint64_t code, bool transport, const std::string& reason) override;

 private:
  Napi::Value Connect(const Napi::CallbackInfo& info);
  Napi::Value OpenStream(const Napi::CallbackInfo& info);
  Napi::Value Write(const Napi::CallbackInfo& info);
  Napi::Value Reset(const Napi::CallbackInfo& info);
  Napi::Value Abandon(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);
  Napi::Value Destroy(const Napi::CallbackInfo& info);
  // tls(what): 'cert' (DER of the server's certificate), 'session' (DER of
  // the SSL_SESSION, for connect's `session`), 'reused' (boolean);
  // undefined before connect.
  Napi::Value Tls(const Napi::CallbackInfo& info);
  static Napi::Value Encode(const Napi::CallbackInfo& info);
  static Napi::Value Decode(const Napi::CallbackInfo& info);
  // Calls a callback inside a handle scope and callback scope (the client
  // calls from libuv callbacks).
  void Call(const Napi::FunctionReference& fn, size_t argc, const napi_value* argv);
  void Drop();

  QuicClient* client_ = nullptr;
  Napi::ObjectReference self_;
  Napi::FunctionReference on_connect_, on_data_, on_reset_, on_close_;
  Napi::ObjectReference callbacks_;
  Napi::ObjectReference resource_;
  AsyncContext async_context_;
  AddonMember<JsQuicClient> member_;
};

}  // namespace sluice
