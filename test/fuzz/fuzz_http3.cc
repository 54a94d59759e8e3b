// libFuzzer harness of the HTTP/3 core (src/core/http3/) alone: no QUIC,
// TLS, loop or N-API. Each input is one stream's bytes for one of the
// readers, read whole and again cut where the input says; the two
// transcripts (every callback with its data, the error, the FIN verdict)
// must be identical, so nothing depends on read boundaries. On top:
//   - every field section that decodes is encoded again (EncodeFieldSection)
//     and must decode to the same fields;
//   - every byte string that Huffman-decodes must encode back to exactly
//     itself (the code is a prefix code and valid padding is unique);
//   - ASan/UBSan: no overflow, leak or undefined behaviour on any input.
//
// Input: byte 0: mode (& 7, modulo 6) and a parameter (>> 3); byte 1:
// number of cuts (& 7); then 2 bytes per cut (a length, big endian, taken
// modulo what is left + 1); the rest is the stream.
//   mode 0  FrameReader (max non-DATA frame size 64 << (param & 7))
//   mode 1  RequestStreamFramer, HEADERS decoded with limit 256 << (param & 7)
//           and checked with RequestRules / TrailerFieldOk
//   mode 2  ControlStreamReader (param & 1: client role)
//   mode 3  a peer's unidirectional stream: type varint, then the control,
//           QPACK encoder (capacity param & 7 ? 0 : 256) or decoder reader
//   mode 4  DecodeFieldSection and HuffmanDecode over the whole input
//   mode 5  QpackDecoder (dynamic table, capacity 64 << (param & 3), at
//           most param >> 2 & 3 blocked streams), no cuts: the body is
//           records [op][len][len bytes]: op & 3 = 0 encoder-stream bytes,
//           1 a field section on stream (op >> 2) * 4, 2 cancel that
//           stream, 3 take the unblocked streams and the decoder-stream
//           bytes. A twin decoder gets the encoder stream byte by byte:
//           every result, field, table size and decoder-stream byte must
//           match; the table stays within its capacity, blocked streams
//           within their bound; decoded sections re-encode (static only)
//           to the same fields.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <vector>

#include "core/http3/frames.h"
#include "core/http3/huffman.h"
#include "core/http3/qpack.h"
#include "core/http3/qpack_decoder.h"
#include "core/http3/varint.h"
#include "core/stream/request_rules.h"

using namespace sluice::http3;

namespace {

void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_http3: %s\n", what);
  std::abort();
}

void AppendFields(std::string* log, const std::vector<HeaderField>& f) {
  for (auto& h : f) {
    *log += h.name;
    *log += '\0';
    *log += h.value;
    *log += '\0';
  }
}

// Decodes a section; on success checks the encode → decode round trip.
QpackStatus DecodeChecked(const uint8_t* p, size_t n, uint64_t limit,
                          std::vector<HeaderField>* out) {
  QpackStatus st = DecodeFieldSection(p, n, limit, out);
  if (st == QpackStatus::kOk) {
    std::string enc;
    EncodeFieldSection(out->data(), out->size(), &enc);
    std::vector<HeaderField> back;
    if (DecodeFieldSection(reinterpret_cast<const uint8_t*>(enc.data()), enc.size(),
                           UINT64_MAX, &back) != QpackStatus::kOk ||
        back.size() != out->size())
      Fail("re-encoded section does not decode");
    for (size_t i = 0; i < back.size(); i++)
      if (back[i].name != (*out)[i].name || back[i].value != (*out)[i].value)
        Fail("re-encoded section decodes differently");
  }
  return st;
}

struct FrameLog : FrameReader::Listener {
  std::string log;
  H3Error OnFrameHeader(uint64_t type, uint64_t length) override {
    log += "F" + std::to_string(type) + "/" + std::to_string(length) + "[";
    return H3Error::kNoError;
  }
  H3Error OnFramePayload(uint64_t, const uint8_t* d, size_t n, bool end) override {
    log.append(reinterpret_cast<const char*>(d), n);
    if (end) log += "]";
    return H3Error::kNoError;
  }
};

struct RequestLog : RequestStreamFramer::Delegate {
  std::string log;
  std::string body;  // DATA bytes since the last HEADERS, joined: pieces
                     // follow the read boundaries, the bytes must not
  uint64_t limit;
  void Flush() {
    if (body.empty()) return;
    log += "D" + std::to_string(body.size()) + ":" + body;
    body.clear();
  }
  H3Error OnHeaders(const uint8_t* b, size_t n, bool trailers) override {
    Flush();
    std::vector<HeaderField> f;
    QpackStatus st = DecodeChecked(b, n, limit, &f);
    log += trailers ? "T" : "H";
    log += std::to_string(static_cast<int>(st));
    AppendFields(&log, f);
    if (st == QpackStatus::kOk) {
      // The message rules, for what they accept: a request head always
      // has a method, and views that point into the fields.
      bool ok = true;
      if (trailers) {
        for (const HeaderField& x : f) ok = ok && sluice::TrailerFieldOk(x.name, x.value);
      } else {
        sluice::RequestRules rules((limit & 256) != 0);
        for (const HeaderField& x : f) ok = ok && rules.Field(x.name, x.value);
        ok = ok && rules.End();
        if (ok && rules.head().method.empty()) Fail("head without a method");
      }
      log += H3ErrorName(ok ? H3Error::kNoError : H3Error::kMessage);
    }
    // A bad section is the connection's QPACK error, as the transport
    // would answer it.
    return st == QpackStatus::kDecompressionFailed ? H3Error::kQpackDecompressionFailed
                                                   : H3Error::kNoError;
  }
  H3Error OnData(const uint8_t* d, size_t n) override {
    if (n == 0) Fail("empty OnData");
    body.append(reinterpret_cast<const char*>(d), n);
    return H3Error::kNoError;
  }
};

