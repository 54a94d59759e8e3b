// StreamSession: what a server does with the request streams of one
// connection, the same for HTTP/2 (Http2Session) and HTTP/3
// (Http3Session); the binding's JsStreamSession is written once against
// it. Ids are the protocol's own stream ids (HTTP/2's 31-bit, QUIC's
// 62-bit). Every method: loop thread, from the embedder (never from inside
// a delegate call of the same stream's session pass unless that method's
// own contract allows it); returns kResultOk or a negative Result code and
// re-enters no embedder code. What the session reports goes through its
// protocol's delegate (Http2Delegate, Http3Delegate), whose callbacks have
// the same set: stream opened with its request, data, end, drain, want
// trailers, close.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/stream/header_list.h"

namespace sluice {

class CompressJob;
class ExternalRef;
class PipeBodyListener;
class PipeSource;
struct CompressParams;

// Respond flags (shared with JS as H2_END_STREAM / H2_WAIT_FOR_TRAILERS,
// named for the protocol that had them first; both protocols read them).
enum Http2RespondFlags : uint32_t {
  kH2EndStream = 1u << 0,        // no body
  kH2WaitForTrailers = 1u << 1,  // OnStreamWantTrailers after the body
};

enum class StreamProtocol : uint8_t { kHttp2 = 2, kHttp3 = 3 };

class StreamSession {
 public:
  virtual StreamProtocol protocol() const = 0;
  // The response head (`headers`: ":status" == status first); flags as
  // Http2RespondFlags.
  virtual int Respond(uint64_t id, int status, HeaderList& headers, uint32_t flags) = 0;
  // A 1xx head before Respond.
  virtual int SendInformational(uint64_t id, HeaderList& headers) = 0;
  // Body bytes; ref == nullptr: copied now, else referenced until sent or
  // copied and ref->Release()d exactly once (on every path).
  virtual int Write(uint64_t id, const char* data, size_t len, ExternalRef* ref) = 0;
  // The end of the body, `trailers` (may be null or empty) after it.
  virtual int End(uint64_t id, HeaderList* trailers) = 0;
  // After OnStreamWantTrailers: the trailers and the end of the stream.
  virtual int SendTrailers(uint64_t id, HeaderList& trailers) = 0;
  // Resets the stream; `code` is an HTTP/2 error code (lib/'s codes; HTTP/3
  // maps it). after_end: an ended response leaves first.
  virtual int ResetStream(uint64_t id, uint32_t code, bool after_end) = 0;
  // Stops (or restarts) reading the request body: flow control holds the
  // peer (backpressure, never a queue).
  virtual void Pause(uint64_t id, bool paused) = 0;
  // `n` bytes delivered as views of read memory were given back.
  virtual void Consume(uint64_t id, size_t n) = 0;
  // The rest of the body goes through a streaming compressor.
  virtual int StartCompression(uint64_t id, const CompressParams& params) = 0;
  // A sync flush of the stream's compressor, after the writes before it.
  virtual int FlushCompression(uint64_t id) = 0;
  // Head + whole body compressed by `job` (taken in every case) + end;
  // `trailers` (may be null) after the body.
  virtual int RespondCompressed(uint64_t id, int status, HeaderList& headers, uint32_t flags,
                                CompressJob* job, HeaderList* trailers) = 0;
  // The body from a native pipe over `source` (taken in every case):
  // kResultOk (`listener` hears OnPipeBodyDone once), kResultNoBody
  // (HEAD/204/304), or an error (the listener is not called).
  virtual int StartPipeBody(uint64_t id, PipeSource* source, PipeBodyListener* listener) = 0;
  // The embedder waits for OnStreamDrain (asking for it).
  virtual bool NeedsDrain(uint64_t id) = 0;
  // The request is a HEAD (its response carries no body).
  virtual bool IsHeadRequest(uint64_t id) = 0;
  // The Date value for responses (empty: none); valid until the next call.
  virtual std::string_view DateValue() = 0;

 protected:
  ~StreamSession() = default;
};

// The overrides, declared once for every implementation (in its public
// section).
#define SLUICE_STREAM_SESSION_OVERRIDES                                                         \
  StreamProtocol protocol() const override { return kProtocol; }                                \
  int Respond(uint64_t id, int status, HeaderList& headers, uint32_t flags) override;            \
  int SendInformational(uint64_t id, HeaderList& headers) override;                             \
  int Write(uint64_t id, const char* data, size_t len, ExternalRef* ref) override;              \
  int End(uint64_t id, HeaderList* trailers) override;                                          \
  int SendTrailers(uint64_t id, HeaderList& trailers) override;                                 \
  int ResetStream(uint64_t id, uint32_t code, bool after_end) override;                         \
  void Pause(uint64_t id, bool paused) override;                                                \
  void Consume(uint64_t id, size_t n) override;                                                 \
  int StartCompression(uint64_t id, const CompressParams& params) override;                     \
  int FlushCompression(uint64_t id) override;                                                   \
  int RespondCompressed(uint64_t id, int status, HeaderList& headers, uint32_t flags,           \
                        CompressJob* job, HeaderList* trailers) override;                       \
  int StartPipeBody(uint64_t id, PipeSource* source, PipeBodyListener* listener) override;      \
  bool NeedsDrain(uint64_t id) override;                                                        \
  bool IsHeadRequest(uint64_t id) override;                                                     \
  std::string_view DateValue() override;

}  // namespace sluice
