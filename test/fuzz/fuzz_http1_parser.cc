// libFuzzer harness over Http1Parser alone: no connection, socket, loop or
// delegate, only the parser and a listener that writes down what it hears.
// Each input is parsed twice — whole, in one Execute, and cut into reads at
// places the input chooses, each read in a fresh buffer (so no span can
// reach back into an earlier read) — and the two transcripts must match:
// the same heads (method, version, URL, header fields, keep-alive,
// upgrade), the same body bytes per request (how they are grouped into
// runs may differ), the same trailers and request ends, and the same
// refusal (its status; before a size limit, only the requests before the
// refused one). This is the promise the session builds
// on: a request may arrive in any number of reads, split at any byte.
// Half of the inputs parse in "embedder memory" (ubuf_base set), so body
// runs are compacted in place over chunk framing and reported by offset;
// the offsets are checked against the bytes.
//
// Input: byte 0 flags (1: embedder memory for the split run; 2: embedder
// memory for the whole run; 4: small limits — maxHeaderSize 256,
// maxHeadersCount 4, chunk extensions 16, maxRequestBodySize 1000),
// byte 1 a seed for the cut points, the rest the request bytes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../unit/native/http1_transcript.h"

using namespace sluice;
using sluice::transcript::Parse;


extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  uint8_t flags = data[0];
  uint32_t seed = data[1] * 2654435761u + 1;
  std::string input(reinterpret_cast<const char*>(data + 2), size - 2);
  ServerOptions options;
  if (flags & 4) {
    options.max_header_size = 256;
    options.max_headers_count = 4;
    options.max_chunk_extensions_size = 16;
    options.max_request_body_size = 1000;
  }
  std::vector<size_t> cuts;
  for (size_t covered = 0; covered < input.size();) {
    seed = seed * 1103515245u + 12345u;
    size_t n = 1 + (seed >> 16) % 17;  // reads of 1..17 bytes
    cuts.push_back(n);
    covered += n;
  }
  std::string whole = Parse(input, {}, (flags & 2) != 0, options);
  std::string split = Parse(input, cuts, (flags & 1) != 0, options);
  transcript::Comparable(&whole, &split);
  if (whole != split) {
    fprintf(stderr, "--- whole ---\n%s--- split ---\n%s", whole.c_str(),
            split.c_str());
    PARSER_CHECK(false, "split reads change what the parser reports");
  }
  return 0;
}
