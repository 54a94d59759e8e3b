// WebSocketSession: one WebSocket after an accepted handshake (RFC 6455),
// over a WsTransport (ws_transport.h): a whole connection after an
// HTTP/1.1 Upgrade (WsConnectionSession), or one HTTP/2 stream after an
// extended CONNECT (RFC 8441, Http2WsStream). It parses frames natively
// (WsFrameParser), reports whole messages to the embedder's WsDelegate,
// and frames what the embedder sends straight into the transport's
// output queue, corked: every send of a loop turn leaves together.
//
// Backpressure is an explicit answer of every send (WsSendResult): sent
// (the backlog is under the high-water mark), buffered (queued, but the
// backlog is over it: the transport reports a drain to the embedder once
// it falls below), dropped (the backlog was already over max_backpressure: nothing
// queued). The queue is bounded by max_backpressure plus one message.
//
// Pings: answered here (auto_pong). A peer that pings without reading
// would make the pongs a queue without bound (control frames are never
// dropped), so the pongs not yet out are counted and past
// max_pending_auto_pongs the transport is aborted, as ws terminates.
//
// Closing: Close sends a close frame and waits for the peer's (at most
// close_timeout_ms), then ends the transport (FIN, or END_STREAM); the
// peer's close frame is answered with its code. A protocol violation
// sends the close code the parser names and ends the transport. Idle: with
// idle_timeout_ms, a connection silent that long gets a ping, and is
// closed if still silent after as long again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "core/websocket/ws_deflate.h"
#include "core/websocket/ws_deflate_job.h"
#include "core/websocket/ws_frame_parser.h"
#include "core/websocket/ws_transport.h"

