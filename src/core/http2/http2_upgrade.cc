#include "core/http2/http2_upgrade.h"

#include <llhttp.h>

#include <string>
#include <vector>

#include "core/net/connection.h"
#include "core/http2/http2_session.h"
#include "core/net/listener.h"

namespace sluice {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return out;
}

// True if the comma-separated token list `value` holds `token` (lower-case).
bool HasToken(std::string_view value, std::string_view token) {
  std::string v = Lower(value);
  size_t pos = 0;
  while (pos <= v.size()) {
    size_t comma = v.find(',', pos);
    if (comma == std::string::npos) comma = v.size();
    std::string_view t(v.data() + pos, comma - pos);
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
    while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
    if (t == token) return true;
    pos = comma + 1;
  }
  return false;
}

// base64url without padding (RFC 7540 3.2.1); '=' padding is tolerated.
bool DecodeBase64Url(std::string_view in, std::string* out) {
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '-') v = 62;
    else if (c == '_') v = 63;
    else if (c == '=') break;
    else return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return true;
}

bool DroppedInHttp2(const std::string& lower) {
  return lower == "connection" || lower == "upgrade" ||
         lower == "http2-settings" || lower == "host" ||
         lower == "keep-alive" || lower == "proxy-connection" ||
         lower == "transfer-encoding";
}

}  // namespace

bool UpgradeToHttp2(Connection* c, const RequestHead& head) {
  // h2c is cleartext only (RFC 9113 3.1): over TLS, HTTP/2 is chosen by
  // ALPN and an Upgrade: h2c is an ordinary header.
  if (c->listener()->delegate()->http2() == nullptr || c->tls() != nullptr) {
    return false;
  }
  std::string_view settings, host;
  int settings_count = 0;
  bool h2c = false, conn_settings = false;
  for (const auto& h : head.headers) {
    std::string name = Lower(h.first);
    if (name == "upgrade") {
      h2c = h2c || HasToken(h.second, "h2c");
    } else if (name == "http2-settings") {
      settings = h.second;
      settings_count++;
    } else if (name == "connection") {
      conn_settings = conn_settings || HasToken(h.second, "http2-settings");
    } else if (name == "host") {
      host = h.second;
    }
  }
  if (!h2c || settings_count != 1 || !conn_settings) return false;
  std::string payload;
  if (!DecodeBase64Url(settings, &payload) || payload.size() % 6 != 0) {
    return false;
  }

  // The request as HTTP/2 header fields: pseudo-headers first.
  const char* method = llhttp_method_name(static_cast<llhttp_method_t>(head.method));
  std::vector<std::string> owned;
  owned.reserve(head.headers.size() * 2);
  Http2Fields fields;
  fields.emplace_back(":method", method);
  fields.emplace_back(":scheme", "http");
  if (!host.empty()) fields.emplace_back(":authority", host);
  fields.emplace_back(":path", head.url);
  for (const auto& h : head.headers) {
    owned.push_back(Lower(h.first));
    if (DroppedInHttp2(owned.back())) continue;
    fields.emplace_back(owned.back(), h.second);
  }

  c->writer().queue().Append(
      "HTTP/1.1 101 Switching Protocols\r\n"
      "Connection: Upgrade\r\nUpgrade: h2c\r\n\r\n");
  c->MarkDirty();
  Http2Session* h2 = new Http2Session(c);
  c->ReplaceSession(h2);
  int r = h2->StartUpgrade(reinterpret_cast<const uint8_t*>(payload.data()),
                           payload.size(), head.method == HTTP_HEAD, fields);
  if (r != 0) c->Destroy();
  return true;
}

}  // namespace sluice
