#include "core/http3/qpack.h"

#include <string_view>
#include <unordered_map>

#include "core/http3/huffman.h"
#include "core/http3/varint.h"

namespace sluice::http3 {

namespace {

// RFC 9204 Appendix A.
constexpr StaticEntry kStatic[kQpackStaticTableSize] = {
    {":authority", ""},
    {":path", "/"},
    {"age", "0"},
    {"content-disposition", ""},
    {"content-length", "0"},
    {"cookie", ""},
    {"date", ""},
    {"etag", ""},
    {"if-modified-since", ""},
    {"if-none-match", ""},
    {"last-modified", ""},
    {"link", ""},
    {"location", ""},
    {"referer", ""},
    {"set-cookie", ""},
    {":method", "CONNECT"},
    {":method", "DELETE"},
    {":method", "GET"},
    {":method", "HEAD"},
    {":method", "OPTIONS"},
    {":method", "POST"},
    {":method", "PUT"},
    {":scheme", "http"},
    {":scheme", "https"},
    {":status", "103"},
    {":status", "200"},
    {":status", "304"},
    {":status", "404"},
    {":status", "503"},
    {"accept", "*/*"},
    {"accept", "application/dns-message"},
    {"accept-encoding", "gzip, deflate, br"},
    {"accept-ranges", "bytes"},
    {"access-control-allow-headers", "cache-control"},
    {"access-control-allow-headers", "content-type"},
    {"access-control-allow-origin", "*"},
    {"cache-control", "max-age=0"},
    {"cache-control", "max-age=2592000"},
    {"cache-control", "max-age=604800"},
    {"cache-control", "no-cache"},
    {"cache-control", "no-store"},
    {"cache-control", "public, max-age=31536000"},
    {"content-encoding", "br"},
    {"content-encoding", "gzip"},
    {"content-type", "application/dns-message"},
    {"content-type", "application/javascript"},
    {"content-type", "application/json"},
    {"content-type", "application/x-www-form-urlencoded"},
    {"content-type", "image/gif"},
    {"content-type", "image/jpeg"},
    {"content-type", "image/png"},
    {"content-type", "text/css"},
    {"content-type", "text/html; charset=utf-8"},
    {"content-type", "text/plain"},
    {"content-type", "text/plain;charset=utf-8"},
    {"range", "bytes=0-"},
    {"strict-transport-security", "max-age=31536000"},
    {"strict-transport-security", "max-age=31536000; includesubdomains"},
    {"strict-transport-security", "max-age=31536000; includesubdomains; preload"},
    {"vary", "accept-encoding"},
    {"vary", "origin"},
    {"x-content-type-options", "nosniff"},
    {"x-xss-protection", "1; mode=block"},
    {":status", "100"},
    {":status", "204"},
    {":status", "206"},
    {":status", "302"},
    {":status", "400"},
    {":status", "403"},
    {":status", "421"},
    {":status", "425"},
    {":status", "500"},
    {"accept-language", ""},
    {"access-control-allow-credentials", "FALSE"},
    {"access-control-allow-credentials", "TRUE"},
    {"access-control-allow-headers", "*"},
    {"access-control-allow-methods", "get"},
    {"access-control-allow-methods", "get, post, options"},
    {"access-control-allow-methods", "options"},
    {"access-control-expose-headers", "content-length"},
    {"access-control-request-headers", "content-type"},
    {"access-control-request-method", "get"},
    {"access-control-request-method", "post"},
    {"alt-svc", "clear"},
    {"authorization", ""},
    {"content-security-policy", "script-src 'none'; object-src 'none'; base-uri 'none'"},
    {"early-data", "1"},
    {"expect-ct", ""},
    {"forwarded", ""},
    {"if-range", ""},
    {"origin", ""},
    {"purpose", "prefetch"},
    {"server", ""},
    {"timing-allow-origin", "*"},
    {"upgrade-insecure-requests", "1"},
    {"user-agent", ""},
    {"x-forwarded-for", ""},
    {"x-frame-options", "deny"},
    {"x-frame-options", "sameorigin"},
};

// The encoder's lookup: for each name, its first index and every index
// with that name (at most 14: :status), built once.
struct NameEntries {
  uint8_t first;
  uint8_t count = 0;
  uint8_t index[16];
};
const std::unordered_map<std::string_view, NameEntries>& StaticByName() {
  static const auto* map = [] {
    auto* m = new std::unordered_map<std::string_view, NameEntries>();
    for (size_t i = 0; i < kQpackStaticTableSize; i++) {
      auto [it, fresh] = m->try_emplace(kStatic[i].name);
      if (fresh) it->second.first = static_cast<uint8_t>(i);
      if (it->second.count < sizeof(it->second.index))
        it->second.index[it->second.count++] = static_cast<uint8_t>(i);
    }
    return m;
  }();
  return *map;
}

constexpr size_t kFieldOverhead = 32;  // RFC 9114 section 4.2.2

// A string literal with an H bit just above a prefix_bits-bit length.
bool DecodeString(const uint8_t** p, const uint8_t* end, unsigned prefix_bits,
                  std::string* out) {
  if (*p >= end) return false;
  bool huffman = (**p >> prefix_bits) & 1;
  uint64_t len;
  if (!DecodePrefixInt(p, end, prefix_bits, &len)) return false;
  if (len > static_cast<uint64_t>(end - *p)) return false;
  const uint8_t* s = *p;
  *p += len;
  if (huffman) return HuffmanDecode(s, static_cast<size_t>(len), out);
  out->assign(reinterpret_cast<const char*>(s), static_cast<size_t>(len));
  return true;
}

void AppendString(std::string* out, unsigned prefix_bits, uint8_t flags,
                  std::string_view s) {
  const auto* u = reinterpret_cast<const uint8_t*>(s.data());
  size_t h = HuffmanEncodedLength(u, s.size());
  if (h < s.size()) {
    AppendPrefixInt(out, static_cast<uint8_t>(flags | (1u << prefix_bits)),
                    prefix_bits, h);
    HuffmanEncode(u, s.size(), out);
  } else {
    AppendPrefixInt(out, flags, prefix_bits, s.size());
    out->append(s.data(), s.size());
  }
}

}  // namespace

const StaticEntry& QpackStaticEntry(size_t index) { return kStatic[index]; }

bool DecodePrefixInt(const uint8_t** p, const uint8_t* end, unsigned prefix_bits,
                     uint64_t* out) {
  const uint8_t* q = *p;
  if (q >= end) return false;
  const uint64_t mask = (uint64_t{1} << prefix_bits) - 1;
  uint64_t v = *q++ & mask;
  if (v == mask) {
    unsigned shift = 0;
    for (;;) {
      if (q >= end) return false;
      uint8_t b = *q++;
      // 62 bits at most: a continuation past shift 56 can only overflow.
      if (shift > 56) return false;
      v += uint64_t{b & 0x7fu} << shift;
      if (v > kMaxVarint) return false;
      shift += 7;
      if (!(b & 0x80)) break;
    }
  }
  *out = v;
  *p = q;
  return true;
}

void AppendPrefixInt(std::string* out, uint8_t flags, unsigned prefix_bits,
                     uint64_t v) {
  const uint64_t mask = (uint64_t{1} << prefix_bits) - 1;
  if (v < mask) {
    out->push_back(static_cast<char>(flags | v));
    return;
  }
  out->push_back(static_cast<char>(flags | mask));
  v -= mask;
  while (v >= 0x80) {
    out->push_back(static_cast<char>(0x80 | (v & 0x7f)));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

QpackStatus DecodeFieldSection(const uint8_t* data, size_t len,
                               uint64_t max_field_section_size,
                               std::vector<HeaderField>* out) {
  out->clear();
  const uint8_t* p = data;
  const uint8_t* end = data + len;
  uint64_t ric, delta_base;
  // Required Insert Count: anything but 0 needs a dynamic table.
  if (!DecodePrefixInt(&p, end, 8, &ric) || ric != 0)
    return QpackStatus::kDecompressionFailed;
  // Sign and Delta Base: the Base is never used without dynamic
  // references, but the integer must be well-formed.
  if (!DecodePrefixInt(&p, end, 7, &delta_base))
    return QpackStatus::kDecompressionFailed;
  uint64_t size = 0;
  while (p < end) {
    uint8_t b = *p;
    HeaderField f;
    uint64_t index;
    if (b & 0x80) {
      // 1Txxxxxx: indexed field line; T = 0 is the dynamic table.
      if (!(b & 0x40) || !DecodePrefixInt(&p, end, 6, &index) ||
          index >= kQpackStaticTableSize)
        return QpackStatus::kDecompressionFailed;
      f.name = kStatic[index].name;
      f.value = kStatic[index].value;
    } else if (b & 0x40) {
      // 01NTxxxx: literal with name reference.
      if (!(b & 0x10) || !DecodePrefixInt(&p, end, 4, &index) ||
          index >= kQpackStaticTableSize || !DecodeString(&p, end, 7, &f.value))
        return QpackStatus::kDecompressionFailed;
      f.name = kStatic[index].name;
    } else if (b & 0x20) {
      // 001NHxxx: literal with literal name.
      if (!DecodeString(&p, end, 3, &f.name) || !DecodeString(&p, end, 7, &f.value))
        return QpackStatus::kDecompressionFailed;
    } else {
      // 0001xxxx indexed post-base, 0000Nxxx literal with post-base name
      // reference: both the dynamic table.
      return QpackStatus::kDecompressionFailed;
    }
    size += f.name.size() + f.value.size() + kFieldOverhead;
    if (size > max_field_section_size) return QpackStatus::kTooLarge;
    out->push_back(std::move(f));
  }
  return QpackStatus::kOk;
}

void EncodeFieldSection(const HeaderField* fields, size_t n, std::string* out) {
  out->push_back(0);  // Required Insert Count 0
  out->push_back(0);  // Sign 0, Delta Base 0
  const auto& by_name = StaticByName();
  for (size_t i = 0; i < n; i++) {
    const HeaderField& f = fields[i];
    auto it = by_name.find(f.name);
    if (it != by_name.end()) {
      const NameEntries& e = it->second;
      bool exact = false;
      for (uint8_t k = 0; k < e.count; k++) {
        if (f.value == kStatic[e.index[k]].value) {
          AppendPrefixInt(out, 0xc0, 6, e.index[k]);  // 11xxxxxx
          exact = true;
          break;
        }
      }
      if (exact) continue;
      AppendPrefixInt(out, 0x50, 4, e.first);  // 0101xxxx: N=0, T=1
      AppendString(out, 7, 0x00, f.value);
      continue;
    }
    // 0010Hxxx: literal name (N=0), then the value.
    AppendString(out, 3, 0x20, f.name);
    AppendString(out, 7, 0x00, f.value);
  }
}

H3Error QpackEncoderStreamReader::Feed(const uint8_t* data, size_t len) {
  if (error_ != H3Error::kNoError) return error_;
  size_t i = 0;
  while (i < len) {
    // Only Set Dynamic Table Capacity (001xxxxx) can be valid; its first
    // byte is enough to refuse the others.
    if (partial_.empty() && (data[i] & 0xe0) != 0x20)
      return error_ = H3Error::kQpackEncoderStream;
    // Gather the integer's bytes (it ends at a byte without bit 7, or at
    // the first byte when the prefix is not all ones).
    partial_.push_back(static_cast<char>(data[i++]));
    bool complete = partial_.size() == 1
                        ? (static_cast<uint8_t>(partial_[0]) & 0x1f) != 0x1f
                        : !(static_cast<uint8_t>(partial_.back()) & 0x80);
    if (!complete) {
      if (partial_.size() > 10) return error_ = H3Error::kQpackEncoderStream;
      continue;
    }
    const auto* p = reinterpret_cast<const uint8_t*>(partial_.data());
    uint64_t capacity;
    if (!DecodePrefixInt(&p, p + partial_.size(), 5, &capacity) ||
        capacity > max_capacity_)
      return error_ = H3Error::kQpackEncoderStream;
    partial_.clear();
  }
  return H3Error::kNoError;
}

H3Error QpackDecoderStreamReader::Feed(const uint8_t* data, size_t len) {
  if (error_ != H3Error::kNoError) return error_;
  size_t i = 0;
  while (i < len) {
    // Only Stream Cancellation (01xxxxxx) is valid here.
    if (partial_.empty() && (data[i] & 0xc0) != 0x40)
      return error_ = H3Error::kQpackDecoderStream;
    partial_.push_back(static_cast<char>(data[i++]));
    bool complete = partial_.size() == 1
                        ? (static_cast<uint8_t>(partial_[0]) & 0x3f) != 0x3f
                        : !(static_cast<uint8_t>(partial_.back()) & 0x80);
    if (!complete) {
      if (partial_.size() > 10) return error_ = H3Error::kQpackDecoderStream;
      continue;
    }
    const auto* p = reinterpret_cast<const uint8_t*>(partial_.data());
    uint64_t stream_id;
    if (!DecodePrefixInt(&p, p + partial_.size(), 6, &stream_id))
      return error_ = H3Error::kQpackDecoderStream;
    partial_.clear();
  }
  return H3Error::kNoError;
}

}  // namespace sluice::http3
