// Accept-Encoding negotiation in the core, for responses that never
// reach JS (serveStatic). The same rules as lib/compress/compression.js
// `negotiate` (RFC 9110 12.5.3; q=0 refuses, `*` stands for codings not
// listed, the highest q wins and the server's order breaks ties,
// `identity` not listed is acceptable at the lowest q listed, x-gzip is
// gzip); test/compression's negotiation table runs against both.
#pragma once

#include <cstddef>
#include <string_view>

#include "core/compress/compressor.h"

namespace sluice {

// The coding to use among `encodings` (server preference order), or
// Coding::kIdentity. An absent header (has_header false) or an empty one
// means identity.
Coding NegotiateCoding(std::string_view accept_encoding, bool has_header,
                       const Coding* encodings, size_t count);

// "gzip", "deflate", "br" ("" for identity).
const char* CodingName(Coding c);

}  // namespace sluice
