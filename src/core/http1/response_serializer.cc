#include "core/http1/response_serializer.h"

#include <cstring>
#include <string>

namespace sluice {

namespace {

struct Reason {
  int status;
  const char* text;
};

// As node's http.STATUS_CODES.
const Reason kReasons[] = {
    {100, "Continue"}, {101, "Switching Protocols"}, {102, "Processing"},
    {103, "Early Hints"}, {200, "OK"}, {201, "Created"}, {202, "Accepted"},
    {203, "Non-Authoritative Information"}, {204, "No Content"},
    {205, "Reset Content"}, {206, "Partial Content"}, {207, "Multi-Status"},
    {208, "Already Reported"}, {226, "IM Used"}, {300, "Multiple Choices"},
    {301, "Moved Permanently"}, {302, "Found"}, {303, "See Other"},
    {304, "Not Modified"}, {305, "Use Proxy"}, {307, "Temporary Redirect"},
    {308, "Permanent Redirect"}, {400, "Bad Request"}, {401, "Unauthorized"},
    {402, "Payment Required"}, {403, "Forbidden"}, {404, "Not Found"},
    {405, "Method Not Allowed"}, {406, "Not Acceptable"},
    {407, "Proxy Authentication Required"}, {408, "Request Timeout"},
    {409, "Conflict"}, {410, "Gone"}, {411, "Length Required"},
    {412, "Precondition Failed"}, {413, "Payload Too Large"},
    {414, "URI Too Long"}, {415, "Unsupported Media Type"},
    {416, "Range Not Satisfiable"}, {417, "Expectation Failed"},
    {418, "I'm a Teapot"}, {421, "Misdirected Request"},
    {422, "Unprocessable Entity"}, {423, "Locked"}, {424, "Failed Dependency"},
    {425, "Too Early"}, {426, "Upgrade Required"},
    {428, "Precondition Required"}, {429, "Too Many Requests"},
    {431, "Request Header Fields Too Large"},
    {451, "Unavailable For Legal Reasons"}, {500, "Internal Server Error"},
    {501, "Not Implemented"}, {502, "Bad Gateway"},
    {503, "Service Unavailable"}, {504, "Gateway Timeout"},
    {505, "HTTP Version Not Supported"}, {506, "Variant Also Negotiates"},
    {507, "Insufficient Storage"}, {508, "Loop Detected"},
    {509, "Bandwidth Limit Exceeded"}, {510, "Not Extended"},
    {511, "Network Authentication Required"},
};

// Status lines for 100..599, built once: the hot path appends one memcpy.
struct StatusLines {
  std::string line[500];
  const char* reason[500];
  StatusLines() {
    for (int s = 100; s < 600; s++) {
      reason[s - 100] = "";
      for (const Reason& r : kReasons) {
        if (r.status == s) reason[s - 100] = r.text;
      }
      line[s - 100] = "HTTP/1.1 " + std::to_string(s) + " " +
                      reason[s - 100] + "\r\n";
    }
  }
};

const StatusLines& Lines() {
  static const StatusLines lines;
  return lines;
}

}  // namespace

std::string_view StatusReason(int status) {
  if (status < 100 || status > 599) return "";
  return Lines().reason[status - 100];
}

void AppendStatusLine(OutputQueue& q, int status, std::string_view reason) {
  if (status >= 100 && status <= 599) {
    const StatusLines& l = Lines();
    if (reason.empty() || reason == l.reason[status - 100]) {
      const std::string& line = l.line[status - 100];
      q.Append(line.data(), line.size());
      return;
    }
  }
  char buf[24];
  int n = snprintf(buf, sizeof(buf), "HTTP/1.1 %03d ", status);
  q.Append(buf, static_cast<size_t>(n));
  q.Append(reason.data(), reason.size());
  q.Append("\r\n", 2);
}

void AppendDecimal(OutputQueue& q, uint64_t v) {
  char buf[24];
  char* end = buf + sizeof(buf);
  char* p = end;
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  q.Append(p, static_cast<size_t>(end - p));
}

void AppendChunkHeader(OutputQueue& q, uint64_t len) {
  static const char kHex[] = "0123456789abcdef";
  char buf[24];
  char* end = buf + sizeof(buf);
  char* p = end;
  *--p = '\n';
  *--p = '\r';
  do {
    *--p = kHex[len & 15];
    len >>= 4;
  } while (len);
  q.Append(p, static_cast<size_t>(end - p));
}

}  // namespace sluice
