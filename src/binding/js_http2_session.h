// JsHttp2Session: the JS handle of one HTTP/2 session (an ObjectWrap) whose
// methods take a stream id and cross into native code once each: respond,
// write, end, trailers, reset, flow control, native file and compressed
// bodies.
//
// Ownership: made by JsHttp2 on the session's first event, stored in
// Http2Session::user_data; holds itself strongly until the connection
// closes (JsHttp2::OnConnectionClose detaches it; its methods then return
// kResultClosed).
#pragma once

#include <napi.h>

#include <string>

#include "binding/js_core_handle.h"
#include "binding/js_websocket.h"
#include "core/common/result.h"
#include "core/http2/http2_headers.h"
#include "core/http2/http2_session.h"

namespace sluice {

class Http2Session;

class JsHttp2Session final : public CoreWrap<JsHttp2Session, Http2Session> {
 public:
  static Napi::Function Init(Napi::Env env);
  using CoreWrap<JsHttp2Session, Http2Session>::CoreWrap;

 private:
  Http2Session* live() const;
  friend class CoreWrap<JsHttp2Session, Http2Session>;
  // The stream methods below take the live session and the stream id
  // (ItemCall).
  template <int (JsHttp2Session::*M)(const Napi::CallbackInfo&,
                                     Http2Session*, int32_t)>
  Napi::Value StreamCall(const Napi::CallbackInfo& info) {
    return ItemCall<Http2Session, int32_t, M>(info);
  }
  // respond(id, status, headerBlock, flags[, body]) -> result
  int Respond(const Napi::CallbackInfo& info, Http2Session* s, int32_t id);
  // Respond's head list and the block's bytes, reused by every call (one
  // response each; no call re-enters another): no allocations per head
  // once grown.
  Http2HeaderList head_scratch_;
  std::string block_scratch_;
  // info(id, status, headerBlock, flags): 1xx headers
  int Info(const Napi::CallbackInfo& info, Http2Session* s, int32_t id);
  // write(id, chunk[, flush]) -> result (1: wait for drain). chunk may be
  // nullish with flush: a sync flush of the stream's compressor only.
  Napi::Value Write(const Napi::CallbackInfo& info);
  // end(id, chunk, trailerBlock, flags) -> result
  int End(const Napi::CallbackInfo& info, Http2Session* s, int32_t id);
  int SendTrailers(const Napi::CallbackInfo& info, Http2Session* s, int32_t id);
  int RstStream(const Napi::CallbackInfo& info, Http2Session* s, int32_t id);
  Napi::Value PauseStream(const Napi::CallbackInfo& info);
  Napi::Value ResumeStream(const Napi::CallbackInfo& info);
  // consume(id, n): n bytes delivered as a view were given back
  // (Http2Session::Consume); a no-op once the session is gone.
  Napi::Value Consume(const Napi::CallbackInfo& info);
  // respondFile(id, nativeFile, onDone(status)) after respond(): the body
  // comes from the NativeFile's opened source through the native pipe
  // (Http2PipeBody). -> 0 (running; onDone follows once), 1 (no body:
  // HEAD/204/304), < 0 error. Optional coding, level, brotliQuality
  // (info[3..5]): a CompressTransform between the file and the stream.
  Napi::Value RespondFile(const Napi::CallbackInfo& info);
  // compress(id, coding, level, brotliQuality) -> result: the stream's
  // body goes through a streaming compressor (Http2Session::StartCompression).
  int Compress(const Napi::CallbackInfo& info, Http2Session* s, int32_t id);
  // respondCompressed(id, status, headerBlock, flags, body, trailerBlock,
  // coding, level, brotliQuality) -> result: head + compressed whole body
  // + end in one call, content-length = compressed size; bodies of
  // CompressJob::kAsyncThreshold and more compress on the threadpool
  // (Http2Session::RespondCompressed).
  int RespondCompressed(const Napi::CallbackInfo& info, Http2Session* s, int32_t id);
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

  int WriteChunk(int32_t id, napi_value chunk);
  // Ends stream `id`, sending `trailers` (a header block, or null) first.
  int EndWithTrailers(napi_env env, Http2Session* s, int32_t id,
                      napi_value trailers, uint32_t flags);
  int Result(int32_t id, int err) const;
};

}  // namespace sluice
