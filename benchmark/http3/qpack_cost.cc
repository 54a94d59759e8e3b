// Instruction cost of the HTTP/3 core's field-section work, for
// docs/benchmarks.md: run under `valgrind --tool=callgrind` (counts do not
// depend on machine load). One browser-like GET request head is encoded
// once, then decoded N times (DecodeFieldSection, capacity 0); a typical
// response head is encoded N times. For scale, nghttp2's HPACK inflater
// (the HTTP/2 path) decodes the same head as a connection's first request
// (literals, Huffman: what QPACK at capacity 0 always gets) N times, with a
// fresh inflater each time or one inflater, and as a later request whose
// fields are all in the dynamic table (indexed: HTTP/2's best case).
//
//   g++ -std=c++17 -O2 -I src benchmark/http3/qpack_cost.cc src/core/http3/*.cc -lnghttp2 -o /tmp/qpack_cost
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out /tmp/qpack_cost qpack-decode 10000
//   (modes: qpack-decode, qpack-encode, hpack-inflate, hpack-inflate-fresh,
//   hpack-inflate-indexed, baseline)
// Subtract `baseline` (setup only) and divide by N.
#include <nghttp2/nghttp2.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/http3/qpack.h"

using namespace sluice::http3;

namespace {

std::vector<HeaderField> Request() {
  return {{":method", "GET"},
          {":scheme", "https"},
          {":authority", "www.example.com"},
          {":path", "/assets/app.3f9a1c.js?v=12"},
          {"sec-ch-ua", "\"Chromium\";v=\"120\", \"Not?A_Brand\";v=\"24\""},
          {"sec-ch-ua-mobile", "?0"},
          {"user-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
                         "Chrome/120.0.0.0 Safari/537.36"},
          {"sec-ch-ua-platform", "\"Linux\""},
          {"accept", "*/*"},
          {"sec-fetch-site", "same-origin"},
          {"sec-fetch-mode", "no-cors"},
          {"sec-fetch-dest", "script"},
          {"referer", "https://www.example.com/"},
          {"accept-encoding", "gzip, deflate, br"},
          {"accept-language", "en-US,en;q=0.9"},
          {"cookie", "session=7d1f0a9c2b; theme=dark"}};
}

std::vector<HeaderField> Response() {
  return {{":status", "200"},
          {"content-type", "application/javascript"},
          {"content-length", "48213"},
          {"date", "Fri, 04 Dec 2026 17:30:00 GMT"},
          {"etag", "\"bc55-18c3a1f2e40\""},
          {"last-modified", "Thu, 03 Dec 2026 09:12:44 GMT"},
          {"cache-control", "public, max-age=31536000"},
          {"content-encoding", "br"},
          {"vary", "accept-encoding"},
          {"alt-svc", "h3=\":443\"; ma=86400"}};
}

// The HPACK block of f as a connection's first request, or (second) as
// the next request with the same fields.
std::string Hpack(const std::vector<HeaderField>& f, bool second = false) {
  std::vector<nghttp2_nv> nv;
  for (auto& h : f)
    nv.push_back({(uint8_t*)h.name.data(), (uint8_t*)h.value.data(), h.name.size(),
                  h.value.size(), NGHTTP2_NV_FLAG_NONE});
  nghttp2_hd_deflater* d;
  nghttp2_hd_deflate_new(&d, 4096);
  std::string out(nghttp2_hd_deflate_bound(d, nv.data(), nv.size()), '\0');
  ssize_t n = nghttp2_hd_deflate_hd(d, (uint8_t*)out.data(), out.size(), nv.data(), nv.size());
  if (second)
    n = nghttp2_hd_deflate_hd(d, (uint8_t*)out.data(), out.size(), nv.data(), nv.size());
  nghttp2_hd_deflate_del(d);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

size_t Inflate(nghttp2_hd_inflater* inf, const std::string& block) {
  size_t fields = 0;
  const uint8_t* p = (const uint8_t*)block.data();
  size_t left = block.size();
  for (;;) {
    nghttp2_nv nv;
    int flags = 0;
    ssize_t r = nghttp2_hd_inflate_hd2(inf, &nv, &flags, p, left, 1);
    if (r < 0) std::abort();
    p += r;
    left -= static_cast<size_t>(r);
    if (flags & NGHTTP2_HD_INFLATE_EMIT) fields++;
    if (flags & NGHTTP2_HD_INFLATE_FINAL) {
      nghttp2_hd_inflate_end_headers(inf);
      break;
    }
    if (r == 0 && left == 0) break;
  }
  return fields;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "baseline";
  long n = argc > 2 ? std::atol(argv[2]) : 10000;
  std::vector<HeaderField> req = Request(), res = Response();
  std::string qreq;
  EncodeFieldSection(req.data(), req.size(), &qreq);
  std::string hreq = Hpack(req);
  size_t sink = 0;
  if (!std::strcmp(mode, "qpack-decode")) {
    std::vector<HeaderField> out;
    for (long i = 0; i < n; i++) {
      if (DecodeFieldSection((const uint8_t*)qreq.data(), qreq.size(), 65536, &out) !=
          QpackStatus::kOk)
        std::abort();
      sink += out.size();
    }
  } else if (!std::strcmp(mode, "qpack-encode")) {
    std::string out;
    for (long i = 0; i < n; i++) {
      out.clear();
      EncodeFieldSection(res.data(), res.size(), &out);
      sink += out.size();
    }
  } else if (!std::strcmp(mode, "hpack-inflate")) {
    nghttp2_hd_inflater* inf;
    nghttp2_hd_inflate_new(&inf);
    for (long i = 0; i < n; i++) sink += Inflate(inf, hreq);
    nghttp2_hd_inflate_del(inf);
  } else if (!std::strcmp(mode, "hpack-inflate-indexed")) {
    std::string again = Hpack(req, true);
    nghttp2_hd_inflater* inf;
    nghttp2_hd_inflate_new(&inf);
    Inflate(inf, hreq);
    for (long i = 0; i < n; i++) sink += Inflate(inf, again);
    nghttp2_hd_inflate_del(inf);
    std::printf("later HPACK block: %zu bytes\n", again.size());
  } else if (!std::strcmp(mode, "hpack-inflate-fresh")) {
    for (long i = 0; i < n; i++) {
      nghttp2_hd_inflater* inf;
      nghttp2_hd_inflate_new(&inf);
      sink += Inflate(inf, hreq);
      nghttp2_hd_inflate_del(inf);
    }
  }
  std::printf("%s x%ld: request section %zu bytes QPACK, %zu bytes HPACK; sink %zu\n", mode, n,
              qreq.size(), hreq.size(), sink);
  return 0;
}
