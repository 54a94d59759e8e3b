// Unit test of src/core/http1/http1_parser.* alone (no connection, loop,
// delegate or N-API; llhttp from Debian's node-llhttp in strict mode, as
// the addon): requests of every shape the parser treats differently, each
// parsed whole and then split at every position and byte by byte, in
// fresh buffers and in "embedder memory"; the transcripts must match the
// whole parse, and the whole parse what node answers. Built and run by
// test/unit/http1_parser.test.js; exits non-zero with a message on the
// first difference.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "http1_transcript.h"

using sluice::ServerOptions;
using sluice::transcript::Comparable;
using sluice::transcript::Parse;

namespace {

int failures = 0;
size_t parses = 0;

void Fail(const char* name, const char* what, const std::string& want,
          const std::string& got) {
  std::fprintf(stderr, "FAIL %s: %s\n--- want ---\n%s--- got ---\n%s", name,
               what, want.c_str(), got.c_str());
  if (++failures > 5) std::exit(1);
}

struct Case {
  const char* name;
  std::string input;
  // Lines the whole parse's transcript must contain, in order.
  std::vector<std::string> expect;
  bool small_limits = false;
};

bool ContainsInOrder(const std::string& t, const std::vector<std::string>& v) {
  size_t pos = 0;
  for (const std::string& s : v) {
    pos = t.find(s, pos);
    if (pos == std::string::npos) return false;
    pos += s.size();
  }
  return true;
}

void Run(const Case& c) {
  ServerOptions options;
  if (c.small_limits) {
    options.max_header_size = 256;
    options.max_headers_count = 4;
    options.max_request_body_size = 1000;
  }
  std::string whole = Parse(c.input, {}, false, options);
  parses++;
  if (!ContainsInOrder(whole, c.expect)) {
    std::string want;
    for (const std::string& s : c.expect) want += s + " ...\n";
    Fail(c.name, "whole parse", want, whole);
    return;
  }
  std::vector<std::vector<size_t>> cut_sets;
  for (size_t at = 1; at < c.input.size(); at++) cut_sets.push_back({at});
  cut_sets.push_back(std::vector<size_t>(c.input.size(), 1));  // byte by byte
  for (const auto& cuts : cut_sets) {
    for (bool ubuf : {false, true}) {
      std::string w = whole;
      std::string split = Parse(c.input, cuts, ubuf, options);
      parses++;
      Comparable(&w, &split);
      if (split != w) {
        Fail(c.name,
             cuts.size() == 1 ? ("cut at " + std::to_string(cuts[0])).c_str()
                              : "byte by byte",
             w, split);
        return;
      }
    }
  }
}

std::string Repeat(const std::string& s, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; i++) out += s;
  return out;
}

}  // namespace

int main() {
  const std::vector<Case> cases = {
      {"get",
       "GET /a?b=c HTTP/1.1\r\nHost: h\r\nX-Sp:  v \t\r\n\r\n",
       {"head 1 1.1 ka=1 up=0 exp=0 url=/a?b=c\n  Host: h\n  X-Sp: v\n",
        "done\n"}},
      {"pipelined, Content-Length body, HTTP/1.0",
       "GET /1 HTTP/1.1\r\nHost: h\r\n\r\n"
       "POST /2 HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"
       "GET /3 HTTP/1.0\r\n\r\n",
       {"url=/1", "done\n", "url=/2", "body 5 hello\n", "done\n",
        "head 1 1.0 ka=0", "done\n"}},
      {"chunked body with extensions and trailers",
       "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
       "1;e=1\r\na\r\n3\r\nbcd\r\n0\r\nX-T: t\r\n\r\n",
       {"url=/c", "body 4 abcd\n", "trailers\n  X-T: t\n", "done\n"}},
      {"Expect: 100-continue",
       "PUT /e HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n"
       "Content-Length: 2\r\n\r\nok",
       {"exp=1", "body 2 ok\n", "done\n"}},
      {"Upgrade answered as a normal request, parsing goes on",
       "GET /ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\n"
       "Upgrade: websocket\r\n\r\nGET /next HTTP/1.1\r\nHost: h\r\n\r\n",
       {"up=1", "done\n", "url=/next", "done\n"}},
      {"CONNECT: what follows is not HTTP",
       "CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\nnot http",
       {"head 5 1.1", "done\n", "connect\n"}},
      {"CONNECT with chunked framing: the tunnel bytes are not scanned as chunks",
       "CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\nTransfer-Encoding: chunked\r\n"
       "\r\nx\r\n y\n\n",
       {"head 5 1.1", "done\n", "connect\n"}},
      {"Connection: close<TAB> closes (as llhttp 9.4)",
       "GET / HTTP/1.1\r\nHost: h\r\nConnection: close\t\r\n\r\n",
       {"ka=0", "done\n"}},
      // Refusals: node's llhttp 9 answers 400 where llhttp 8.1 is lax.
      {"obs-fold", "GET / HTTP/1.1\r\nHost: h\r\nX-F: a\r\n b\r\n\r\n",
       {"error 0 400\n"}},
      {"bare LF after the version",
       "GET / HTTP/1.1\nHost: h\r\n\r\n", {"error 0 400\n"}},
      {"bare LF ending the head",
       "GET / HTTP/1.1\r\nHost: h\r\n\n", {"error 0 400\n"}},
      {"empty header name", "GET / HTTP/1.1\r\n: x\r\n\r\n", {"error 0 400\n"}},
      {"Transfer-Encoding after Content-Length",
       "POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: \r\n\r\nx",
       {"error 0 400\n"}},
      {"empty Transfer-Encoding",
       "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding:  \r\n\r\n",
       {"error 0 400\n"}},
      {"Content-Length in the trailers",
       "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n"
       "Content-Length: 1\r\n\r\n",
       {"error 0 400\n"}},
      {"control byte in a quoted chunk extension",
       "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
       "1;a=\"\x01\"\r\nx\r\n0\r\n\r\n",
       {"error 0 400\n"}},
      {"empty chunk extension value before ;",
       "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;a=;\r\nxyz\r\n0\r\n\r\n",
       {"error 0 400\n"}},
      // Limits.
      {"maxHeadersCount drops lines past it",
       "GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\n\r\n",
       {"  D: 4\ndone\n"},
       true},
      {"maxHeaderSize: 431",
       "GET / HTTP/1.1\r\nHost: h\r\nX: " + Repeat("v", 300) + "\r\n\r\n",
       {"limit-error 0 431\n"},
       true},
      {"Content-Length over maxRequestBodySize: 413 before the body",
       "POST / HTTP/1.1\r\nContent-Length: 5000\r\n\r\nxx",
       {"head 3", "limit-error 1 413\n"},
       true},
      {"chunked body growing past maxRequestBodySize: 413",
       "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" +
           Repeat("100\r\n" + Repeat("y", 256) + "\r\n", 5) + "0\r\n\r\n",
       {"head 3", "limit-error 1 413\n"},
       true},
  };
  for (const Case& c : cases) Run(c);
  if (failures > 0) return 1;
  std::printf("http1_parser: %zu cases, %zu parses, ok\n", cases.size(),
              parses);
  return 0;
}