struct ControlLog : ControlStreamReader::Delegate {
  std::string log;
  H3Error OnSettings(const Settings& s) override {
    log += "S" + std::to_string(s.max_field_section_size) + "," +
           std::to_string(s.qpack_max_table_capacity) + "," +
           std::to_string(s.qpack_blocked_streams) + "," +
           std::to_string(s.enable_connect_protocol) + std::to_string(s.h3_datagram);
    return H3Error::kNoError;
  }
  H3Error OnGoaway(uint64_t id) override {
    log += "G" + std::to_string(id);
    return H3Error::kNoError;
  }
  H3Error OnMaxPushId(uint64_t id) override {
    log += "M" + std::to_string(id);
    return H3Error::kNoError;
  }
  H3Error OnCancelPush(uint64_t id) override {
    log += "C" + std::to_string(id);
    return H3Error::kNoError;
  }
};

using Pieces = std::vector<std::pair<const uint8_t*, size_t>>;

std::string E(H3Error e) { return std::string("|") + H3ErrorName(e); }

std::string RunFrames(unsigned param, const Pieces& in) {
  FrameLog l;
  FrameReader r(&l, uint64_t{64} << (param & 7));
  H3Error e = H3Error::kNoError;
  for (auto& p : in)
    if (e == H3Error::kNoError) e = r.Feed(p.first, p.second);
  if (r.Feed(nullptr, 0) != e) Fail("error not sticky");
  return l.log + E(e) + (r.AtFrameBoundary() ? "|B" : "|-");
}

std::string RunRequest(unsigned param, const Pieces& in) {
  RequestLog d;
  d.limit = uint64_t{256} << (param & 7);
  RequestStreamFramer r(&d, 16384);
  H3Error e = H3Error::kNoError;
  for (auto& p : in)
    if (e == H3Error::kNoError) e = r.Feed(p.first, p.second);
  d.Flush();
  return d.log + E(e) + E(r.OnFin());
}

std::string RunControl(unsigned param, const Pieces& in) {
  ControlLog d;
  ControlStreamReader r(&d, param & 1 ? ControlStreamReader::Role::kClient
                                      : ControlStreamReader::Role::kServer, 4096);
  H3Error e = H3Error::kNoError;
  for (auto& p : in)
    if (e == H3Error::kNoError) e = r.Feed(p.first, p.second);
  return d.log + E(e);
}

std::string RunUni(unsigned param, const Pieces& in) {
  UniStreamTypeReader type;
  PeerUniStreams peers;
  PeerUniStreams::Kind kind = PeerUniStreams::Kind::kIgnored;
  ControlLog cd;
  ControlStreamReader control(&cd);
  QpackEncoderStreamReader enc(param & 7 ? 0 : 256);
  QpackDecoderStreamReader dec;
  H3Error e = H3Error::kNoError;
  std::string log;
  for (auto& p : in) {
    const uint8_t* d = p.first;
    size_t n = p.second;
    if (e != H3Error::kNoError) break;
    if (!type.done()) {
      size_t used = type.Feed(d, n);
      d += used;
      n -= used;
      if (!type.done()) continue;
      e = peers.Open(type.type(), &kind);
      log += "U" + std::to_string(type.type()) + "," + std::to_string(static_cast<int>(kind));
      if (e != H3Error::kNoError) break;
    }
    switch (kind) {
      case PeerUniStreams::Kind::kControl: e = control.Feed(d, n); break;
      case PeerUniStreams::Kind::kQpackEncoder: e = enc.Feed(d, n); break;
      case PeerUniStreams::Kind::kQpackDecoder: e = dec.Feed(d, n); break;
      default: break;  // push from a client is refused above; others dropped
    }
  }
  return log + cd.log + E(e);
}

