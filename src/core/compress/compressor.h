// Compressor: one content-coding stream (gzip, deflate, br) over the zlib
// and brotli that the node binary itself carries.
//
// Linking: nothing is linked for either library. zlib.h comes from Node's
// own headers (/usr/include/node) and brotli's API from Debian's
// libbrotli-dev headers; the addon's undefined symbols (deflateInit2_,
// BrotliEncoderCompressStream, ...) resolve at load time to the copies the
// node executable exports, so the code that runs is the code node's own
// zlib module runs. test/build/zlib_linkage.test.js checks that with
// dladdr (CompressionLinkInfo) and by comparing output bytes with node's
// zlib at the same settings.
//
// Threading: a Compressor is used by one thread at a time (the loop thread
// inline, or one threadpool worker); it holds no loop state.
//
// Errors: Init and Process return 0 or a negative kCompressE* code; nothing
// throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace sluice {

// Wire values shared with lib/compress/compression.js (CODING_*).
enum class Coding : int {
  kIdentity = 0,
  kGzip = 1,
  kDeflate = 2,  // the "deflate" content coding: zlib format (RFC 9110 8.4.1.2)
  kBrotli = 3,
};

enum CompressError {
  kCompressOk = 0,
  kCompressEInit = -1,     // deflateInit2_ / BrotliEncoderCreateInstance failed
  kCompressEStream = -2,   // the library reported a stream error
  kCompressEArgs = -3,     // unknown coding, or used before Init
  kCompressENoMem = -4,
};

struct CompressParams {
  Coding coding = Coding::kGzip;
  // zlib level 0..9, or -1 for Z_DEFAULT_COMPRESSION (6).
  int level = -1;
  // brotli quality 0..11 (node's zlib defaults to 11; HTTP servers use 4,
  // as the `compression` middleware does).
  int brotli_quality = 4;
  // brotli window (BROTLI_PARAM_LGWIN, 10..24), or 0 for brotli's default
  // (22). The encoder's ring buffer grows to about 2^(lgwin+1) bytes as a
  // stream's data accumulates: streamed responses use a smaller one
  // (CompressStream::kBrotliLgwin).
  int brotli_lgwin = 0;
};

class Compressor {
 public:
  enum Flush {
    kNoFlush = 0,   // compress what fits; output may lag behind input
    kSyncFlush = 1, // everything so far decodable by the client (SSE)
    kFinish = 2,    // end of the body: the stream's trailer is written
  };

  Compressor();
  ~Compressor();  // deflateEnd / BrotliEncoderDestroyInstance
  Compressor(const Compressor&) = delete;
  Compressor& operator=(const Compressor&) = delete;

  // size_hint: the body's total size when known (brotli tunes for it), or 0.
  int Init(const CompressParams& params, uint64_t size_hint = 0);
  bool initialized() const { return state_ != nullptr; }
  Coding coding() const { return params_.coding; }

  // Consumes from [*in, *in + *in_len) and writes to [*out, *out + *out_len),
  // advancing all four. Returns 0 when the step is complete (all input
  // consumed and, for kSyncFlush / kFinish, the flush fully written: then
  // *done is set for kFinish) or when the output space ran out (call again
  // with more space and the same flush mode), or a kCompressE* error.
  // Once a flush has started, call again with the same mode until it
  // completes before passing new input.
  int Process(const uint8_t** in, size_t* in_len, uint8_t** out,
              size_t* out_len, Flush flush, bool* done);

  // Convenience: compresses all of [data, data+len) with `flush` and
  // appends the output to *out (growing it). Returns 0 or an error.
  int ProcessAll(const uint8_t* data, size_t len, Flush flush,
                 std::string* out);

  // Upper bound of the compressed size of `len` bytes in one kFinish call
  // (deflateBound / BrotliEncoderMaxCompressedSize, plus headers).
  static size_t Bound(Coding coding, size_t len);

  // Compressors alive (tests: leak checks after client resets).
  static uint64_t live_count();

 private:
  CompressParams params_;
  void* state_ = nullptr;  // z_stream* or BrotliEncoderState*
  bool finished_ = false;
};

// Where the zlib and brotli functions the addon calls actually live.
struct CompressionLinkInfo {
  std::string zlib_header_version;   // ZLIB_VERSION the addon compiled with
  std::string zlib_runtime_version;  // zlibVersion() of what runs
  std::string zlib_library;          // dladdr(deflate).dli_fname
  std::string brotli_runtime_version;  // BrotliEncoderVersion(), "x.y.z"
  std::string brotli_library;        // dladdr(BrotliEncoderCompressStream)
  // The functions lie in the main program (the node executable), not in a
  // shared library such as libz.so / libbrotlienc.so.
  bool zlib_in_executable = false;
  bool brotli_in_executable = false;
};
CompressionLinkInfo GetCompressionLinkInfo();

}  // namespace sluice
