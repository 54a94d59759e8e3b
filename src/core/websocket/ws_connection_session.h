// WsConnectionSession: what a connection speaks after an accepted HTTP/1.1
// WebSocket Upgrade. Like TunnelSession it replaces the HTTP/1.1 session
// (Connection::ReplaceSession); it is the WsTransport of the whole
// connection for the WebSocketSession it owns: frames go straight into the
// connection's Writer queue (every send of a loop turn leaves in one
// writev), the session's deadlines are the connection's (kDeadlineWsIdle,
// kDeadlineWsClose), its end is a FIN and its abort a destroy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/net/session.h"
#include "core/websocket/ws_session.h"
#include "core/websocket/ws_transport.h"

namespace sluice {

class Connection;

class WsConnectionSession final : public Session, public WsTransport {
 public:
  WsConnectionSession(Connection* conn, const WsConfig& config,
                      std::shared_ptr<WsHub> hub);

  // Session (called by Connection; see session.h).
  int Start() override;
  void OnRead(const char* data, size_t len) override { ws_.OnRead(data, len); }
  void OnEof() override;
  void OnTimeout(int kind) override;
  // Like a tunnel, a WebSocket belongs to its user: never idle for
  // closeIdleConnections; server.close() leaves it open (as ws on node).
  bool IsIdle() const override { return false; }
  void OnServerClosing() override {}
  void OnClose() override { ws_.OnClose(); }
  WebSocketSession* AsWebSocket() override { return &ws_; }

  // WsTransport (see ws_transport.h).
  OutputQueue* Output() override;
  int Queued() override;
  size_t Backlog() const override;
  uint64_t Appended() const override;
  uint64_t Written() const override;
  bool Gone() const override;
  void SetDeadline(WsDeadline kind, uint32_t ms) override;
  void End() override;
  void Abort() override;
  Connection* connection() const override { return conn_; }
  int32_t stream_id() const override { return 0; }

 private:
  Connection* conn_;
  WebSocketSession ws_;
};

}  // namespace sluice
