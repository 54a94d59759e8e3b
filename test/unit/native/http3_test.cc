// Unit test of src/core/http3 (no QUIC, TLS, libuv or N-API): varints
// (RFC 9000 A.1), Huffman (RFC 7541 C.4 and C.6 strings, every code, bad
// padding and EOS), QPACK field sections (RFC 9204 B.1, every field line
// form and every error, the size limit, round trips), SETTINGS, the frame
// reader and the control / request stream rules, QPACK stream readers.
// Stream readers are fed whole, split at every position and at every two
// positions, byte by byte and in random pieces: the outcome and the
// transcript must not depend on the splits. Built and run by
// test/unit/http3_core.test.js; prints "http3: N checks, ok" or exits 1.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "check.h"
#include "core/http3/frames.h"
#include "core/http3/huffman.h"
#include "core/http3/qpack.h"
#include "core/http3/qpack_decoder.h"
#include "core/http3/varint.h"

using namespace sluice::http3;
using namespace std::string_literals;

namespace {


std::mt19937_64 rng(12345);

std::string Hex(const std::string& h) {  // "f1e3 c2" → bytes
  std::string out;
  int hi = -1;
  for (char c : h) {
    int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (v < 0) continue;
    if (hi < 0) {
      hi = v;
    } else {
      out.push_back(static_cast<char>(hi * 16 + v));
      hi = -1;
    }
  }
  return out;
}
std::string ToHex(const std::string& s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(d[c >> 4]);
    out.push_back(d[c & 15]);
  }
  return out;
}
const uint8_t* U(const std::string& s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}
std::string V(uint64_t v) {
  uint8_t b[8];
  return std::string(reinterpret_cast<char*>(b), WriteVarint(b, v));
}
std::string Frame(uint64_t type, const std::string& payload) {
  return V(type) + V(payload.size()) + payload;
}

// Every way this test cuts an input into reads: whole, each single split,
// each pair of splits (inputs up to 200 bytes), byte by byte, 50 random.
void ForEachSplit(const std::string& in,
                  const std::function<void(const std::vector<std::string>&)>& f) {
  f({in});
  for (size_t i = 0; i <= in.size(); i++) f({in.substr(0, i), in.substr(i)});
  if (in.size() <= 200) {
    for (size_t i = 0; i <= in.size(); i++)
      for (size_t j = i; j <= in.size(); j++)
        f({in.substr(0, i), in.substr(i, j - i), in.substr(j)});
  }
  std::vector<std::string> bytes;
  for (char c : in) bytes.emplace_back(1, c);
  f(bytes);
  for (int r = 0; r < 50; r++) {
    std::vector<std::string> pieces;
    size_t pos = 0;
    while (pos < in.size()) {
      size_t n = std::min<size_t>(in.size() - pos, 1 + rng() % 40);
      pieces.push_back(in.substr(pos, n));
      pos += n;
    }
    f(pieces);
  }
}

void TestVarint() {
  struct {
    const char* hex;
    uint64_t v;
  } vec[] = {{"c2197c5eff14e88c", 151288809941952652ull},
             {"9d7f3e7d", 494878333},
             {"7bbd", 15293},
             {"25", 37},
             {"4025", 37}};
  for (auto& t : vec) {
    std::string b = Hex(t.hex);
    uint64_t v = 0;
    CHECK(ReadVarint(U(b), b.size(), &v) == b.size() && v == t.v, "varint %s", t.hex);
    CHECK(ReadVarint(U(b), b.size() - 1, &v) == 0, "short varint %s", t.hex);
  }
  uint64_t dummy = 7;
  CHECK(ReadVarint(nullptr, 0, &dummy) == 0 && dummy == 7, "empty varint");
  uint64_t edges[] = {0, 63, 64, 16383, 16384, (1ull << 30) - 1, 1ull << 30, kMaxVarint};
  size_t sizes[] = {1, 1, 2, 2, 4, 4, 8, 8};
  for (size_t i = 0; i < 8; i++) {
    uint8_t b[8];
    size_t n = WriteVarint(b, edges[i]);
    uint64_t v;
    CHECK(n == sizes[i] && VarintSize(edges[i]) == n, "varint size %zu", i);
    CHECK(ReadVarint(b, n, &v) == n && v == edges[i], "varint round trip %zu", i);
  }
}

