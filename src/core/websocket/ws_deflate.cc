#include "core/websocket/ws_deflate.h"

#include <zlib.h>  // node's (include/node comes before /usr/include)

#include <cstring>
#include <new>

#include "core/websocket/ws_frame.h"

namespace sluice {

namespace {

// The tail every flushed message ends with (RFC 7692 7.2.1): removed by
// the sender, appended again by the receiver.
const unsigned char kTail[4] = {0x00, 0x00, 0xff, 0xff};
constexpr size_t kChunk = 16384;

}  // namespace

WsDeflate::~WsDeflate() {
  if (inflater_) {
    inflateEnd(inflater_);
    delete inflater_;
  }
  if (deflater_) {
    deflateEnd(deflater_);
    delete deflater_;
  }
}

int WsDeflate::Inflate(const char* in, size_t len, uint64_t max, std::string* out) {
  out->clear();
  if (!inflater_) {
    inflater_ = new (std::nothrow) z_stream();
    if (!inflater_) return kWsCloseInternalError;
    // The window the peer may use is at most 15 bits; inflating with the
    // largest window reads any smaller one.
    if (inflateInit2(inflater_, -15) != Z_OK) {
      delete inflater_;
      inflater_ = nullptr;
      return kWsCloseInternalError;
    }
  }
  z_stream* zs = inflater_;
  int result = 0;
  for (int part = 0; part < 2 && result == 0; part++) {
    zs->next_in = const_cast<Bytef*>(part == 0 ? reinterpret_cast<const Bytef*>(in) : kTail);
    zs->avail_in = static_cast<uInt>(part == 0 ? len : sizeof(kTail));
    // Until the input is consumed and zlib had room left (no output
    // pending in its window).
    do {
      const size_t at = out->size();
      out->resize(at + kChunk);
      zs->next_out = reinterpret_cast<Bytef*>(&(*out)[at]);
      zs->avail_out = kChunk;
      const int r = inflate(zs, Z_SYNC_FLUSH);
      out->resize(at + kChunk - zs->avail_out);
      if (max != 0 && out->size() > max) {
        result = kWsCloseTooBig;
        break;
      }
      if (r == Z_STREAM_END) {
        // A final block ends this DEFLATE stream: anything after it in
        // the message is not DEFLATE; the next message starts afresh.
        inflateReset(zs);
        if (zs->avail_in > 0 && part == 0) result = kWsCloseInvalidData;
        break;
      }
      if (r == Z_BUF_ERROR) break;  // no progress possible: all consumed
      if (r != Z_OK) {
        result = kWsCloseInvalidData;
        break;
      }
    } while (zs->avail_in > 0 || zs->avail_out == 0);
  }
  if (result != 0 || config_.client_no_context_takeover) inflateReset(zs);
  if (result != 0) out->clear();
  return result;
}

bool WsDeflate::Deflate(const char* in, size_t len, std::string* out) {
  out->clear();
  if (!deflater_) {
    deflater_ = new (std::nothrow) z_stream();
    if (!deflater_) return false;
    // zlib refuses a raw window of 8 bits; 9 is what ws uses for it too.
    const int bits = config_.server_max_window_bits < 9 ? 9 : config_.server_max_window_bits;
    if (deflateInit2(deflater_, config_.level, Z_DEFLATED, -bits, config_.mem_level,
                     Z_DEFAULT_STRATEGY) != Z_OK) {
      delete deflater_;
      deflater_ = nullptr;
      return false;
    }
  }
  z_stream* zs = deflater_;
  zs->next_in = const_cast<Bytef*>(reinterpret_cast<const Bytef*>(in));
  zs->avail_in = static_cast<uInt>(len);
  out->reserve(len / 2 + 64);
  int r;
  do {
    const size_t at = out->size();
    const size_t room = deflateBound(zs, zs->avail_in) + 16;
    out->resize(at + room);
    zs->next_out = reinterpret_cast<Bytef*>(&(*out)[at]);
    zs->avail_out = static_cast<uInt>(room);
    r = deflate(zs, Z_SYNC_FLUSH);
    out->resize(at + room - zs->avail_out);
    if (r != Z_OK && r != Z_BUF_ERROR) {
      deflateReset(zs);
      return false;
    }
  } while (zs->avail_in > 0 || zs->avail_out == 0);
  if (out->size() >= 4 && memcmp(out->data() + out->size() - 4, kTail, 4) == 0) {
    out->resize(out->size() - 4);
  }
  if (config_.server_no_context_takeover) deflateReset(zs);
  return true;
}

}  // namespace sluice
