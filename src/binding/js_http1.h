// JsHttp1: HTTP/1.1 in the binding. Turns the core's Http1Delegate events
// into calls of the JS callbacks lib/ gave (onRequest, onBody...), one per
// request on the common path; the responses come back through the
// connection's handle (JsConnection). Mirrors JsHttp2.
//
// Ownership: JsServer owns its JsHttp1 and hands it to the core as
// ServerDelegate::http1(). Loop thread only, inside a dispatch.
#pragma once

#include <napi.h>

#include <string>

#include "core/http1/http1_delegate.h"

namespace sluice {

class JsHttp1 final : public Http1Delegate {
 public:
  JsHttp1(Napi::Env env, const Napi::Object& callbacks);

  // Http1Delegate
  void OnRequest(Connection* c, const RequestHead& head) override;
  void OnBody(Connection* c, uint32_t seq, const char* data, size_t len,
              int64_t user_offset) override;
  void OnRequestEnd(Connection* c, uint32_t seq,
                    const Http1Fields& trailers) override;
  void OnClientError(Connection* c, const ClientError& err) override;
  void OnUpgrade(Connection* c, uint32_t seq, const char* head,
                 size_t len) override;
  bool OnKeepAliveTimeout(Connection* c) override;
  void OnReadCopy(Connection* c, const char* data, size_t len) override;

 private:
  napi_env env_;
  // The HTTP/1.1 callbacks lib/ passes (new NativeServer(options, callbacks)).
#define SLUICE_HTTP1_CALLBACKS(V)       \
  V(on_request_, "onRequest")           \
  V(on_body_, "onBody")                 \
  V(on_end_, "onEnd")                   \
  V(on_client_error_, "onClientError")  \
  V(on_upgrade_, "onUpgrade")           \
  V(on_keep_alive_timeout_, "onKeepAliveTimeout") \
  V(on_read_copy_, "onReadCopy")
#define SLUICE_H1_CALLBACK_MEMBER(member, name) Napi::FunctionReference member;
  SLUICE_HTTP1_CALLBACKS(SLUICE_H1_CALLBACK_MEMBER)
#undef SLUICE_H1_CALLBACK_MEMBER
  // Reused buffer for the packed request headers (OnRequest).
  std::string header_scratch_;
};

}  // namespace sluice