void TestHuffman() {
  unsigned bits;
  CHECK(HuffmanCode(0, &bits) == 0x1ff8 && bits == 13, "code 0");
  CHECK(HuffmanCode('0', &bits) == 0x0 && bits == 5, "code '0'");
  CHECK(HuffmanCode('a', &bits) == 0x3 && bits == 5, "code 'a'");
  CHECK(HuffmanCode(' ', &bits) == 0x14 && bits == 6, "code ' '");
  CHECK(HuffmanCode(10, &bits) == 0x3ffffffc && bits == 30, "code LF");
  CHECK(HuffmanCode(255, &bits) == 0x3ffffee && bits == 26, "code 255");
  CHECK(HuffmanCode(256, &bits) == 0x3fffffff && bits == 30, "code EOS");
  // RFC 7541 C.4 and C.6.
  struct {
    const char* text;
    const char* hex;
  } vec[] = {
      {"www.example.com", "f1e3 c2e5 f23a 6ba0 ab90 f4ff"},
      {"no-cache", "a8eb 1064 9cbf"},
      {"custom-key", "25a8 49e9 5ba9 7d7f"},
      {"custom-value", "25a8 49e9 5bb8 e8b4 bf"},
      {"302", "6402"},
      {"307", "640e ff"},
      {"private", "aec3 771a 4b"},
      {"gzip", "9bd9 ab"},
      {"Mon, 21 Oct 2013 20:13:21 GMT",
       "d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff"},
      {"Mon, 21 Oct 2013 20:13:22 GMT",
       "d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff"},
      {"https://www.example.com", "9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3"},
      {"foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1",
       "94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 "
       "291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07"},
  };
  for (auto& t : vec) {
    std::string text = t.text, enc;
    HuffmanEncode(U(text), text.size(), &enc);
    CHECK(enc == Hex(t.hex), "encode %s: %s", t.text, ToHex(enc).c_str());
    CHECK(HuffmanEncodedLength(U(text), text.size()) == enc.size(), "length %s", t.text);
    std::string dec;
    CHECK(HuffmanDecode(U(enc), enc.size(), &dec) && dec == text, "decode %s", t.text);
  }
  // Every symbol alone and every pair of a few, round trip.
  for (int s = 0; s < 256; s++) {
    std::string one(1, static_cast<char>(s)), enc, dec;
    HuffmanEncode(U(one), 1, &enc);
    CHECK(HuffmanDecode(U(enc), enc.size(), &dec) && dec == one, "symbol %d", s);
  }
  for (int r = 0; r < 2000; r++) {
    std::string s(rng() % 64, '\0'), enc, dec;
    for (auto& c : s) c = static_cast<char>(r % 2 ? rng() : 'a' + rng() % 26);
    HuffmanEncode(U(s), s.size(), &enc);
    CHECK(HuffmanDecode(U(enc), enc.size(), &dec) && dec == s, "random %d", r);
  }
  std::string dec;
  CHECK(HuffmanDecode(nullptr, 0, &dec) && dec.empty(), "empty");
  // 'a' is 00011: padded with ones it is 0x1f; with zeros, invalid.
  std::string a = "\x1f", a0 = "\x18";
  dec.clear();
  CHECK(HuffmanDecode(U(a), 1, &dec) && dec == "a", "a padded");
  CHECK(!HuffmanDecode(U(a0), 1, &dec), "zero padding");
  // Padding of 8 or more bits: a whole 0xff byte after a complete string.
  std::string long_pad = Hex("f1e3 c2e5 f23a 6ba0 ab90 f4ff ff");
  CHECK(!HuffmanDecode(U(long_pad), long_pad.size(), &dec), "padding > 7 bits");
  // EOS (30 ones) inside the data.
  std::string eos = Hex("ffff ffff");
  CHECK(!HuffmanDecode(U(eos), eos.size(), &dec), "EOS");
  std::string eos2 = "\x1f" + Hex("ffff fffc");  // 'a' then EOS + 2 zero bits
  CHECK(!HuffmanDecode(U(eos2), eos2.size(), &dec), "EOS after a");
  // '0' is 00000: with 3 one bits of padding, 0x07.
  std::string zero = "\x07";
  dec.clear();
  CHECK(HuffmanDecode(U(zero), 1, &dec) && dec == "0", "'0' + 3 bits");
}

std::string Section(const std::string& lines) { return std::string("\0\0", 2) + lines; }

QpackStatus Decode(const std::string& s, std::vector<HeaderField>* out,
                   uint64_t max = UINT64_MAX) {
  return DecodeFieldSection(U(s), s.size(), max, out);
}

