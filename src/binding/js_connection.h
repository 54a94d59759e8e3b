// JsConnection: the JS handle of one connection (an ObjectWrap). Response
// methods take the request's seq; each crosses into native code once.
// The core Connection may close before the JS object is collected: conn_
// is then null and every method is a no-op returning kResultClosed.
#pragma once

#include <napi.h>

#include "binding/js_core_handle.h"
#include "core/net/connection.h"
#include "core/http1/http1_session.h"

namespace sluice {

class JsConnection final : public Napi::ObjectWrap<JsConnection> {
 public:
  static Napi::Function Init(Napi::Env env);
  explicit JsConnection(const Napi::CallbackInfo& info);

  // Binds to a live core connection; holds the JS object strongly until
  // Detach (the core connection closed; its byte counts are kept).
  void Attach(Connection* c);
  void Detach();
  // The live HTTP/1.1 session, or null once closed (native file responses).
  Http1Session* http1_session() const { return session(); }

 private:
  Http1Session* session() const;
  // The connection may take raw bytes / pause / destroy from JS: HTTP/1.1
  // or a tunnel ('upgrade' / 'connect').
  bool RawOk() const;
  // respond(seq, statusAndFlags, reason, headerBlock, body, trailers)
  Napi::Value Respond(const Napi::CallbackInfo& info);
  // write(seq, chunk) -> >= 0 (bit 0: wants drain) or error
  Napi::Value Write(const Napi::CallbackInfo& info);
  // end(seq, chunk, trailers)
  Napi::Value End(const Napi::CallbackInfo& info);
  Napi::Value WriteContinue(const Napi::CallbackInfo& info);
  // writeInfo(seq, status, headerLines): a 102/103 before the head.
  Napi::Value WriteInfo(const Napi::CallbackInfo& info);
  Napi::Value Pause(const Napi::CallbackInfo& info);
  Napi::Value Resume(const Napi::CallbackInfo& info);
  Napi::Value Destroy(const Napi::CallbackInfo& info);
  Napi::Value SendError(const Napi::CallbackInfo& info);
  // Raw bytes for clientError handlers that answer themselves.
  Napi::Value WriteRaw(const Napi::CallbackInfo& info);
  Napi::Value EndRaw(const Napi::CallbackInfo& info);
  Napi::Value Peer(const Napi::CallbackInfo& info);
  Napi::Value Local(const Napi::CallbackInfo& info);
  // stats() -> { flushes, backlog, bytesRead, bytesWritten } (the byte
  // counts stay readable after the close)
  Napi::Value Stats(const Napi::CallbackInfo& info);
  // setKeepAlive(enable, initialDelaySeconds) -> 0 or a libuv error
  Napi::Value SetKeepAlive(const Napi::CallbackInfo& info);
  // The live connection whatever its protocol (addresses, destroy,
  // keep-alive, byte counts), or null once closed.
  Connection* live() const;
  // The body buffer pool refilled: retry the allocation that came back dry.
  Napi::Value RetryBodyBuffer(const Napi::CallbackInfo& info);

  int AppendBody(uint32_t seq, napi_value chunk);
  int Result(int err) const;

  CoreHandle<Connection> conn_;
  uint64_t bytes_read_ = 0;     // at Detach
  uint64_t bytes_written_ = 0;  // at Detach
};

// Debug counters for tests and benchmarks (process-wide, loop thread).
struct Counters {
  uint64_t body_bytes_copied = 0;     // body bytes embedded in output buffers
  uint64_t body_bytes_referenced = 0; // body bytes written from JS memory
};
Counters& GetCounters();

}  // namespace sluice
