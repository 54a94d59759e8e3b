// Http3Session: HTTP/3 (RFC 9114) on one QUIC connection of a
// QuicEndpoint: the control stream (SETTINGS first, GOAWAY on close), the
// QPACK encoder/decoder streams (dynamic table capacity 0: they stay
// idle), request streams read with FrameReader and their field sections
// decoded with QPACK; responses written back as HEADERS / DATA frames.
// Stream events go to an Http3Delegate (the binding), shaped like
// Http2Delegate so the same JS stream objects serve both.
//
// Request bodies in embedder memory (Http3Limits::body_allocator, the
// server's requestBufferAllocator): a request stream with bytes waiting is
// read (SSL_read_ex) straight into a buffer the embedder lends for that
// stream (AcquireBodyBuffer: the stream's "hold"), DATA payloads there are
// delivered as offsets into it, and the embedder gives each one back with
// Consume. QUIC credits the peer's windows as the application reads, so
// "credit on release" means: a stream whose unreleased view bytes reach
// body_stream_limit, or a connection whose streams' reach
// body_connection_limit (HTTP/2's stream and connection windows), is not
// read until Consume brings it under; its unread data then keeps the
// peer's QUIC windows shut. A dry pool stops only the stream that needs
// memory for its body (until RetryBodyBuffers); heads and copies go on.
// The per-stream state is Http3BodyHold (http3_body_hold.h).
//
// serveStatic (core/files/static_files.h): with the TCP server's mounts
// (shared with its Listener), a request whose header section arrives with
// the stream's FIN (no body), method GET or HEAD, under a mount, is
// answered here as on HTTP/2 (TryStatic): the delegate never hears of a
// hit; a miss reaches it as any request (OnStream, end_stream true). A
// FIN that comes in a later pass than the head finds the head delivered
// already: that request goes to the delegate (as an HTTP/2 GET whose
// END_STREAM comes in an empty DATA frame).
//
// Loop thread only; no N-API.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/common/result.h"
#include "core/common/date_cache.h"
#include "core/stream/stream_session.h"
#include "core/compress/compressor.h"
#include "core/files/static_files.h"
#include "core/http3/frames.h"
#include "core/http3/http3_compression.h"
#include "core/http3/http3_body_hold.h"
#include "core/http3/qpack.h"
#include "core/quic/quic_endpoint.h"
#include "core/stream/stream_fields.h"