void TestQpack() {
  // Static table spot checks (RFC 9204 Appendix A).
  CHECK(std::string(QpackStaticEntry(0).name) == ":authority", "static 0");
  CHECK(std::string(QpackStaticEntry(17).value) == "GET", "static 17");
  CHECK(std::string(QpackStaticEntry(25).value) == "200", "static 25");
  CHECK(std::string(QpackStaticEntry(98).value) == "sameorigin", "static 98");
  std::vector<HeaderField> out;
  // RFC 9204 B.1: literal field line with name reference, no Huffman.
  std::string b1 = Hex("0000 510b 2f69 6e64 6578 2e68 746d 6c");
  CHECK(Decode(b1, &out) == QpackStatus::kOk && out.size() == 1 &&
            out[0].name == ":path" && out[0].value == "/index.html",
        "B.1");
  // RFC 9204 B.2 onwards use the dynamic table: Required Insert Count 2.
  std::string b2 = Hex("0381 10 11");
  CHECK(Decode(b2, &out) == QpackStatus::kDecompressionFailed, "B.2 needs a dynamic table");
  // Every static form, Huffman and not, never-indexed bits set.
  std::string lines;
  lines += "\xd1";  // indexed, static 17: :method GET
  lines += "\xc1";  // indexed, static 1: :path /
  // name ref (:path, index 1), value "/index.html" Huffman-coded
  {
    std::string v = "/index.html", h;
    HuffmanEncode(U(v), v.size(), &h);
    lines += "\x51";
    lines += static_cast<char>(0x80 | h.size());
    lines += h;
  }
  lines += "\x7f\x00\x02" "x1"s;  // name ref N=1 T=1, index 15 + 0 (:method) = "x1"
  lines += "\x23" "abc" "\x03" "def";  // literal name "abc" = "def"
  lines += "\x33" "ABC" "\x00"s;        // N=1, literal name "ABC", empty value
  {
    std::string n = "custom-key", v = "custom-value", hn, hv;
    HuffmanEncode(U(n), n.size(), &hn);
    HuffmanEncode(U(v), v.size(), &hv);
    lines += static_cast<char>(0x28 | 7);  // literal name, H=1, length 7 + next byte
    lines += static_cast<char>(hn.size() - 7);
    lines += hn;
    lines += static_cast<char>(0x80 | hv.size());
    lines += hv;
  }
  std::string sec = Section(lines);
  QpackStatus st = Decode(sec, &out);
  CHECK(st == QpackStatus::kOk && out.size() == 7, "forms: %d %zu", int(st), out.size());
  if (out.size() == 7) {
    CHECK(out[0].name == ":method" && out[0].value == "GET", "form 0");
    CHECK(out[1].name == ":path" && out[1].value == "/", "form 1");
    CHECK(out[2].name == ":path" && out[2].value == "/index.html", "form 2");
    CHECK(out[3].name == ":method" && out[3].value == "x1", "form 3");
    CHECK(out[4].name == "abc" && out[4].value == "def", "form 4");
    CHECK(out[5].name == "ABC" && out[5].value.empty(), "form 5");
    CHECK(out[6].name == "custom-key" && out[6].value == "custom-value", "form 6");
  }
  // The size limit: each field name + value + 32.
  uint64_t total = 0;
  for (auto& f : out) total += f.name.size() + f.value.size() + 32;
  CHECK(Decode(sec, &out, total) == QpackStatus::kOk, "limit exact");
  CHECK(Decode(sec, &out, total - 1) == QpackStatus::kTooLarge, "limit - 1");
  CHECK(Decode(Section(""), &out, 0) == QpackStatus::kOk && out.empty(), "empty section");
  // A bomb: 64 KiB of one-byte indexed lines (range: bytes=0-, 5 + 8 + 32
  // bytes each) against a 16 KiB limit: decoding stops at the limit.
  std::string bomb = Section(std::string(65536, static_cast<char>(0xc0 | 55)));  // range: bytes=0-
  CHECK(Decode(bomb, &out, 16384) == QpackStatus::kTooLarge && out.size() < 16384 / 32,
        "bomb stopped at the limit (%zu fields)", out.size());
  // Errors.
  struct {
    std::string in;
    const char* what;
  } bad[] = {
      {"", "no prefix"},
      {std::string("\0", 1), "half a prefix"},
      {Hex("0100"), "Required Insert Count 1"},
      {Hex("ff"), "truncated Required Insert Count"},
      {Hex("00ff"), "truncated Delta Base"},
      {Section("\x80"), "indexed dynamic"},
      {Section("\xff\x24"), "static index 99"},
      {Section("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"), "index overflow"},
      {Section("\x40\x00"s), "name ref dynamic"},
      {Section("\x5f\x54\x00"s), "name ref static index 99"},
      {Section("\x51"), "name ref without value"},
      {Section("\x51\x05" "ab"), "value truncated"},
      {Section("\x51\x7f\xff\xff\xff\xff\xff\xff\xff\xff\x7f"), "value length overflow"},
      {Section("\x51\x81\x18"), "bad Huffman padding in value"},
      {Section("\x51\x84\xff\xff\xff\xff"), "EOS in value"},
      {Section("\x23" "ab"), "literal name truncated"},
      {Section("\x29\x18\x00"s), "bad Huffman in name"},
      {Section("\x21" "a"), "literal name without value"},
      {Section("\x10"), "post-base indexed"},
      {Section("\x00"s), "post-base name ref"},
      {Section("\x08" "\x00"s), "post-base name ref N=1"},
  };
  for (auto& t : bad) {
    CHECK(Decode(t.in, &out) == QpackStatus::kDecompressionFailed, "error: %s", t.what);
  }
  // Delta Base with Sign 1 is allowed (unused without dynamic references).
  CHECK(Decode(Hex("0080 d1"), &out) == QpackStatus::kOk && out.size() == 1, "sign bit");
  // Encoding: exact matches are one byte; a name match is a name reference;
  // others are literal names; Huffman when shorter.
  std::vector<HeaderField> f = {{":status", "200"},
                                {":status", "418"},
                                {"content-type", "text/plain"},
                                {"x-thing", "\xff\xfe"},
                                {"server", "sluice"},
                                {"content-length", "12345"}};
  std::string enc;
  EncodeFieldSection(f.data(), f.size(), &enc);
  CHECK(enc.substr(0, 3) == std::string("\0\0\xd9", 3), "status 200 indexed: %s",
        ToHex(enc).c_str());
  CHECK(Decode(enc, &out) == QpackStatus::kOk && out.size() == f.size(), "round trip");
  for (size_t i = 0; i < f.size() && i < out.size(); i++)
    CHECK(out[i].name == f[i].name && out[i].value == f[i].value, "round trip %zu", i);
  {
    std::string e;
    HeaderField p{":path", "/index.html"};
    EncodeFieldSection(&p, 1, &e);
    std::string h;
    std::string v = "/index.html";
    HuffmanEncode(U(v), v.size(), &h);
    CHECK(e == std::string("\0\0\x51", 3) + static_cast<char>(0x80 | h.size()) + h,
          "B.1 field with Huffman: %s", ToHex(e).c_str());
  }
  // Every static entry encodes as its own one- or two-byte indexed line,
  // and with another value as a name reference to the name's first entry.
  for (size_t i = 0; i < kQpackStaticTableSize; i++) {
    HeaderField h{QpackStaticEntry(i).name, QpackStaticEntry(i).value};
    std::string e, want = std::string("\0\0", 2);
    EncodeFieldSection(&h, 1, &e);
    AppendPrefixInt(&want, 0xc0, 6, i);
    CHECK(e == want, "static entry %zu: %s", i, ToHex(e).c_str());
    size_t first = 0;
    while (std::string(QpackStaticEntry(first).name) != h.name) first++;
    h.value = "zz";
    e.clear();
    want = std::string("\0\0", 2);
    AppendPrefixInt(&want, 0x50, 4, first);
    want += "\x02zz";
    EncodeFieldSection(&h, 1, &e);
    CHECK(e == want, "static name %zu: %s", i, ToHex(e).c_str());
  }
  // Random round trips, long values (multi-byte integers) included.
  for (int r = 0; r < 500; r++) {
    std::vector<HeaderField> in(rng() % 12);
    for (auto& h : in) {
      size_t k = rng() % kQpackStaticTableSize;
      int mode = static_cast<int>(rng() % 3);
      h.name = mode == 2 ? std::string(1 + rng() % 300, 'a') : QpackStaticEntry(k).name;
      if (mode == 0) {
        h.value = QpackStaticEntry(k).value;
      } else {
        h.value.resize(rng() % (r % 10 == 0 ? 5000 : 40));
        for (auto& c : h.value) c = static_cast<char>(r % 3 ? 'a' + rng() % 26 : rng());
      }
    }
    std::string e;
    EncodeFieldSection(in.data(), in.size(), &e);
    bool same = Decode(e, &out) == QpackStatus::kOk && out.size() == in.size();
    for (size_t i = 0; same && i < in.size(); i++)
      same = out[i].name == in[i].name && out[i].value == in[i].value;
    CHECK(same, "random round trip %d", r);
  }
  // Prefixed integers at the edges.
  for (unsigned prefix = 3; prefix <= 8; prefix++) {
    for (uint64_t v : std::initializer_list<uint64_t>{0, 1, (1ull << prefix) - 2, (1ull << prefix) - 1,
                       (1ull << prefix), 127 + (1ull << prefix), 1ull << 40, kMaxVarint}) {
      std::string s;
      AppendPrefixInt(&s, 0, prefix, v);
      const uint8_t* p = U(s);
      uint64_t got;
      CHECK(DecodePrefixInt(&p, U(s) + s.size(), prefix, &got) && got == v &&
                p == U(s) + s.size(),
            "prefix int %u %llu", prefix, static_cast<unsigned long long>(v));
      p = U(s);
      if (s.size() > 1)
        CHECK(!DecodePrefixInt(&p, U(s) + s.size() - 1, prefix, &got), "truncated int");
    }
  }
  std::string over = "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f";  // > 2^62
  const uint8_t* p = U(over);
  uint64_t got;
  CHECK(!DecodePrefixInt(&p, U(over) + over.size(), 8, &got), "int over 2^62");
}

