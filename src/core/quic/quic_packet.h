// The connection IDs in a QUIC datagram's first packet header (RFC 9000
// §17: long and short headers), read without decrypting anything: what
// QuicEndpoint needs to tell which connection a datagram belongs to; and
// the control messages of a UDP read that say how the kernel coalesced
// datagrams (UDP_GRO). Pure functions over untrusted bytes; fuzzed by
// test/fuzz/fuzz_quic_packet.cc.
#pragma once

#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>

#if defined(__linux__) && !defined(UDP_GRO)
#define UDP_GRO 104  // linux/udp.h; older libc headers lack it
#endif

namespace sluice {

// RFC 9000 §17.2: a connection ID of version 1 is at most 20 bytes.
constexpr size_t kMaxQuicConnIdLen = 20;

// The destination connection ID of the first packet of `data`: explicit in
// a long header; in a short header, `short_id_len` bytes (the length of
// the IDs the receiver issued: a short header does not say). false when
// the datagram is too short for one, or names a longer ID than a version
// 1 packet may. *id points into data.
bool QuicDestinationId(const uint8_t* data, size_t len, size_t short_id_len,
                       const uint8_t** id, size_t* id_len);

// The source connection ID of a long-header packet (a handshake packet of
// the sender: its own ID); false for a short header or a cut one, or an
// empty or over-long ID. *id points into data.
bool QuicLongHeaderSourceId(const uint8_t* data, size_t len, const uint8_t** id,
                            size_t* id_len);

// UDP_GRO (Linux >= 5.0): a socket that asks for it may get several
// datagrams of one sender in one read, every one `segment` bytes long but
// the last (which may be shorter), and the segment size in a control
// message of that read. The segment size `h`'s control messages give, or
// 0 when they give none (the read is one datagram) or a malformed one.
// Reads nothing outside h.msg_control[0, h.msg_controllen).
size_t QuicGroSegmentSize(const msghdr& h);

// The datagrams a read of `len` bytes with segment size `segment` (0: not
// coalesced) holds: datagram i starts at i * segment and is
// QuicSegmentLength(len, segment, i) bytes long, for i < the count.
inline size_t QuicSegmentCount(size_t len, size_t segment) {
  if (segment == 0 || segment >= len) return len == 0 ? 0 : 1;
  return (len + segment - 1) / segment;
}
inline size_t QuicSegmentLength(size_t len, size_t segment, size_t i) {
  if (segment == 0 || segment >= len) return len;
  size_t at = i * segment;
  return len - at < segment ? len - at : segment;
}

}  // namespace sluice
