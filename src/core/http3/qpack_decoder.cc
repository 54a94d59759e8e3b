#include "core/http3/qpack_decoder.h"

#include <algorithm>
#include <utility>

#include "core/http3/huffman.h"
#include "core/http3/varint.h"

namespace sluice::http3 {

namespace {

constexpr uint64_t kEntryOverhead = 32;

// A string literal at *p whose H bit sits just above a prefix_bits-bit
// length. 1 = done, 0 = more bytes needed (*need: the total from `start`
// when the length is known), -1 = invalid.
int TakeString(const uint8_t** p, const uint8_t* end, unsigned prefix_bits,
               const uint8_t* start, size_t* need, std::string* out) {
  const uint8_t* q = *p;
  if (q >= end) return 0;
  bool huffman = (*q >> prefix_bits) & 1;
  uint64_t len;
  if (!DecodePrefixInt(&q, end, prefix_bits, &len)) {
    // Out of input, or over 2^62: an integer has at most 10 bytes.
    return end - q > 10 ? -1 : 0;
  }
  if (len > static_cast<uint64_t>(end - q)) {
    *need = static_cast<size_t>(q - start) + static_cast<size_t>(len);
    return 0;
  }
  out->clear();
  if (huffman) {
    if (!HuffmanDecode(q, static_cast<size_t>(len), out)) return -1;
  } else {
    out->assign(reinterpret_cast<const char*>(q), static_cast<size_t>(len));
  }
  *p = q + len;
  return 1;
}

// An integer that may be cut: 1 done, 0 more bytes, -1 over 2^62.
int TakeInt(const uint8_t** p, const uint8_t* end, unsigned prefix_bits, uint64_t* v) {
  const uint8_t* q = *p;
  if (DecodePrefixInt(&q, end, prefix_bits, v)) {
    *p = q;
    return 1;
  }
  // DecodePrefixInt fails on both; an integer is at most 10 bytes.
  return end - *p > 10 ? -1 : 0;
}

}  // namespace

QpackDecoder::QpackDecoder(uint64_t max_table_capacity, uint64_t max_blocked_streams)
    : max_capacity_(max_table_capacity), max_blocked_(max_blocked_streams) {}

const QpackDecoder::Entry* QpackDecoder::Absolute(uint64_t index) const {
  if (index < dropped_ || index >= inserts_) return nullptr;
  return &table_[static_cast<size_t>(index - dropped_)];
}

void QpackDecoder::Evict(uint64_t capacity) {
  while (size_ > capacity) {
    size_ -= table_.front().size();
    table_.pop_front();
    dropped_++;
  }
}

bool QpackDecoder::Insert(std::string name, std::string value) {
  uint64_t sz = name.size() + value.size() + kEntryOverhead;
  if (sz > capacity_) return false;  // RFC 9204 3.2.2
  Evict(capacity_ - sz);
  table_.push_back(Entry{std::move(name), std::move(value)});
  size_ += sz;
  inserts_++;
  return true;
}

int QpackDecoder::ParseInstruction(const uint8_t** p, const uint8_t* end, size_t* need) {
  const uint8_t* start = *p;
  const uint8_t* q = start;
  uint8_t b = *q;
  uint64_t index;
  int r;
  if (b & 0x80) {
    // 1Txxxxxx: Insert With Name Reference; T=0 is relative to the inserts.
    bool is_static = b & 0x40;
    if ((r = TakeInt(&q, end, 6, &index)) != 1) return r;
    std::string name;
    if (is_static) {
      if (index >= kQpackStaticTableSize) return -1;
      name = QpackStaticEntry(static_cast<size_t>(index)).name;
    } else {
      const Entry* e = index < inserts_ ? Absolute(inserts_ - 1 - index) : nullptr;
      if (!e) return -1;
      name = e->name;
    }
    std::string value;
    if ((r = TakeString(&q, end, 7, start, need, &value)) != 1) return r;
    if (!Insert(std::move(name), std::move(value))) return -1;
  } else if (b & 0x40) {
    // 01Hxxxxx: Insert With Literal Name.
    std::string name, value;
    if ((r = TakeString(&q, end, 5, start, need, &name)) != 1) return r;
    if ((r = TakeString(&q, end, 7, start, need, &value)) != 1) return r;
    if (!Insert(std::move(name), std::move(value))) return -1;
  } else if (b & 0x20) {
    // 001xxxxx: Set Dynamic Table Capacity.
    uint64_t cap;
    if ((r = TakeInt(&q, end, 5, &cap)) != 1) return r;
    if (cap > max_capacity_) return -1;
    capacity_ = cap;
    Evict(cap);
  } else {
    // 000xxxxx: Duplicate (relative index).
    if ((r = TakeInt(&q, end, 5, &index)) != 1) return r;
    const Entry* e = index < inserts_ ? Absolute(inserts_ - 1 - index) : nullptr;
    if (!e) return -1;
    Entry copy = *e;  // Insert may evict the original
    if (!Insert(std::move(copy.name), std::move(copy.value))) return -1;
  }
  *p = q;
  return 1;
}

H3Error QpackDecoder::FeedEncoderStream(const uint8_t* data, size_t len) {
  if (encoder_error_ != H3Error::kNoError) return encoder_error_;
  const uint8_t* p = data;
  const uint8_t* end = data + len;
  if (!pending_.empty()) {
    // Complete the cut instruction first: only bytes it can use are
    // copied (all of them until its length is known).
    while (p < end) {
      size_t want = pending_need_ > pending_.size() ? pending_need_ - pending_.size() : 1;
      size_t take = std::min(want, static_cast<size_t>(end - p));
      pending_.append(reinterpret_cast<const char*>(p), take);
      p += take;
      if (pending_.size() < pending_need_) continue;
      const auto* s = reinterpret_cast<const uint8_t*>(pending_.data());
      const uint8_t* q = s;
      size_t need = 0;
      int r = ParseInstruction(&q, s + pending_.size(), &need);
      if (r < 0) return EncoderError();
      if (r == 0) {
        pending_need_ = need;
        // A string longer than any entry could be: refuse before gathering.
        if (need > max_capacity_ + 32) return EncoderError();
        continue;
      }
      // Parsed: exactly the instruction's bytes were taken.
      pending_.clear();
      pending_need_ = 0;
      break;
    }
  }
  while (p < end && pending_.empty()) {
    size_t need = 0;
    const uint8_t* q = p;
    int r = ParseInstruction(&q, end, &need);
    if (r < 0) return EncoderError();
    if (r == 0) {
      if (need > max_capacity_ + 32) return EncoderError();
      pending_.assign(reinterpret_cast<const char*>(p), static_cast<size_t>(end - p));
      pending_need_ = need;
      p = end;
      break;
    }
    p = q;
  }
  return H3Error::kNoError;
}

QpackDecoder::Result QpackDecoder::Decode(uint64_t stream_id, const uint8_t* data,
                                          size_t len, uint64_t max_field_section_size,
                                          std::vector<HeaderField>* out) {
  out->clear();
  const uint8_t* p = data;
  const uint8_t* end = data + len;
  uint64_t encoded_ric, delta_base;
  if (!DecodePrefixInt(&p, end, 8, &encoded_ric) || p >= end)
    return Result::kDecompressionFailed;
  bool sign = *p & 0x80;
  if (!DecodePrefixInt(&p, end, 7, &delta_base)) return Result::kDecompressionFailed;
  // Required Insert Count (RFC 9204 4.5.1.1).
  uint64_t ric = 0;
  if (encoded_ric != 0) {
    uint64_t max_entries = max_capacity_ / kEntryOverhead;
    uint64_t full_range = 2 * max_entries;
    if (encoded_ric > full_range) return Result::kDecompressionFailed;
    uint64_t max_value = inserts_ + max_entries;
    uint64_t max_wrapped = (max_value / full_range) * full_range;
    ric = max_wrapped + encoded_ric - 1;
    if (ric > max_value) {
      if (ric <= full_range) return Result::kDecompressionFailed;
      ric -= full_range;
    }
    if (ric == 0) return Result::kDecompressionFailed;
  }
  // Base (4.5.1.2).
  uint64_t base;
  if (!sign) {
    if (delta_base > kMaxVarint - ric) return Result::kDecompressionFailed;
    base = ric + delta_base;
  } else {
    if (delta_base >= ric) return Result::kDecompressionFailed;
    base = ric - delta_base - 1;
  }
  if (ric > inserts_) {
    auto it = blocked_.find(stream_id);
    if (it == blocked_.end()) {
      if (blocked_.size() >= max_blocked_) return Result::kDecompressionFailed;
      blocked_.emplace(stream_id, ric);
    }
    return Result::kBlocked;
  }
  blocked_.erase(stream_id);
  uint64_t size = 0;
  uint64_t largest_ref = 0;  // largest absolute index referenced, + 1
  bool too_large = false;
  auto dynamic = [&](uint64_t abs) -> const Entry* {
    if (abs >= ric) return nullptr;  // beyond what the section declared
    const Entry* e = Absolute(abs);
    if (e && abs + 1 > largest_ref) largest_ref = abs + 1;
    return e;
  };
  while (p < end) {
    uint8_t b = *p;
    HeaderField f;
    uint64_t index;
    if (b & 0x80) {
      // 1Txxxxxx: indexed field line.
      bool is_static = b & 0x40;
      if (!DecodePrefixInt(&p, end, 6, &index)) return Result::kDecompressionFailed;
      if (is_static) {
        if (index >= kQpackStaticTableSize) return Result::kDecompressionFailed;
        f.name = QpackStaticEntry(static_cast<size_t>(index)).name;
        f.value = QpackStaticEntry(static_cast<size_t>(index)).value;
      } else {
        const Entry* e = index < base ? dynamic(base - 1 - index) : nullptr;
        if (!e) return Result::kDecompressionFailed;
        f.name = e->name;
        f.value = e->value;
      }
    } else if (b & 0x40) {
      // 01NTxxxx: literal with name reference.
      bool is_static = b & 0x10;
      if (!DecodePrefixInt(&p, end, 4, &index)) return Result::kDecompressionFailed;
      if (is_static) {
        if (index >= kQpackStaticTableSize) return Result::kDecompressionFailed;
        f.name = QpackStaticEntry(static_cast<size_t>(index)).name;
      } else {
        const Entry* e = index < base ? dynamic(base - 1 - index) : nullptr;
        if (!e) return Result::kDecompressionFailed;
        f.name = e->name;
      }
      size_t unused = 0;
      if (TakeString(&p, end, 7, p, &unused, &f.value) != 1)
        return Result::kDecompressionFailed;
    } else if (b & 0x20) {
      // 001NHxxx: literal with literal name.
      size_t unused = 0;
      if (TakeString(&p, end, 3, p, &unused, &f.name) != 1 ||
          TakeString(&p, end, 7, p, &unused, &f.value) != 1)
        return Result::kDecompressionFailed;
    } else if (b & 0x10) {
      // 0001xxxx: indexed field line with post-base index.
      if (!DecodePrefixInt(&p, end, 4, &index)) return Result::kDecompressionFailed;
      const Entry* e = index <= kMaxVarint - base ? dynamic(base + index) : nullptr;
      if (!e) return Result::kDecompressionFailed;
      f.name = e->name;
      f.value = e->value;
    } else {
      // 0000Nxxx: literal with post-base name reference.
      if (!DecodePrefixInt(&p, end, 3, &index)) return Result::kDecompressionFailed;
      const Entry* e = index <= kMaxVarint - base ? dynamic(base + index) : nullptr;
      if (!e) return Result::kDecompressionFailed;
      f.name = e->name;
      size_t unused = 0;
      if (TakeString(&p, end, 7, p, &unused, &f.value) != 1)
        return Result::kDecompressionFailed;
    }
    size += f.name.size() + f.value.size() + kEntryOverhead;
    if (size > max_field_section_size) too_large = true;
    // Past the limit the fields are dropped but the section is still read
    // to its end, for the errors and the acknowledgment below.
    if (!too_large) out->push_back(std::move(f));
  }
  // A Required Insert Count larger than the references need is an error
  // (4.5.1.1), as is one that no reference justifies.
  if (ric != largest_ref) return Result::kDecompressionFailed;
  if (ric > 0) {
    AppendPrefixInt(&decoder_out_, 0x80, 7, stream_id);  // Section Acknowledgment
    if (ric > known_received_) known_received_ = ric;
  }
  if (too_large) {
    out->clear();
    return Result::kTooLarge;
  }
  return Result::kOk;
}

void QpackDecoder::StreamCancelled(uint64_t stream_id) {
  blocked_.erase(stream_id);
  AppendPrefixInt(&decoder_out_, 0x40, 6, stream_id);  // Stream Cancellation
}

void QpackDecoder::TakeUnblocked(std::vector<uint64_t>* out) {
  for (auto it = blocked_.begin(); it != blocked_.end();) {
    if (it->second <= inserts_) {
      out->push_back(it->first);
      it = blocked_.erase(it);
    } else {
      ++it;
    }
  }
}

void QpackDecoder::TakeDecoderStream(std::string* out) {
  if (inserts_ > known_received_) {
    AppendPrefixInt(&decoder_out_, 0x00, 6, inserts_ - known_received_);  // Insert Count Increment
    known_received_ = inserts_;
  }
  out->append(decoder_out_);
  decoder_out_.clear();
}

}  // namespace sluice::http3
