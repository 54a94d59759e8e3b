// The request rules HTTP/2 and HTTP/3 share (RFC 9113 8.2-8.5, RFC 9114
// 4.2-4.4, RFC 8441 / 9220 for extended CONNECT): what makes a request
// head or trailer section malformed. Both sessions run every request
// through this one checker, so a request one protocol refuses the other
// refuses too (docs/http2.md "Request rules"). Protocol-neutral: plain
// C++, no nghttp2, no QUIC.
#pragma once

#include <cstdint>
#include <string_view>

namespace sluice {

// What an accepted request head says. Views into the fields given to
// RequestRules::Field: valid while those are. Empty when absent.
struct CheckedHead {
  std::string_view method;
  std::string_view scheme;
  std::string_view authority;
  std::string_view path;
  std::string_view protocol;  // extended CONNECT
  std::string_view host;      // the host field, if any
  bool has_content_length = false;
  uint64_t content_length = 0;
};

// Checks one request head, fed field by field in received order. The
// rules (a request is malformed when any holds):
//  - a name that is empty, has a byte outside the token set or an
//    uppercase letter (after the ':' of a pseudo-header);
//  - a value with a control byte other than HTAB, or DEL, or starting or
//    ending with SP or HTAB;
//  - a pseudo-header after a regular field, repeated, empty, unknown, a
//    response one (:status), or :protocol when extended CONNECT is off;
//  - :method not a token, :scheme not a URI scheme, :path with SP or a
//    control byte, :authority or host with a byte an authority cannot
//    hold, or with userinfo ('@') for http(s);
//  - a connection-specific field (connection, keep-alive,
//    proxy-connection, transfer-encoding, upgrade), te other than
//    "trailers", a repeated or empty host, a repeated content-length or
//    one that is not digits;
//  - CONNECT without :protocol: :scheme or :path present, or no
//    :authority; otherwise :method, :scheme and :path missing, neither
//    :authority nor host, :authority and host that differ, :protocol
//    without CONNECT or without :authority, and for http(s) a :path not
//    starting with '/' (only OPTIONS may say "*").
class RequestRules {
 public:
  explicit RequestRules(bool allow_extended_connect)
      : allow_extended_connect_(allow_extended_connect) {}

  // One field. false: the request is malformed (feed nothing more).
  bool Field(std::string_view name, std::string_view value);
  // After the last field. false: malformed; true: head() is complete.
  bool End();
  const CheckedHead& head() const { return head_; }

 private:
  bool Pseudo(std::string_view name, std::string_view value);

  bool allow_extended_connect_;
  bool regular_seen_ = false;
  bool have_method_ = false, have_scheme_ = false, have_authority_ = false,
       have_path_ = false, have_protocol_ = false, have_host_ = false;
  CheckedHead head_;
};

// One trailer field: the regular-field rules above, and no pseudo-header.
bool TrailerFieldOk(std::string_view name, std::string_view value);

}  // namespace sluice
