// h2c upgrade (RFC 7540 3.2): an HTTP/1.1 request carrying
// "Upgrade: h2c" (with Connection: Upgrade, HTTP2-Settings) and exactly one
// HTTP2-Settings header, received in full without a body, is answered with
// 101 Switching Protocols; the connection then speaks HTTP/2 and the
// request becomes stream 1 (half-closed remote), reported to the
// Http2Delegate like any stream.
#pragma once

#include "core/http1/http1_delegate.h"

namespace sluice {

class Connection;

// Called by Http1Session (inside a dispatch) with a complete upgrade
// request that is the only one in flight. Returns false when the request
// is not an acceptable h2c upgrade (it is then served as HTTP/1.1, as RFC
// 9110 7.8 allows); true when the connection switched: the connection's
// session is now an Http2Session (the caller, retired, must stop parsing
// and hand any bytes after the request to the new session).
bool UpgradeToHttp2(Connection* c, const RequestHead& head);

}  // namespace sluice