void TestSettings() {
  Settings s;
  s.max_field_section_size = 16384;
  s.qpack_max_table_capacity = 4096;
  s.qpack_blocked_streams = 16;
  s.enable_connect_protocol = true;
  s.h3_datagram = true;
  std::string payload;
  SerializeSettings(s, &payload);
  Settings back;
  CHECK(ParseSettings(U(payload), payload.size(), &back) == H3Error::kNoError &&
            back.max_field_section_size == 16384 && back.qpack_max_table_capacity == 4096 &&
            back.qpack_blocked_streams == 16 && back.enable_connect_protocol &&
            back.h3_datagram,
        "settings round trip");
  std::string def;
  SerializeSettings(Settings(), &def);
  CHECK(def.empty(), "defaults serialize to nothing");
  CHECK(ParseSettings(nullptr, 0, &back) == H3Error::kNoError &&
            back.max_field_section_size == UINT64_MAX,
        "empty settings");
  std::string grease = V(0x21) + V(5) + V(0x1f * 7 + 0x21) + V(1) + V(0xabcdef) + V(3) + V(6) + V(100);
  CHECK(ParseSettings(U(grease), grease.size(), &back) == H3Error::kNoError &&
            back.max_field_section_size == 100,
        "reserved and unknown ignored");
  struct {
    std::string in;
    H3Error e;
    const char* what;
  } bad[] = {
      {V(6) + V(1) + V(6) + V(2), H3Error::kSettings, "duplicate known"},
      {V(0x99) + V(1) + V(7) + V(0) + V(0x99) + V(2), H3Error::kSettings, "duplicate unknown"},
      {V(2) + V(0), H3Error::kSettings, "ENABLE_PUSH"},
      {V(3) + V(100), H3Error::kSettings, "MAX_CONCURRENT_STREAMS"},
      {V(4) + V(65535), H3Error::kSettings, "INITIAL_WINDOW_SIZE"},
      {V(5) + V(16384), H3Error::kSettings, "MAX_FRAME_SIZE"},
      {V(8) + V(2), H3Error::kSettings, "ENABLE_CONNECT_PROTOCOL 2"},
      {V(0x33) + V(7), H3Error::kSettings, "H3_DATAGRAM 7"},
      {V(6), H3Error::kFrame, "identifier without value"},
      {V(6) + "\x80", H3Error::kFrame, "value cut"},
      {"\x40", H3Error::kFrame, "identifier cut"},
  };
  for (auto& t : bad)
    CHECK(ParseSettings(U(t.in), t.in.size(), &back) == t.e, "settings: %s", t.what);
  std::string frame;
  AppendSettingsFrame(s, &frame);
  CHECK(frame == V(4) + V(payload.size()) + payload, "settings frame");
  std::string ga;
  AppendGoawayFrame(16384, &ga);
  CHECK(ga == V(7) + V(4) + V(16384), "goaway frame");
  uint8_t h[16];
  CHECK(WriteFrameHeader(h, 0x21, 70000) == 1 + 4, "frame header sizes");
}

// FrameReader transcript: "type:len[payload]" per frame, payload pieces
// joined; the listener can be told to fail at a frame.
struct Recorder : FrameReader::Listener {
  std::string log;
  std::string cur;
  int frames = 0;
  int fail_at = -1;
  bool in_frame = false;
  H3Error OnFrameHeader(uint64_t type, uint64_t length) override {
    if (in_frame) log += "!nested";
    in_frame = true;
    if (frames++ == fail_at) return H3Error::kInternal;
    log += std::to_string(type) + ":" + std::to_string(length) + "[";
    return H3Error::kNoError;
  }
  H3Error OnFramePayload(uint64_t, const uint8_t* d, size_t n, bool end) override {
    if (!in_frame) log += "!orphan";
    cur.append(reinterpret_cast<const char*>(d), n);
    if (end) {
      log += cur + "]";
      cur.clear();
      in_frame = false;
    }
    return H3Error::kNoError;
  }
};

void TestFrameReader() {
  std::string big(3000, 'x');
  std::string in = Frame(1, "hdrs") + Frame(0, "") + Frame(0, "body") +
                   Frame(0x21, big) + Frame(0x1f * 3 + 0x21, "") +
                   V(1) + "\x80\x00\x00\x02" "ab"s +  // non-minimal length
                   Frame(0x3fffffff, "z") + Frame(0, "end");
  std::string want;
  {
    Recorder r;
    FrameReader fr(&r);
    CHECK(fr.Feed(U(in), in.size()) == H3Error::kNoError && fr.AtFrameBoundary(), "whole");
    want = r.log;
    CHECK(want == "1:4[hdrs]0:0[]0:4[body]33:3000[" + big + "]126:0[]1:2[ab]1073741823:1[z]0:3[end]",
          "transcript %s", want.substr(0, 80).c_str());
  }
  int n = 0;
  ForEachSplit(in, [&](const std::vector<std::string>& pieces) {
    Recorder r;
    FrameReader fr(&r);
    H3Error e = H3Error::kNoError;
    for (auto& p : pieces) {
      if (e == H3Error::kNoError) e = fr.Feed(U(p), p.size());
    }
    if (++n % 997 == 0 || e != H3Error::kNoError || r.log != want)
      CHECK(e == H3Error::kNoError && r.log == want && fr.AtFrameBoundary(),
            "split transcript differs");
  });
  // AtFrameBoundary inside a type varint, a length, a payload.
  Recorder r;
  FrameReader fr(&r);
  std::string t = V(0x3fff);
  fr.Feed(U(t), 1);
  CHECK(!fr.AtFrameBoundary(), "inside a type varint");
  fr.Feed(U(t) + 1, 1);
  CHECK(!fr.AtFrameBoundary(), "before the length");
  std::string l = V(2) + "a";
  fr.Feed(U(l), l.size());
  CHECK(!fr.AtFrameBoundary(), "inside a payload");
  fr.Feed(U(l) + 1, 1);
  CHECK(fr.AtFrameBoundary(), "at the end");
  // Size bound: known non-DATA types only.
  for (uint64_t type : {1, 3, 4, 5, 7, 0xd}) {
    Recorder rr;
    FrameReader small(&rr, 100);
    std::string f = V(type) + V(101);
    CHECK(small.Feed(U(f), f.size()) == H3Error::kExcessiveLoad && rr.log.empty(),
          "oversize type %llu", static_cast<unsigned long long>(type));
    CHECK(small.Feed(U(f), 1) == H3Error::kExcessiveLoad && small.dead(), "sticky");
  }
  {
    Recorder rr;
    FrameReader small(&rr, 100);
    std::string f = Frame(0, std::string(500, 'd')) + Frame(0x21, std::string(500, 'g')) +
                    Frame(1, std::string(100, 'h'));
    CHECK(small.Feed(U(f), f.size()) == H3Error::kNoError, "DATA, unknown, limit-sized HEADERS");
  }
  // A listener's error stops the reader and sticks.
  Recorder rf;
  rf.fail_at = 2;
  FrameReader ff(&rf);
  CHECK(ff.Feed(U(in), in.size()) == H3Error::kInternal, "listener error");
  CHECK(rf.log == "1:4[hdrs]0:0[]", "nothing after the error: %s", rf.log.c_str());
  CHECK(ff.Feed(U(in), 1) == H3Error::kInternal, "listener error sticks");
}

