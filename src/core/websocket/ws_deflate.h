// WsDeflate: permessage-deflate (RFC 7692) for one connection, over node's
// own zlib (as core/compress/): raw DEFLATE, a message ends with an empty
// stored block whose 00 00 FF FF tail is left off the wire. Each direction
// keeps its sliding window across messages unless the negotiation said
// "no context takeover" for it. The zlib streams are made on first use
// (a connection that never sends or receives a compressed message costs
// nothing): a deflater is ~(1 << (window_bits + 2)) + (1 << (mem_level +
// 9)) bytes, an inflater ~(1 << window_bits) + 7 KiB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

struct z_stream_s;

namespace sluice {

struct WsDeflateConfig {
  bool enabled = false;
  bool server_no_context_takeover = false;  // reset our deflater per message
  bool client_no_context_takeover = false;  // reset our inflater per message
  int server_max_window_bits = 15;          // our deflater's window
  int client_max_window_bits = 15;          // the peer's deflater's window
  int level = 1;                            // ws's default zlib level
  int mem_level = 8;
  size_t threshold = 1024;                  // smaller messages go uncompressed
  // The server's sharedCompressor: server_no_context_takeover was
  // negotiated and the peer's server window is at least the hub's, so a
  // message deflated once by the hub (WsHub::shared_deflate) is valid for
  // this connection: it takes the hub's compressed publish frames, and its
  // own sends are deflated by the hub's deflater (no deflater of its own).
  bool shared = false;
};

class WsDeflate {
 public:
  explicit WsDeflate(const WsDeflateConfig& config) : config_(config) {}
  ~WsDeflate();
  WsDeflate(const WsDeflate&) = delete;
  WsDeflate& operator=(const WsDeflate&) = delete;

  // Inflates one whole message into *out (replaced). Returns 0, 1009 when
  // the output would pass `max` bytes (0: no limit; inflation stops there:
  // a compression bomb costs at most `max`), or 1007 for data that is not
  // DEFLATE (or zlib failed).
  int Inflate(const char* in, size_t len, uint64_t max, std::string* out);
  // Deflates one whole message into *out (replaced), tail stripped. False
  // when zlib failed (the message is then sent uncompressed).
  bool Deflate(const char* in, size_t len, std::string* out);

  const WsDeflateConfig& config() const { return config_; }

 private:
  WsDeflateConfig config_;
  z_stream_s* inflater_ = nullptr;
  z_stream_s* deflater_ = nullptr;
};

}  // namespace sluice
