// The Content-Type of a static file, by its extension: the one table
// serveStatic uses (printed in docs/files.md; lib/ reads it through
// binding.staticContentTypes()). The values are those the `send` package
// (serve-static) writes for the same extensions (mime-types 3), charset
// included, except .cjs (text/javascript here, application/node there).
#pragma once

#include <cstddef>
#include <string_view>

namespace sluice {

struct ContentTypeEntry {
  const char* ext;    // lower case, without the dot
  const char* type;   // the full header value
  bool compressible;  // worth compressing on the fly
};

// The table, sorted by extension.
const ContentTypeEntry* ContentTypeTable(size_t* count);

// The entry for the extension of `path` (its last segment, case-
// insensitive), or the default (application/octet-stream, not
// compressible) when there is none or it is unknown.
const ContentTypeEntry& ContentTypeFor(std::string_view path);

}  // namespace sluice
