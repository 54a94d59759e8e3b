#include "core/http3/frames.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/http3/varint.h"

namespace sluice::http3 {

uint64_t H3CodeOfHttp2(uint32_t code) {
  H3Error e = code == 0   ? H3Error::kNoError
              : code == 1 ? H3Error::kGeneralProtocol
              : code == 7 ? H3Error::kRequestRejected  // REFUSED_STREAM
              : code == 8 ? H3Error::kRequestCancelled  // CANCEL
                          : H3Error::kInternal;
  return static_cast<uint64_t>(e);
}

uint64_t Http2CodeOfH3(uint64_t code) {
  switch (static_cast<H3Error>(code)) {
    case H3Error::kNoError: return 0;
    case H3Error::kGeneralProtocol: return 1;
    case H3Error::kInternal: return 2;
    case H3Error::kRequestRejected: return 7;
    case H3Error::kRequestCancelled: return 8;
    default: return code;
  }
}

const char* H3ErrorName(H3Error e) {
  switch (e) {
    case H3Error::kNoError: return "H3_NO_ERROR";
    case H3Error::kGeneralProtocol: return "H3_GENERAL_PROTOCOL_ERROR";
    case H3Error::kInternal: return "H3_INTERNAL_ERROR";
    case H3Error::kStreamCreation: return "H3_STREAM_CREATION_ERROR";
    case H3Error::kClosedCriticalStream: return "H3_CLOSED_CRITICAL_STREAM";
    case H3Error::kFrameUnexpected: return "H3_FRAME_UNEXPECTED";
    case H3Error::kFrame: return "H3_FRAME_ERROR";
    case H3Error::kExcessiveLoad: return "H3_EXCESSIVE_LOAD";
    case H3Error::kId: return "H3_ID_ERROR";
    case H3Error::kSettings: return "H3_SETTINGS_ERROR";
    case H3Error::kMissingSettings: return "H3_MISSING_SETTINGS";
    case H3Error::kRequestRejected: return "H3_REQUEST_REJECTED";
    case H3Error::kRequestCancelled: return "H3_REQUEST_CANCELLED";
    case H3Error::kRequestIncomplete: return "H3_REQUEST_INCOMPLETE";
    case H3Error::kMessage: return "H3_MESSAGE_ERROR";
    case H3Error::kConnect: return "H3_CONNECT_ERROR";
    case H3Error::kVersionFallback: return "H3_VERSION_FALLBACK";
    case H3Error::kQpackDecompressionFailed: return "QPACK_DECOMPRESSION_FAILED";
    case H3Error::kQpackEncoderStream: return "QPACK_ENCODER_STREAM_ERROR";
    case H3Error::kQpackDecoderStream: return "QPACK_DECODER_STREAM_ERROR";
  }
  return "H3_UNKNOWN";
}

bool IsStreamError(H3Error e) {
  return e == H3Error::kRequestIncomplete || e == H3Error::kMessage ||
         e == H3Error::kRequestRejected || e == H3Error::kRequestCancelled ||
         e == H3Error::kConnect;
}

namespace {

// Known frame types a reader gathers whole, so their length is bounded.
bool IsBufferedFrameType(uint64_t t) {
  return t == static_cast<uint64_t>(FrameType::kHeaders) ||
         t == static_cast<uint64_t>(FrameType::kCancelPush) ||
         t == static_cast<uint64_t>(FrameType::kSettings) ||
         t == static_cast<uint64_t>(FrameType::kPushPromise) ||
         t == static_cast<uint64_t>(FrameType::kGoaway) ||
         t == static_cast<uint64_t>(FrameType::kMaxPushId);
}

constexpr uint64_t T(FrameType t) { return static_cast<uint64_t>(t); }

}  // namespace

FrameReader::FrameReader(Listener* l, uint64_t max_nondata_frame_size)
    : listener_(l), max_nondata_(max_nondata_frame_size) {}

bool FrameReader::TakeVarint(const uint8_t** p, const uint8_t* end,
                             uint64_t* out) {
  if (partial_len_ == 0) {
    size_t n = ReadVarint(*p, static_cast<size_t>(end - *p), out);
    if (n != 0) {
      *p += n;
      return true;
    }
  }
  // Straddles reads: gather its bytes (at most 8) in partial_.
  while (*p < end) {
    partial_[partial_len_++] = *(*p)++;
    if (partial_len_ == VarintLengthFromFirstByte(partial_[0])) {
      ReadVarint(partial_, partial_len_, out);
      partial_len_ = 0;
      return true;
    }
  }
  return false;
}

H3Error FrameReader::Feed(const uint8_t* data, size_t len) {
  if (error_ != H3Error::kNoError) return error_;
  const uint8_t* p = data;
  const uint8_t* end = data + len;
  while (p < end) {
    switch (state_) {
      case State::kType:
        if (!TakeVarint(&p, end, &type_)) return H3Error::kNoError;
        state_ = State::kLength;
        break;
      case State::kLength: {
        uint64_t length;
        if (!TakeVarint(&p, end, &length)) return H3Error::kNoError;
        if (IsBufferedFrameType(type_) && length > max_nondata_)
          return Fail(H3Error::kExcessiveLoad);
        H3Error e = listener_->OnFrameHeader(type_, length);
        if (e != H3Error::kNoError) return Fail(e);
        if (length == 0) {
          e = listener_->OnFramePayload(type_, p, 0, true);
          if (e != H3Error::kNoError) return Fail(e);
          state_ = State::kType;
        } else {
          left_ = length;
          state_ = State::kPayload;
        }
        break;
      }
      case State::kPayload: {
        size_t avail = static_cast<size_t>(end - p);
        size_t n = left_ < avail ? static_cast<size_t>(left_) : avail;
        left_ -= n;
        const uint8_t* piece = p;
        p += n;
        H3Error e = listener_->OnFramePayload(type_, piece, n, left_ == 0);
        if (e != H3Error::kNoError) return Fail(e);
        if (left_ == 0) state_ = State::kType;
        break;
      }
    }
  }
  // A zero-length frame whose length is the last byte of the input has
  // been delivered above; nothing is pending at the end of the loop but
  // what the states hold.
  return H3Error::kNoError;
}

bool FrameReader::AtFrameBoundary() const {
  return state_ == State::kType && partial_len_ == 0;
}

size_t WriteFrameHeader(uint8_t* out, uint64_t type, uint64_t length) {
  size_t n = WriteVarint(out, type);
  return n + WriteVarint(out + n, length);
}

H3Error ParseSettings(const uint8_t* payload, size_t len, Settings* out) {
  *out = Settings();
  // Identifiers seen, sorted at the end to find repeats in O(n log n): a
  // 64 KiB frame holds up to 16384 pairs.
  std::vector<uint64_t> ids;
  size_t pos = 0;
  while (pos < len) {
    uint64_t id, value;
    size_t n = ReadVarint(payload + pos, len - pos, &id);
    if (n == 0) return H3Error::kFrame;
    pos += n;
    n = ReadVarint(payload + pos, len - pos, &value);
    if (n == 0) return H3Error::kFrame;
    pos += n;
    ids.push_back(id);
    switch (id) {
      case 0x2: case 0x3: case 0x4: case 0x5:
        return H3Error::kSettings;  // HTTP/2's, reserved in HTTP/3
      case kSettingQpackMaxTableCapacity:
        out->qpack_max_table_capacity = value;
        break;
      case kSettingMaxFieldSectionSize:
        out->max_field_section_size = value;
        break;
      case kSettingQpackBlockedStreams:
        out->qpack_blocked_streams = value;
        break;
      case kSettingEnableConnectProtocol:
        if (value > 1) return H3Error::kSettings;
        out->enable_connect_protocol = value == 1;
        break;
      case kSettingH3Datagram:
        if (value > 1) return H3Error::kSettings;
        out->h3_datagram = value == 1;
        break;
      default:
        break;  // unknown or reserved: ignored
    }
  }
  std::sort(ids.begin(), ids.end());
  if (std::adjacent_find(ids.begin(), ids.end()) != ids.end())
    return H3Error::kSettings;
  return H3Error::kNoError;
}

namespace {
void AppendVarint(std::string* out, uint64_t v) {
  uint8_t b[8];
  size_t n = WriteVarint(b, v);
  out->append(reinterpret_cast<const char*>(b), n);
}
void AppendSetting(std::string* out, uint64_t id, uint64_t v) {
  AppendVarint(out, id);
  AppendVarint(out, v);
}
}  // namespace

void SerializeSettings(const Settings& s, std::string* out) {
  if (s.qpack_max_table_capacity != 0)
    AppendSetting(out, kSettingQpackMaxTableCapacity, s.qpack_max_table_capacity);
  // UINT64_MAX (no limit) cannot be sent; a value above the varint range
  // is sent as the largest one.
  if (s.max_field_section_size != UINT64_MAX)
    AppendSetting(out, kSettingMaxFieldSectionSize,
                  std::min(s.max_field_section_size, kMaxVarint));
  if (s.qpack_blocked_streams != 0)
    AppendSetting(out, kSettingQpackBlockedStreams, s.qpack_blocked_streams);
  if (s.enable_connect_protocol) AppendSetting(out, kSettingEnableConnectProtocol, 1);
  if (s.h3_datagram) AppendSetting(out, kSettingH3Datagram, 1);
}

void AppendSettingsFrame(const Settings& s, std::string* out) {
  std::string payload;
  SerializeSettings(s, &payload);
  uint8_t h[16];
  size_t n = WriteFrameHeader(h, T(FrameType::kSettings), payload.size());
  out->append(reinterpret_cast<const char*>(h), n);
  out->append(payload);
}

void AppendGoawayFrame(uint64_t id, std::string* out) {
  uint8_t h[16];
  size_t n = WriteFrameHeader(h, T(FrameType::kGoaway), VarintSize(id));
  out->append(reinterpret_cast<const char*>(h), n);
  AppendVarint(out, id);
}

size_t UniStreamTypeReader::Feed(const uint8_t* data, size_t len) {
  size_t used = 0;
  while (!done_ && used < len) {
    partial_[partial_len_++] = data[used++];
    if (partial_len_ == VarintLengthFromFirstByte(partial_[0])) {
      ReadVarint(partial_, partial_len_, &type_);
      done_ = true;
    }
  }
  return used;
}

H3Error PeerUniStreams::Open(uint64_t type, Kind* kind) {
  bool* seen = nullptr;
  switch (type) {
    case static_cast<uint64_t>(UniStreamType::kControl):
      *kind = Kind::kControl;
      seen = &control_;
      break;
    case static_cast<uint64_t>(UniStreamType::kPush):
      *kind = Kind::kPush;
      // Only servers push (RFC 9114 section 6.2.2).
      return peer_is_client_ ? H3Error::kStreamCreation : H3Error::kNoError;
    case static_cast<uint64_t>(UniStreamType::kQpackEncoder):
      *kind = Kind::kQpackEncoder;
      seen = &encoder_;
      break;
    case static_cast<uint64_t>(UniStreamType::kQpackDecoder):
      *kind = Kind::kQpackDecoder;
      seen = &decoder_;
      break;
    default:
      *kind = Kind::kIgnored;
      return H3Error::kNoError;
  }
  if (*seen) return H3Error::kStreamCreation;
  *seen = true;
  return H3Error::kNoError;
}

ControlStreamReader::ControlStreamReader(Delegate* d, Role role,
                                         uint64_t max_frame_size)
    : delegate_(d), role_(role), reader_(this, max_frame_size) {}

H3Error ControlStreamReader::OnFrameHeader(uint64_t type, uint64_t) {
  if (!settings_seen_) {
    // RFC 9114 6.2.1: SETTINGS first, whatever else would come.
    if (type != T(FrameType::kSettings)) return H3Error::kMissingSettings;
    return H3Error::kNoError;
  }
  if (type == T(FrameType::kSettings) || type == T(FrameType::kData) ||
      type == T(FrameType::kHeaders) || type == T(FrameType::kPushPromise) ||
      IsHttp2OnlyFrameType(type))
    return H3Error::kFrameUnexpected;
  // MAX_PUSH_ID goes from client to server only (RFC 9114 7.2.7).
  if (type == T(FrameType::kMaxPushId) && role_ == Role::kClient)
    return H3Error::kFrameUnexpected;
  return H3Error::kNoError;
}

H3Error ControlStreamReader::OnFramePayload(uint64_t type, const uint8_t* data,
                                            size_t len, bool frame_end) {
  if (!IsBufferedFrameType(type)) return H3Error::kNoError;  // skipped
  if (!frame_end || !frame_.empty()) {
    frame_.append(reinterpret_cast<const char*>(data), len);
    if (!frame_end) return H3Error::kNoError;
    std::string whole;
    whole.swap(frame_);
    return OnControlFrame(type, reinterpret_cast<const uint8_t*>(whole.data()),
                          whole.size());
  }
  return OnControlFrame(type, data, len);  // whole in one read: no copy
}

H3Error ControlStreamReader::OnControlFrame(uint64_t type, const uint8_t* p,
                                            size_t len) {
  if (type == T(FrameType::kSettings)) {
    Settings s;
    H3Error e = ParseSettings(p, len, &s);
    if (e != H3Error::kNoError) return e;
    settings_seen_ = true;
    return delegate_->OnSettings(s);
  }
  // GOAWAY, MAX_PUSH_ID and CANCEL_PUSH carry exactly one varint.
  uint64_t id;
  size_t n = ReadVarint(p, len, &id);
  if (n == 0 || n != len) return H3Error::kFrame;
  switch (type) {
    case T(FrameType::kGoaway):
      if (role_ == Role::kClient && id % 4 != 0) return H3Error::kId;
      if (goaway_seen_ && id > last_goaway_) return H3Error::kId;
      goaway_seen_ = true;
      last_goaway_ = id;
      return delegate_->OnGoaway(id);
    case T(FrameType::kMaxPushId):
      if (max_push_seen_ && id < max_push_id_) return H3Error::kId;
      max_push_seen_ = true;
      max_push_id_ = id;
      return delegate_->OnMaxPushId(id);
    case T(FrameType::kCancelPush):
      if (role_ == Role::kServer) return H3Error::kId;
      return delegate_->OnCancelPush(id);
    default:
      return H3Error::kFrameUnexpected;  // not reached: filtered by header
  }
}

RequestStreamFramer::RequestStreamFramer(Delegate* d, uint64_t max_headers_size)
    : delegate_(d), reader_(this, max_headers_size) {}

H3Error RequestStreamFramer::OnFrameHeader(uint64_t type, uint64_t) {
  if (type == T(FrameType::kHeaders)) {
    return state_ == State::kTrailersDone ? H3Error::kFrameUnexpected
                                          : H3Error::kNoError;
  }
  if (type == T(FrameType::kData)) {
    return state_ == State::kBody ? H3Error::kNoError
                                  : H3Error::kFrameUnexpected;
  }
  if (type == T(FrameType::kCancelPush) || type == T(FrameType::kSettings) ||
      type == T(FrameType::kPushPromise) || type == T(FrameType::kGoaway) ||
      type == T(FrameType::kMaxPushId) || IsHttp2OnlyFrameType(type))
    return H3Error::kFrameUnexpected;
  return H3Error::kNoError;  // unknown or reserved: skipped
}

H3Error RequestStreamFramer::OnFramePayload(uint64_t type, const uint8_t* data,
                                            size_t len, bool frame_end) {
  if (type == T(FrameType::kData)) {
    if (len == 0) return H3Error::kNoError;
    return delegate_->OnData(data, len);
  }
  if (type != T(FrameType::kHeaders)) return H3Error::kNoError;
  const uint8_t* block = data;
  size_t block_len = len;
  std::string whole;
  if (!frame_end || !block_.empty()) {
    block_.append(reinterpret_cast<const char*>(data), len);
    if (!frame_end) return H3Error::kNoError;
    whole.swap(block_);
    block = reinterpret_cast<const uint8_t*>(whole.data());
    block_len = whole.size();
  }
  bool trailers = state_ == State::kBody;
  state_ = trailers ? State::kTrailersDone : State::kBody;
  return delegate_->OnHeaders(block, block_len, trailers);
}

H3Error RequestStreamFramer::OnFin() const {
  if (reader_.dead()) return reader_.error();
  if (!reader_.AtFrameBoundary()) return H3Error::kFrame;
  if (state_ == State::kHead) return H3Error::kRequestIncomplete;
  return H3Error::kNoError;
}

}  // namespace sluice::http3
