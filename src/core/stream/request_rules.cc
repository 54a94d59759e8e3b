#include "core/stream/request_rules.h"

#include <cstdint>

namespace sluice {

namespace {

bool IsAlpha(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }

// RFC 9110 5.6.2 tchar.
bool IsTokenChar(unsigned char c) {
  if (IsAlpha(c) || IsDigit(c)) return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*':
    case '+': case '-': case '.': case '^': case '_': case '`': case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!IsTokenChar(static_cast<unsigned char>(c))) return false;
  return true;
}

// A field name (RFC 9113 8.2.1, RFC 9114 4.2): a token, no uppercase.
bool IsLowerToken(std::string_view s) {
  if (!IsToken(s)) return false;
  for (char c : s)
    if (c >= 'A' && c <= 'Z') return false;
  return true;
}

// RFC 9110 5.5 field-value bytes (VCHAR, obs-text, SP, HTAB), without
// surrounding whitespace (RFC 9113 8.2.1).
bool IsFieldValue(std::string_view v) {
  for (char ch : v) {
    unsigned char c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\t') || c == 0x7f) return false;
  }
  if (v.empty()) return true;
  char a = v.front(), b = v.back();
  return a != ' ' && a != '\t' && b != ' ' && b != '\t';
}

// RFC 3986 3.1: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
bool IsScheme(std::string_view s) {
  if (s.empty() || !IsAlpha(static_cast<unsigned char>(s[0]))) return false;
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (!IsAlpha(c) && !IsDigit(c) && c != '+' && c != '-' && c != '.') return false;
  }
  return true;
}

// A request target: no SP, no control byte, no DEL.
bool IsPath(std::string_view s) {
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c == 0x7f) return false;
  }
  return true;
}

// RFC 3986 3.2 authority bytes: unreserved, sub-delims, ':', '@', '[',
// ']' and '%' of pct-encoding. '*' is refused as nghttp2 refuses it, so
// that HTTP/2 and HTTP/3 keep one set.
bool IsAuthority(std::string_view s) {
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (IsAlpha(c) || IsDigit(c)) continue;
    switch (c) {
      case '-': case '.': case '_': case '~':                       // unreserved
      case '!': case '$': case '&': case '\'': case '(': case ')':  // sub-delims
      case '+': case ',': case ';': case '=':
      case ':': case '@': case '[': case ']': case '%':
        continue;
      default:
        return false;
    }
  }
  return true;
}

bool EqualsNoCase(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (size_t i = 0; i < a.size(); i++) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

bool IsConnectionSpecific(std::string_view n) {
  return n == "connection" || n == "keep-alive" || n == "proxy-connection" ||
         n == "transfer-encoding" || n == "upgrade";
}

// Regular-field rules shared by heads and trailers.
bool RegularFieldOk(std::string_view name, std::string_view value) {
  if (!IsLowerToken(name) || !IsFieldValue(value)) return false;
  if (IsConnectionSpecific(name)) return false;
  return name != "te" || value == "trailers";
}

// Digits only, at most INT64_MAX (nghttp2's bound, the lower of the two).
bool ParseLength(std::string_view v, uint64_t* out) {
  if (v.empty() || v.size() > 19) return false;
  uint64_t n = 0;
  for (char c : v) {
    if (!IsDigit(static_cast<unsigned char>(c))) return false;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  if (n > static_cast<uint64_t>(INT64_MAX)) return false;
  *out = n;
  return true;
}

}  // namespace

bool RequestRules::Pseudo(std::string_view name, std::string_view value) {
  if (regular_seen_ || value.empty()) return false;
  bool* seen;
  std::string_view* slot;
  bool ok;
  if (name == ":method") {
    seen = &have_method_, slot = &head_.method, ok = IsToken(value);
  } else if (name == ":scheme") {
    seen = &have_scheme_, slot = &head_.scheme, ok = IsScheme(value);
  } else if (name == ":authority") {
    seen = &have_authority_, slot = &head_.authority, ok = IsAuthority(value);
  } else if (name == ":path") {
    seen = &have_path_, slot = &head_.path, ok = IsPath(value);
  } else if (name == ":protocol" && allow_extended_connect_) {
    seen = &have_protocol_, slot = &head_.protocol, ok = IsFieldValue(value);
  } else {
    return false;  // :status, unknown, or :protocol not advertised
  }
  if (*seen || !ok) return false;
  *seen = true;
  *slot = value;
  return true;
}

bool RequestRules::Field(std::string_view name, std::string_view value) {
  if (!name.empty() && name[0] == ':') return Pseudo(name, value);
  regular_seen_ = true;
  if (!RegularFieldOk(name, value)) return false;
  if (name == "host") {
    if (have_host_ || value.empty() || !IsAuthority(value)) return false;
    have_host_ = true;
    head_.host = value;
  } else if (name == "content-length") {
    if (head_.has_content_length || !ParseLength(value, &head_.content_length)) return false;
    head_.has_content_length = true;
  }
  return true;
}

bool RequestRules::End() {
  if (!have_method_) return false;
  const bool connect = head_.method == "CONNECT";
  if (connect && !have_protocol_) {
    // Plain CONNECT (RFC 9113 8.5, RFC 9114 4.4): :authority only.
    return !have_scheme_ && !have_path_ && have_authority_;
  }
  if (!have_scheme_ || !have_path_ || (!have_authority_ && !have_host_)) return false;
  if (have_protocol_ && (!connect || !have_authority_)) return false;
  if (have_authority_ && have_host_ && head_.host != head_.authority) return false;
  if (EqualsNoCase(head_.scheme, "http") || EqualsNoCase(head_.scheme, "https")) {
    if (head_.path[0] != '/' && !(head_.path == "*" && head_.method == "OPTIONS")) return false;
    std::string_view where = have_authority_ ? head_.authority : head_.host;
    if (where.find('@') != std::string_view::npos) return false;  // userinfo
  }
  return true;
}

bool TrailerFieldOk(std::string_view name, std::string_view value) {
  if (!name.empty() && name[0] == ':') return false;
  return RegularFieldOk(name, value);
}

}  // namespace sluice
