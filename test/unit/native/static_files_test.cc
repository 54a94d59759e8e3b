// Unit test of serveStatic's pure parts (no libuv, no N-API): request
// path decoding and normalisation (src/core/files/static_path.*), the
// validator / conditional / range decision (static_headers.*) and the
// content-type table (content_types.*), Accept-Encoding negotiation
// (compress/accept_encoding.*) and the text helpers they share
// (common/text.h). Built and run by
// test/unit/static_files.test.js; exits non-zero on the first failures.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "check.h"
#include "core/common/text.h"
#include "core/compress/accept_encoding.h"
#include "core/files/content_types.h"
#include "core/files/static_headers.h"
#include "core/files/static_path.h"

using namespace sluice;

namespace {


const char* KindName(StaticPath::Kind k) {
  switch (k) {
    case StaticPath::kNoMatch: return "nomatch";
    case StaticPath::kOk: return "ok";
    case StaticPath::kBadRequest: return "400";
    case StaticPath::kForbidden: return "403";
  }
  return "?";
}

void Path(const char* target, const char* prefix, StaticPath::Kind kind,
          const char* rel = nullptr, bool slash = false, bool dot = false) {
  StaticPath p = ParseStaticPath(target, prefix);
  CHECK(p.kind == kind, "%s under %s: %s, want %s", target, prefix,
        KindName(p.kind), KindName(kind));
  if (p.kind == kind && kind == StaticPath::kOk && rel != nullptr) {
    CHECK(p.rel == rel, "%s: rel '%s', want '%s'", target, p.rel.c_str(), rel);
    CHECK(p.trailing_slash == slash, "%s: trailing slash %d", target,
          p.trailing_slash);
    CHECK(p.dotfile == dot, "%s: dotfile %d", target, p.dotfile);
  }
}

void Paths() {
  using K = StaticPath::Kind;
  Path("/a.txt", "/", K::kOk, "a.txt");
  Path("/static/a.txt", "/static", K::kOk, "a.txt");
  Path("/static", "/static", K::kOk, "");
  Path("/static/", "/static", K::kOk, "", true);
  Path("/staticx/a.txt", "/static", K::kNoMatch);
  Path("/other/a.txt", "/static", K::kNoMatch);
  Path("*", "/", K::kNoMatch);
  Path("example.com:443", "/", K::kNoMatch);
  Path("/a/b.txt?x=1#f", "/", K::kOk, "a/b.txt");
  Path("http://h.example/static/a.txt?q", "/static", K::kOk, "a.txt");
  Path("http://h.example", "/", K::kOk, "", true);
  Path("//a//b.txt", "/", K::kOk, "a/b.txt");
  Path("/a/./b.txt", "/", K::kOk, "a/b.txt");
  Path("/a/../b.txt", "/", K::kOk, "b.txt");
  Path("/dir/sub/", "/", K::kOk, "dir/sub", true);
  Path("/a%20b.txt", "/", K::kOk, "a b.txt");
  Path("/caf%C3%A9.txt", "/", K::kOk, "caf\xC3\xA9.txt");
  Path("/.env", "/", K::kOk, ".env", false, true);
  Path("/a/.git/config", "/", K::kOk, "a/.git/config", false, true);
  Path("/.a/../b", "/", K::kOk, "b", false, false);
  // traversal, encoded or not
  Path("/../etc/passwd", "/", K::kForbidden);
  Path("/static/../secret.txt", "/static", K::kForbidden);
  Path("/a/../../etc/passwd", "/", K::kForbidden);
  Path("/%2e%2e/etc/passwd", "/", K::kForbidden);
  Path("/%2E%2e/etc/passwd", "/", K::kForbidden);
  Path("/.%2e/etc/passwd", "/", K::kForbidden);
  Path("/a/%2e%2e/%2e%2e/x", "/", K::kForbidden);
  Path("/..%2fetc%2fpasswd", "/", K::kForbidden);
  Path("/a%2fb.txt", "/", K::kForbidden);
  Path("/a%2Fb.txt", "/", K::kForbidden);
  Path("/..%5cetc", "/", K::kForbidden);
  Path("/..\\etc", "/", K::kForbidden);
  Path("/a\\b.txt", "/", K::kForbidden);
  Path("/%252e%252e/x", "/", K::kOk, "%2e%2e/x");  // decoded once only
  Path("/%c0%ae%c0%ae/x", "/", K::kBadRequest);     // overlong '.'
  Path("/%e0%80%ae/x", "/", K::kBadRequest);        // overlong, 3 bytes
  Path("/%ed%a0%80", "/", K::kBadRequest);          // surrogate
  Path("/%f4%90%80%80", "/", K::kBadRequest);       // above U+10FFFF
  Path("/%ff", "/", K::kBadRequest);
  Path("/a%00.txt", "/", K::kBadRequest);
  Path("/a%0", "/", K::kBadRequest);
  Path("/a%zz", "/", K::kBadRequest);
  Path("/a%", "/", K::kBadRequest);
  Path("http://h/../x", "/", K::kForbidden);

  std::string out;
  CHECK(NormalizePrefix("/static/", &out) && out == "/static", "prefix %s", out.c_str());
  CHECK(NormalizePrefix("static", &out) && out == "/static", "prefix %s", out.c_str());
  CHECK(NormalizePrefix("", &out) && out == "/", "prefix %s", out.c_str());
  CHECK(NormalizePrefix("//a//b/", &out) && out == "/a/b", "prefix %s", out.c_str());
  CHECK(!NormalizePrefix("/a/../b", &out), "prefix with ..");
  CHECK(!NormalizePrefix("/a?b", &out), "prefix with ?");
}

std::string Header(const StaticDecision& d, const char* name) {
  for (const auto& h : d.headers) {
    if (h.first == name) return h.second;
  }
  return "<none>";
}

void Decisions() {
  StaticFileInfo f;
  f.size = 1000;
  f.mtime_sec = 1700000000;  // Tue, 14 Nov 2023 22:13:20 GMT
  f.mtime_nsec = 123456789;
  StaticHeaderOptions o;
  const std::string etag = StaticEtag(f);
  CHECK(etag == "W/\"3e8-18bcfe5687b\"", "etag %s", etag.c_str());
  {
    // Rounded as node's Date: .5 ms and up goes to the next millisecond,
    // and a Last-Modified second can move with it.
    StaticFileInfo r = f;
    r.mtime_nsec = 600000;
    CHECK(StaticMtimeMs(r) == 1700000000001, "round up %lld",
          static_cast<long long>(StaticMtimeMs(r)));
    r.mtime_nsec = 400000;
    CHECK(StaticMtimeMs(r) == 1700000000000, "round down");
    r.mtime_nsec = 999600000;
    CHECK(StaticMtimeMs(r) == 1700000001000, "round to next second");
    StaticConditionals none;
    StaticDecision rd = DecideStatic(r, "text/plain", o, none);
    bool saw = false;
    for (const auto& h : rd.headers) {
      if (h.first == "Last-Modified") {
        saw = true;
        CHECK(h.second == "Tue, 14 Nov 2023 22:13:21 GMT", "lm %s", h.second.c_str());
      }
    }
    CHECK(saw, "Last-Modified present");
  }
  CHECK(HttpDate(1700000000) == "Tue, 14 Nov 2023 22:13:20 GMT", "date %s",
        HttpDate(1700000000).c_str());
  CHECK(HttpDate(0) == "Thu, 01 Jan 1970 00:00:00 GMT", "epoch");
  int64_t t = 0;
  CHECK(ParseHttpDate("Tue, 14 Nov 2023 22:13:20 GMT", &t) && t == 1700000000, "imf");
  CHECK(ParseHttpDate("Tuesday, 14-Nov-23 22:13:20 GMT", &t) && t == 1700000000, "rfc850");
  CHECK(ParseHttpDate("Tue Nov 14 22:13:20 2023", &t) && t == 1700000000, "asctime");
  CHECK(!ParseHttpDate("yesterday", &t), "garbage date");

  auto decide = [&](std::initializer_list<std::pair<const char*, const char*>> h) {
    StaticConditionals c;
    for (const auto& kv : h) c.Take(kv.first, kv.second);
    return DecideStatic(f, "text/plain; charset=utf-8", o, c);
  };
  StaticDecision d = decide({});
  CHECK(d.status == 200 && d.length == 1000 && d.body, "plain %d", d.status);
  CHECK(Header(d, "Cache-Control") == "public, max-age=0", "cc");
  CHECK(Header(d, "Last-Modified") == "Tue, 14 Nov 2023 22:13:20 GMT", "lm");
  CHECK(Header(d, "Content-Type") == "text/plain; charset=utf-8", "ct");
  CHECK(decide({{"if-none-match", etag.c_str()}}).status == 304, "inm match");
  CHECK(decide({{"if-none-match", "\"3e8-18bcfe5687b\""}}).status == 304, "inm strong form");
  CHECK(decide({{"if-none-match", "\"other\", W/\"3e8-18bcfe5687b\""}}).status == 304, "inm list");
  CHECK(decide({{"if-none-match", "\"other\""}}).status == 200, "inm mismatch");
  CHECK(decide({{"if-none-match", "*"}}).status == 304, "inm star");
  CHECK(decide({{"if-modified-since", "Tue, 14 Nov 2023 22:13:20 GMT"}}).status == 304, "ims equal");
  CHECK(decide({{"if-modified-since", "Tue, 14 Nov 2023 22:13:19 GMT"}}).status == 200, "ims older");
  CHECK(decide({{"if-modified-since", "Wed, 15 Nov 2023 22:13:20 GMT"}}).status == 304, "ims newer");
  CHECK(decide({{"if-modified-since", "garbage"}}).status == 200, "ims invalid");
  CHECK(decide({{"if-none-match", etag.c_str()}, {"cache-control", "no-cache"}}).status == 200, "no-cache");
  d = decide({{"if-none-match", etag.c_str()}});
  CHECK(Header(d, "Content-Type") == "<none>" && Header(d, "ETag") == etag, "304 fields");
  CHECK(decide({{"if-match", "\"nope\""}}).status == 412, "if-match");
  CHECK(decide({{"if-match", "*"}}).status == 200, "if-match *");
  CHECK(decide({{"if-unmodified-since", "Mon, 13 Nov 2023 00:00:00 GMT"}}).status == 412, "ius");

  d = decide({{"range", "bytes=0-0"}});
  CHECK(d.status == 206 && d.offset == 0 && d.length == 1, "0-0");
  CHECK(Header(d, "Content-Range") == "bytes 0-0/1000", "cr %s", Header(d, "Content-Range").c_str());
  d = decide({{"range", "bytes=-500"}});
  CHECK(d.status == 206 && d.offset == 500 && d.length == 500, "-500");
  d = decide({{"range", "bytes=500-"}});
  CHECK(d.status == 206 && d.offset == 500 && d.length == 500, "500-");
  d = decide({{"range", "bytes=900-5000"}});
  CHECK(d.status == 206 && d.offset == 900 && d.length == 100, "clamped");
  d = decide({{"range", "bytes=1000-"}});
  CHECK(d.status == 416 && Header(d, "Content-Range") == "bytes */1000", "416");
  CHECK(decide({{"range", "bytes=0-1,5-6"}}).status == 200, "multi");
  d = decide({{"range", "bytes=0-1,2-6"}});
  CHECK(d.status == 206 && d.length == 7, "adjacent merged");
  CHECK(decide({{"range", "items=0-1"}}).status == 200, "other unit");
  CHECK(decide({{"range", "bytes=x-y"}}).status == 416, "garbage range");
  CHECK(decide({{"range", "bytes=0-0"}, {"if-range", etag.c_str()}}).status == 206, "if-range etag");
  CHECK(decide({{"range", "bytes=0-0"}, {"if-range", "\"stale\""}}).status == 200, "if-range stale");
  CHECK(decide({{"range", "bytes=0-0"}, {"if-range", "Tue, 14 Nov 2023 22:13:20 GMT"}}).status == 206, "if-range date");
  CHECK(decide({{"range", "bytes=0-0"}, {"if-range", "Tue, 14 Nov 2023 22:13:19 GMT"}}).status == 200, "if-range old date");
  // 412 / 416 keep send's fields (the middleware leaves them on res).
  d = decide({{"if-match", "\"nope\""}});
  CHECK(Header(d, "ETag") == etag && Header(d, "Content-Type") == "text/plain; charset=utf-8",
        "412 fields");
  d = decide({{"range", "bytes=5000-"}});
  CHECK(Header(d, "ETag") == etag && Header(d, "Content-Range") == "bytes */1000", "416 fields");

  // Validators the response carries (setHeaders) decide instead of the
  // file's.
  auto decide_ov = [&](const char* ov_etag, const char* ov_lm,
                       std::initializer_list<std::pair<const char*, const char*>> h) {
    StaticConditionals c;
    for (const auto& kv : h) c.Take(kv.first, kv.second);
    StaticValidatorOverride ov;
    if (ov_etag) { ov.has_etag = true; ov.etag = ov_etag; }
    if (ov_lm) { ov.has_last_modified = true; ov.last_modified = ov_lm; }
    return DecideStatic(f, "text/plain", o, c, &ov);
  };
  CHECK(decide_ov("\"mine\"", nullptr, {{"if-none-match", "\"mine\""}}).status == 304, "ov inm");
  CHECK(decide_ov("\"mine\"", nullptr, {{"if-none-match", etag.c_str()}}).status == 200, "ov inm file");
  CHECK(decide_ov("\"mine\"", nullptr, {{"if-match", etag.c_str()}}).status == 412, "ov if-match");
  CHECK(decide_ov(nullptr, "Mon, 01 Jan 2001 00:00:00 GMT",
                  {{"if-modified-since", "Tue, 02 Jan 2001 00:00:00 GMT"}}).status == 304, "ov ims");
  CHECK(decide_ov(nullptr, "not a date",
                  {{"if-unmodified-since", "Tue, 02 Jan 2001 00:00:00 GMT"}}).status == 412, "ov lm nan");
  CHECK(decide_ov("\"mine\"", nullptr, {{"range", "bytes=0-0"}, {"if-range", "\"mine\""}}).status == 206,
        "ov if-range");
  CHECK(decide_ov("\"mine\"", nullptr, {{"range", "bytes=0-0"}, {"if-range", etag.c_str()}}).status == 200,
        "ov if-range file");
  o.max_age_ms = 86400000;
  o.immutable = true;
  CHECK(Header(decide({}), "Cache-Control") == "public, max-age=86400, immutable", "immutable");
}

void Types() {
  CHECK(std::strcmp(ContentTypeFor("a/b/index.HTML").type, "text/html; charset=utf-8") == 0, "html");
  CHECK(std::strcmp(ContentTypeFor("x.js").type, "text/javascript; charset=utf-8") == 0, "js");
  CHECK(std::strcmp(ContentTypeFor("noext").type, "application/octet-stream") == 0, "none");
  CHECK(std::strcmp(ContentTypeFor("a.unknownext").type, "application/octet-stream") == 0, "unknown");
  CHECK(std::strcmp(ContentTypeFor("dir.d/file").type, "application/octet-stream") == 0, "dot in dir");
  size_t n = 0;
  const ContentTypeEntry* t = ContentTypeTable(&n);
  for (size_t i = 1; i < n; i++) {
    CHECK(std::strcmp(t[i - 1].ext, t[i].ext) < 0, "table unsorted at %s", t[i].ext);
  }
}

// ForEachPart is JS's split: every part, empty ones included.
std::string Split(std::string_view s, char d) {
  std::string out;
  ForEachPart(s, d, [&](std::string_view p) { out += "[" + std::string(p) + "]"; });
  return out;
}

void Text() {
  CHECK(Split("", ',') == "[]", "empty: %s", Split("", ',').c_str());
  CHECK(Split("a", ',') == "[a]", "one");
  CHECK(Split("a,,b", ',') == "[a][][b]", "inner empty: %s", Split("a,,b", ',').c_str());
  CHECK(Split(",a,", ',') == "[][a][]", "edges: %s", Split(",a,", ',').c_str());
  CHECK(Split("/x/y/", '/') == "[][x][y][]", "slashes");
  std::vector<std::string> seen;
  bool all = ForEachPart("a,b,c", ',', [&](std::string_view p) {
    seen.emplace_back(p);
    return p != "b";
  });
  CHECK(!all && seen.size() == 2, "stops at false");
  CHECK(ForEachPart("a,b", ',', [](std::string_view) { return true; }), "true when not stopped");
  CHECK(TrimOws(" \t a b\t ") == "a b", "trim");
  CHECK(TrimOws(" \t ").empty(), "trim all");
  CHECK(AsciiLowerCopy("AbC-\xC3\x84") == "abc-\xC3\x84", "lower leaves non-ASCII");
  CHECK(AsciiIEquals("GMT", "gmt") && !AsciiIEquals("GMT", "gm"), "iequals");
}

// NegotiateCoding over the rows the split loops see.
void Negotiation() {
  const Coding all[3] = {Coding::kBrotli, Coding::kGzip, Coding::kDeflate};
  auto n = [&](const char* ae) { return NegotiateCoding(ae, true, all, 3); };
  CHECK(n("gzip, br") == Coding::kBrotli, "server order breaks ties");
  CHECK(n("gzip;q=1, br;q=0.5") == Coding::kGzip, "q");
  CHECK(n("GZIP ; Q=0.9 ;foo=bar, br;q=0") == Coding::kGzip, "case, params");
  CHECK(n(",,deflate,,") == Coding::kDeflate, "empty parts");
  CHECK(n("identity;q=1, gzip;q=0.5") == Coding::kIdentity, "identity wins");
  CHECK(n("*;q=0") == Coding::kIdentity, "star zero");
  CHECK(n("*") == Coding::kBrotli, "star");
  CHECK(n("") == Coding::kIdentity, "empty header");
  CHECK(NegotiateCoding("gzip", false, all, 3) == Coding::kIdentity, "no header");
}

}  // namespace

int main() {
  Text();
  Negotiation();
  Paths();
  Decisions();
  Types();
  return CheckSummary("static_files");
}
