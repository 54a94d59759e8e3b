// WsDelegate: how a WebSocketSession reports to the embedder (the binding's
// JsWebSocket, or a fuzz harness). Handed out by ServerDelegate::websocket();
// asked for on every event, never cached (environment teardown swaps the
// listener's delegate). All calls happen on the loop thread inside a
// dispatch; `data` is the session's memory, valid only during the call.
// The embedder may call back into the session from any of them (send,
// close, terminate, pause); the connection's memory stays valid until its
// close callback. Per connection the order is the order of the frames, and
// ServerDelegate::OnConnectionClose comes after the last of them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sluice {

class Connection;

class WsDelegate {
 public:
  virtual ~WsDelegate() = default;
  // A whole text (binary false; valid UTF-8 unless skipUTF8Validation) or
  // binary message.
  virtual void OnWsMessage(Connection* c, bool binary, const char* data,
                           size_t len) = 0;
  // A ping (already answered when auto_pong) or a pong.
  virtual void OnWsPing(Connection* c, const char* data, size_t len) = 0;
  virtual void OnWsPong(Connection* c, const char* data, size_t len) = 0;
  // The peer's close frame: its code (1005 when it carried none) and
  // reason. The session answers it (echoing the code) after this returns
  // unless the embedder closed first.
  virtual void OnWsPeerClose(Connection* c, int code, const char* reason,
                             size_t len) = 0;
  // The peer broke the protocol (or a limit): `code` is the close code sent
  // to it (1002, 1007, 1009), `message` says why (static text). The
  // connection then closes.
  virtual void OnWsError(Connection* c, int code, const char* message) = 0;
};

}  // namespace sluice