struct ControlLog : ControlStreamReader::Delegate {
  std::string log;
  H3Error OnSettings(const Settings& s) override {
    log += "S" + std::to_string(s.max_field_section_size) + ";";
    return H3Error::kNoError;
  }
  H3Error OnGoaway(uint64_t id) override {
    log += "G" + std::to_string(id) + ";";
    return H3Error::kNoError;
  }
  H3Error OnMaxPushId(uint64_t id) override {
    log += "M" + std::to_string(id) + ";";
    return H3Error::kNoError;
  }
  H3Error OnCancelPush(uint64_t id) override {
    log += "C" + std::to_string(id) + ";";
    return H3Error::kNoError;
  }
};

// Feeds in with every split; the result (error and log) must be the same.
void ControlCase(const std::string& in, H3Error want, const std::string& want_log,
                 const char* what, ControlStreamReader::Role role =
                                       ControlStreamReader::Role::kServer) {
  bool reported = false;
  ForEachSplit(in, [&](const std::vector<std::string>& pieces) {
    ControlLog d;
    ControlStreamReader c(&d, role, 1024);
    H3Error e = H3Error::kNoError;
    for (auto& p : pieces)
      if (e == H3Error::kNoError) e = c.Feed(U(p), p.size());
    if (!reported && (e != want || d.log != want_log)) {
      reported = true;
      CHECK(false, "control %s: %s, log %s", what, H3ErrorName(e), d.log.c_str());
    }
    check_counts::checks++;
  });
}

void TestControlStream() {
  using R = ControlStreamReader::Role;
  std::string settings = Frame(4, V(6) + V(1000));
  ControlCase(settings + Frame(0x21, "grease") + Frame(0x77, "unknown") +
                  Frame(7, V(8)) + Frame(0xd, V(3)) + Frame(0xd, V(3)) + Frame(0xd, V(9)) +
                  Frame(7, V(8)) + Frame(7, V(2)),
              H3Error::kNoError, "S1000;G8;M3;M3;M9;G8;G2;", "valid sequence");
  ControlCase(Frame(0x21, "") + settings, H3Error::kMissingSettings, "", "reserved first");
  ControlCase(Frame(7, V(0)), H3Error::kMissingSettings, "", "GOAWAY first");
  ControlCase(Frame(0, "x"), H3Error::kMissingSettings, "", "DATA first");
  ControlCase(settings + settings, H3Error::kFrameUnexpected, "S1000;", "second SETTINGS");
  for (uint64_t type : {0, 1, 5, 2, 6, 8, 9})
    ControlCase(settings + Frame(type, "ab"), H3Error::kFrameUnexpected, "S1000;",
                "forbidden type");
  ControlCase(settings + Frame(7, V(8)) + Frame(7, V(12)), H3Error::kId, "S1000;G8;",
              "GOAWAY grows");
  ControlCase(settings + Frame(7, V(8) + "x"), H3Error::kFrame, "S1000;", "GOAWAY long");
  ControlCase(settings + Frame(7, ""), H3Error::kFrame, "S1000;", "GOAWAY empty");
  ControlCase(settings + Frame(7, "\x80"), H3Error::kFrame, "S1000;", "GOAWAY cut varint");
  ControlCase(settings + Frame(0xd, V(5)) + Frame(0xd, V(4)), H3Error::kId, "S1000;M5;",
              "MAX_PUSH_ID shrinks");
  ControlCase(settings + Frame(3, V(0)), H3Error::kId, "S1000;", "CANCEL_PUSH to a server");
  ControlCase(Frame(4, V(6) + V(6) + V(6) + V(7)), H3Error::kSettings, "", "bad SETTINGS");
  ControlCase(Frame(4, std::string(1025, '\0')), H3Error::kExcessiveLoad, "", "huge SETTINGS");
  ControlCase(settings + Frame(0x21, std::string(5000, 'g')) + Frame(7, V(0)),
              H3Error::kNoError, "S1000;G0;", "huge reserved frame skipped");
  // Client role: the server's GOAWAY carries a client bidi stream id.
  ControlCase(settings + Frame(7, V(8)) + Frame(3, V(1)), H3Error::kNoError, "S1000;G8;C1;",
              "client role", R::kClient);
  ControlCase(settings + Frame(7, V(5)), H3Error::kId, "S1000;", "GOAWAY id % 4", R::kClient);
  ControlCase(settings + Frame(0xd, V(1)), H3Error::kFrameUnexpected, "S1000;",
              "MAX_PUSH_ID to a client", R::kClient);
  ControlLog d;
  ControlStreamReader c(&d);
  CHECK(c.OnFin() == H3Error::kClosedCriticalStream && !c.settings_received(), "control FIN");
  c.Feed(U(settings), settings.size());
  CHECK(c.settings_received(), "settings received");
}

struct RequestLog : RequestStreamFramer::Delegate {
  std::string log;
  std::string body;
  H3Error fail_headers = H3Error::kNoError;
  H3Error OnHeaders(const uint8_t* b, size_t n, bool trailers) override {
    // Decode: the block must be a whole field section.
    std::vector<HeaderField> f;
    QpackStatus st = DecodeFieldSection(b, n, UINT64_MAX, &f);
    log += trailers ? "T" : "H";
    log += st == QpackStatus::kOk ? std::to_string(f.size()) : "?";
    if (!body.empty()) {
      log += "(" + body + ")";
      body.clear();
    }
    log += ";";
    return fail_headers;
  }
  H3Error OnData(const uint8_t* d, size_t n) override {
    if (n == 0) log += "!empty";
    body.append(reinterpret_cast<const char*>(d), n);
    return H3Error::kNoError;
  }
};

