// Http2Session: HTTP/2 (h2c) on one connection, over an nghttp2 server
// session. Created by Connection when the client preface arrives (prior
// knowledge) or by an h2c upgrade; replaces the Http1Session before any
// HTTP/2 byte is parsed.
//
// Input: Connection::OnReadCb → OnRead → FramePrescan (frame_prescan.h),
// which feeds nghttp2_session_mem_recv and stops in front of the frames
// OnFrame decides about; nghttp2's callbacks report streams to the
// Http2Delegate.
// Output: corked. Responses, writes and nghttp2's own frames (SETTINGS ACK,
// WINDOW_UPDATE...) only mark the connection dirty; Connection::Flush calls
// OnFlush, which runs nghttp2_session_send once: control frames are copied
// into the Writer's queue, DATA frames are written with
// NGHTTP2_DATA_FLAG_NO_COPY (the 9-byte header inline, the payload as an
// external segment referencing the producer's memory). Frames are produced
// only while the writer's backlog is under a bound; the writer's completion
// restarts them (OnWritesDone).
//
// Flow control follows consumption. Without embedder read memory the
// connection window is replenished as DATA arrives, each stream's window
// when the embedder has consumed the stream's data (a paused stream
// backpressures its sender). With it (options.body_allocator), reads land
// in the embedder's buffers (ReadBuffers, kPrefer: a dry pool copies
// rather than stopping the connection's control frames), DATA payloads
// there are delivered as offsets into them, and both windows are credited
// only when the embedder gives those bytes back (Consume): a consumer that
// keeps its chunks holds back the peer, so the memory one session can pin
// is bounded by its connection window.
//
// Files, one concern each: http2_session.cc (lifecycle, input and output,
// nghttp2 callbacks, events), http2_frame_rules.cc (OnFrame: RFC 9113
// answers ahead of nghttp2), http2_respond.cc (the stream API below),
// http2_compression.cc (response compression glue); the per-stream state
// is Http2Stream (http2_stream.h), body producers implement
// Http2BodySource (http2_body_source.h).
#pragma once

#include <nghttp2/nghttp2.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/common/result.h"
#include "core/compress/compress_stream.h"
#include "core/files/static_files.h"
#include "core/http2/client_stream_ids.h"
#include "core/http2/frame_prescan.h"
#include "core/http2/http2_body_source.h"
#include "core/http2/http2_delegate.h"
#include "core/http2/reset_budget.h"
#include "core/net/output_queue.h"
#include "core/net/session.h"
#include "core/observe/access_log.h"
#include "core/observe/server_metrics.h"
#include "core/stream/stream_session.h"

