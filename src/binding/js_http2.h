// HTTP/2 in the binding: JsHttp2 turns the core's Http2Delegate events into
// calls of the JS callbacks lib/http2_server.js gave (onStream, onStreamData...),
// and JsHttp2Session is the JS handle of one HTTP/2 session (an ObjectWrap)
// whose methods take a stream id and cross into native code once each.
//
// Ownership: JsServer owns its JsHttp2. A JsHttp2Session is created on the
// session's first event, stored in Http2Session::user_data, and holds
// itself strongly until the connection closes (JsHttp2::OnConnectionClose
// detaches it; its methods then return kResultClosed).
#pragma once

#include <napi.h>

#include "binding/js_core_handle.h"
#include "core/common/result.h"
#include "core/http2/http2_delegate.h"

namespace sluice {

class Connection;
class Http2Session;

class JsHttp2Session final : public Napi::ObjectWrap<JsHttp2Session> {
 public:
  static Napi::Function Init(Napi::Env env);
  explicit JsHttp2Session(const Napi::CallbackInfo& info);

  void Attach(Http2Session* s);
  void Detach();

 private:
  Http2Session* live() const;
  // The stream methods below share one preamble: the live session and the
  // stream id (info[0]); the result is their number, kResultClosed when the
  // session is gone.
  using StreamMethod = int (JsHttp2Session::*)(const Napi::CallbackInfo&,
                                               Http2Session*, int32_t);
  template <StreamMethod M>
  Napi::Value StreamCall(const Napi::CallbackInfo& info) {
    Http2Session* s = live();
    int r = s ? (this->*M)(info, s, info[0].As<Napi::Number>().Int32Value())
              : kResultClosed;
    return Napi::Number::New(info.Env(), r);
  }
  // respond(id, status, headerBlock, flags[, body]) -> result
  int Respond(const Napi::CallbackInfo& info, Http2Session* s, int32_t id);
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
  Napi::Value Goaway(const Napi::CallbackInfo& info);
  Napi::Value Destroy(const Napi::CallbackInfo& info);
  Napi::Value Peer(const Napi::CallbackInfo& info);
  Napi::Value Local(const Napi::CallbackInfo& info);

  int WriteChunk(int32_t id, napi_value chunk);
  // Ends stream `id`, sending `trailers` (a header block, or null) first.
  int EndWithTrailers(napi_env env, Http2Session* s, int32_t id,
                      napi_value trailers, uint32_t flags);
  int Result(int32_t id, int err) const;

  CoreHandle<Http2Session> session_;
};

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
  void OnStream(Http2Session* s, int32_t id, const Http2Fields& headers,
                bool end_stream) override;
  void OnStreamData(Http2Session* s, int32_t id, const char* data,
                    size_t len) override;
  void OnStreamEnd(Http2Session* s, int32_t id,
                   const Http2Fields& trailers) override;
  void OnStreamDrain(Http2Session* s, int32_t id) override;
  void OnStreamWantTrailers(Http2Session* s, int32_t id) override;
  void OnStreamClose(Http2Session* s, int32_t id,
                     uint32_t error_code) override;
  void OnGoaway(Http2Session* s, uint32_t error_code,
                int32_t last_stream_id) override;

 private:
  napi_value SessionObject(Http2Session* s);
  napi_value Fields(const Http2Fields& fields);

  napi_env env_;
  // The HTTP/2 callbacks lib/http2_server.js passes.
#define SLUICE_HTTP2_CALLBACKS(V)                  \
  V(on_stream_, "onStream")                        \
  V(on_data_, "onStreamData")                      \
  V(on_end_, "onStreamEnd")                        \
  V(on_drain_, "onStreamDrain")                    \
  V(on_want_trailers_, "onStreamWantTrailers")     \
  V(on_stream_close_, "onStreamClose")             \
  V(on_goaway_, "onGoaway")                        \
  V(on_session_close_, "onSessionClose")
#define SLUICE_H2_CALLBACK_MEMBER(member, name) Napi::FunctionReference member;
  SLUICE_HTTP2_CALLBACKS(SLUICE_H2_CALLBACK_MEMBER)
#undef SLUICE_H2_CALLBACK_MEMBER
};

}  // namespace sluice
