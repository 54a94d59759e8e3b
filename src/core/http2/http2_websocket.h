// Http2WsStream: a WebSocket on one HTTP/2 stream (RFC 8441 extended
// CONNECT), the WsTransport of the WebSocketSession it owns.
//
// Output: the session frames into `staged_` (an OutputQueue, as on a
// connection); Queued moves those bytes to the stream's DATA queue
// (`out_`), which nghttp2's data provider pulls through this object's
// Http2BodySource side, so the peer's flow-control window is the
// backpressure: while it is shut the queue grows, sends report buffered
// past the high-water mark, and the stream's drain (Http2Delegate::
// OnStreamDrain) follows once DATA frames took it below. End: END_STREAM
// after the queue; Abort: RST_STREAM(CANCEL).
// Input: the session's DATA callback hands each payload to OnData (parsed
// at once; both windows credited unless the stream is paused, as a
// request body), END_STREAM to OnPeerEnd.
// Deadlines (idle, close) are kept here and checked by the session's
// sweep (Http2Session::CheckWsDeadlines, on the connection's
// kDeadlineWsIdle).
//
// Lifetime: owns itself. The session detaches it when the stream goes
// (Http2BodySource::Detach); it is freed then, or when the outermost call
// into the WebSocketSession returns if the stream went during one (an
// embedder that destroyed the connection from a message handler).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/http2/http2_body_source.h"
#include "core/http2/http2_stream.h"
#include "core/net/output_queue.h"
#include "core/websocket/ws_session.h"
#include "core/websocket/ws_transport.h"

namespace sluice {

class Http2Session;

class Http2WsStream final : public WsTransport, public Http2BodySource {
 public:
  Http2WsStream(Http2Session* session, int32_t id, const WsConfig& config,
                std::shared_ptr<WsHub> hub);

  WebSocketSession* ws() { return &ws_; }

  // ---- the session's calls ----
  // A DATA payload of the stream (valid during the call).
  void OnData(const char* data, size_t len);
  // The peer's END_STREAM.
  void OnPeerEnd();
  // Our GOAWAY went out (server or session closing): the WebSocket is
  // closed with 1001 (going away), the stream ends after the handshake.
  void OnGoingAway();
  // Fires the deadlines due at `now` (uv_now ms); returns the earliest
  // still armed (0: none).
  uint64_t CheckDeadlines(uint64_t now);

  // WsTransport (ws_transport.h).
  OutputQueue* Output() override;
  int Queued() override;
  size_t Backlog() const override { return staged_.size() + out_.size(); }
  uint64_t Appended() const override { return emitted_ + Backlog(); }
  uint64_t Written() const override { return emitted_; }
  bool Gone() const override;
  void SetDeadline(WsDeadline kind, uint32_t ms) override;
  void End() override;
  void Abort() override;
  Connection* connection() const override;
  int32_t stream_id() const override { return id_; }

  // Http2BodySource (http2_body_source.h).
  ssize_t Available(size_t max, bool* eof) override;
  void Emit(OutputQueue& q, size_t len) override;
  void Detach() override;

 private:
  // Counts calls into the WebSocketSession on the stack: Detach inside
  // one defers the delete to the outermost's end.
  struct Busy {
    explicit Busy(Http2WsStream* s) : s_(s) { s_->busy_++; }
    ~Busy();
    Http2WsStream* s_;
  };
  ~Http2WsStream() override = default;
  // staged_ → out_, and the data provider woken.
  void MoveStaged();

  Http2Session* session_;
  int32_t id_;
  OutputQueue staged_;    // frames of this loop turn
  Http2WriteQueue out_;   // waiting for DATA frames (flow control)
  WebSocketSession ws_;
  uint64_t deadlines_[2] = {0, 0};  // uv_now ms; 0: none
  uint64_t emitted_ = 0;  // bytes of out_ sent as DATA frames so far
  int busy_ = 0;
  bool ended_ = false;     // End: END_STREAM after out_
  bool detached_ = false;  // the stream is gone
};

}  // namespace sluice
