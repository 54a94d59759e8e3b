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
  // Walked by offsets rather than CMSG_NXTHDR: glibc's adds an untrusted
  // cmsg_len to a pointer before comparing (a huge one wraps around), and
  // CMSG_FIRSTHDR does not check the first header's length at all. The
  // kernel writes well-formed ones; the fuzzer does not.
  const auto* base = static_cast<const uint8_t*>(h.msg_control);
  const size_t len = base == nullptr ? 0 : h.msg_controllen;
  size_t off = 0;
  while (len - off >= sizeof(cmsghdr)) {
    cmsghdr c;
    memcpy(&c, base + off, sizeof(c));  // the buffer need not be aligned
    if (c.cmsg_len < sizeof(cmsghdr) || c.cmsg_len > len - off) return 0;
    if (c.cmsg_level == SOL_UDP && c.cmsg_type == UDP_GRO) {
      if (c.cmsg_len < CMSG_LEN(sizeof(int))) return 0;
      int segment = 0;
      memcpy(&segment, base + off + CMSG_LEN(0), sizeof(segment));
      return segment > 0 ? static_cast<size_t>(segment) : 0;
    }
    size_t step = CMSG_ALIGN(c.cmsg_len);
    if (step > len - off) break;
    off += step;
  }
#else
  (void)h;
#endif
  return 0;
}

}  // namespace sluice
