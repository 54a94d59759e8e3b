// KeepAliveLines: the "Connection: keep-alive" and "Keep-Alive: timeout=T[,
// max=M]" lines of a keep-alive HTTP/1.1 response head, formatted once per
// (timeout, max) and again only when an option changes them
// (server.keepAliveTimeout / maxRequestsPerSocket set at run time), so a
// response head copies them instead of formatting two numbers.
// One per listener, used from its loop thread only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice {

class KeepAliveLines {
 public:
  // The lines for a keep-alive timeout of `timeout_ms` (0: no Keep-Alive
  // line, only Connection; as node, the line gives whole seconds, rounded
  // down, so 500 ms reads timeout=0) and `max_requests` (0: no max). The
  // view is valid until the next Get with other values.
  std::string_view Get(uint64_t timeout_ms, uint64_t max_requests) {
    // (text_ is empty only before the first Build: it always holds the
    // Connection line.)
    if (text_.empty() || timeout_ms != timeout_ms_ || max_requests != max_requests_) {
      Build(timeout_ms, max_requests);
    }
    return text_;
  }

 private:
  void Build(uint64_t timeout_ms, uint64_t max_requests) {
    text_ = "Connection: keep-alive\r\n";
    if (timeout_ms > 0) {
      text_ += "Keep-Alive: timeout=";
      text_ += std::to_string(timeout_ms / 1000);
      if (max_requests > 0) {
        text_ += ", max=";
        text_ += std::to_string(max_requests);
      }
      text_ += "\r\n";
    }
    timeout_ms_ = timeout_ms;
    max_requests_ = max_requests;
  }

  std::string text_;
  uint64_t timeout_ms_ = 0;
  uint64_t max_requests_ = 0;
};

}  // namespace sluice
