#include "core/quic/quic_packet.h"

#include <cstring>

namespace sluice {

namespace {

// A long header (RFC 9000 §17.2): the form bit, then a 4-byte version,
// then the destination ID length (byte 5) and the ID.
constexpr uint8_t kLongForm = 0x80;
constexpr size_t kDcidLenAt = 5;

}  // namespace

bool QuicDestinationId(const uint8_t* data, size_t len, size_t short_id_len,
                       const uint8_t** id, size_t* id_len) {
  if (len == 0) return false;
  size_t at, n;
  if ((data[0] & kLongForm) != 0) {
    if (len <= kDcidLenAt) return false;
    n = data[kDcidLenAt];
    at = kDcidLenAt + 1;
  } else {
    n = short_id_len;
    at = 1;
  }
  if (n > kMaxQuicConnIdLen || len - at < n) return false;
  *id = data + at;
  *id_len = n;
  return true;
}

bool QuicLongHeaderSourceId(const uint8_t* data, size_t len, const uint8_t** id,
                            size_t* id_len) {
  if (len <= kDcidLenAt || (data[0] & kLongForm) == 0) return false;
  size_t dcid = data[kDcidLenAt];
  if (dcid > kMaxQuicConnIdLen) return false;
  size_t scid_len_at = kDcidLenAt + 1 + dcid;
  if (len <= scid_len_at) return false;
  size_t n = data[scid_len_at];
  if (n == 0 || n > kMaxQuicConnIdLen || len - (scid_len_at + 1) < n) return false;
  *id = data + scid_len_at + 1;
  *id_len = n;
  return true;
}

size_t QuicGroSegmentSize(const msghdr& h) {
#if defined(__linux__)
  // CMSG_FIRSTHDR / CMSG_NXTHDR stop where a header would not fit in
  // msg_controllen, but the first header's length is not checked against
  // it: the payload's bounds are checked here.
  const auto* end = static_cast<const uint8_t*>(h.msg_control) + h.msg_controllen;
  for (cmsghdr* c = CMSG_FIRSTHDR(&h); c != nullptr;
       c = CMSG_NXTHDR(const_cast<msghdr*>(&h), c)) {
    if (c->cmsg_level != SOL_UDP || c->cmsg_type != UDP_GRO) continue;
    if (c->cmsg_len < CMSG_LEN(sizeof(int)) ||
        static_cast<size_t>(end - CMSG_DATA(c)) < sizeof(int)) {
      return 0;
    }
    int segment = 0;
    memcpy(&segment, CMSG_DATA(c), sizeof(segment));
    return segment > 0 ? static_cast<size_t>(segment) : 0;
  }
#else
  (void)h;
#endif
  return 0;
}

}  // namespace sluice