void RequestCase(const std::string& in, H3Error want, H3Error want_fin,
                 const std::string& want_log, const char* what) {
  bool reported = false;
  ForEachSplit(in, [&](const std::vector<std::string>& pieces) {
    RequestLog d;
    RequestStreamFramer rq(&d, 2048);
    H3Error e = H3Error::kNoError;
    for (auto& p : pieces)
      if (e == H3Error::kNoError) e = rq.Feed(U(p), p.size());
    H3Error fin = rq.OnFin();
    std::string log = d.log + (d.body.empty() ? "" : "(" + d.body + ")");
    if (!reported && (e != want || fin != want_fin || log != want_log)) {
      reported = true;
      CHECK(false, "request %s: %s / fin %s, log %s", what, H3ErrorName(e),
            H3ErrorName(fin), log.c_str());
    }
    check_counts::checks++;
  });
}

void TestRequestStream() {
  const H3Error ok = H3Error::kNoError;
  std::vector<HeaderField> req = {{":method", "POST"}, {":scheme", "https"},
                                  {":path", "/upload"}, {":authority", "example.com"}};
  std::string block;
  EncodeFieldSection(req.data(), req.size(), &block);
  HeaderField tr{"x-checksum", "abc"};
  std::string trailer;
  EncodeFieldSection(&tr, 1, &trailer);
  std::string H = Frame(1, block), T = Frame(1, trailer);
  RequestCase(H, ok, ok, "H4;", "headers only");
  RequestCase(Frame(0x21, "g") + H + Frame(0, "hello ") + Frame(0x40, "unknown") +
                  Frame(0, "") + Frame(0, "world") + T + Frame(0x21, "after"),
              ok, ok, "H4;T1(hello world);", "full request");
  RequestCase(Frame(0, "x") + H, H3Error::kFrameUnexpected, H3Error::kFrameUnexpected, "",
              "DATA first");
  RequestCase(H + T + Frame(0, "x"), H3Error::kFrameUnexpected, H3Error::kFrameUnexpected,
              "H4;T1;", "DATA after trailers");
  RequestCase(H + T + T, H3Error::kFrameUnexpected, H3Error::kFrameUnexpected, "H4;T1;",
              "HEADERS after trailers");
  for (uint64_t type : {3, 4, 5, 7, 0xd, 2, 6, 8, 9})
    RequestCase(H + Frame(type, V(0)), H3Error::kFrameUnexpected, H3Error::kFrameUnexpected,
                "H4;", "forbidden type");
  RequestCase("", ok, H3Error::kRequestIncomplete, "", "empty stream");
  RequestCase(Frame(0x21, "g"), ok, H3Error::kRequestIncomplete, "", "only a reserved frame");
  RequestCase(H + Frame(0, "abc").substr(0, 4), ok, H3Error::kFrame, "H4;(ab)", "cut DATA");
  RequestCase(H.substr(0, H.size() - 1), ok, H3Error::kFrame, "", "cut HEADERS");
  RequestCase(H + "\x40", ok, H3Error::kFrame, "H4;", "cut frame type");
  RequestCase(Frame(1, std::string(2049, 'h')), H3Error::kExcessiveLoad,
              H3Error::kExcessiveLoad, "", "huge HEADERS");
  RequestCase(H + Frame(0, std::string(10000, 'd')), ok, ok, "H4;(" + std::string(10000, 'd') + ")",
              "big DATA streamed");
  // The delegate's error (a bad field section: H3_MESSAGE_ERROR) is Feed's.
  RequestLog d;
  d.fail_headers = H3Error::kMessage;
  RequestStreamFramer rq(&d);
  CHECK(rq.Feed(U(H), H.size()) == H3Error::kMessage && rq.OnFin() == H3Error::kMessage &&
            IsStreamError(H3Error::kMessage),
        "delegate error");
  CHECK(rq.state() == RequestStreamFramer::State::kBody, "state after HEADERS");
}

void TestUniStreams() {
  for (uint64_t type : std::initializer_list<uint64_t>{0, 3, 0x21, 0x3fff, 0x12345678, kMaxVarint}) {
    std::string in = V(type) + "rest";
    ForEachSplit(in, [&](const std::vector<std::string>& pieces) {
      UniStreamTypeReader r;
      std::string rest;
      for (auto& p : pieces) {
        size_t used = r.done() ? 0 : r.Feed(U(p), p.size());
        rest += p.substr(used);
      }
      CHECK(r.done() && r.type() == type && rest == "rest", "stream type %llx",
            static_cast<unsigned long long>(type));
    });
  }
  PeerUniStreams peers;
  PeerUniStreams::Kind k;
  CHECK(peers.Open(0, &k) == H3Error::kNoError && k == PeerUniStreams::Kind::kControl, "control");
  CHECK(peers.Open(0, &k) == H3Error::kStreamCreation, "second control");
  CHECK(peers.Open(2, &k) == H3Error::kNoError && k == PeerUniStreams::Kind::kQpackEncoder, "enc");
  CHECK(peers.Open(2, &k) == H3Error::kStreamCreation, "second encoder");
  CHECK(peers.Open(3, &k) == H3Error::kNoError && k == PeerUniStreams::Kind::kQpackDecoder, "dec");
  CHECK(peers.Open(3, &k) == H3Error::kStreamCreation, "second decoder");
  CHECK(peers.Open(1, &k) == H3Error::kStreamCreation, "push from a client");
  CHECK(peers.Open(0x21 + 0x1f, &k) == H3Error::kNoError && k == PeerUniStreams::Kind::kIgnored,
        "reserved type");
  CHECK(peers.Open(0x54, &k) == H3Error::kNoError && k == PeerUniStreams::Kind::kIgnored,
        "unknown type");
  PeerUniStreams from_server(false);
  CHECK(from_server.Open(1, &k) == H3Error::kNoError && k == PeerUniStreams::Kind::kPush,
        "push from a server");
  CHECK(IsReservedValue(0x21) && IsReservedValue(0x40) && !IsReservedValue(0x22) &&
            !IsReservedValue(0x20),
        "reserved values");
}

