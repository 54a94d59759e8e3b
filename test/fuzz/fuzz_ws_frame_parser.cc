// libFuzzer harness of the WebSocket frame parser (src/core/websocket/
// ws_frame_parser.*) alone: no connection, loop or delegate. Each input is
// parsed twice, whole and cut into reads the input chooses; the two
// transcripts (messages, control frames, the error code) must be equal,
// whatever the cuts. On top, per delivered event: a text message is valid
// UTF-8 (checked here by decoding, independently of Utf8Validator) unless
// validation is skipped; no message is longer than max_payload; a control
// payload is at most 125 bytes; a close payload is empty or a code a peer
// may send; nothing is delivered after the error or after the listener
// stopped the parser (on a close frame, as the session does).
//
// Input: byte 0: config (bit 0 skip UTF-8, bit 1 RSV1 allowed, bits 2-3
// max_payload 0 / 16 / 300 / 70000); byte 1: number of cuts (& 7); then 2
// bytes per cut (a length, big endian, modulo what is left); the rest is
// the stream of client frames.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/websocket/ws_frame_parser.h"

using sluice::WsFrameParser;
using sluice::WsParserListener;

namespace {

// UTF-8 by decoding: each sequence to its code point, refusing overlongs,
// surrogates and values past U+10FFFF.
bool DecodesAsUtf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const uint8_t c = static_cast<uint8_t>(s[i]);
    size_t n;
    uint32_t cp;
    if (c < 0x80) { i++; continue; }
    if ((c & 0xE0) == 0xC0) { n = 1; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { n = 2; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { n = 3; cp = c & 0x07; }
    else return false;
    for (size_t k = 1; k <= n; k++) {
      if (i + k >= s.size()) return false;
      const uint8_t d = static_cast<uint8_t>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    static const uint32_t kMin[4] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

class Recorder final : public WsParserListener {
 public:
  explicit Recorder(const WsFrameParser::Config& cfg) : cfg_(cfg) {}
  bool OnWsMessage(bool binary, bool compressed, const char* data,
                   size_t len) override {
    if (stopped_) abort();  // delivered after the parser was stopped
    std::string m(data, len);
    if (cfg_.max_payload != 0 && len > cfg_.max_payload) abort();
    if (compressed && !cfg_.rsv1_allowed) abort();
    if (!binary && !compressed && !cfg_.skip_utf8 && !DecodesAsUtf8(m)) abort();
    log_ += (binary ? "B" : "T") + std::string(compressed ? "z" : "") +
            std::to_string(len) + ":" + m + "|";
    return true;
  }
  bool OnWsControl(uint8_t opcode, const char* data, size_t len) override {
    if (stopped_) abort();
    if (len > 125) abort();
    if (opcode == sluice::kWsClose) {
      if (len == 1) abort();
      if (len >= 2) {
        const uint32_t code = (uint32_t{static_cast<uint8_t>(data[0])} << 8) |
                              static_cast<uint8_t>(data[1]);
        if (!sluice::WsValidCloseCode(code)) abort();
      }
    }
    log_ += "C" + std::to_string(opcode) + ":" + std::string(data, len) + "|";
    if (opcode == sluice::kWsClose) {
      stopped_ = true;
      return false;
    }
    return true;
  }
  std::string log_;

 private:
  WsFrameParser::Config cfg_;
  bool stopped_ = false;
};

std::string Run(const WsFrameParser::Config& cfg, const uint8_t* data,
                size_t size, const std::vector<size_t>& cuts) {
  Recorder rec(cfg);
  WsFrameParser parser(&rec, cfg);
  size_t at = 0;
  int err = 0;
  for (size_t cut : cuts) {
    // Each read in a fresh heap buffer of its exact size, so ASan sees a
    // read past its end.
    std::vector<char> piece(data + at, data + at + cut);
    err = parser.Execute(piece.data(), piece.size());
    at += cut;
  }
  if (at < size) {
    std::vector<char> piece(data + at, data + size);
    err = parser.Execute(piece.data(), piece.size());
  }
  if (err != parser.error_code()) abort();
  return rec.log_ + "E" + std::to_string(err);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  WsFrameParser::Config cfg;
  cfg.skip_utf8 = data[0] & 1;
  cfg.rsv1_allowed = (data[0] >> 1) & 1;
  static const uint64_t kMax[4] = {0, 16, 300, 70000};
  cfg.max_payload = kMax[(data[0] >> 2) & 3];
  // A small fragment limit too, so inputs reach it.
  cfg.max_fragments = (data[0] >> 4) & 1 ? 3 : 16 * 1024;
  size_t ncuts = data[1] & 7;
  size_t pos = 2;
  std::vector<size_t> raw;
  for (size_t i = 0; i < ncuts && pos + 2 <= size; i++, pos += 2) {
    raw.push_back((size_t{data[pos]} << 8) | data[pos + 1]);
  }
  const uint8_t* stream = data + pos;
  const size_t len = size - pos;
  std::vector<size_t> cuts;
  size_t left = len;
  for (size_t r : raw) {
    const size_t c = left == 0 ? 0 : r % (left + 1);
    cuts.push_back(c);
    left -= c;
  }
  const std::string whole = Run(cfg, stream, len, {});
  const std::string split = Run(cfg, stream, len, cuts);
  if (whole != split) abort();
  // One byte per read: the hardest split.
  if (len <= 512) {
    std::vector<size_t> ones(len, 1);
    if (Run(cfg, stream, len, ones) != whole) abort();
  }
  return 0;
}
