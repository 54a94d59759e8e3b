#include "core/http2/nghttp2_link.h"

#include <nghttp2/nghttp2.h>

namespace sluice {

Nghttp2LinkInfo GetNghttp2LinkInfo() {
  Nghttp2LinkInfo i;
  i.header_version = NGHTTP2_VERSION;
  i.origin =
      OriginOf(reinterpret_cast<const void*>(&nghttp2_session_server_new2));
  return i;
}

}  // namespace sluice
