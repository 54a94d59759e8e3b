// libFuzzer harness of the QUIC header reader (src/core/quic/quic_packet.*)
// the endpoint runs on every datagram it receives and sends, before
// OpenSSL sees it: the destination connection ID (long or short header)
// and a long header's source ID. Each input is copied into a buffer of
// exactly its size (ASan catches any read past it), read by the reader and
// by a model written here from RFC 9000 §17 byte by byte, and the answers
// must agree; an ID is never longer than 20 bytes and lies inside the
// datagram; a long header's source ID starts right after its destination
// ID and its length byte.
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
  free(buf);
  return 0;
}
