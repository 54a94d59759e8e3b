// BodyDecoder: the client side of a compressed response body in the fuzz
// harnesses. Decodes gzip / deflate (zlib format) with Debian's zlib and br
// with Debian's libbrotlidec (the fuzz build links them: node's own copies
// are not there without node), and hands the decoded bytes to a callback
// that compares them with the body the harness produced. Errors (a corrupt
// stream, bytes after the stream's end) are reported, not thrown.
#pragma once

#include <brotli/decode.h>
#include <zlib.h>

#include <cstddef>
#include <cstdint>

#include "core/compress/compressor.h"

namespace fuzz {

class BodyDecoder {
 public:
  BodyDecoder() = default;
  BodyDecoder(const BodyDecoder&) = delete;
  BodyDecoder& operator=(const BodyDecoder&) = delete;
  ~BodyDecoder() { Reset(); }

  // Starts a new stream of `coding` (kIdentity: bytes pass as they are).
  void Init(sluice::Coding coding) {
    Reset();
    coding_ = coding;
    if (coding == sluice::Coding::kBrotli) {
      br_ = BrotliDecoderCreateInstance(nullptr, nullptr, nullptr);
    } else if (coding != sluice::Coding::kIdentity) {
      z_ = new z_stream();
      int bits = coding == sluice::Coding::kGzip ? 16 + 15 : 15;
      if (inflateInit2(z_, bits) != Z_OK) abort();
    }
  }
  sluice::Coding coding() const { return coding_; }
  // The compressed stream reached its end (always true for identity).
  bool finished() const { return coding_ == sluice::Coding::kIdentity || done_; }

  // Feeds wire bytes; `out(data, len)` gets decoded bytes. Returns false
  // on a corrupt stream or bytes after its end.
  template <typename Out>
  bool Feed(const char* data, size_t len, Out&& out) {
    if (coding_ == sluice::Coding::kIdentity) {
      out(data, len);
      return true;
    }
    if (len == 0) return true;
    if (done_) return false;  // bytes after the end of the stream
    uint8_t buf[16384];
    if (br_) {
      const uint8_t* in = reinterpret_cast<const uint8_t*>(data);
      size_t avail_in = len;
      for (;;) {
        uint8_t* o = buf;
        size_t avail_out = sizeof(buf);
        BrotliDecoderResult r = BrotliDecoderDecompressStream(
            br_, &avail_in, &in, &avail_out, &o, nullptr);
        if (o != buf) out(reinterpret_cast<char*>(buf), static_cast<size_t>(o - buf));
        if (r == BROTLI_DECODER_RESULT_ERROR) return false;
        if (r == BROTLI_DECODER_RESULT_SUCCESS) {
          done_ = true;
          return avail_in == 0;
        }
        if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT) return true;
      }
    }
    z_->next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
    z_->avail_in = static_cast<uInt>(len);
    for (;;) {
      z_->next_out = buf;
      z_->avail_out = sizeof(buf);
      int r = inflate(z_, Z_NO_FLUSH);
      size_t n = sizeof(buf) - z_->avail_out;
      if (n > 0) out(reinterpret_cast<char*>(buf), n);
      if (r == Z_STREAM_END) {
        done_ = true;
        return z_->avail_in == 0;
      }
      if (r != Z_OK && r != Z_BUF_ERROR) return false;
      if (z_->avail_in == 0 && z_->avail_out != 0) return true;
      if (r == Z_BUF_ERROR && n == 0) return false;  // no progress
    }
  }

 private:
  void Reset() {
    if (br_) BrotliDecoderDestroyInstance(br_);
    br_ = nullptr;
    if (z_) {
      inflateEnd(z_);
      delete z_;
    }
    z_ = nullptr;
    done_ = false;
    coding_ = sluice::Coding::kIdentity;
  }

  sluice::Coding coding_ = sluice::Coding::kIdentity;
  z_stream* z_ = nullptr;
  BrotliDecoderState* br_ = nullptr;
  bool done_ = false;
};

// The content-coding name the harnesses put in Content-Encoding.
inline const char* CodingName(sluice::Coding c) {
  switch (c) {
    case sluice::Coding::kGzip: return "gzip";
    case sluice::Coding::kDeflate: return "deflate";
    case sluice::Coding::kBrotli: return "br";
    default: return "identity";
  }
}

// A fuzzer-chosen compression for a pipe body, from one decision byte:
// one body in four is compressed, with a low level (the fuzzer's time goes
// to the server, not to deflate).
inline bool PickCompression(uint8_t c, sluice::CompressParams* p) {
  if ((c & 3) != 0) return false;
  p->coding = static_cast<sluice::Coding>(1 + (c >> 2) % 3);
  p->level = (c >> 4) % 3;          // zlib 0 (stored) .. 2
  p->brotli_quality = (c >> 6) % 3;  // brotli 0 .. 2
  return true;
}

}  // namespace fuzz
