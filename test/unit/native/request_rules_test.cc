// Unit test of src/core/stream/request_rules (no nghttp2, QUIC or N-API):
// every rule HTTP/2 and HTTP/3 share, one malformed head per rule beside
// the valid heads each rule must still let through. Built and run by
// test/unit/request_rules.test.js; prints "request_rules: N checks, ok"
// or exits 1.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "check.h"
#include "core/stream/request_rules.h"

using sluice::CheckedHead;
using sluice::RequestRules;
using sluice::TrailerFieldOk;

namespace {


using F = std::vector<std::pair<std::string, std::string>>;

bool Valid(const F& f, bool ext, CheckedHead* out) {
  RequestRules r(ext);
  for (const auto& x : f)
    if (!r.Field(x.first, x.second)) return false;
  if (!r.End()) return false;
  *out = r.head();
  return true;
}

F With(F f, size_t at, std::pair<std::string, std::string> x) {
  f.insert(f.begin() + static_cast<long>(at), std::move(x));
  return f;
}

F Without(const F& f, const char* name) {
  F r;
  for (const auto& x : f)
    if (x.first != name) r.push_back(x);
  return r;
}

void TestRequests() {
  const F get = {{":method", "GET"}, {":scheme", "https"}, {":authority", "example.com"},
                 {":path", "/a?b"}, {"accept", "*/*"}, {"content-length", "5"},
                 {"te", "trailers"}};
  CheckedHead h;
  CHECK(Valid(get, false, &h) && h.method == "GET" && h.scheme == "https" &&
            h.authority == "example.com" && h.path == "/a?b" && h.has_content_length &&
            h.content_length == 5,
        "valid GET");
  struct {
    F f;
    bool ok;
    const char* what;
  } cases[] = {
      {With(Without(get, ":authority"), 3, {"host", "example.com"}), true, "host instead of :authority"},
      {With(get, 4, {"host", "example.com"}), true, "host equal to :authority"},
      {{{":method", "OPTIONS"}, {":scheme", "https"}, {":authority", "a"}, {":path", "*"}}, true, "OPTIONS *"},
      {{{":method", "CONNECT"}, {":authority", "a:443"}}, true, "CONNECT"},
      {{{":method", "GET"}, {":scheme", "foo"}, {":authority", "a"}, {":path", "x"}}, true, "other scheme, any path"},
      {With(get, 5, {"x", "caf\xc3\xa9 \"q\""}), true, "obs-text, SP and quotes inside a value"},
      {With(get, 5, {"x", ""}), true, "empty value"},
      {{{":method", "GET"}, {":scheme", "HTTPS"}, {":authority", "a"}, {":path", "/"}}, true, "scheme in capitals"},
      {{{":method", "GET"}, {":scheme", "https"}, {":authority", "[::1]:8443"}, {":path", "/"}}, true, "IPv6 authority"},
      {With(get, 5, {"host", "other.com"}), false, "host differs from :authority"},
      {Without(get, ":authority"), false, "no authority, no host"},
      {{{":method", "GET"}, {":scheme", "foo"}, {":path", "x"}}, false, "other scheme without authority"},
      {Without(get, ":method"), false, "no :method"},
      {Without(get, ":scheme"), false, "no :scheme"},
      {Without(get, ":path"), false, "no :path"},
      {With(get, 1, {":method", "GET"}), false, "repeated :method"},
      {With(get, 5, {":path", "/"}), false, "pseudo-header after a regular field"},
      {With(get, 1, {":status", "200"}), false, ":status in a request"},
      {With(get, 1, {":foo", "x"}), false, "unknown pseudo-header"},
      {With(get, 1, {":Path", "/"}), false, "pseudo-header in capitals"},
      {With(get, 1, {":protocol", "websocket"}), false, ":protocol without extended CONNECT"},
      {With(get, 5, {"Accept", "x"}), false, "uppercase name"},
      {With(get, 5, {"a b", "x"}), false, "space in a name"},
      {With(get, 5, {"a(b", "x"}), false, "separator in a name"},
      {With(get, 5, {"", "x"}), false, "empty name"},
      {With(get, 5, {"x", "a\nb"}), false, "LF in a value"},
      {With(get, 5, {"x", "a\rb"}), false, "CR in a value"},
      {With(get, 5, {"x", std::string("a\0b", 3)}), false, "NUL in a value"},
      {With(get, 5, {"x", "a\x01" "b"}), false, "control byte in a value"},
      {With(get, 5, {"x", "a\x7f"}), false, "DEL in a value"},
      {With(get, 5, {"x", " a"}), false, "leading space"},
      {With(get, 5, {"x", "a\t"}), false, "trailing tab"},
      {With(get, 5, {"connection", "close"}), false, "connection"},
      {With(get, 5, {"proxy-connection", "close"}), false, "proxy-connection"},
      {With(get, 5, {"transfer-encoding", "chunked"}), false, "transfer-encoding"},
      {With(get, 5, {"upgrade", "h2c"}), false, "upgrade"},
      {With(get, 5, {"keep-alive", "5"}), false, "keep-alive"},
      {With(get, 5, {"te", "gzip"}), false, "te other than trailers"},
      {With(get, 5, {"content-length", "5"}), false, "repeated content-length"},
      {With(Without(get, "content-length"), 5, {"content-length", "-1"}), false, "content-length not digits"},
      {With(Without(get, "content-length"), 5, {"content-length", ""}), false, "empty content-length"},
      {With(Without(get, "content-length"), 5, {"content-length", "9223372036854775808"}), false,
       "content-length over 2^63-1"},
      {With(With(Without(get, ":authority"), 3, {"host", "a"}), 4, {"host", "a"}), false, "repeated host"},
      {With(Without(get, ":authority"), 3, {"host", ""}), false, "empty host"},
      {{{":method", "GET"}, {":scheme", "https"}, {":authority", "a"}, {":path", "a"}}, false, "path without /"},
      {{{":method", "GET"}, {":scheme", "https"}, {":authority", "a"}, {":path", "*"}}, false, "* not OPTIONS"},
      {{{":method", "GET"}, {":scheme", "https"}, {":authority", "a"}, {":path", "/a b"}}, false, "space in :path"},
      {{{":method", "GET"}, {":scheme", "https"}, {":authority", "u@a"}, {":path", "/"}}, false, "userinfo"},
      {{{":method", "GET"}, {":scheme", "https"}, {"host", "u@a"}, {":path", "/"}}, false, "userinfo in host"},
      {{{":method", "GET"}, {":scheme", "https"}, {":authority", "a b"}, {":path", "/"}}, false, "space in :authority"},
      {{{":method", "GET"}, {":scheme", "https"}, {":authority", "a/b"}, {":path", "/"}}, false, "slash in :authority"},
      {{{":method", "GET"}, {":scheme", "https"}, {":authority", ""}, {":path", "/"}}, false, "empty :authority"},
      {{{":method", "G T"}, {":scheme", "https"}, {":authority", "a"}, {":path", "/"}}, false, ":method not a token"},
      {{{":method", "GET"}, {":scheme", "1http"}, {":authority", "a"}, {":path", "/"}}, false, ":scheme not a scheme"},
      {{{":method", "CONNECT"}, {":authority", "a:443"}, {":path", "/"}}, false, "CONNECT with :path"},
      {{{":method", "CONNECT"}, {":authority", "a:443"}, {":scheme", "https"}}, false, "CONNECT with :scheme"},
      {{{":method", "CONNECT"}}, false, "CONNECT without :authority"},
      {{{":method", ""}, {":scheme", "https"}, {":authority", "a"}, {":path", "/"}}, false, "empty :method"},
      {{{":method", "GET"}, {":scheme", "https"}, {":authority", "a"}, {":path", ""}}, false, "empty :path"},
  };
  for (auto& c : cases) CHECK(Valid(c.f, false, &h) == c.ok, "request: %s", c.what);

  const F ext = {{":method", "CONNECT"}, {":protocol", "websocket"}, {":scheme", "https"},
                 {":authority", "a"}, {":path", "/chat"}};
  CHECK(Valid(ext, true, &h) && h.protocol == "websocket" && h.path == "/chat", "extended CONNECT");
  CHECK(!Valid(ext, false, &h), "extended CONNECT not advertised");
  CHECK(!Valid(Without(ext, ":path"), true, &h), "extended CONNECT without :path");
  CHECK(!Valid(Without(ext, ":authority"), true, &h), "extended CONNECT without :authority");
  F get_protocol = ext;
  get_protocol[0].second = "GET";
  CHECK(!Valid(get_protocol, true, &h), ":protocol without CONNECT");

  // Field stops at the first malformed field: nothing after it is read.
  RequestRules r(false);
  CHECK(r.Field(":method", "GET") && !r.Field("Bad", "x"), "Field reports the bad field");
}

void TestTrailers() {
  CHECK(TrailerFieldOk("x-sum", "1"), "trailer");
  CHECK(!TrailerFieldOk(":path", "/"), "pseudo-header in trailers");
  CHECK(!TrailerFieldOk("connection", "x"), "connection in trailers");
  CHECK(!TrailerFieldOk("X-Sum", "1"), "uppercase trailer name");
  CHECK(!TrailerFieldOk("x-sum", "1\n"), "LF in a trailer value");
}

}  // namespace

int main() {
  TestRequests();
  TestTrailers();
  return CheckSummary("request_rules");
}
