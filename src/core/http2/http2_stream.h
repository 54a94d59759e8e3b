// Http2Stream and Http2WriteQueue: the per-stream state of an
// Http2Session (see http2_session.h for who calls what). Loop thread only.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "core/compress/compress_stream.h"
#include "core/files/static_files.h"
#include "core/http2/http2_body_source.h"
#include "core/observe/access_log.h"
#include "core/observe/server_metrics.h"
#include "core/http2/http2_delegate.h"
#include "core/stream/header_list.h"
#include "core/net/output_queue.h"

namespace sluice {

class Http2Session;
class Http2PendingCompress;
class Http2WsStream;

// Shares one ExternalRef among several segments: the queue holds one count,
// each OutputQueue segment another; the last Release releases the inner.
class CountedRef final : public ExternalRef {
 public:
  explicit CountedRef(ExternalRef* inner) : inner_(inner) {}
  void Add() { count_++; }
  void Release() override {
    if (--count_ == 0) {
      if (inner_) inner_->Release();
      delete this;
    }
  }

 private:
  ExternalRef* inner_;
  int count_ = 1;
};

// The body JS writes: chunks waiting for nghttp2 to frame them. Copied
// chunks are owned here; referenced ones hold a CountedRef (one count per
// queued chunk and per OutputQueue segment that references it).
class Http2WriteQueue final : public Http2BodySource {
 public:
  ~Http2WriteQueue() override { Clear(); }

  // JS (through the session) → queue: `len` bytes; ref == nullptr: copied
  // now (small writes coalesced), else referenced until written and
  // ref->Release() called exactly once.
  void Push(const char* data, size_t len, ExternalRef* ref);
  // Bytes this queue now owns (compressor output): small ones coalesced
  // with their neighbours, larger ones moved into an OwnedBytes that the
  // DATA frames reference (not copied again).
  void PushOwned(std::string&& bytes);

  size_t size() const { return size_; }
  void set_ended() { ended_ = true; }

  // Http2BodySource
  ssize_t Available(size_t max, bool* eof) override;
  void Emit(OutputQueue& q, size_t len) override;
  void Detach() override { Clear(); }

 private:
  struct Chunk {
    const char* ext = nullptr;
    size_t len = 0;
    size_t off = 0;
    CountedRef* ref = nullptr;  // null: bytes in `own`
    std::string own;
  };
  void Clear();
  std::deque<Chunk> chunks_;
  size_t size_ = 0;
  bool ended_ = false;
};

// Frees a stream's CompressStream (now, or once its job in flight returns;
// the sink is not called after this).
struct CompressStreamDeleter {
  void operator()(CompressStream* c) const { c->Destroy(); }
};

// One stream of an Http2Session: request head/trailer fields being
// received, response state, the body source and request-body flow
// control. Owned by the session (streams_), created when the request's
// HEADERS begin (or by the h2c upgrade) and destroyed when nghttp2 closes
// the stream (OnStreamCloseCb) or the session goes. It is its
// compressor's sink: a CompressStream is owned by its Http2Stream and
// destroyed with it, so a sink call always finds the stream alive.
struct Http2Stream final : public CompressStream::Sink {
  // Both defined in http2_stream.cc, where Http2PendingCompress is
  // complete.
  explicit Http2Stream(Http2Session* s);
  ~Http2Stream() override;
  // CompressStream → stream, on the loop thread when a queued job is done
  // (never from inside Write/Finish): the session queues the output.
  void OnCompressed(CompressStream*, CompressStream::Result& r) override;

  Http2Session* session;
  // The server's open-stream gauge (ServerMetrics::streams_open): the
  // Listener outlives its connections' sessions and so every stream.
  uint64_t* open_count;
  int32_t id = 0;
  // Header fields being received (request head, then trailers): offsets
  // into arena.
  std::string arena;
  struct Field { uint32_t name_off, name_len, value_off, value_len; };
  std::vector<Field> fields;
  size_t header_bytes = 0;
  bool too_large = false;
  bool calm = false;  // reset ENHANCE_YOUR_CALM for its header list
  bool delivered = false;      // reported with OnStream
  bool head_request = false;
  bool remote_ended = false;
  bool client_reset = false;  // the client sent RST_STREAM
  bool embedder_reset = false;  // the embedder reset it (ResetStream)
  bool provoked = false;        // counted against the provoked-reset budget
  // ServerMetrics: the request's method, when its HEADERS began, the
  // response status (0: none sent).
  uint8_t metrics_method = ServerMetrics::kOther;
  // With an access log: the request's part of its line (DeliverHeaders);
  // body_bytes counts the DATA payload sent (SendDataCb), whatever the
  // source (JS, a file, compression).
  std::unique_ptr<AccessLogEntry> log;
  uint64_t start_ns = 0;
  int status = 0;
  // Response.
  bool responded = false;
  bool no_body = false;        // HEAD, 204, 304, or respond(endStream)
  bool ended = false;          // End called
  bool wait_for_trailers = false;
  bool deferred = false;       // the data provider returned DEFERRED
  bool drain_wanted = false;
  bool cancel_submitted = false;  // CancelOpenStreams reset it already
  std::unique_ptr<HeaderList> trailers;  // from End, sent after the body
  std::unique_ptr<Http2WriteQueue> queue;        // JS writes
  Http2BodySource* source = nullptr;          // queue.get() or a native one
  // An accepted extended CONNECT (RFC 8441): also `source`; DATA goes to
  // it, not to the embedder. Cleared with the source.
  Http2WsStream* websocket = nullptr;
  // Response compression: the ordered streaming compressor of Write/End
  // (inline below CompressStream::kInlineBelow, else on the threadpool),
  // or the whole body on the threadpool (RespondCompressed).
  std::unique_ptr<CompressStream, CompressStreamDeleter> compressor;
  // End came while compression work was queued: the body ends (and the
  // trailers go) when the compressor reports `finished`.
  bool end_after_compress = false;
  std::unique_ptr<Http2PendingCompress> pending;
  // Request body bytes received, against maxRequestBodySize; once over it
  // the rest is discarded (Http2Session::RefuseBody).
  uint64_t body_bytes = 0;
  bool body_refused = false;
  bool reset_after_response = false;  // RST_STREAM(reset_code) after END_STREAM
  uint32_t reset_code = 0;            // NGHTTP2_NO_ERROR unless ResetStream(after_end)
  bool end_stream_sent = false;       // our END_STREAM left (OnFrameSendCb)
  bool reset_deferred = false;        // in Http2Session::deferred_resets_
  // Request-body flow control.
  bool read_paused = false;
  size_t unacked = 0;
  // serveStatic: the lookup while the file is opened on the threadpool,
  // with a copy of the request fields in case it falls through to the
  // embedder after all (the stream is not `delivered` until then).
  StaticLookupPtr static_lookup;
  std::vector<std::pair<std::string, std::string>> static_fields;

  std::string_view Name(const Field& f) const {
    return std::string_view(arena.data() + f.name_off, f.name_len);
  }
  std::string_view Value(const Field& f) const {
    return std::string_view(arena.data() + f.value_off, f.value_len);
  }
  Http2Fields Collect() const {
    Http2Fields out;
    out.reserve(fields.size());
    for (const Field& f : fields) out.emplace_back(Name(f), Value(f));
    return out;
  }
  void DetachSource() {
    websocket = nullptr;
    if (source) {
      Http2BodySource* s = source;
      source = nullptr;
      s->Detach();
    }
  }
};

}  // namespace sluice
