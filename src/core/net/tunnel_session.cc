#include "core/net/tunnel_session.h"

#include "core/net/connection.h"
#include "core/net/listener.h"
#include "core/net/server_delegate.h"

namespace sluice {

void TunnelSession::OnRead(const char* data, size_t len) {
  if (len == 0 || conn_->destroyed()) return;
  conn_->listener()->delegate()->OnTunnelData(conn_, data, len);
}

void TunnelSession::OnEof() {
  if (conn_->destroyed()) return;
  conn_->listener()->delegate()->OnTunnelEnd(conn_);
}

}  // namespace sluice
