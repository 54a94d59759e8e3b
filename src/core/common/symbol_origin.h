// SymbolOrigin: which loaded object a function the addon calls lives in.
//
// The addon links none of the libraries node carries (zlib, brotli,
// nghttp2, OpenSSL): its calls bind at load time to node's own copies,
// exported by the node executable (official builds) or in the shared
// library node itself links (distribution builds). dladdr says which one
// actually answered, so tests and sluice.versions report the copy in use
// rather than the one compiled against.
#pragma once

#include <string>

namespace sluice {

struct SymbolOrigin {
  std::string library;         // dladdr's dli_fname; empty if unknown
  bool in_executable = false;  // the main program (the node executable)
};

// `fn`: the address of a function (cast to const void*).
SymbolOrigin OriginOf(const void* fn);

}  // namespace sluice
