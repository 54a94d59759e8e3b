// WebSocket framing constants and the frame header writer (RFC 6455 5.2),
// shared by the parser, the session and pub/sub.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sluice {

enum WsOpcode : uint8_t {
  kWsContinuation = 0x0,
  kWsText = 0x1,
  kWsBinary = 0x2,
  kWsClose = 0x8,
  kWsPing = 0x9,
  kWsPong = 0xA,
};

// Close status codes the server itself sends (RFC 6455 7.4.1).
enum WsCloseCode : uint16_t {
  kWsCloseNormal = 1000,
  kWsCloseGoingAway = 1001,
  kWsCloseProtocolError = 1002,
  kWsCloseNoStatus = 1005,    // never on the wire: "no code was given"
  kWsCloseAbnormal = 1006,    // never on the wire: "closed without a close frame"
  kWsCloseInvalidData = 1007,
  kWsClosePolicyViolation = 1008,
  kWsCloseTooBig = 1009,
  kWsCloseInternalError = 1011,
};

// Largest frame header a server writes (no mask): 2 + 8 bytes.
inline constexpr size_t kWsMaxServerHeader = 10;
// Control frame payloads are at most this long (RFC 6455 5.5).
inline constexpr size_t kWsMaxControlPayload = 125;

inline bool WsIsControl(uint8_t opcode) { return (opcode & 0x8) != 0; }

// A status code a peer may send in a close frame (RFC 6455 7.4; the
// registered codes, not the reserved 1004-1006 and 1015, and the
// 3000-4999 range for libraries and applications), as ws accepts them.
inline bool WsValidCloseCode(uint32_t code) {
  return (code >= 1000 && code <= 1014 && code != 1004 && code != 1005 &&
          code != 1006) ||
         (code >= 3000 && code <= 4999);
}

// Writes an unmasked frame header for a payload of `len` bytes into `out`
// (at least kWsMaxServerHeader bytes); returns its length. rsv1 marks a
// compressed message (permessage-deflate) on its first frame.
inline size_t WsWriteHeader(char* out, bool fin, bool rsv1, uint8_t opcode,
                            uint64_t len) {
  uint8_t* o = reinterpret_cast<uint8_t*>(out);
  o[0] = static_cast<uint8_t>((fin ? 0x80 : 0) | (rsv1 ? 0x40 : 0) | opcode);
  if (len < 126) {
    o[1] = static_cast<uint8_t>(len);
    return 2;
  }
  if (len <= 0xFFFF) {
    o[1] = 126;
    o[2] = static_cast<uint8_t>(len >> 8);
    o[3] = static_cast<uint8_t>(len);
    return 4;
  }
  o[1] = 127;
  for (int i = 0; i < 8; i++) o[2 + i] = static_cast<uint8_t>(len >> (56 - 8 * i));
  return 10;
}

}  // namespace sluice