namespace sluice {

class OutputQueue;
class ExternalRef;
class WsDelegate;
class WsHub;
struct ServerMetrics;

// What a send did (also the numbers lib/ sees: wire_protocol.h).
enum WsSendResult {
  kWsSent = 0,      // queued; the backlog is under the high-water mark
  kWsBuffered = 1,  // queued; over the high-water mark: a drain follows
  kWsDropped = 2,   // not queued: over max_backpressure
  kWsNotOpen = 3,   // not queued: closing or closed
};

struct WsConfig {
  WsFrameParser::Config parser;
  bool auto_pong = true;
  // ws's maxPendingAutoPongs: automatic pongs queued and not yet out of
  // the process (Written) that a ping may find before the connection is
  // dropped instead (as ws's terminate). 0: no limit.
  uint32_t max_pending_auto_pongs = 60;
  uint32_t idle_timeout_ms = 0;      // 0: none
  uint32_t close_timeout_ms = 30000;
  size_t max_backpressure = 0;       // 0: unbounded
  WsDeflateConfig deflate;           // permessage-deflate, when negotiated
};

class WebSocketSession final : private WsParserListener,
                               private WsDeflateJob::Client {
 public:
  // `transport` outlives the session (it owns it).
  WebSocketSession(WsTransport* transport, const WsConfig& config,
                   std::shared_ptr<WsHub> hub);
  ~WebSocketSession();

  // ---- the transport's calls ----
  // The handshake is done: arms the idle deadline.
  void Start();
  // Bytes the peer sent (may hold any part of any frame).
  void OnRead(const char* data, size_t len);
  // The peer ended its side (EOF, END_STREAM): nothing more can arrive;
  // queued output still goes, then the transport ends.
  void OnPeerEnd();
  // Deadline `kind` (SetDeadline) expired.
  void OnDeadline(WsDeadline kind);
  // The transport is closing: off every topic (no publish reaches it).
  void OnClose();
  WsTransport* transport() const { return t_; }

  // ---- sending (the embedder's calls, any time on the loop thread) ----
  // Starts a data frame of `len` payload bytes: checks state and the
  // backlog, writes the header and returns the queue the caller appends
  // exactly `len` payload bytes to, then calls EndSend. Null (and
  // *result kWsDropped / kWsNotOpen) when nothing may be queued.
  // fin false: a fragment; the next sends continue the message
  // (continuation frames) until one with fin.
  OutputQueue* BeginSend(uint8_t opcode, size_t len, bool fin, int* result);
  // The payload is queued: flush at the end of the loop turn. Returns
  // kWsSent or kWsBuffered.
  int EndSend();
  // Send of bytes the session may copy (control frames, small messages).
  int Send(uint8_t opcode, const char* data, size_t len, bool fin);
  // True when a data message of `len` bytes is to be compressed: deflate
  // negotiated, a whole message (fin, none of ours fragmented), at least
  // the threshold, and the sender asked (`compress`).
  bool WantsCompression(size_t len, bool fin, bool compress) const;
  // Sends one whole data message compressed (RSV1), deflated here (by the
  // hub's shared deflater in the shared mode), or on the threadpool from
  // WsDeflateJob::kAsyncThreshold bytes (the bytes are copied; every later
  // send waits behind the job, in order); falls back to plain when zlib
  // fails.
  int SendCompressed(uint8_t opcode, const char* data, size_t len);
  // A frame built once for many sessions (pub/sub): [data, len) is a whole
  // frame; large frames are referenced (ref retained by the caller per
  // use: Retain is called once per queueing), small ones copied.
  int SendFrame(const char* frame, size_t len, ExternalRef* ref,
                void (*retain)(ExternalRef*));
  // The hub's compressed publish frames are valid here (deflate
  // negotiated under the shared compressor: WsDeflateConfig::shared).
  bool TakesSharedFrames() const { return deflate_ != nullptr && config_.deflate.shared; }
  // Starts the closing handshake with `code` (0: no code) and a reason of
  // at most 123 bytes. kWsNotOpen when a close frame was already sent.
  int Close(int code, const char* reason, size_t len);
  bool open() const { return !close_sent_ && !failed_; }
  // The transport's backlog plus what waits behind a threadpool deflate.
  size_t buffered_amount() const;

  // ---- pub/sub ----
  WsHub* hub() const { return hub_.get(); }
  bool Subscribe(const std::string& topic);
  bool Unsubscribe(const std::string& topic);
  bool IsSubscribed(const std::string& topic) const;
  const std::vector<std::string>& topics() const { return topics_; }

 private:
  // WsParserListener
  bool OnWsMessage(bool binary, bool compressed, const char* data,
                   size_t len) override;
  bool OnWsControl(uint8_t opcode, const char* data, size_t len) override;
  // Answers a ping with a pong, or aborts the transport when
  // max_pending_auto_pongs pongs are still pending. False: aborted.
  bool AutoPong(const char* data, size_t len);
  // Automatic pongs not yet out of the process (forgets those that are).
  size_t PendingAutoPongs();
  // The parser found a violation: close frame with its code, the
  // embedder's OnWsError, end.
  void FailConnection(int code, const char* message);
  // Both close frames were exchanged (or the peer is gone): End (once
  // what waits behind a threadpool deflate is queued).
  void Finish();
  // WsDeflateJob::Client: the job in flight finished (loop thread).
  void OnDeflateDone(WsDeflateJob* job, bool ok) override;
  // Where a frame goes now: the transport's queue, or while a deflate job
  // is in flight the held queue after it (in order). Null when the
  // transport takes no more output.
  OutputQueue* Sink();
  // Starts deflating `input` on the threadpool (job_ set), or when that
  // cannot be queued deflates it inline into the transport's queue.
  void StartDeflate(uint8_t opcode, std::string&& input);
  // Appends one whole compressed message (or plain when !ok) to `q`.
  void AppendMessage(OutputQueue* q, uint8_t opcode, bool ok, std::string* deflated,
                     const std::string& plain);
  // Bytes held behind the job in flight (frames and messages to deflate).
  size_t HeldBytes() const;
  WsDelegate* delegate() const;
  // The server's counters (the transport's Listener's).
  ServerMetrics& metrics() const;

  WsTransport* t_;
  WsConfig config_;
  WsFrameParser parser_;
  std::unique_ptr<WsDeflate> deflate_;  // null unless negotiated
  std::string inflated_;                // a compressed message, inflated
  std::string deflated_;                // a message being sent, deflated
  // The threadpool deflate in flight (it uses deflate_'s deflate stream;
  // inflation on the loop thread goes on meanwhile), and what was sent
  // after it, in order: frames as queued bytes, messages still to deflate
  // as their input. Both empty most of the time.
  struct Held {
    std::unique_ptr<OutputQueue> frames;  // null: a message to deflate
    uint8_t opcode = 0;
    std::string input;
  };
  WsDeflateJob* job_ = nullptr;
  std::deque<Held> held_;
  bool end_pending_ = false;            // Finish waited for the job
  std::shared_ptr<WsHub> hub_;
  std::vector<std::string> topics_;
  // Where each pending automatic pong ends (Appended() once queued), in
  // order; at most max_pending_auto_pongs entries. A vector, not a deque:
  // an empty one allocates nothing (libstdc++'s deque allocates a block
  // up front, on every idle socket).
  std::vector<uint64_t> pong_marks_;
  bool close_sent_ = false;
  bool close_received_ = false;
  bool failed_ = false;
  bool fragmenting_ = false;   // a message sent with fin false is open
  bool ping_outstanding_ = false;
};

}  // namespace sluice
