// SessionFactory: how the network layer gets the protocol a connection
// speaks without knowing any protocol. The Listener holds one (given by
// its creator) and every Connection asks it for its sessions, so net/
// includes neither HTTP/1.1 nor HTTP/2 (src/core/server/ composes them).
#pragma once

namespace sluice {

class Connection;
class Session;

class SessionFactory {
 public:
  virtual ~SessionFactory() = default;

  // A connection was accepted (Connection::Open, loop thread, outside any
  // dispatch): the session it starts with, owned by the connection from
  // then on. *detect_preface = true: the connection first matches its
  // input against the HTTP/2 client preface (PrefaceMatcher) and, on a
  // match, replaces that session with ForPreface's before any byte
  // reached it.
  virtual Session* Initial(Connection* c, bool* detect_preface) = 0;

  // The connection's first bytes were the HTTP/2 client preface (inside a
  // dispatch): the session that replaces the initial one. The connection
  // owns it, calls its Start(), and destroys itself if that fails.
  virtual Session* ForPreface(Connection* c) = 0;
};

}  // namespace sluice