namespace sluice {

class CompressJob;
class Connection;
class HeaderList;
class Http2PendingCompress;
class Http2WriteQueue;
class Http2WsStream;
struct Http2Stream;
struct WsConfig;
class WebSocketSession;
class WsHub;
struct CompressParams;
class PipeBodyListener;
class PipeSource;

// An interface id as HTTP/2's (ids above 2^31 - 1 name no stream).
inline int32_t Http2StreamId(uint64_t id) {
  return id > 0x7fffffffu ? -1 : static_cast<int32_t>(id);
}

class Http2Session final : public Session, public StreamSession, private FramePrescan::Sink,
                           private StaticLookupClient {
 public:
  explicit Http2Session(Connection* conn);
  ~Http2Session() override;

  // Sends the server SETTINGS (and the connection window update). Returns
  // 0 or an nghttp2 error. Called once by the creator before input.
  int Start() override;
  // h2c upgrade (RFC 7540 3.2): `settings` is the decoded HTTP2-Settings
  // header; stream 1 is the upgrade request, reported with OnStream.
  int StartUpgrade(const uint8_t* settings, size_t len, bool head_request,
                   const Http2Fields& request_headers);

  // Session
  ReadBuffers::Want ReadMemory() const override;
  bool KeepsReadBuffer() const override;
  void OnRead(const char* data, size_t len) override;
  void OnEof() override;
  void OnWritesDone() override;
  void OnTimeout(int kind) override;
  bool IsIdle() const override;
  void OnServerClosing() override;
  void OnFlush() override;
  void OnClose() override;

  // ---- StreamSession (stream_session.h; binding; loop thread, any
  // context). HTTP/2's particulars: Write copies below kCopyBelow and
  // discards a body that must not be sent (HEAD, 204, 304) with
  // kResultOk. StartCompression is allowed before Respond (the compat API
  // decides before it sends the head); the compressor (CompressStream:
  // small writes inline, the others on the threadpool, one job at a
  // time) is freed once End's output is out or the stream goes away, and
  // its pending input counts for NeedsDrain. RespondCompressed submits
  // nothing (not even HEADERS) until a threadpool job is done and resets
  // the stream (INTERNAL_ERROR) if it fails. ResetStream's after_end: a
  // stream whose END_STREAM has not left yet is reset after it (node's
  // close(code) after respond()). Pause holds back WINDOW_UPDATEs;
  // Consume credits the connection window at once, the stream's unless
  // paused. StartPipeBody: an Http2PipeBody (http2_pipe_body.h) after
  // Respond without kH2EndStream, nothing written yet.
  static constexpr StreamProtocol kProtocol = StreamProtocol::kHttp2;
  SLUICE_STREAM_SESSION_OVERRIDES
  // Native body producers: `source` becomes the stream's body (after
  // Respond without kH2EndStream and before any write). The session calls
  // source->Detach() when the stream goes away.
  int AttachBodySource(int32_t id, Http2BodySource* source);
  // A producer that answered kBodyWouldBlock has data now.
  void ResumeData(int32_t id);
  // Tells `listener` its body finished with `status`, from a dispatch
  // after the current nghttp2 call (used by Http2PipeBody).
  void DeferBodyDone(PipeBodyListener* listener, int status);
  // ---- WebSockets over HTTP/2 (RFC 8441; http2_websocket.h) ----
  // Accepts the extended CONNECT of stream `id`: `headers` (:status 200
  // first) go without END_STREAM and the stream carries a WebSocket from
  // now on (its DATA no longer reaches OnStreamData). kResultOk or an
  // error (the stream is gone, or was responded to).
  int AcceptWebSocket(int32_t id, HeaderList& headers,
                      const WsConfig& config, std::shared_ptr<WsHub> hub);
  // The WebSocket of stream `id`, or null.
  WebSocketSession* WebSocketOf(int32_t id);
  // Bytes of stream `id` that reached the embedder as body before
  // AcceptWebSocket (a client that sent frames while the handshake was
  // decided), parsed as the WebSocket's input now. False when the stream
  // carries no WebSocket. The WebSocket's handlers may reset the stream.
  bool FeedWebSocket(int32_t id, const char* data, size_t len);
  // A WebSocket stream's deadline at `at` (uv_now ms): the connection's
  // kDeadlineWsIdle is brought forward to it if later.
  void ArmWsDeadline(uint64_t at);
  // GOAWAY(NO_ERROR) now; open streams finish, then the connection closes
  // (WebSocket streams are closed with 1001 first). `opaque` (may be
  // null): the GOAWAY's additional debug data, copied by nghttp2.
  void Shutdown(const uint8_t* opaque = nullptr, size_t opaque_len = 0);
  // ---- session control (node:http2's Http2Session methods) ----
  // PING with 8 bytes of payload (copied); the peer's ack is reported as
  // Http2Delegate::OnPing(ack = true).
  int SubmitPing(const uint8_t* payload);
  // SETTINGS with `n` entries (copied); the peer's ack is reported as
  // Http2Delegate::OnSettings(ack = true).
  int SubmitSettings(const nghttp2_settings_entry* iv, size_t n);
  // SETTINGS value `id` (1..8): ours as the peer acknowledged them, or the
  // peer's as received (RFC 9113 defaults before any).
  uint32_t Setting(int32_t id, bool remote) const;
  // The connection window we advertise (a WINDOW_UPDATE when it grows).
  int SetLocalWindowSize(int32_t size);
  // ALTSVC (RFC 7838) on stream 0 with `origin`, or on stream `id` with an
  // empty origin; ORIGIN (RFC 8336) with the origins joined by '\n'.
  int SubmitAltsvc(int32_t id, std::string_view origin, std::string_view value);
  int SubmitOrigin(std::string_view origins_lines);
  // node's session.state, in its order: effectiveLocalWindowSize,
  // effectiveRecvDataLength, nextStreamID, localWindowSize,
  // lastProcStreamID, remoteWindowSize, outboundQueueSize,
  // deflateDynamicTableSize, inflateDynamicTableSize.
  static constexpr int kStateFields = 9;
  // Stream `id`'s receive window as we advertise it (node's
  // stream.state.localWindowSize); 0 for a stream nghttp2 no longer holds.
  int32_t StreamLocalWindowSize(int32_t id) const;
  void State(double out[kStateFields]) const;
  // GOAWAY with `code` and close once it is written.
  void Terminate(uint32_t code);

  Connection* connection() const { return conn_; }
  size_t stream_count() const { return streams_.size(); }
  // The embedder's per-session object (the binding's JsHttp2Session).
  void* user_data = nullptr;

 private:
  // Units of this session in files of their own: the per-stream state
  // (http2_stream.h) and the compression glue (http2_compression.h) call
  // back into it (OnStreamCompressed, OnCompressDone).
  friend struct Http2Stream;
  friend class Http2PendingCompress;
  using Stream = Http2Stream;
  using WriteQueue = Http2WriteQueue;
  using PendingCompress = Http2PendingCompress;
  struct Event {
    enum Kind { kDrain, kWantTrailers, kClose, kBodyDone, kFrameError } kind;
    int32_t id;
    uint32_t code;
    PipeBodyListener* listener;  // kBodyDone
    int status;                  // kBodyDone; kFrameError: the frame type
  };

  // nghttp2 callbacks: static trampolines, user_data is the session. The
  // output ones run inside nghttp2_session_send (SendPending, from
  // OnFlush), the input ones inside nghttp2_session_mem_recv (Feed, from
  // OnRead inside the connection's dispatch). None may call send or
  // mem_recv again; embedder calls made from them may re-enter the stream
  // API (submits only), and events for the embedder raised while sending
  // wait in events_ until send returns.
  //
  // A control frame or HEADERS block of `len` bytes, nghttp2's memory
  // (copied into the writer's queue); WOULDBLOCK over the control backlog.
  static ssize_t SendCb(nghttp2_session*, const uint8_t* data, size_t len,
                        int flags, void* user);
  // A DATA frame of a stream whose provider set NO_COPY: the 9-byte header
  // (nghttp2's memory, copied) and `len` payload bytes taken from the
  // stream's body source (referenced); WOULDBLOCK over the data backlog.
  static int SendDataCb(nghttp2_session*, nghttp2_frame* frame,
                        const uint8_t* framehd, size_t len,
                        nghttp2_data_source* source, void* user);
  // A frame left (inside send): after the last frame of a response to a
  // refused body (RefuseBody), RST_STREAM(NO_ERROR) tells the client to
  // stop sending it.
  static int OnFrameSendCb(nghttp2_session*, const nghttp2_frame* frame,
                           void* user);
  // A frame nghttp2 could not send (inside send). A header block over
  // nghttp2's 64 KiB send limit (a head or trailers) would otherwise leave
  // the stream waiting forever: it is reset FRAME_SIZE_ERROR, as node
  // does, and the embedder hears OnStreamFrameError first.
  static int OnFrameNotSendCb(nghttp2_session*, const nghttp2_frame* frame,
                              int lib_error_code, void* user);
  // The data provider: how many body bytes (<= len) the stream's source
  // has now (nothing is copied into `buf`: NO_COPY), EOF and trailers, or
  // DEFERRED until ResumeData/Write/End resume it.
  static ssize_t ReadCb(nghttp2_session*, int32_t id, uint8_t* buf,
                        size_t len, uint32_t* data_flags,
                        nghttp2_data_source* source, void* user);
  // A HEADERS frame begins: creates the Stream of a request (or refuses it
  // after our GOAWAY), resets the field arena for trailers.
  static int OnBeginHeadersCb(nghttp2_session*, const nghttp2_frame* frame,
                              void* user);
  // One decoded header field (nghttp2's memory, valid during the call):
  // appended to the stream's arena, bounded by maxHeaderSize.
  static int OnHeaderCb(nghttp2_session*, const nghttp2_frame* frame,
                        const uint8_t* name, size_t namelen,
                        const uint8_t* value, size_t valuelen, uint8_t flags,
                        void* user);
  // A whole frame was received: delivers a request head (OnStream), the
  // end or trailers (OnStreamEnd), notes client resets, reports GOAWAY.
  // Calls the embedder; fails the parse if it destroyed the connection.
  static int OnFrameRecvCb(nghttp2_session*, const nghttp2_frame* frame,
                           void* user);
  // DATA payload bytes of stream `id`, pointing into the input given to
  // mem_recv (valid during the call): delivered (OnStreamData; as an
  // offset when they lie in the embedder's read buffer, which then stays
  // held, ReadBuffers::NoteViewCut) and the windows credited as flow
  // control says (Pause; Consume for views).
  static int OnDataChunkRecvCb(nghttp2_session*, uint8_t flags, int32_t id,
                               const uint8_t* data, size_t len, void* user);
  // nghttp2 closed stream `id` (either side, or the session ended): the
  // Stream is freed, its source detached, the embedder told (deferred to
  // events_ while sending).
  static int OnStreamCloseCb(nghttp2_session*, int32_t id,
                             uint32_t error_code, void* user);
  // nghttp2 found a received non-DATA frame invalid and answers it with a
  // stream error (or a connection error): a stream error on a stream the
  // embedder was given counts against the provoked-reset budget now,
  // before the rest of the input is parsed.
  static int OnInvalidFrameRecvCb(nghttp2_session*, const nghttp2_frame* frame,
                                  int lib_error_code, void* user);
  // nghttp2 found a received field it would drop (a name or value with
  // bytes HTTP forbids): answered NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE,
  // so nghttp2 resets the stream instead. Inside mem_recv; no re-entry.
  static int OnInvalidHeaderCb(nghttp2_session*, const nghttp2_frame* frame,
                               const uint8_t* name, size_t namelen,
                               const uint8_t* value, size_t valuelen,
                               uint8_t flags, void* user);
  static nghttp2_session_callbacks* Callbacks();

  // The shared request rules (core/stream/request_rules.h) on the head /
  // trailers nghttp2 accepted and OnHeaderCb collected into `st`.
  bool RequestAllowed(const Stream& st) const;
  static bool TrailersAllowed(const Stream& st);
  // What the access log needs of a request, from its head (the peer's
  // address formatted once per connection, in log_peer_).
  std::unique_ptr<AccessLogEntry> NewLogEntry(const Http2Fields& fields);
  // Counts a refusal (ServerMetrics::refused) for HTTP/2.
  void Refused(ServerMetrics::Refusal reason);
  // A request the rules refuse: RST_STREAM(PROTOCOL_ERROR); the embedder
  // never hears of a refused head (it gets OnStreamClose for trailers).
  void RefuseMalformed(Stream* st);

  // A reset of stream `id` (`st` when sluice holds it, else null) that a
  // client's frame provoked, not the embedder: counted once per stream
  // (Stream::provoked); past the budget the session ends with
  // GOAWAY(ENHANCE_YOUR_CALM) and parses no more input.
  void NoteProvokedReset(Stream* st);

  // FramePrescan::Sink (from OnRead's Scan): Feed hands input to
  // nghttp2_session_mem_recv; OnFrame decides about a frame before nghttp2
  // sees it (RFC 9113 rules nghttp2 keeps only in some versions), may
  // submit RST_STREAM or terminate the session.
  bool Feed(const uint8_t* data, size_t len) override;
  FramePrescan::Action OnFrame(const PrescanFrame& f) override;

  int Init();
  Stream* Find(int32_t id);
  // The stream of a response call: kResultOk with *st when it exists and
  // its head was sent (`responded`) or not (!`responded`), as the call
  // needs; otherwise kResultClosed, kResultNoRequest, kResultHeadersNotSent
  // or kResultHeadersSent (*st may then be null).
  int StreamFor(int32_t id, bool responded, Stream** st);
  int SubmitWithBody(Stream* st, HeaderList& headers);
  // Respond's work after the `responded` check (RespondCompressed submits
  // a response whose stream was marked responded when the job started).
  int SubmitResponse(Stream* st, int status, HeaderList& headers,
                     uint32_t flags);
  // Respond + the job's output + End (RespondCompressed, inline or when
  // the threadpool work is done).
  int FinishCompressed(Stream* st, int status, HeaderList& headers,
                       uint32_t flags, CompressJob* job,
                       HeaderList* trailers);
  // PendingCompress → session, on the loop thread once the work is done.
  void OnCompressDone(int32_t id, CompressJob* job, int status);
  // A stream's CompressStream → session (via Stream, its sink), on the
  // loop thread once a queued job is done: its output joins the stream's
  // queue in order; `finished` ends a body End left waiting; an error
  // resets the stream.
  void OnStreamCompressed(Stream* st, CompressStream::Result& r);
  // The stream's output backlog calls for backpressure (NeedsDrain).
  bool Backlogged(Stream* st) const;
  void DeliverHeaders(Stream* st, bool end_stream);
  // serveStatic (core/files/static_files.h): true when a mount took the
  // stream's request (answered, or a lookup is pending).
  bool TryStatic(Stream* st, const Http2Fields& fields);
  // StaticLookupClient (tag: the stream id).
  void OnStaticAnswer(uint64_t tag, StaticAnswer& answer) override;
  void OnStaticFallThrough(uint64_t tag) override;
  // The request body of `st` passed maxRequestBodySize: 413 unless the
  // embedder responded, RST_STREAM(NO_ERROR) once the response is complete
  // (OnFrameSendCb), then OnStreamBodyTooLarge.
  // Inside mem_recv; `st` may be gone afterwards.
  void RefuseBody(Stream* st);
  void DeliverEnd(Stream* st);
  // On the peer's EOF: submits RST_STREAM(CANCEL) for every open stream
  // (none can finish: no request body, WINDOW_UPDATE or reset can come).
  void CancelOpenStreams();
  // Runs nghttp2_session_send; delivers the events it produced.
  void SendPending();
  void DeliverEvents();
  void MaybeFinish();
  // The last_stream_id for a terminating GOAWAY.
  int32_t TerminateLastId() const;
  void UpdateIdleDeadline();
  // The connection's kDeadlineWsIdle passed: each WebSocket stream's due
  // deadlines fire, the next one is armed.
  void CheckWsDeadlines();
  bool dead() const;

  Connection* conn_;
  nghttp2_session* session_ = nullptr;
  std::unordered_map<int32_t, std::unique_ptr<Stream>> streams_;
  std::vector<Event> events_;
  size_t high_water_mark_;
  bool sending_ = false;        // inside nghttp2_session_send
  bool send_blocked_ = false;   // send_data stopped on the writer backlog
  bool in_flush_ = false;       // inside OnFlush
  bool goaway_ = false;         // Shutdown/Terminate called
  // The last_stream_id of Shutdown's GOAWAY: streams above it are refused.
  int32_t goaway_last_id_ = INT32_MAX;
  bool fatal_ = false;          // a connection error: close once written
  ClientStreamIds client_ids_;  // skipped and client-closed stream ids
  // Server resets provoked by the client (ResetBudget; the defaults leave
  // nghttp2's own rapid-reset limit, burst 1000 at 33/s, to fire later).
  ResetBudget provoked_resets_{kProvokedResetBurst, kProvokedResetsPerSecond};
  static constexpr uint32_t kProvokedResetBurst = 100;
  static constexpr uint32_t kProvokedResetsPerSecond = 10;
  FramePrescan prescan_;        // frame layout of the input, across reads
  size_t invalid_frames_ = 0;   // against http2_max_invalid_frames
  // Past maxSessionInvalidFrames: once the GOAWAY is out the connection is
  // destroyed rather than ended with a linger (as node destroys its
  // socket): a peer flooding invalid frames is not read further.
  bool destroy_after_flush_ = false;
  bool start_reported_ = false;  // OnSessionStart was called
  // Embedder resets of responded streams, submitted by OnFlush after the
  // output already queued is framed (ResetStream).
  std::vector<int32_t> deferred_resets_;
  bool eof_ = false;
  bool closed_ = false;         // the connection is closing
  uint64_t ws_deadline_ = 0;    // kDeadlineWsIdle armed for (uv_now ms)
  std::string log_peer_;
};

}  // namespace sluice
