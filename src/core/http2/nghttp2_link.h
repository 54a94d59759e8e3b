// Which nghttp2 the HTTP/2 session runs on (docs/http2.md, "Which
// nghttp2"): node's own copy, always. The addon links no libnghttp2; its
// nghttp2 calls bind at load time (-z now) to the copy node exports, or to
// the shared libnghttp2 node itself links. Only Debian's nghttp2.h is
// compiled against (nghttp2 keeps its ABI backward compatible); the
// version that runs is node's (process.versions.nghttp2: node exports the
// session API but not nghttp2_version, so the addon cannot ask the copy
// itself), at least the header's (tested).
#pragma once

#include <string>

#include "core/common/symbol_origin.h"

namespace sluice {

struct Nghttp2LinkInfo {
  std::string header_version;  // NGHTTP2_VERSION compiled against
  SymbolOrigin origin;         // where nghttp2_session_server_new2 lives
};
Nghttp2LinkInfo GetNghttp2LinkInfo();

}  // namespace sluice
