// libFuzzer harness of the QUIC header reader (src/core/quic/quic_packet.*)
// the endpoint runs on every datagram it receives and sends, before
// OpenSSL sees it: the destination connection ID (long or short header)
// and a long header's source ID; and of the reader of a UDP read's control
// messages (the UDP_GRO segment size) and the cut of a coalesced read into
// its datagrams. Each input is copied into a buffer of
// exactly its size (ASan catches any read past it), read by the reader and
// by a model written here from RFC 9000 §17 byte by byte, and the answers
// must agree; an ID is never longer than 20 bytes and lies inside the
// datagram; a long header's source ID starts right after its destination
// ID and its length byte.
//
// The same bytes (after byte 0) are then a control buffer, in a buffer of
// exactly their size: the segment size read from it is 0 or the int after
// a header, at an 8-aligned offset, of level SOL_UDP and type UDP_GRO whose
// whole length lies in the buffer; and the cut of a read as long as the
// buffer by that size (and by byte 0 as a size) covers it exactly, in
// datagrams of the size but a shorter last one.
//
// Input: byte 0: the short-header ID length (mod 24, so lengths past 20
// are tried too); the rest is the datagram.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/quic/quic_packet.h"

namespace {

struct Id {
  bool ok = false;
  size_t at = 0, len = 0;
};

// RFC 9000 §17.2 / §17.3, one byte at a time.
Id ModelDestination(const std::vector<uint8_t>& d, size_t short_len) {
  Id r;
  if (d.empty()) return r;
  if (d[0] & 0x80) {
    if (d.size() < 6) return r;  // form byte, version (4), length byte
    r.len = d[5];
    r.at = 6;
  } else {
    r.len = short_len;
    r.at = 1;
  }
  r.ok = r.len <= 20 && r.at + r.len <= d.size();
  return r;
}

Id ModelSource(const std::vector<uint8_t>& d) {
  Id r;
  Id dst = ModelDestination(d, 0);
  if (d.empty() || !(d[0] & 0x80) || !dst.ok) return r;
  size_t len_at = dst.at + dst.len;
  if (len_at >= d.size()) return r;
  r.len = d[len_at];
  r.at = len_at + 1;
  r.ok = r.len >= 1 && r.len <= 20 && r.at + r.len <= d.size();
  return r;
}

void Check(bool ok, const uint8_t* base, size_t size, const uint8_t* id, size_t id_len,
           const Id& model) {
  if (ok != model.ok) abort();
  if (!ok) return;
  if (id_len > sluice::kMaxQuicConnIdLen) abort();
  if (id < base || id + id_len > base + size) abort();
  if (static_cast<size_t>(id - base) != model.at || id_len != model.len) abort();
}

// The cut of `len` bytes by `segment`: contiguous, complete, none empty,
// all of `segment` bytes but the last.
void CheckCut(size_t len, size_t segment) {
  size_t n = sluice::QuicSegmentCount(len, segment);
  if ((len == 0) != (n == 0)) abort();
  size_t total = 0;
  for (size_t i = 0; i < n; i++) {
    size_t l = sluice::QuicSegmentLength(len, segment, i);
    if (l == 0) abort();
    if (segment != 0 && segment < len && i + 1 < n && l != segment) abort();
    if (segment != 0 && l > segment && n > 1) abort();
    total += l;
  }
  if (total != len) abort();
}

void CheckGro(const uint8_t* buf, size_t size) {
  msghdr h{};
  h.msg_control = const_cast<uint8_t*>(buf);
  h.msg_controllen = size;
  size_t seg = sluice::QuicGroSegmentSize(h);
  if (seg != 0) {
    // Some 8-aligned header names UDP_GRO and carries `seg`.
    bool found = false;
    for (size_t off = 0; !found && off + CMSG_LEN(sizeof(int)) <= size; off += 8) {
      cmsghdr c;
      memcpy(&c, buf + off, sizeof(c));
      int v;
      memcpy(&v, buf + off + CMSG_LEN(0), sizeof(v));
      found = c.cmsg_level == SOL_UDP && c.cmsg_type == UDP_GRO &&
              c.cmsg_len >= CMSG_LEN(sizeof(int)) && c.cmsg_len <= size - off &&
              v > 0 && static_cast<size_t>(v) == seg;
    }
    if (!found) abort();
  }
  CheckCut(size, seg);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t short_len = data[0] % 24;
  std::vector<uint8_t> d(data + 1, data + size);
  // Exactly sized heap copy: a read past the datagram is an ASan error.
  uint8_t* buf = static_cast<uint8_t*>(malloc(d.empty() ? 1 : d.size()));
  if (!d.empty()) memcpy(buf, d.data(), d.size());
  const uint8_t* id = nullptr;
  size_t id_len = 0;
  bool ok = sluice::QuicDestinationId(buf, d.size(), short_len, &id, &id_len);
  Check(ok, buf, d.size(), id, id_len, ModelDestination(d, short_len));
  ok = sluice::QuicLongHeaderSourceId(buf, d.size(), &id, &id_len);
  Check(ok, buf, d.size(), id, id_len, ModelSource(d));
  CheckGro(buf, d.size());
  CheckCut(d.size(), short_len);
  CheckCut(d.size() * 7, data[0]);
  free(buf);
  return 0;
}