void QpackStreamCase(bool encoder_stream, uint64_t cap, const std::string& in, H3Error want,
                     const char* what) {
  ForEachSplit(in, [&](const std::vector<std::string>& pieces) {
    QpackEncoderStreamReader enc(cap);
    QpackDecoderStreamReader dec;
    H3Error e = H3Error::kNoError;
    for (auto& p : pieces)
      if (e == H3Error::kNoError)
        e = encoder_stream ? enc.Feed(U(p), p.size()) : dec.Feed(U(p), p.size());
    CHECK(e == want, "qpack stream %s: %s", what, H3ErrorName(e));
  });
}

void TestQpackStreams() {
  const H3Error ok = H3Error::kNoError;
  QpackStreamCase(true, 0, "\x20\x20", ok, "capacity 0");
  QpackStreamCase(true, 0, "\x21", H3Error::kQpackEncoderStream, "capacity 1 > 0");
  QpackStreamCase(true, 100, "\x3f\x00\x3f\x45"s, ok, "capacity 31 and 100");
  QpackStreamCase(true, 100, "\x3f\x46", H3Error::kQpackEncoderStream, "capacity 101");
  QpackStreamCase(true, 0, "\x20\xc1\x03" "abc", H3Error::kQpackEncoderStream, "insert name ref");
  QpackStreamCase(true, 0, "\x43" "abc\x01x", H3Error::kQpackEncoderStream, "insert literal");
  QpackStreamCase(true, 0, "\x00"s, H3Error::kQpackEncoderStream, "duplicate");
  QpackStreamCase(true, 0, "\x3f\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
                  H3Error::kQpackEncoderStream, "endless integer");
  QpackStreamCase(false, 0, "\x41\x7f\x80\x01\x40", ok, "stream cancellations");
  QpackStreamCase(false, 0, "\x41\x84", H3Error::kQpackDecoderStream, "section ack");
  QpackStreamCase(false, 0, "\x01", H3Error::kQpackDecoderStream, "insert count increment");
  QpackStreamCase(false, 0, "\x00"s, H3Error::kQpackDecoderStream, "increment 0");
}

// The dynamic-table decoder (QpackDecoder): RFC 9204 Appendix B.2-B.5.
std::string Fields(const std::vector<HeaderField>& f) {
  std::string s;
  for (auto& h : f) s += h.name + "=" + h.value + ";";
  return s;
}

