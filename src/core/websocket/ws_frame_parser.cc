#include "core/websocket/ws_frame_parser.h"

#include <cstring>

namespace sluice {

bool WsFrameParser::Fail(int code, const char* message) {
  error_code_ = code;
  error_message_ = message;
  stopped_ = true;
  return false;
}

void WsFrameParser::Unmask(char* dst, const char* src, size_t n) {
  size_t i = 0;
  // Whole words once the mask is aligned with the payload offset: the
  // mask repeated twice, rotated to where the last call stopped.
  if (n >= 16) {
    uint8_t m8[8];
    for (int k = 0; k < 8; k++) m8[k] = mask_[(mask_pos_ + k) & 3];
    uint64_t m;
    memcpy(&m, m8, 8);
    for (; i + 8 <= n; i += 8) {
      uint64_t w;
      memcpy(&w, src + i, 8);
      w ^= m;
      memcpy(dst + i, &w, 8);
    }
  }
  for (; i < n; i++) dst[i] = static_cast<char>(src[i] ^ mask_[(mask_pos_ + i) & 3]);
  mask_pos_ = (mask_pos_ + n) & 3;
}

bool WsFrameParser::BeginFrame() {
  const uint8_t b0 = header_[0], b1 = header_[1];
  fin_ = (b0 & 0x80) != 0;
  rsv1_ = (b0 & 0x40) != 0;
  opcode_ = b0 & 0x0F;
  if (b0 & 0x30) return Fail(kWsCloseProtocolError, "RSV2 and RSV3 must be clear");
  const bool control = WsIsControl(opcode_);
  if (opcode_ != kWsContinuation && opcode_ != kWsText && opcode_ != kWsBinary &&
      opcode_ != kWsClose && opcode_ != kWsPing && opcode_ != kWsPong) {
    return Fail(kWsCloseProtocolError, "Invalid opcode");
  }
  if (rsv1_ && (!config_.rsv1_allowed || control || opcode_ == kWsContinuation)) {
    return Fail(kWsCloseProtocolError, "RSV1 must be clear");
  }
  if (!(b1 & 0x80)) return Fail(kWsCloseProtocolError, "MASK must be set");
  uint64_t len = b1 & 0x7F;
  size_t at = 2;
  if (len == 126) {
    len = (uint64_t{header_[2]} << 8) | header_[3];
    at = 4;
  } else if (len == 127) {
    len = 0;
    for (int i = 0; i < 8; i++) len = (len << 8) | header_[2 + i];
    at = 10;
    if (len >> 63) return Fail(kWsCloseTooBig, "Payload length too large");
  }
  memcpy(mask_, header_ + at, 4);
  mask_pos_ = 0;
  remaining_ = len;
  if (control) {
    if (!fin_) return Fail(kWsCloseProtocolError, "FIN must be set on a control frame");
    if (len > kWsMaxControlPayload) {
      return Fail(kWsCloseProtocolError, "Control frame payload too long");
    }
    control_.clear();
    return true;
  }
  if (opcode_ == kWsContinuation) {
    if (!in_message_) return Fail(kWsCloseProtocolError, "Continuation frame without a message");
  } else {
    if (in_message_) return Fail(kWsCloseProtocolError, "New message inside a fragmented message");
    in_message_ = true;
    message_binary_ = opcode_ == kWsBinary;
    message_compressed_ = rsv1_;
    message_.clear();
    utf8_.Reset();
    fragments_ = 0;
  }
  // Counted as ws counts (its frames, the last one included): a message
  // of exactly max_fragments frames passes.
  if (config_.max_fragments != 0 && ++fragments_ > config_.max_fragments) {
    return Fail(kWsClosePolicyViolation, "Too many message fragments");
  }
  if (config_.max_payload != 0 &&
      (len > config_.max_payload || message_.size() + len > config_.max_payload)) {
    return Fail(kWsCloseTooBig, "Max payload size exceeded");
  }
  return true;
}

bool WsFrameParser::EndFrame() {
  in_payload_ = false;
  header_len_ = 0;
  header_need_ = 2;
  if (WsIsControl(opcode_)) {
    if (opcode_ == kWsClose) {
      if (control_.size() == 1) return Fail(kWsCloseProtocolError, "Invalid close payload length");
      if (control_.size() >= 2) {
        const uint32_t code = (uint32_t{static_cast<uint8_t>(control_[0])} << 8) |
                              static_cast<uint8_t>(control_[1]);
        if (!WsValidCloseCode(code)) return Fail(kWsCloseProtocolError, "Invalid close code");
        if (!config_.skip_utf8 &&
            !Utf8Validator::Valid(control_.data() + 2, control_.size() - 2)) {
          return Fail(kWsCloseInvalidData, "Invalid UTF-8 in close reason");
        }
      }
    }
    if (!listener_->OnWsControl(opcode_, control_.data(), control_.size())) {
      stopped_ = true;
      return false;
    }
    return true;
  }
  if (!fin_) return true;
  in_message_ = false;
  if (!message_binary_ && !message_compressed_ && !config_.skip_utf8 &&
      !utf8_.complete()) {
    return Fail(kWsCloseInvalidData, "Invalid UTF-8 sequence");
  }
  if (!listener_->OnWsMessage(message_binary_, message_compressed_,
                              message_.data(), message_.size())) {
    stopped_ = true;
    return false;
  }
  // A message's memory is not kept for the connection's life beyond a
  // small buffer: an idle socket holds at most 1 KiB here (a new one for
  // the next large message costs one allocation).
  if (message_.capacity() > 1024) message_.Free();
  return true;
}

int WsFrameParser::Execute(const char* data, size_t len) {
  const char* p = data;
  const char* end = data + len;
  while (!stopped_) {
    if (!in_payload_) {
      // Header: 2 bytes, then as many more as the first two announce.
      while (header_len_ < header_need_ && p < end) {
        header_[header_len_++] = static_cast<uint8_t>(*p++);
        if (header_len_ == 2) {
          const uint8_t len7 = header_[1] & 0x7F;
          header_need_ = 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0) +
                         ((header_[1] & 0x80) ? 4 : 0);
          // An unmasked frame is refused at once: its mask never comes.
          if (!(header_[1] & 0x80)) header_need_ = 2;
        }
      }
      if (header_len_ < header_need_) break;
      if (!BeginFrame()) break;
      in_payload_ = true;
    }
    const size_t avail = static_cast<size_t>(end - p);
    const size_t n = remaining_ < avail ? static_cast<size_t>(remaining_) : avail;
    if (n > 0) {
      char* dst;
      if (WsIsControl(opcode_)) {
        const size_t at = control_.size();  // at most 125 bytes
        control_.resize(at + n);
        dst = &control_[at];
      } else {
        dst = message_.Extend(n);  // every byte written by Unmask
      }
      Unmask(dst, p, n);
      p += n;
      remaining_ -= n;
      // Text is checked as it arrives (fail fast), compressed text only
      // once inflated.
      if (!WsIsControl(opcode_) && !message_binary_ && !message_compressed_ &&
          !config_.skip_utf8 &&
          !utf8_.Feed(reinterpret_cast<const uint8_t*>(dst), n)) {
        Fail(kWsCloseInvalidData, "Invalid UTF-8 sequence");
        break;
      }
    }
    if (remaining_ > 0) break;
    if (!EndFrame()) break;
    if (p == end) break;
  }
  return error_code_;
}

}  // namespace sluice
