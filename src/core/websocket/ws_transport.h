// WsTransport: what a WebSocketSession writes through and closes, the seam
// between the protocol (ws_session.h) and what carries it. Implemented by
// a whole connection after an HTTP/1.1 Upgrade (WsConnectionSession,
// ws_connection_session.h) and by one stream of an HTTP/2 session after
// an RFC 8441 extended CONNECT (Http2WsStream, core/http2/http2_websocket.h).
//
// Input goes the other way: the transport hands what it reads to
// WebSocketSession::OnRead / OnPeerEnd and its deadlines to OnDeadline.
//
// A send costs two calls here (Output, then Queued): frames are appended
// to the transport's OutputQueue in place, so the per-frame path has no
// other indirection. Loop thread only.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sluice {

class Connection;
class OutputQueue;

// The deadlines a session sets (WsTransport::SetDeadline).
enum WsDeadline {
  kWsDeadlineIdle = 0,   // silent peer: ping, then close
  kWsDeadlineClose = 1,  // our close frame sent, the peer's has not come
};

class WsTransport {
 public:
  virtual ~WsTransport() = default;
  // The queue frames are appended to, or null once the transport takes no
  // more output (ending, reset, closed).
  virtual OutputQueue* Output() = 0;
  // Bytes were appended to Output(): they leave at the end of the loop
  // turn. kWsSent, or kWsBuffered when the backlog is at or over the
  // high-water mark (a drain is then reported to the embedder).
  virtual int Queued() = 0;
  // Bytes queued and not yet handed to the kernel (bufferedAmount).
  virtual size_t Backlog() const = 0;
  // Positions in the stream of bytes appended to Output(): how many were
  // ever appended, and how many of those have left the process (taken by
  // the kernel; on HTTP/2, sent as DATA frames, which the peer's window
  // bounds). A frame that ended at Appended() is out once Written() is
  // there: how the session counts pending automatic pongs.
  virtual uint64_t Appended() const = 0;
  virtual uint64_t Written() const = 0;
  // Closed or reset: the session must not touch its peer again (checked
  // after every embedder call, which may have closed it).
  virtual bool Gone() const = 0;
  // Arms (ms > 0) or clears (ms == 0) deadline `kind`; on expiry the
  // transport calls WebSocketSession::OnDeadline(kind).
  virtual void SetDeadline(WsDeadline kind, uint32_t ms) = 0;
  // The session is done: end after the queued output (HTTP/1.1: FIN, then
  // a linger; HTTP/2: END_STREAM).
  virtual void End() = 0;
  // Drop everything now (HTTP/1.1: destroy the connection; HTTP/2:
  // RST_STREAM(CANCEL)).
  virtual void Abort() = 0;
  // The connection carrying it (the embedder's delegate and objects).
  virtual Connection* connection() const = 0;
  // 0 for a connection of its own; the HTTP/2 stream id otherwise.
  virtual int32_t stream_id() const = 0;
};

}  // namespace sluice
