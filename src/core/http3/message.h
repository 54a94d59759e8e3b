// HTTP message rules on a decoded request field section (RFC 9114
// sections 4.1.2, 4.2, 4.3.1; RFC 9220 for extended CONNECT): what makes
// a request malformed, which is a stream error H3_MESSAGE_ERROR. QPACK
// (qpack.h) only decodes; this checks what was decoded, and picks out the
// pseudo-header values and content-length for the layer that builds the
// request.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/http3/frames.h"
#include "core/http3/qpack.h"

namespace sluice::http3 {

struct RequestHead {
  // Views into the fields passed to ValidateRequestFields: valid while
  // they are. Empty when absent.
  std::string_view method;
  std::string_view scheme;
  std::string_view authority;
  std::string_view path;
  std::string_view protocol;  // extended CONNECT (RFC 9220)
  bool has_content_length = false;
  uint64_t content_length = 0;
};

// kNoError, or kMessage for a malformed request: a field name that is
// empty, not a token or not lowercase; a value with NUL, CR or LF, or
// (regular fields) leading/trailing space or tab; a pseudo-header after a
// regular field, repeated, unknown, or a response one (:status);
// connection-specific fields (connection, keep-alive, proxy-connection,
// transfer-encoding, upgrade) or te other than "trailers"; a missing or
// empty :method, :scheme or :path (CONNECT: only :method and :authority,
// unless :protocol, which needs allow_extended_connect and all four);
// :path not starting with '/' for http(s) (only OPTIONS may say "*");
// userinfo in :authority for http(s); http(s) with neither :authority
// nor host, or both different; a content-length that is not digits or
// repeated with a different value.
H3Error ValidateRequestFields(const std::vector<HeaderField>& fields, RequestHead* out,
                              bool allow_extended_connect = false);

// Trailers: the same name and value rules, and no pseudo-header at all.
H3Error ValidateTrailerFields(const std::vector<HeaderField>& fields);

}  // namespace sluice::http3