void RunDynamic(unsigned param, const uint8_t* p, size_t n) {
  uint64_t cap = uint64_t{64} << (param & 3);
  uint64_t max_blocked = (param >> 2) & 3;
  QpackDecoder a(cap, max_blocked), b(cap, max_blocked);
  H3Error ea = H3Error::kNoError, eb = H3Error::kNoError;
  size_t pos = 0;
  while (pos + 2 <= n) {
    uint8_t op = p[pos];
    size_t len = std::min<size_t>(p[pos + 1], n - pos - 2);
    const uint8_t* d = p + pos + 2;
    pos += 2 + len;
    uint64_t stream = static_cast<uint64_t>(op >> 2) * 4;
    switch (op & 3) {
      case 0:
        if (ea != H3Error::kNoError) break;
        ea = a.FeedEncoderStream(d, len);
        for (size_t i = 0; i < len && eb == H3Error::kNoError; i++)
          eb = b.FeedEncoderStream(d + i, 1);
        if (ea != eb) Fail("encoder stream result depends on the read boundaries");
        break;
      case 1: {
        std::vector<HeaderField> fa, fb;
        auto ra = a.Decode(stream, d, len, 4096, &fa);
        auto rb = b.Decode(stream, d, len, 4096, &fb);
        if (ra != rb || fa.size() != fb.size()) Fail("twin decoders differ");
        for (size_t i = 0; i < fa.size(); i++)
          if (fa[i].name != fb[i].name || fa[i].value != fb[i].value)
            Fail("twin decoders decode differently");
        if (ra == QpackDecoder::Result::kOk) {
          std::string enc;
          EncodeFieldSection(fa.data(), fa.size(), &enc);
          std::vector<HeaderField> back;
          if (DecodeFieldSection(reinterpret_cast<const uint8_t*>(enc.data()), enc.size(),
                                 UINT64_MAX, &back) != QpackStatus::kOk ||
              back.size() != fa.size())
            Fail("dynamic section does not re-encode");
        }
        break;
      }
      case 2:
        a.StreamCancelled(stream);
        b.StreamCancelled(stream);
        break;
      default: {
        std::vector<uint64_t> ua, ub;
        a.TakeUnblocked(&ua);
        b.TakeUnblocked(&ub);
        std::string da, db;
        a.TakeDecoderStream(&da);
        b.TakeDecoderStream(&db);
        if (ua != ub || da != db) Fail("twin decoders owe different things");
        // What the decoder stream says must be readable by an encoder's
        // reader of it (this side never inserts, so only its syntax is
        // checked here: every instruction complete).
        break;
      }
    }
    if (a.table_size() > a.capacity() || a.capacity() > cap) Fail("table over capacity");
    if (a.blocked_streams() > max_blocked) Fail("blocked streams over the bound");
    if (ea == H3Error::kNoError &&
        (a.insert_count() != b.insert_count() || a.table_size() != b.table_size()))
      Fail("twin tables differ");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  unsigned mode = (data[0] & 7) % 6;
  unsigned param = data[0] >> 3;
  unsigned cuts = data[1] & 7;
  size_t pos = 2;
  std::vector<size_t> lens;
  for (unsigned i = 0; i < cuts && pos + 2 <= size; i++, pos += 2)
    lens.push_back((size_t{data[pos]} << 8) | data[pos + 1]);
  const uint8_t* body = data + pos;
  size_t n = size - pos;

  if (mode == 5) {
    RunDynamic(param, data + 1, size - 1);
    return 0;
  }
  if (mode == 4) {
    std::vector<HeaderField> f;
    DecodeChecked(body, n, uint64_t{256} << (param & 7), &f);
    std::string dec;
    if (HuffmanDecode(body, n, &dec)) {
      std::string enc;
      HuffmanEncode(reinterpret_cast<const uint8_t*>(dec.data()), dec.size(), &enc);
      if (enc.size() != n || enc.compare(0, n, reinterpret_cast<const char*>(body), n) != 0)
        Fail("Huffman decode → encode is not the identity");
      if (HuffmanEncodedLength(reinterpret_cast<const uint8_t*>(dec.data()), dec.size()) != n)
        Fail("HuffmanEncodedLength");
    }
    return 0;
  }

  // Whole, then cut: each piece in a fresh heap copy so ASan sees reads
  // past a piece's end.
  Pieces whole{{body, n}};
  std::vector<std::vector<uint8_t>> copies;
  Pieces cut;
  size_t at = 0;
  for (size_t l : lens) {
    size_t k = l % (n - at + 1);
    copies.emplace_back(body + at, body + at + k);
    at += k;
  }
  copies.emplace_back(body + at, body + n);
  for (auto& c : copies) cut.emplace_back(c.data(), c.size());

  std::string (*run)(unsigned, const Pieces&) =
      mode == 0 ? RunFrames : mode == 1 ? RunRequest : mode == 2 ? RunControl : RunUni;
  if (run(param, whole) != run(param, cut)) Fail("transcript depends on the read boundaries");
  return 0;
}

#ifdef SLUICE_FUZZ_REPLAY_MAIN
// Without libFuzzer (test/unit/http3_core.test.js): runs each file named
// on the command line through the harness once, so the corpus, crash
// inputs included, is replayed with every check above in npm test.
#include <fstream>
#include <iterator>

int main(int argc, char** argv) {
  for (int i = 1; i < argc; i++) {
    std::ifstream f(argv[i], std::ios::binary);
    std::vector<uint8_t> data((std::istreambuf_iterator<char>(f)),
                              std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(data.data(), data.size());
  }
  std::printf("fuzz_http3 replay: %d inputs, ok\n", argc - 1);
  return 0;
}
#endif
