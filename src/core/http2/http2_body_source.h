// Http2BodySource: the interface between an HTTP/2 stream and whatever
// produces its response body (JS writes, a native file pipe, compressor
// output), pulled by nghttp2's data provider in Http2Session.
#pragma once

#include <sys/types.h>

#include <cstddef>

#include "core/net/output_queue.h"

namespace sluice {

// The producer of a stream's response body, pulled by nghttp2's data
// provider. Implemented by the queue of JS writes (Http2WriteQueue,
// http2_stream.h) and by the native pipe's HTTP/2 sink (http2_pipe_body.h).
class Http2BodySource {
 public:
  virtual ~Http2BodySource() = default;
  // Session → source, from the data provider: how many bytes (<= max) can
  // be sent now. Returns > 0; or 0 with *eof = true when the body is done;
  // or kBodyWouldBlock: nothing yet (the producer then calls
  // Http2Session::ResumeData once it has data). *eof may also be set
  // with a positive count: those are the last bytes.
  virtual ssize_t Available(size_t max, bool* eof) = 0;
  // Session → source, from send_data: append exactly `len` bytes (the count
  // Available returned last) to `q`, large payloads by reference
  // (AppendExternal), never copied.
  virtual void Emit(OutputQueue& q, size_t len) = 0;
  // Session → source: the stream is gone (closed, reset, or the connection
  // closed). The session never touches the source afterwards; the source
  // releases what it holds (and frees itself if it owns itself).
  virtual void Detach() = 0;
  static constexpr ssize_t kBodyWouldBlock = -1;
};

}  // namespace sluice
