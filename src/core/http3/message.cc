#include "core/http3/message.h"

namespace sluice::http3 {

namespace {

// RFC 9110 5.6.2 token characters, lowercase letters only (RFC 9114 4.2).
bool IsLowerTokenChar(unsigned char c) {
  if (c >= 'a' && c <= 'z') return true;
  if (c >= '0' && c <= '9') return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*':
    case '+': case '-': case '.': case '^': case '_': case '`': case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

bool ValidName(std::string_view n, size_t from) {
  if (n.size() <= from) return false;
  for (size_t i = from; i < n.size(); i++)
    if (!IsLowerTokenChar(static_cast<unsigned char>(n[i]))) return false;
  return true;
}

bool ValidValue(std::string_view v, bool regular) {
  for (char c : v)
    if (c == '\0' || c == '\r' || c == '\n') return false;
  if (regular && !v.empty()) {
    char a = v.front(), b = v.back();
    if (a == ' ' || a == '\t' || b == ' ' || b == '\t') return false;
  }
  return true;
}

bool IsConnectionSpecific(std::string_view n) {
  return n == "connection" || n == "keep-alive" || n == "proxy-connection" ||
         n == "transfer-encoding" || n == "upgrade";
}

// Regular-field rules shared by requests and trailers.
bool RegularFieldOk(const HeaderField& f) {
  if (!ValidName(f.name, 0) || !ValidValue(f.value, true)) return false;
  if (IsConnectionSpecific(f.name)) return false;
  if (f.name == "te" && f.value != "trailers") return false;
  return true;
}

bool ParseDigits(std::string_view v, uint64_t* out) {
  if (v.empty() || v.size() > 19) return false;  // < 10^19 fits 64 bits
  uint64_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = n;
  return true;
}

}  // namespace

H3Error ValidateRequestFields(const std::vector<HeaderField>& fields, RequestHead* out,
                              bool allow_extended_connect) {
  *out = RequestHead();
  const H3Error bad = H3Error::kMessage;
  bool regular_seen = false;
  bool have_method = false, have_scheme = false, have_authority = false,
       have_path = false, have_protocol = false;
  std::string_view host;
  bool have_host = false;
  for (const HeaderField& f : fields) {
    std::string_view n = f.name;
    if (!n.empty() && n[0] == ':') {
      if (regular_seen || !ValidName(n, 1) || !ValidValue(f.value, false)) return bad;
      bool* seen;
      std::string_view* slot;
      if (n == ":method") {
        seen = &have_method, slot = &out->method;
      } else if (n == ":scheme") {
        seen = &have_scheme, slot = &out->scheme;
      } else if (n == ":authority") {
        seen = &have_authority, slot = &out->authority;
      } else if (n == ":path") {
        seen = &have_path, slot = &out->path;
      } else if (n == ":protocol") {
        if (!allow_extended_connect) return bad;
        seen = &have_protocol, slot = &out->protocol;
      } else {
        return bad;  // :status or unknown
      }
      if (*seen) return bad;
      *seen = true;
      *slot = f.value;
      continue;
    }
    regular_seen = true;
    if (!RegularFieldOk(f)) return bad;
    if (n == "host") {
      if (have_host) return bad;
      have_host = true;
      host = f.value;
    } else if (n == "content-length") {
      uint64_t v;
      if (!ParseDigits(f.value, &v)) return bad;
      if (out->has_content_length && out->content_length != v) return bad;
      out->has_content_length = true;
      out->content_length = v;
    }
  }
  if (!have_method || out->method.empty()) return bad;
  bool connect = out->method == "CONNECT";
  if (have_protocol && !connect) return bad;
  if (connect && !have_protocol) {
    // Plain CONNECT: :authority only (RFC 9114 4.4).
    if (have_scheme || have_path || !have_authority || out->authority.empty()) return bad;
    return H3Error::kNoError;
  }
  if (!have_scheme || out->scheme.empty() || !have_path || out->path.empty()) return bad;
  if (have_protocol && (!have_authority || out->protocol.empty())) return bad;
  bool http = out->scheme == "http" || out->scheme == "https";
  if (http) {
    if (out->path[0] != '/' && !(out->path == "*" && out->method == "OPTIONS")) return bad;
    if (have_authority) {
      if (out->authority.empty() || out->authority.find('@') != std::string_view::npos)
        return bad;
      if (have_host && host != out->authority) return bad;
    } else if (!have_host || host.empty()) {
      return bad;
    }
  }
  return H3Error::kNoError;
}

H3Error ValidateTrailerFields(const std::vector<HeaderField>& fields) {
  for (const HeaderField& f : fields) {
    if (!f.name.empty() && f.name[0] == ':') return H3Error::kMessage;
    if (!RegularFieldOk(f)) return H3Error::kMessage;
  }
  return H3Error::kNoError;
}

}  // namespace sluice::http3
