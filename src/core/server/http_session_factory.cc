#include "core/server/http_session_factory.h"

#include "core/http1/http1_session.h"
#include "core/http2/http2_session.h"
#include "core/net/connection.h"
#include "core/net/listener.h"

namespace sluice {

HttpSessionFactory* HttpSessionFactory::Get() {
  static HttpSessionFactory instance;
  return &instance;
}

Session* HttpSessionFactory::Initial(Connection* c, bool* detect_preface) {
  *detect_preface = c->listener()->delegate()->http2() != nullptr;
  return new Http1Session(c);
}

Session* HttpSessionFactory::ForPreface(Connection* c) {
  return new Http2Session(c);
}

}  // namespace sluice
