// An Http1Parser transcript: what the parser reports for an input parsed
// whole or cut into reads, written down as text so two parses can be
// compared (which events, heads, body bytes per request, trailers,
// refusals), independent of how body bytes were grouped into runs. Shared
// by the parser's unit test (test/unit/native/http1_parser_test.cc) and
// its fuzz harness (test/fuzz/fuzz_http1_parser.cc).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/common/options.h"
#include "core/http1/http1_parser.h"

namespace sluice {
namespace transcript {

#define PARSER_CHECK(cond, ...)                                    \
  do {                                                             \
    if (!(cond)) {                                                 \
      fprintf(stderr, "http1_parser: " __VA_ARGS__);          \
      fprintf(stderr, "\n");                                       \
      abort();                                                     \
    }                                                              \
  } while (0)

class Recorder final : public Http1ParserListener {
 public:
  std::string log;
  // The buffer the current Execute parses and whether it is "embedder
  // memory": offsets are then checked against it.
  const char* ubuf = nullptr;

  int OnMessageBegin() override {
    log += "begin\n";
    return 0;
  }
  int OnHeadersComplete() override { return 0; }
  void OnHead(RequestHead& h) override {
    // head.complete depends on where the reads end: not recorded.
    log += "head " + std::to_string(h.method) + " " +
           std::to_string(h.http_major) + "." + std::to_string(h.http_minor) +
           " ka=" + std::to_string(h.keep_alive) +
           " up=" + std::to_string(h.upgrade) +
           " exp=" + std::to_string(h.expect_continue) + " url=";
    log.append(h.url.data(), h.url.size());
    for (auto& f : h.headers) {
      log += "\n  ";
      log.append(f.first.data(), f.first.size());
      log += ": ";
      log.append(f.second.data(), f.second.size());
    }
    log += "\n";
    FlushBody();
  }
  void OnBody(const char* data, size_t len, int64_t offset) override {
    PARSER_CHECK(len > 0, "empty body run");
    if (offset >= 0) {
      PARSER_CHECK(ubuf != nullptr, "offset without embedder memory");
      PARSER_CHECK(data == ubuf + offset, "offset %lld does not point at the run",
                   static_cast<long long>(offset));
    } else {
      PARSER_CHECK(ubuf == nullptr, "a run in embedder memory reported as transient");
    }
    body_.append(data, len);
  }
  void OnMessageEnd() override { FlushBody(); }
  void OnTrailers(const Http1Fields& trailers) override {
    FlushBody();
    // Whether an empty trailer block is reported depends on whether the
    // head went out before the message ended, i.e. on the cuts.
    if (trailers.empty()) return;
    log += "trailers";
    for (auto& f : trailers) {
      log += "\n  ";
      log.append(f.first.data(), f.first.size());
      log += ": ";
      log.append(f.second.data(), f.second.size());
    }
    log += "\n";
  }
  int OnMessageDone() override {
    FlushBody();
    log += "done\n";
    return 0;
  }
  bool Stopped() const override { return false; }

  void FlushBody() {
    if (body_.empty()) return;
    log += "body " + std::to_string(body_.size()) + " ";
    log += body_;
    log += "\n";
    body_.clear();
  }

 private:
  std::string body_;
};

// Parses `input` as reads of the given lengths (the last read takes the
// rest); returns the transcript.
inline std::string Parse(const std::string& input, const std::vector<size_t>& cuts,
                  bool embedder_memory, const ServerOptions& options) {
  Recorder rec;
  Http1Parser parser(&rec, &options, /*detect_http2=*/false);
  size_t off = 0;
  size_t k = 0;
  bool stop = false;
  while (!stop && off < input.size()) {
    size_t n = k < cuts.size() ? cuts[k++] : input.size() - off;
    if (n == 0) continue;
    if (n > input.size() - off) n = input.size() - off;
    // A fresh buffer per read: what an earlier read held is gone.
    std::vector<char> read(input.begin() + off, input.begin() + off + n);
    off += n;
    const char* data = read.data();
    size_t len = read.size();
    while (true) {
      rec.ubuf = embedder_memory ? read.data() : nullptr;
      Http1Parser::Status st =
          parser.Execute(data, len, embedder_memory ? read.data() : nullptr);
      if (st == Http1Parser::Status::kOk) break;
      if (st == Http1Parser::Status::kUpgrade &&
          parser.method() != HTTP_CONNECT) {
        // As the session without a tunnel: the upgrade was answered as a
        // normal request; parse on.
        parser.ResumeAfterUpgrade();
        const char* pos = parser.pos();
        len -= static_cast<size_t>(pos - data);
        data = pos;
        if (len == 0) break;
        continue;
      }
      if (st == Http1Parser::Status::kUpgrade) {
        rec.log += "connect\n";
      } else if (st == Http1Parser::Status::kError) {
        const Http1Parser::Error& e = parser.error();
        rec.FlushBody();
        // A size limit (431, 413) counts the spans reported so far, and
        // llhttp reports a span at every read's end: cut into reads, a
        // request can hit the limit before the bad byte that refuses it
        // whole. Marked, for the comparison below.
        bool limit = e.kind == Http1Parser::Error::kBodyTooLarge ||
                     e.status == 431 || e.status == 413;
        // The answer, not node's code and reason for it: where a request
        // holds two faults, which one is named first can depend on the
        // cuts (a fold is seen at a read's end, before a later byte that
        // llhttp refuses when it has the request whole).
        rec.log += limit ? "limit-error " : "error ";
        rec.log += std::to_string(e.kind) + " " + std::to_string(e.status) +
                   "\n";
      } else {
        PARSER_CHECK(false, "unexpected status %d", static_cast<int>(st));
      }
      stop = true;
      break;
    }
  }
  if (!stop && parser.in_message()) {
    rec.ubuf = nullptr;
    rec.log += parser.Finish() ? "eof-complete\n" : "eof-cut\n";
  }
  rec.FlushBody();
  return rec.log;
}

// Makes two transcripts of one input comparable: where either parse
// stopped at a size limit, the other may have stopped at another refusal
// earlier or later in the same request, so only the requests before the
// refused one are kept.
inline void Comparable(std::string* whole, std::string* split) {
  if (whole->find("limit-error ") == std::string::npos &&
      split->find("limit-error ") == std::string::npos) {
    return;
  }
  auto head = [](const std::string& t) {
    size_t e = t.find("error ");
    size_t b = t.rfind("begin\n", e);
    return t.substr(0, b == std::string::npos ? 0 : b);
  };
  *whole = head(*whole);
  *split = head(*split);
}

}  // namespace transcript
}  // namespace sluice
