// Http2Delegate: how an Http2Session reports stream events to the embedder
// (the binding's JsHttp2). Obtained from ServerDelegate::http2(); a server
// whose delegate returns nullptr does not speak HTTP/2 (the preface is then
// parsed as HTTP/1.1 and rejected).
//
// Every call happens on the loop thread inside a Listener dispatch bracket
// (ServerDelegate::OnDispatchBegin/End). The embedder may call back into the
// session (respond, write, reset, pause) from inside any of them.
//
// Order per stream: OnStream first; then OnStreamData in receive order and
// OnStreamEnd at most once; OnStreamDrain / OnStreamWantTrailers as its
// output progresses; OnStreamClose last (no call names the id after it).
// OnGoaway is per session, in order with the stream events around it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "core/stream/stream_fields.h"

namespace sluice {

class Http2Session;

using Http2Fields = StreamFields;

class Http2Delegate {
 public:
  virtual ~Http2Delegate() = default;

  // The session's first input arrived (from Http2Session::OnRead, before
  // it is parsed): the embedder's session starts here, even when no frame
  // of it is ever accepted. At most once per session, before any other
  // call naming it.
  virtual void OnSessionStart(Http2Session* s) { (void)s; }
  // A request stream's headers arrived (pseudo-headers first, names
  // lower-case, as received). end_stream: no body follows. The views are
  // valid only during the call.
  virtual void OnStream(Http2Session* s, int32_t id,
                        const Http2Fields& headers, bool end_stream) = 0;
  // Request body bytes, valid only during the call. user_offset -1: a
  // copy is due; the stream window is replenished as the embedder consumes
  // (see Http2Session::PauseStream). user_offset >= 0: the bytes lie in
  // the read buffer the embedder gave (ServerDelegate::AcquireBodyBuffer)
  // at that offset, so it can hand out a view; neither window is credited
  // for them until the embedder calls Http2Session::Consume(id, len)
  // (exactly once per such call, also after the stream closed).
  virtual void OnStreamData(Http2Session* s, int32_t id, const char* data,
                            size_t len, int64_t user_offset) = 0;
  // The request body ended (trailers may be empty).
  virtual void OnStreamEnd(Http2Session* s, int32_t id,
                           const Http2Fields& trailers) = 0;
  // The stream's queued output fell below the high-water mark after a
  // write reported backpressure.
  virtual void OnStreamDrain(Http2Session* s, int32_t id) = 0;
  // The body of a stream responded with waitForTrailers is fully sent;
  // the embedder now calls Http2Session::SendTrailers.
  virtual void OnStreamWantTrailers(Http2Session* s, int32_t id) = 0;
  // The stream closed (error_code: NGHTTP2_NO_ERROR, or the RST_STREAM
  // code). Only for streams reported with OnStream.
  virtual void OnStreamClose(Http2Session* s, int32_t id,
                             uint32_t error_code) = 0;
  // The request body of stream `id` passed maxRequestBodySize (by DATA, or
  // by its content-length before any DATA): no more of it is delivered.
  // status 413: the session answered 413 and resets the stream
  // (RST_STREAM NO_ERROR after the response, RFC 9113 8.1); the embedder's
  // response can no longer be sent. status 0: the embedder had responded
  // already; the rest of the body is read and discarded. From inside
  // nghttp2_session_mem_recv (a data or headers callback); at most once
  // per stream, only for streams reported with OnStream.
  virtual void OnStreamBodyTooLarge(Http2Session* s, int32_t id, int status) {
    (void)s;
    (void)id;
    (void)status;
  }
  // A frame of stream `id` could not be sent (type: the frame type; code:
  // the HTTP/2 error code the stream is reset with next, so OnStreamClose
  // follows). Only for streams reported with OnStream; from the session's
  // event queue, after nghttp2_session_send.
  virtual void OnStreamFrameError(Http2Session* s, int32_t id, uint8_t type,
                                  uint32_t code) {
    (void)s;
    (void)id;
    (void)type;
    (void)code;
  }
  // The peer sent GOAWAY.
  virtual void OnGoaway(Http2Session* s, uint32_t error_code,
                        int32_t last_stream_id) = 0;
  // A PING arrived: ack false, the peer's (nghttp2 answers it); ack true,
  // the answer to Http2Session::SubmitPing. `payload`: 8 bytes, valid only
  // during the call.
  virtual void OnPing(Http2Session* s, const uint8_t* payload, bool ack) {
    (void)s;
    (void)payload;
    (void)ack;
  }
  // A SETTINGS frame arrived: ack false, the peer's settings (the first
  // one is its connection preface: the session has started); ack true,
  // the peer took ours (Http2Session::SubmitSettings, or the initial ones).
  virtual void OnSettings(Http2Session* s, bool ack) {
    (void)s;
    (void)ack;
  }
  // (The connection closing is reported as ServerDelegate::
  // OnConnectionClose; every stream still open is gone then.)
};

}  // namespace sluice
