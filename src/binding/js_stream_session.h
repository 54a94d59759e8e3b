// JsStreamSession: the stream methods of NativeHttp2Session and
// NativeHttp3Session, written once over the core's StreamSession: respond,
// info, write, end, sendTrailers, rstStream, pauseStream, resumeStream,
// consume, compress, respondCompressed, respondFile, and the `protocol`
// property ('h2' or 'h3'). Each protocol's wrap derives from it and adds
// its session methods (HTTP/2: ping, settings, WebSockets...; HTTP/3:
// retryBodyBuffer).
//
// Stream ids: info[0] is the JS id; Wrap::WireId maps it to the
// protocol's id (HTTP/2: the same; HTTP/3: js_http3.h).
#pragma once

#include <napi.h>

#include <string>
#include <vector>

#include "binding/js_core_handle.h"
#include "core/common/result.h"
#include "core/stream/header_list.h"
#include "core/stream/stream_session.h"

// The stream callbacks lib/ passes for either protocol (JsHttp2's and
// JsHttp3Endpoint's, each with the session's handle first): a request
// stream opened with its head, body data, its end, drain, trailers
// wanted, its close, and the session's close.
#define SLUICE_STREAM_CALLBACKS(V)             \
  V(on_stream_, "onStream")                    \
  V(on_data_, "onStreamData")                  \
  V(on_end_, "onStreamEnd")                    \
  V(on_drain_, "onStreamDrain")                \
  V(on_want_trailers_, "onStreamWantTrailers") \
  V(on_stream_close_, "onStreamClose")         \
  V(on_session_close_, "onSessionClose")

namespace sluice {

// Respond's head list and the block's bytes, reused by every call of one
// wrap (one response each; no call re-enters another): no allocations per
// head once grown.
struct StreamScratch {
  HeaderList head;
  std::string block;
};

// The stream methods: (C++ name, JS name). Their arguments (info[0]: the
// JS stream id) and results (a Result code; kResultWaitDrain: wait for
// onStreamDrain):
//   respond(id, status, headerBlock, flags[, body[, trailerBlock]])
//   info(id, status, headerBlock, flags): a 1xx head
//   write(id, chunk[, flush]): chunk may be nullish with flush (a sync
//     flush of the stream's compressor only)
//   end(id, chunk, trailerBlock, flags)
//   sendTrailers(id, headerBlock) after onStreamWantTrailers
//   rstStream(id, http2Code[, afterEnd])
//   pauseStream(id), resumeStream(id): request-body flow control
//   consume(id, n): n bytes delivered as views were given back
//   compress(id, coding, level, brotliQuality): the rest of the body goes
//     through a streaming compressor
//   respondCompressed(id, status, headerBlock, flags, body, trailerBlock,
//     coding, level, brotliQuality): head + compressed whole body + end,
//     content-length = compressed size
//   respondFile(id, nativeFile, onDone(status)[, coding, level, quality])
//     after respond(): the NativeFile's source through the native pipe
//     (a CompressTransform with a coding) -> 0 (running; onDone follows
//     once), 1 (no body: HEAD/204/304; the caller ends the stream), < 0
//     an error
#define SLUICE_STREAM_METHODS(V)               \
  V(Respond, "respond")                        \
  V(Info, "info")                              \
  V(Write, "write")                            \
  V(End, "end")                                \
  V(SendTrailers, "sendTrailers")              \
  V(RstStream, "rstStream")                    \
  V(PauseStream, "pauseStream")                \
  V(ResumeStream, "resumeStream")              \
  V(Consume, "consume")                        \
  V(Compress, "compress")                      \
  V(RespondCompressed, "respondCompressed")    \
  V(RespondFile, "respondFile")

// Their bodies: (info, live session, wire id, the wrap's scratch).
struct StreamCalls {
  using Fn = int (*)(const Napi::CallbackInfo&, StreamSession*, uint64_t, StreamScratch*);
#define SLUICE_STREAM_CALL_DECL(name, js) \
  static int name(const Napi::CallbackInfo& info, StreamSession* s, uint64_t id, StreamScratch* scratch);
  SLUICE_STREAM_METHODS(SLUICE_STREAM_CALL_DECL)
#undef SLUICE_STREAM_CALL_DECL
  // The property `protocol` of a session.
  static const char* ProtocolName(StreamProtocol p) { return p == StreamProtocol::kHttp3 ? "h3" : "h2"; }
};

template <typename Wrap, typename Core>
class JsStreamSession : public CoreWrap<Wrap, Core> {
 public:
  using CoreWrap<Wrap, Core>::CoreWrap;

 protected:
  using Method = Napi::ClassPropertyDescriptor<Wrap>;
  // The stream methods and `protocol`, for Wrap's DefineClass; `more`
  // are the protocol's own. (The runtime InstanceMethod form: a member
  // pointer of this base converts to one of Wrap only at run time.)
  static std::vector<Method> Methods(std::vector<Method> more) {
    using S = JsStreamSession;
    std::vector<Method> m = {
#define SLUICE_STREAM_METHOD(name, js) Wrap::InstanceMethod(js, &S::template Call<&StreamCalls::name>),
        SLUICE_STREAM_METHODS(SLUICE_STREAM_METHOD)
#undef SLUICE_STREAM_METHOD
        Wrap::InstanceAccessor("protocol", &S::Protocol, nullptr),
    };
    m.insert(m.end(), more.begin(), more.end());
    return m;
  }

 private:
  // Wrap::live() (null once the session is gone: kResultClosed) and the
  // wire id of info[0].
  template <StreamCalls::Fn F>
  Napi::Value Call(const Napi::CallbackInfo& info) {
    Core* s = static_cast<Wrap*>(this)->live();
    int r = kResultClosed;
    if (s != nullptr && info.Length() > 0 && info[0].IsNumber()) {
      r = F(info, s, Wrap::WireId(info[0].As<Napi::Number>().Int64Value()), &scratch_);
    } else if (s != nullptr) {
      r = kResultInvalid;
    }
    return Napi::Number::New(info.Env(), r);
  }
  Napi::Value Protocol(const Napi::CallbackInfo& info) {
    return Napi::String::New(info.Env(), StreamCalls::ProtocolName(Core::kProtocol));
  }

  StreamScratch scratch_;
};

}  // namespace sluice
