#include "core/compress/compressor.h"

#include <brotli/encode.h>
#include <zlib.h>  // Node's (include/node comes before /usr/include)

#include <algorithm>
#include <atomic>
#include <climits>
#include <new>

#include "core/compress/brotli_alloc.h"
#include "core/common/symbol_origin.h"

namespace sluice {

namespace {

std::atomic<uint64_t> g_live{0};

// Result of Process besides 0 and errors: the output space ran out.
constexpr int kNeedOutput = 1;

z_stream* Z(void* s) { return static_cast<z_stream*>(s); }
BrotliEncoderState* B(void* s) { return static_cast<BrotliEncoderState*>(s); }

}  // namespace

Compressor::Compressor() { g_live++; }

Compressor::~Compressor() {
  if (state_ != nullptr) {
    if (params_.coding == Coding::kBrotli) {
      BrotliEncoderDestroyInstance(B(state_));
    } else {
      deflateEnd(Z(state_));
      delete Z(state_);
    }
  }
  g_live--;
}

uint64_t Compressor::live_count() { return g_live.load(); }

int Compressor::Init(const CompressParams& params, uint64_t size_hint) {
  if (state_ != nullptr) return kCompressEArgs;
  params_ = params;
  finished_ = false;
  if (params.coding == Coding::kBrotli) {
    // Large blocks are reused across encoders (see core/compress/brotli_alloc.h).
    BrotliEncoderState* s = BrotliEncoderCreateInstance(
        brotli_alloc::Alloc, brotli_alloc::Free, nullptr);
    if (s == nullptr) return kCompressEInit;
    int q = std::clamp(params.brotli_quality, BROTLI_MIN_QUALITY,
                       BROTLI_MAX_QUALITY);
    BrotliEncoderSetParameter(s, BROTLI_PARAM_QUALITY, static_cast<uint32_t>(q));
    if (params.brotli_lgwin > 0) {
      int w = std::clamp(params.brotli_lgwin, BROTLI_MIN_WINDOW_BITS,
                         BROTLI_MAX_WINDOW_BITS);
      BrotliEncoderSetParameter(s, BROTLI_PARAM_LGWIN, static_cast<uint32_t>(w));
    }
    if (size_hint > 0) {
      BrotliEncoderSetParameter(
          s, BROTLI_PARAM_SIZE_HINT,
          static_cast<uint32_t>(std::min<uint64_t>(size_hint, 1u << 30)));
    }
    state_ = s;
    return kCompressOk;
  }
  int window_bits;
  switch (params.coding) {
    case Coding::kGzip: window_bits = 15 + 16; break;
    case Coding::kDeflate: window_bits = 15; break;
    default: return kCompressEArgs;
  }
  z_stream* zs = new (std::nothrow) z_stream();
  if (zs == nullptr) return kCompressENoMem;
  int level = params.level < 0 ? Z_DEFAULT_COMPRESSION
                               : std::min(params.level, 9);
  // memLevel 8 and the default strategy: what node's zlib uses, so the
  // bytes match zlib.gzipSync / deflateSync at the same level.
  if (deflateInit2(zs, level, Z_DEFLATED, window_bits, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    delete zs;
    return kCompressEInit;
  }
  state_ = zs;
  return kCompressOk;
}

int Compressor::Process(const uint8_t** in, size_t* in_len, uint8_t** out,
                        size_t* out_len, Flush flush, bool* done) {
  *done = false;
  if (state_ == nullptr) return kCompressEArgs;
  if (finished_) {
    *done = true;
    *in_len = 0;  // nothing can follow the end of the stream
    return kCompressOk;
  }
  if (params_.coding == Coding::kBrotli) {
    BrotliEncoderState* s = B(state_);
    BrotliEncoderOperation op =
        flush == kFinish ? BROTLI_OPERATION_FINISH
        : flush == kSyncFlush ? BROTLI_OPERATION_FLUSH
                              : BROTLI_OPERATION_PROCESS;
    while (true) {
      size_t before_in = *in_len, before_out = *out_len;
      if (!BrotliEncoderCompressStream(s, op, in_len, in, out_len, out,
                                       nullptr)) {
        return kCompressEStream;
      }
      bool complete;
      if (flush == kFinish) {
        complete = BrotliEncoderIsFinished(s) != 0;
        if (complete) {
          finished_ = true;
          *done = true;
        }
      } else if (flush == kSyncFlush) {
        complete = *in_len == 0 && !BrotliEncoderHasMoreOutput(s);
      } else {
        complete = *in_len == 0;
      }
      if (complete) return kCompressOk;
      if (*out_len == 0) return kNeedOutput;
      if (*in_len == before_in && *out_len == before_out) {
        return kCompressEStream;  // no progress with room on both sides
      }
    }
  }
  z_stream* zs = Z(state_);
  int zflush = flush == kFinish ? Z_FINISH
               : flush == kSyncFlush ? Z_SYNC_FLUSH
                                     : Z_NO_FLUSH;
  while (true) {
    uInt ain = static_cast<uInt>(std::min<size_t>(*in_len, UINT_MAX));
    uInt aout = static_cast<uInt>(std::min<size_t>(*out_len, UINT_MAX));
    zs->next_in = const_cast<Bytef*>(*in);
    zs->avail_in = ain;
    zs->next_out = *out;
    zs->avail_out = aout;
    int r = deflate(zs, zflush);
    size_t used_in = ain - zs->avail_in;
    size_t used_out = aout - zs->avail_out;
    *in += used_in;
    *in_len -= used_in;
    *out += used_out;
    *out_len -= used_out;
    if (r == Z_STREAM_END) {
      finished_ = true;
      *done = true;
      return kCompressOk;
    }
    // Z_BUF_ERROR: no progress possible (a repeated flush with nothing new,
    // or no output room): not fatal.
    if (r != Z_OK && r != Z_BUF_ERROR) return kCompressEStream;
    if (flush == kFinish) {
      if (*out_len == 0) return kNeedOutput;
      if (used_in == 0 && used_out == 0) return kCompressEStream;
      continue;
    }
    if (*in_len > 0) {
      if (*out_len == 0) return kNeedOutput;
      continue;  // more than UINT_MAX bytes of input
    }
    // All input consumed. A sync flush is complete once deflate returned
    // with output room to spare.
    if (flush == kSyncFlush && *out_len == 0) return kNeedOutput;
    return kCompressOk;
  }
}

int Compressor::ProcessAll(const uint8_t* data, size_t len, Flush flush,
                           std::string* out) {
  const uint8_t* p = data;
  size_t n = len;
  bool first = true;
  while (true) {
    size_t room = first && flush == kFinish ? Bound(params_.coding, n)
                                            : std::max<size_t>(n / 2, 4096);
    first = false;
    size_t old = out->size();
    out->resize(old + room);
    uint8_t* o = reinterpret_cast<uint8_t*>(&(*out)[old]);
    size_t olen = room;
    bool done = false;
    int r = Process(&p, &n, &o, &olen, flush, &done);
    out->resize(old + room - olen);
    if (r < 0) return r;
    if (r == kCompressOk) return kCompressOk;
  }
}

size_t Compressor::Bound(Coding coding, size_t len) {
  if (coding == Coding::kBrotli) {
    size_t b = BrotliEncoderMaxCompressedSize(len);
    return b == 0 ? len + 1024 : b;  // 0: too large to bound
  }
  // zlib's compressBound, plus the gzip header and trailer (18 bytes).
  return len + (len >> 12) + (len >> 14) + (len >> 25) + 13 + 18;
}

namespace {
std::string LibraryOf(const void* fn, bool* in_executable) {
  SymbolOrigin o = OriginOf(fn);
  *in_executable = o.in_executable;
  return o.library;
}
}  // namespace

CompressionLinkInfo GetCompressionLinkInfo() {
  CompressionLinkInfo i;
  i.zlib_header_version = ZLIB_VERSION;
  i.zlib_runtime_version = zlibVersion();
  i.zlib_library = LibraryOf(reinterpret_cast<const void*>(&deflate),
                             &i.zlib_in_executable);
  uint32_t v = BrotliEncoderVersion();
  i.brotli_runtime_version = std::to_string(v >> 24) + "." +
                             std::to_string((v >> 12) & 0xfff) + "." +
                             std::to_string(v & 0xfff);
  i.brotli_library = LibraryOf(
      reinterpret_cast<const void*>(&BrotliEncoderCompressStream),
      &i.brotli_in_executable);
  return i;
}

}  // namespace sluice
