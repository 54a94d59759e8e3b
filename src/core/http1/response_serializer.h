// Serialization helpers for HTTP/1.1 responses: precomputed status lines,
// numbers in decimal and hex (chunk sizes), canned error responses.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/net/output_queue.h"

namespace sluice {

// The standard reason phrase for `status`, or "" if it has none.
std::string_view StatusReason(int status);
// "HTTP/1.1 200 OK\r\n": precomputed for every status in 100..599 when
// reason is empty (or the standard one).
void AppendStatusLine(OutputQueue& q, int status, std::string_view reason);
void AppendDecimal(OutputQueue& q, uint64_t v);
// "<hex>\r\n", the chunk-size line of chunked encoding.
void AppendChunkHeader(OutputQueue& q, uint64_t len);

}  // namespace sluice
