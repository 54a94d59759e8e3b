// WsFrameParser: the server side of RFC 6455 framing, incremental. Bytes
// arrive split anywhere (a header across reads, a payload across many);
// fragments are joined into one message, control frames may come between
// fragments. It knows no connection: it reports to a WsParserListener and
// can be driven alone (test/fuzz/fuzz_websocket.cc).
//
// Every violation fails the connection with the status code RFC 6455
// names for it (kept in error_code(); the listener is not called again):
//   1002: an unmasked frame, RSV bits no extension negotiated (RSV1 is
//         allowed only with permessage-deflate, only on a message's first
//         frame), an unknown opcode, a fragmented or >125-byte control
//         frame, a continuation with no message begun or a new message
//         inside one, a close payload of 1 byte or with a code no peer
//         may send;
//   1007: a text message (or a close reason) that is not UTF-8, found at
//         its first bad byte even inside a fragmented message;
//   1008: a message of more than max_fragments frames (ws's maxFragments:
//         each frame costs a header's parse and a dispatch however small
//         its payload, so a message of a million 1-byte frames is CPU
//         without memory to show for it);
//   1009: a message longer than max_payload (all its fragments together).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/common/byte_buffer.h"
#include "core/websocket/utf8_validator.h"
#include "core/websocket/ws_frame.h"

namespace sluice {

// Told about complete messages and control frames. Called from inside
// WsFrameParser::Execute on the same thread; `data` points into the
// parser's own buffer, valid only during the call. Returning false stops
// Execute (the rest of that input is dropped: the session is closing).
class WsParserListener {
 public:
  virtual ~WsParserListener() = default;
  // A whole text or binary message. compressed: its first frame had RSV1
  // (permessage-deflate): `data` is the deflated payload, not yet
  // validated as UTF-8.
  virtual bool OnWsMessage(bool binary, bool compressed, const char* data,
                           size_t len) = 0;
  // A ping, pong or close frame (a close frame's payload already checked:
  // empty, or a valid code then a UTF-8 reason).
  virtual bool OnWsControl(uint8_t opcode, const char* data, size_t len) = 0;
};

class WsFrameParser {
 public:
  struct Config {
    uint64_t max_payload = 100 * 1024 * 1024;  // 0: no limit
    uint32_t max_fragments = 16 * 1024;         // frames per message; 0: no limit
    bool skip_utf8 = false;
    bool rsv1_allowed = false;  // permessage-deflate was negotiated
  };
  WsFrameParser(WsParserListener* listener, const Config& config)
      : listener_(listener), config_(config) {}

  // Parses [data, data+len). Returns 0, or the close code of the first
  // violation (then and after: error_code(), error_message()). Input
  // after a violation, or after the listener returned false, is ignored.
  int Execute(const char* data, size_t len);

  int error_code() const { return error_code_; }
  const char* error_message() const { return error_message_; }
  // Bytes of the message being assembled (fragments so far).
  size_t buffered() const { return message_.size(); }
  // The listener stopped the parser (returned false): no more input.
  void Stop() { stopped_ = true; }
  // Used by the session after inflating a message (permessage-deflate).
  uint64_t max_payload() const { return config_.max_payload; }

 private:
  // The frame header is complete in header_: checks it and sets up the
  // payload. Returns false on a violation (Fail was called).
  bool BeginFrame();
  // The current frame's payload is complete: delivers what it completes.
  bool EndFrame();
  bool Fail(int code, const char* message);
  // Unmasks n payload bytes from src into dst, continuing the mask where
  // the last call stopped.
  void Unmask(char* dst, const char* src, size_t n);

  WsParserListener* listener_;
  Config config_;

  // The frame in progress.
  uint8_t header_[14];
  size_t header_len_ = 0;
  size_t header_need_ = 2;
  bool in_payload_ = false;
  bool fin_ = false;
  bool rsv1_ = false;
  uint8_t opcode_ = 0;
  uint8_t mask_[4] = {0, 0, 0, 0};
  size_t mask_pos_ = 0;
  uint64_t remaining_ = 0;

  // The message in progress (data frames) and the control frame payload.
  bool in_message_ = false;
  bool message_binary_ = false;
  bool message_compressed_ = false;
  uint32_t fragments_ = 0;  // frames of the message so far
  ByteBuffer message_;  // the message being assembled, unmasked
  std::string control_;
  Utf8Validator utf8_;

  bool stopped_ = false;
  int error_code_ = 0;
  const char* error_message_ = "";
};

}  // namespace sluice
