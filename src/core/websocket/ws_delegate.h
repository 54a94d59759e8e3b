// WsDelegate: how a WebSocketSession reports to the embedder (the binding's
// JsWebSocket, or a fuzz harness). Handed out by ServerDelegate::websocket();
// asked for on every event, never cached (environment teardown swaps the
// listener's delegate). All calls happen on the loop thread inside a
// dispatch; `data` is the session's memory, valid only during the call.
// The embedder may call back into the session from any of them (send,
// close, terminate, pause); the session stays valid until its transport's
// close is reported (ServerDelegate::OnConnectionClose for a connection of
// its own, Http2Delegate::OnStreamClose for an HTTP/2 stream). Per session
// the order is the order of the frames, and that close comes after the
// last of them. The embedder finds its object through ws->transport()
// (connection(), stream_id()).
#pragma once

#include <cstddef>
#include <cstdint>

namespace sluice {

class WebSocketSession;

class WsDelegate {
 public:
  virtual ~WsDelegate() = default;
  // A whole text (binary false; valid UTF-8 unless skipUTF8Validation) or
  // binary message.
  virtual void OnWsMessage(WebSocketSession* ws, bool binary, const char* data,
                           size_t len) = 0;
  // A ping (already answered when auto_pong) or a pong.
  virtual void OnWsPing(WebSocketSession* ws, const char* data, size_t len) = 0;
  virtual void OnWsPong(WebSocketSession* ws, const char* data, size_t len) = 0;
  // The peer's close frame: its code (1005 when it carried none) and
  // reason. The session answers it (echoing the code) after this returns
  // unless the embedder closed first.
  virtual void OnWsPeerClose(WebSocketSession* ws, int code, const char* reason,
                             size_t len) = 0;
  // The peer broke the protocol (or a limit): `code` is the close code sent
  // to it (1002, 1007, 1009), `message` says why (static text). The
  // transport then ends.
  virtual void OnWsError(WebSocketSession* ws, int code, const char* message) = 0;
};

}  // namespace sluice
