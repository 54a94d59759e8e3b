// TunnelSession: what a connection speaks after an accepted HTTP/1.1
// Upgrade or CONNECT (node's 'upgrade' / 'connect' events): no protocol at
// all. Bytes read are handed to the embedder as they come; the embedder
// writes through the connection's Writer (Connection::writer()) and ends or
// destroys the connection itself. No HTTP deadline applies any more.
#pragma once

#include "core/net/session.h"

namespace sluice {

class Connection;

class TunnelSession final : public Session {
 public:
  explicit TunnelSession(Connection* conn) : conn_(conn) {}

  // Called by Connection with the bytes of one read: passed on to the
  // delegate's OnTunnelData (valid only during that call).
  void OnRead(const char* data, size_t len) override;
  // The peer sent FIN: the delegate's OnTunnelEnd. The connection stays
  // open for writing until the embedder ends or destroys it.
  void OnEof() override;
  // No deadlines are set on a tunnel (socket.setTimeout lives in lib/).
  void OnTimeout(int kind) override { (void)kind; }
  // A tunnel belongs to its user, not to the server: never idle for
  // closeIdleConnections, untouched by server.close() (as node, whose
  // upgraded sockets leave the server's connection tracking).
  bool IsIdle() const override { return false; }
  void OnServerClosing() override {}

 private:
  Connection* conn_;
};

}  // namespace sluice
