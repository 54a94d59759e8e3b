// The connection IDs in a QUIC datagram's first packet header (RFC 9000
// §17: long and short headers), read without decrypting anything: what
// QuicEndpoint needs to tell which connection a datagram belongs to. Pure
// functions over untrusted bytes; fuzzed by test/fuzz/fuzz_quic_packet.cc.
#pragma once

#include <cstddef>
#include <cstdint>

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

}  // namespace sluice