namespace sluice {

class CompressJob;
class ExternalRef;
class Http3Session;
class Http3PipeBody;
class PipeBodyListener;
class PipeSource;

using Http3Fields = StreamFields;

// How an Http3Session reports request streams. Every call comes from
// inside QuicEndpoint::Process; the delegate may call back into the
// session (Respond, Write, End, Reset) from any of them. Ids are the QUIC
// stream ids of the requests (client-initiated bidirectional: 0, 4, 8...).
// Order per stream: OnStream, OnStreamData in order, OnStreamEnd at most
// once, OnStreamDrain as output progresses, OnStreamWantTrailers at most
// once, OnStreamClose last.
// The embedder's answer to AcquireBodyBuffer.
enum class Http3BufferResult {
  kOk,        // *base/*len describe memory the stream may be read into
  kFallback,  // none this time: read into the session's own buffer (copies)
  kDry,       // a bounded pool is empty: a stream in its body waits
  kError,     // the allocator failed: the connection is closed
};

class Http3Delegate {
 public:
  virtual ~Http3Delegate() = default;
  // A request's header section (pseudo-headers first, as received, names
  // lower-case, validated per RFC 9114 §4.3). end_stream: no body
  // follows. Views valid only during the call.
  virtual void OnStream(Http3Session* s, uint64_t id, const Http3Fields& headers,
                        bool end_stream) = 0;
  // Request body bytes (DATA payload), valid only during the call.
  // offset -1: a copy is due. offset >= 0: the bytes lie at that offset in
  // the buffer AcquireBodyBuffer lent for stream `id` (the current one),
  // so the embedder can hand out a view; it calls Http3Session::Consume(id,
  // len) exactly once when that view is given back (also after the stream
  // closed); until then the bytes count against the stream's and the
  // connection's limits.
  virtual void OnStreamData(Http3Session* s, uint64_t id, const uint8_t* data,
                            size_t len, int64_t offset) = 0;
  // Read memory for request stream `id` (only with
  // Http3Limits::body_allocator): asked from inside a pass, before a read,
  // when the stream has bytes waiting and holds no buffer. kOk: *base /
  // *len is embedder memory the session reads this stream into until
  // ReleaseBodyBuffer(id); the embedder keeps it alive until then. May run
  // user code (an allocator); it may reset streams but must not free the
  // session (QuicConnection::Close is deferred anyway).
  virtual Http3BufferResult AcquireBodyBuffer(Http3Session* s, uint64_t id, size_t size,
                                              uint8_t** base, size_t* len) {
    (void)s;
    (void)id;
    (void)size;
    (void)base;
    (void)len;
    return Http3BufferResult::kFallback;
  }
  // The session no longer reads into stream `id`'s buffer (full, no views
  // cut from it, or the stream is done); views already handed out stay
  // valid, they are the embedder's. Inside a pass, before OnStreamClose of
  // the stream when there is one, and for every held buffer when the
  // connection closes.
  virtual void ReleaseBodyBuffer(Http3Session* s, uint64_t id) {
    (void)s;
    (void)id;
  }
  // The request body ended (trailers may be empty).
  virtual void OnStreamEnd(Http3Session* s, uint64_t id, const Http3Fields& trailers) = 0;
  // Queued output of `id` fell below the high-water mark after a write
  // reported backpressure.
  virtual void OnStreamDrain(Http3Session* s, uint64_t id) = 0;
  // A response begun with wait_for_trailers has its whole body framed
  // (End, or the file or compressed body finished): the stream stays open
  // until SendTrailers (or a reset). From the connection's pass, never
  // from inside the End / Respond call that ended the body.
  virtual void OnStreamWantTrailers(Http3Session* s, uint64_t id) = 0;
  // The stream is done (response sent and request read, or reset by
  // either side: code is the HTTP/3 error code, 0x100 on a clean end).
  virtual void OnStreamClose(Http3Session* s, uint64_t id, uint64_t code) = 0;
  // The connection is gone; every stream was reported closed before.
  virtual void OnSessionClose(Http3Session* s) = 0;
};

struct Http3Limits {
  uint64_t max_field_section_size = 64 * 1024;  // request headers (and SETTINGS)
  size_t high_water = 64 * 1024;                // per stream queued output
  // Request bodies in embedder memory (see the file comment).
  bool body_allocator = false;
  size_t body_buffer_size = 64 * 1024;     // asked of the allocator
  size_t body_buffer_min_free = 8 * 1024;  // a hold with less room left is released
  uint64_t body_stream_limit = 1024 * 1024;          // unreleased view bytes per stream
  uint64_t body_connection_limit = 16 * 1024 * 1024;  // per connection, closed streams' too
};

class Http3Session final : public QuicConnectionHandler,
                           public StreamSession,
                           public Http3Compression::Owner,
                           private StaticLookupClient {
 public:
  // `static_files`: serveStatic mounts to answer from (may be null or
  // empty: every request goes to the delegate). `date`: the Date value of
  // their answers (the embedder's cache, outliving the session; null: no
  // Date).
  Http3Session(QuicConnection* conn, Http3Delegate* delegate, const Http3Limits& limits,
               std::shared_ptr<StaticFiles> static_files = nullptr, DateCache* date = nullptr);
  ~Http3Session() override;

  // HTTP/3's error codes for what the QUIC endpoint does on its own
  // (QuicEndpointOptions::app): H3_NO_ERROR, H3_INTERNAL_ERROR,
  // H3_REQUEST_CANCELLED, H3_REQUEST_REJECTED.
  static QuicAppCodes QuicCodes();

  // StreamSession (stream_session.h): the HeaderList forms of the
  // field-list calls below (Respond's flags: end = kH2EndStream,
  // wait_for_trailers = kH2WaitForTrailers); ResetStream maps the HTTP/2
  // code (H3CodeOfHttp2) and ignores after_end (QUIC delivers what was
  // sent before the reset).
  static constexpr StreamProtocol kProtocol = StreamProtocol::kHttp3;
  SLUICE_STREAM_SESSION_OVERRIDES

  // The response head: ":status" first (names lower-case, no
  // connection-specific fields). end: no body (the stream ends).
  // wait_for_trailers: the end of the body (End without trailers, or
  // `end` here) does not end the stream; OnStreamWantTrailers follows and
  // SendTrailers ends it.
  int Respond(uint64_t id, const http3::HeaderField* fields, size_t n, bool end,
              bool wait_for_trailers = false);
  // A 1xx head.
  int Informational(uint64_t id, const http3::HeaderField* fields, size_t n);
  // A DATA frame of `len` bytes (copied into the stream's output), or,
  // after StartCompression, the bytes handed to the compressor. `ref`
  // (may be null; taken in every case) keeps the bytes alive when the
  // compressor queues them for the threadpool (else they are copied).
  int Write(uint64_t id, const uint8_t* data, size_t len, ExternalRef* ref = nullptr);
  // Trailers (may be none) and the end of the response; behind queued
  // compression work, once it is done.
  int End(uint64_t id, const http3::HeaderField* trailers, size_t n);
  // After OnStreamWantTrailers: the trailing HEADERS (none: an empty
  // section is not sent) and the FIN. kResultInvalid before it or twice.
  int SendTrailers(uint64_t id, const http3::HeaderField* trailers, size_t n);
  // ---- response compression (lib/ decides; http3_compression.h) ----
  // StartCompression: after Respond, the rest of the body (Write,
  // FlushCompression, End) goes through a streaming compressor.
  // FlushCompression: ordered after the writes before it.
  // Head + whole body compressed by `job` (taken in every case) + end:
  // content-length is the compressed size. Below
  // CompressJob::kAsyncThreshold compressed now; larger bodies on the
  // threadpool, and nothing of the response (HEADERS included) is written
  // until the job is done. `trailers` follow the body.
  int RespondCompressed(uint64_t id, std::vector<http3::HeaderField>&& head, CompressJob* job,
                        std::vector<http3::HeaderField>&& trailers, bool wait_for_trailers);
  // RESET_STREAM with `code` (and the request side abandoned).
  int Reset(uint64_t id, uint64_t code);
  // StartPipeBody: the rest of the response after Respond (without end): the bytes of
  // `source` (a FileSource, read off the loop) as DATA frames, then the
  // end (http3_pipe_body.h). Takes `source` in every case. Returns
  // kResultOk (the body runs; `listener`, if any, hears OnPipeBodyDone
  // exactly once: 0 when the last byte and the FIN were handed to QUIC, a
  // UV_E* error when the source failed — the stream is reset with
  // H3_INTERNAL_ERROR first, never ended short — or UV_ECANCELED when the
  // stream or the connection went away first), kResultNoBody (HEAD, 204,
  // 304: nothing to send, the caller ends the stream), or an error
  // (kResultClosed, kResultHeadersNotSent, kResultEnded...).
  // Http3PipeBody → session (any time, also outside a pass): the body of
  // `id` can go on; it is pulled on the connection's next pass.
  void WakeBody(uint64_t id);
  // Pause: unread data keeps QUIC's stream flow-control window shut
  // (backpressure).
  // Consume: `n` bytes of stream `id` delivered as a view (OnStreamData with an
  // offset) were given back: they no longer count against the stream's or
  // the connection's limit, and a stream held at a limit is read again on
  // the next pass. From JS at any time (a release, a collected chunk),
  // also after the stream closed.
  // A dry pool has memory again: the streams that waited ask again on the
  // next pass.
  void RetryBodyBuffers();
  // GOAWAY naming the first request not to be processed; the connection
  // then closes once the open requests finish.
  void Goaway();
  // Closes the connection now (H3_NO_ERROR, or `code`).
  void Terminate(uint64_t code);
  QuicConnection* connection() const { return conn_; }

  void* user_data = nullptr;  // the binding's handle

  // QuicConnectionHandler
  void OnConnectionReady() override;
  void OnStreamOpen(QuicStream* s) override;
  void OnStreamReadable(QuicStream* s) override;
  void OnStreamWritable(QuicStream* s) override;
  void OnStreamStopped(QuicStream* s, uint64_t code) override;
  void OnPass() override;
  void OnGoingAway() override;
  bool Busy() const override;
  void OnConnectionClose(uint64_t error_code, bool transport) override;
  // Http3Compression::Owner
  void OnCompressionReady(uint64_t id) override;

 private:
  struct Request;
  struct UniIn;
  class RequestFrames;
  class ControlFrames;

  Request* Find(uint64_t id) const;
  // The endpoint's counters (QuicEndpoint::metrics).
  ServerMetrics& metrics() const;
  // A response head's :status into `r` (for the metrics).
  static void NoteStatus(Request* r, const http3::HeaderField* fields, size_t n);
  // Counts `r`'s response (once; one without a head is not counted).
  void RecordDone(Request* r);
  // `r` (from Find) can still be answered: known, not closed, and the
  // session not closing.
  bool Writable(const Request* r) const;
  void ReadRequest(Request* r);
  // Where the next read of `r` lands: its hold
  // (acquired now if needed), or `stack`. false: not now (paused at a
  // limit, waiting for memory, or the request/connection went away).
  bool ReadTarget(Request* r, uint8_t* stack, size_t stack_len, uint8_t** dst, size_t* cap);
  // After a read into the hold was parsed: keeps it only while the body
  // goes on, views were cut from it and min_free bytes are left.
  void AfterHoldRead(Request* r);
  // Drops the hold of `r` (ReleaseBodyBuffer), if any.
  void ReleaseHold(Request* r);
  // The peer reset `r` while its bytes were left unread (paused, or held
  // at a limit or by a dry pool): closes it and retires the connection
  // (GOAWAY), whose QUIC window lost those bytes' credit.
  void ResetWhileHeldBack(Request* r);
  // How many more view bytes `r` may be lent before a limit is reached.
  uint64_t BodyBudget(const Request* r) const;
  void ReadUni(QuicStream* s, UniIn* u);
  http3::H3Error OnHead(Request* r);
  void HeadTooLarge(Request* r);
  void DeliverEnd(Request* r);
  // serveStatic: true when a mount took the bodiless request `r` (whose
  // head is decoded, not delivered, and whose FIN was read): answered
  // (`r` may be closed now), or a lookup is pending in r->static_lookup.
  // Inside a pass.
  bool TryStatic(Request* r);
  // StaticLookupClient (tag: the QUIC stream id). Inside TryStatic, or
  // from the lookup's threadpool completion on the loop, outside any pass.
  // The answer: the response is written now (QUIC's writes ask the
  // endpoint for a flush; a file body is pulled from the next pass).
  void OnStaticAnswer(uint64_t tag, StaticAnswer& answer) override;
  // Not ours after all (only after a pending lookup): the head goes to the
  // delegate from the next pass (Attend), inside the endpoint's dispatch.
  void OnStaticFallThrough(uint64_t tag) override;
  void Flush(Request* r);
  void MaybeFinish(Request* r);
  void PumpBody(Request* r);
  bool WriteBody(Request* r, const uint8_t* data, size_t len);
  void FinishBody(Request* r, int status);
  void WriteHead(Request* r, const http3::HeaderField* fields, size_t n, bool end);
  void AppendData(Request* r, const uint8_t* data, size_t len);
  // The body is complete: trailers (or, with wait_for_trailers, the
  // OnStreamWantTrailers due) and the FIN queued; the caller flushes.
  void EndOutput(Request* r, const http3::HeaderField* trailers, size_t n);
  bool Backlogged(const Request* r) const;
  // Schedules Attend(r) for the next pass (from outside a pass too).
  void Notify(Request* r);
  void Attend(Request* r);
  void CompressionReady(Request* r);
  void SendCompressed(Request* r, std::vector<http3::HeaderField>& head, CompressJob* job,
                      std::vector<http3::HeaderField>& trailers);
  void DropBody(Request* r);
  void CloseRequest(Request* r, uint64_t code);
  void ConnectionError(http3::H3Error e, const char* why);
  void AppendFrame(std::string* out, uint64_t type, const std::string& payload);
  void SendOnStream(QuicStream* s, std::string* pending);

  QuicConnection* conn_;
  Http3Delegate* delegate_;
  Http3Limits limits_;
  std::shared_ptr<StaticFiles> static_files_;  // serveStatic mounts, or null
  DateCache* date_ = nullptr;                   // their answers' Date, or null
  QuicStream* control_ = nullptr;
  std::string control_out_;
  QuicStream* qpack_enc_ = nullptr;
  QuicStream* qpack_dec_ = nullptr;
  std::map<uint64_t, std::unique_ptr<Request>> requests_;
  std::vector<std::unique_ptr<Request>> dead_;  // closed, freed on the next entry
  std::map<QuicStream*, std::unique_ptr<UniIn>> uni_in_;
  std::vector<uint64_t> woken_;  // requests whose file body can go on
  std::vector<uint64_t> notify_;  // requests with compression output or trailers due
  bool have_peer_control_ = false;
  bool have_peer_qpack_encoder_ = false;
  bool have_peer_qpack_decoder_ = false;
  bool going_away_ = false;
  bool closed_ = false;
  uint64_t max_request_id_seen_ = 0;
  bool any_request_ = false;
  uint64_t held_total_ = 0;     // view bytes not yet consumed, every stream's
  bool body_stalled_ = false;   // a stream was left unread at a limit
  bool body_failed_ = false;    // the allocator threw: closing, no more asks
};

}  // namespace sluice
