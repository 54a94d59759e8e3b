#include "core/websocket/ws_connection_session.h"

#include "core/net/connection.h"
#include "core/net/listener.h"
#include "core/net/output_queue.h"

namespace sluice {

WsConnectionSession::WsConnectionSession(Connection* conn, const WsConfig& config,
                                         std::shared_ptr<WsHub> hub)
    : conn_(conn), ws_(this, config, std::move(hub)) {}

int WsConnectionSession::Start() {
  // The HTTP deadlines of the request that upgraded are over.
  for (int k = 0; k < kDeadlineCount; k++) {
    conn_->ClearDeadline(static_cast<DeadlineKind>(k));
  }
  // A WebSocket mostly sits idle between messages: its output buffers are
  // not kept between bursts (memory per idle socket, docs/websocket.md).
  conn_->writer().set_free_when_empty(true);
  ws_.Start();
  return 0;
}

void WsConnectionSession::OnEof() {
  ws_.OnPeerEnd();
}

void WsConnectionSession::OnTimeout(int kind) {
  if (kind == kDeadlineWsClose) {
    ws_.OnDeadline(kWsDeadlineClose);
  } else if (kind == kDeadlineWsIdle) {
    ws_.OnDeadline(kWsDeadlineIdle);
  }
}

OutputQueue* WsConnectionSession::Output() {
  return conn_->closing() ? nullptr : &conn_->writer().queue();
}

int WsConnectionSession::Queued() {
  conn_->MarkDirty();
  if (conn_->writer().Backlog() >= conn_->listener()->options().high_water_mark) {
    conn_->WantDrain();
    return kWsBuffered;
  }
  return kWsSent;
}

size_t WsConnectionSession::Backlog() const {
  return conn_->writer().Backlog();
}

uint64_t WsConnectionSession::Appended() const {
  return conn_->writer().appended();
}

uint64_t WsConnectionSession::Written() const {
  return conn_->writer().written();
}

bool WsConnectionSession::Gone() const {
  return conn_->destroyed();
}

void WsConnectionSession::SetDeadline(WsDeadline kind, uint32_t ms) {
  const DeadlineKind k = kind == kWsDeadlineIdle ? kDeadlineWsIdle : kDeadlineWsClose;
  if (ms == 0) {
    conn_->ClearDeadline(k);
  } else {
    conn_->SetDeadline(k, ms);
  }
}

void WsConnectionSession::End() {
  // FIN once the queue is written, then the linger drains the peer's last
  // bytes.
  conn_->EndGracefully();
}

void WsConnectionSession::Abort() {
  conn_->Destroy();
}

}  // namespace sluice