void TestQpackDecoder() {
  using R = QpackDecoder::Result;
  const H3Error ok = H3Error::kNoError;
  std::vector<HeaderField> out;
  std::string dec_out;
  // B.2: capacity 220, two inserts with static name references.
  std::string b2enc = Hex("3fbd01 c00f7777772e6578616d706c652e636f6d c10c2f73616d706c652f70617468");
  std::string b3enc = Hex("4a637573746f6d2d6b65790c637573746f6d2d76616c7565");
  std::string b4enc = Hex("02");
  std::string b5enc = Hex("810d637573746f6d2d76616c756532");
  // Every split of the B.2 encoder stream leaves the same table.
  ForEachSplit(b2enc, [&](const std::vector<std::string>& pieces) {
    QpackDecoder d(220, 100);
    H3Error e = ok;
    for (auto& p : pieces)
      if (e == ok) e = d.FeedEncoderStream(U(p), p.size());
    CHECK(e == ok && d.insert_count() == 2 && d.table_size() == 106 && d.capacity() == 220,
          "B.2 encoder stream split: %s %llu", H3ErrorName(e),
          static_cast<unsigned long long>(d.table_size()));
  });
  QpackDecoder d(220, 100);
  CHECK(d.FeedEncoderStream(U(b2enc), b2enc.size()) == ok, "B.2 encoder");
  std::string s4 = Hex("0381 1011");
  CHECK(d.Decode(4, U(s4), s4.size(), UINT64_MAX, &out) == R::kOk &&
            Fields(out) == ":authority=www.example.com;:path=/sample/path;",
        "B.2 section: %s", Fields(out).c_str());
  d.TakeDecoderStream(&dec_out);
  CHECK(dec_out == Hex("84"), "B.2 section acknowledgment: %s", ToHex(dec_out).c_str());
  // B.3: insert with a literal name; the decoder owes an increment of 1.
  CHECK(d.FeedEncoderStream(U(b3enc), b3enc.size()) == ok && d.insert_count() == 3, "B.3");
  dec_out.clear();
  d.TakeDecoderStream(&dec_out);
  CHECK(dec_out == Hex("01"), "B.3 insert count increment: %s", ToHex(dec_out).c_str());
  // B.4: duplicate of absolute 0; a section with relative and static refs.
  CHECK(d.FeedEncoderStream(U(b4enc), b4enc.size()) == ok && d.insert_count() == 4, "B.4");
  std::string s8 = Hex("0500 80c1 81");
  CHECK(d.Decode(8, U(s8), s8.size(), UINT64_MAX, &out) == R::kOk &&
            Fields(out) == ":authority=www.example.com;:path=/;custom-key=custom-value;",
        "B.4 section: %s", Fields(out).c_str());
  d.StreamCancelled(8);
  dec_out.clear();
  d.TakeDecoderStream(&dec_out);
  CHECK(dec_out == Hex("88 48"), "B.4 ack + cancellation: %s", ToHex(dec_out).c_str());
  // B.5: insert with a dynamic name reference evicts absolute 0.
  CHECK(d.FeedEncoderStream(U(b5enc), b5enc.size()) == ok && d.insert_count() == 5 &&
            d.table_size() == 215,
        "B.5: %llu", static_cast<unsigned long long>(d.table_size()));
  std::string s12 = Hex("0600 8081");  // RIC 5, base 5: abs 4, abs 3
  CHECK(d.Decode(12, U(s12), s12.size(), UINT64_MAX, &out) == R::kOk &&
            Fields(out) == "custom-key=custom-value2;:authority=www.example.com;",
        "B.5 section: %s", Fields(out).c_str());
  std::string post = Hex("0681 1011");  // RIC 5, base 3: post-base 0, 1 → abs 3, 4
  CHECK(d.Decode(16, U(post), post.size(), UINT64_MAX, &out) == R::kOk &&
            Fields(out) == ":authority=www.example.com;custom-key=custom-value2;",
        "post-base: %s", Fields(out).c_str());
  std::string postname = Hex("0681 0103 78797a");  // post-base name ref 1 → abs 4
  CHECK(d.Decode(20, U(postname), postname.size(), UINT64_MAX, &out) == R::kOk &&
            Fields(out) == "custom-key=xyz;",
        "post-base name ref: %s", Fields(out).c_str());
  std::string dynname = Hex("0600 4003 78797a");  // name ref relative 0 → abs 4
  CHECK(d.Decode(24, U(dynname), dynname.size(), UINT64_MAX, &out) == R::kOk &&
            Fields(out) == "custom-key=xyz;",
        "dynamic name ref: %s", Fields(out).c_str());
  // The size limit: the section is read whole and still acknowledged.
  dec_out.clear();
  d.TakeDecoderStream(&dec_out);
  CHECK(d.Decode(28, U(s12), s12.size(), 60, &out) == R::kTooLarge && out.empty(), "too large");
  dec_out.clear();
  d.TakeDecoderStream(&dec_out);
  CHECK(dec_out == Hex("9c"), "too large still acknowledged: %s", ToHex(dec_out).c_str());
  // Errors in field sections.
  struct {
    std::string in;
    const char* what;
  } bad[] = {
      {Hex("0600 84"), "evicted entry (absolute 0)"},
      {Hex("0d00 80"), "encoded Required Insert Count over the full range"},
      {Hex("0600 81"), "Required Insert Count larger than needed (abs 3 only)"},
      {Hex("0500 80 10"), "post-base index at the Required Insert Count"},
      {Hex("0685 80"), "Sign 1 with Delta Base >= Required Insert Count"},
      {Hex("0600 85"), "relative index beyond the base"},
      {Hex("0000 80"), "dynamic reference with Required Insert Count 0"},
      {Hex("0600 ff24"), "static index 99"},
      {Hex("0600"), "no reference for a Required Insert Count"},
  };
  for (auto& t : bad)
    CHECK(d.Decode(32, U(t.in), t.in.size(), UINT64_MAX, &out) == R::kDecompressionFailed,
          "dynamic error: %s", t.what);
  // Blocked streams, bounded; unblocked by an insert; cancelled.
  QpackDecoder b(220, 1);
  std::string cap = Hex("3fbd01");
  b.FeedEncoderStream(U(cap), cap.size());
  std::string need1 = Hex("0200 80");  // RIC 1, base 1, relative 0
  CHECK(b.Decode(0, U(need1), need1.size(), UINT64_MAX, &out) == R::kBlocked &&
            b.blocked_streams() == 1,
        "blocked");
  CHECK(b.Decode(0, U(need1), need1.size(), UINT64_MAX, &out) == R::kBlocked &&
            b.blocked_streams() == 1,
        "blocked again, counted once");
  CHECK(b.Decode(4, U(need1), need1.size(), UINT64_MAX, &out) == R::kDecompressionFailed,
        "a second blocked stream over the limit");
  std::vector<uint64_t> unblocked;
  b.TakeUnblocked(&unblocked);
  CHECK(unblocked.empty(), "nothing unblocked yet");
  std::string ins = Hex("c0 03 616263");  // :authority = abc
  CHECK(b.FeedEncoderStream(U(ins), ins.size()) == ok, "insert");
  b.TakeUnblocked(&unblocked);
  CHECK(unblocked.size() == 1 && unblocked[0] == 0 && b.blocked_streams() == 0, "unblocked");
  CHECK(b.Decode(0, U(need1), need1.size(), UINT64_MAX, &out) == R::kOk &&
            Fields(out) == ":authority=abc;",
        "decoded after the insert");
  std::string need2 = Hex("0300 80");  // RIC 2
  CHECK(b.Decode(4, U(need2), need2.size(), UINT64_MAX, &out) == R::kBlocked, "blocked 4");
  b.StreamCancelled(4);
  dec_out.clear();
  b.TakeDecoderStream(&dec_out);
  CHECK(b.blocked_streams() == 0 && dec_out == Hex("80 44"), "cancelled: %s",
        ToHex(dec_out).c_str());
  // Encoder-stream errors, each on a fresh decoder with capacity 220.
  struct {
    std::string in;
    const char* what;
  } ebad[] = {
      {Hex("3fbe01"), "capacity 221 > 220"},
      {Hex("3fbd01 c0 7f ff 01 00"), "entry larger than the capacity"},
      {Hex("3fbd01 80 01 61"), "dynamic name reference, empty table"},
      {Hex("3fbd01 00"), "duplicate, empty table"},
      {Hex("3fbd01 ff24 0161"), "static index 99"},
      {Hex("3fbd01 c0 81 18"), "bad Huffman value"},
      {Hex("3fbd01 5f ffff ff0f"), "a literal name longer than any entry"},
      {Hex("3f ffffffffffffffffffff"), "endless integer"},
      {Hex("c0 01 61"), "insert before any capacity"},
  };
  for (auto& t : ebad) {
    ForEachSplit(t.in, [&](const std::vector<std::string>& pieces) {
      QpackDecoder e(220, 10);
      H3Error err = ok;
      for (auto& p : pieces)
        if (err == ok) err = e.FeedEncoderStream(U(p), p.size());
      CHECK(err == H3Error::kQpackEncoderStream, "encoder stream error: %s", t.what);
    });
  }
  // Capacity reduction evicts; the wrapped Required Insert Count past the
  // full range (6 entries → 12) decodes.
  QpackDecoder w(220, 10);
  w.FeedEncoderStream(U(cap), cap.size());
  for (int i = 0; i < 30; i++) {
    std::string one = Hex("c0 01") + std::string(1, static_cast<char>('a' + i % 26));
    CHECK(w.FeedEncoderStream(U(one), one.size()) == ok, "insert %d", i);
  }
  // RIC 30: encoded (30 mod 12) + 1 = 7, base 30, relative 0 → abs 29.
  std::string wrapped = Hex("0700 80");
  CHECK(w.Decode(0, U(wrapped), wrapped.size(), UINT64_MAX, &out) == R::kOk &&
            Fields(out) == ":authority=d;",
        "wrapped Required Insert Count: %s", Fields(out).c_str());
  std::string shrink = Hex("3f21");  // capacity 64: one 43-byte entry left
  CHECK(w.FeedEncoderStream(U(shrink), shrink.size()) == ok && w.table_size() == 43, "shrink");
}

}  // namespace

int main() {
  TestVarint();
  TestHuffman();
  TestQpack();
  TestSettings();
  TestFrameReader();
  TestControlStream();
  TestRequestStream();
  TestUniStreams();
  TestQpackStreams();
  TestQpackDecoder();
  return CheckSummary("http3");
}
