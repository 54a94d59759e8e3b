// JsHttp2: HTTP/2 events in the binding. Turns the core's Http2Delegate
// events into calls of the JS callbacks lib/ gave (onStream,
// onStreamData...), each with the session's JS handle (JsHttp2Session,
// js_http2_session.h), made on the session's first event. Mirrors JsHttp1.
//
// Ownership: JsServer owns its JsHttp2 and hands it to the core as
// ServerDelegate::http2(). Loop thread only, inside a dispatch.
#pragma once

#include <napi.h>

#include <string>

#include "binding/js_core_handle.h"
#include "binding/js_stream_session.h"
#include "core/http2/http2_delegate.h"

namespace sluice {

class Connection;
class Http2Session;

class JsHttp2 final : public Http2Delegate {
 public:
  // True when lib/ passed the HTTP/2 callbacks.
  static bool Wanted(const Napi::Object& callbacks);
  JsHttp2(Napi::Env env, const Napi::Object& callbacks);

  // Called by JsServer::OnConnectionClose (inside a dispatch) for every
  // connection; reports the end of an HTTP/2 session to JS.
  void OnConnectionClose(Connection* c);
  // The same without the JS call (environment teardown): drops the
  // session object's hold and its link to the core session.
  void DetachConnection(Connection* c);

  // Http2Delegate
  // onSessionStart(session).
  void OnSessionStart(Http2Session* s) override;
  void OnStream(Http2Session* s, int32_t id, const Http2Fields& headers,
                bool end_stream) override;
  // onStreamData(session, id, chunk) with a copy, or, for bytes in the
  // allocator's read buffer, onStreamData(session, id, offset, len,
  // connection): lib/ cuts a view of the connection's current buffer and
  // calls session.consume(id, len) once it is given back.
  void OnStreamData(Http2Session* s, int32_t id, const char* data,
                    size_t len, int64_t user_offset) override;
  void OnStreamEnd(Http2Session* s, int32_t id,
                   const Http2Fields& trailers) override;
  void OnStreamDrain(Http2Session* s, int32_t id) override;
  void OnStreamWantTrailers(Http2Session* s, int32_t id) override;
  void OnStreamClose(Http2Session* s, int32_t id,
                     uint32_t error_code) override;
  void OnStreamBodyTooLarge(Http2Session* s, int32_t id, int status) override;
  // onStreamFrameError(session, id, type, code).
  void OnStreamFrameError(Http2Session* s, int32_t id, uint8_t type,
                          uint32_t code) override;
  void OnGoaway(Http2Session* s, uint32_t error_code,
                int32_t last_stream_id) override;
  // onPing(session, payload, ack): payload a copy.
  void OnPing(Http2Session* s, const uint8_t* payload, bool ack) override;
  // onSettings(session, ack).
  void OnSettings(Http2Session* s, bool ack) override;

 private:
  napi_value SessionObject(Http2Session* s);
  napi_value Fields(const Http2Fields& fields);
  // The request head for onStream as one latin1 string, "name\0value\0
  // name\0value..." (lib/ splits it at \0): one string made instead of
  // an array of 2n (napi_set_element per field was a tenth of an
  // in-memory response's CPU). nghttp2 refuses NUL in names and values;
  // should one get through, the array form is used (lib/ takes both).
  napi_value PackedFields(const Http2Fields& fields);

  napi_env env_;
  std::string packed_;  // PackedFields' scratch, reused (loop thread only)
  // The HTTP/2 callbacks lib/http2/session.js passes: the stream ones
  // (js_stream_session.h) and HTTP/2's own.
#define SLUICE_HTTP2_CALLBACKS(V)                  \
  V(on_session_start_, "onSessionStart")           \
  SLUICE_STREAM_CALLBACKS(V)                       \
  V(on_body_too_large_, "onStreamBodyTooLarge")    \
  V(on_frame_error_, "onStreamFrameError")         \
  V(on_goaway_, "onGoaway")                        \
  V(on_ping_, "onPing")                            \
  V(on_settings_, "onSettings")
  SLUICE_HTTP2_CALLBACKS(SLUICE_CALLBACK_MEMBER)
};

}  // namespace sluice
