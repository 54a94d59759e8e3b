// The sessions of an HTTP server: every connection starts as HTTP/1.1;
// when the embedder takes HTTP/2 (ServerDelegate::http2() non-null) a
// connection that opens with the HTTP/2 client preface becomes an
// Http2Session (prior knowledge). h2c upgrades go through the HTTP/1.1
// session (core/http2/http2_upgrade.h).
#pragma once

#include "core/net/session_factory.h"

namespace sluice {

class HttpSessionFactory final : public SessionFactory {
 public:
  // The process-wide instance (stateless; what a Listener is given).
  static HttpSessionFactory* Get();

  Session* Initial(Connection* c, bool* detect_preface) override;
  Session* ForPreface(Connection* c) override;
};

}  // namespace sluice
