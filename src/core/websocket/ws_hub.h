// WsHub: topics and their subscribers for pub/sub (one per JS
// WebSocketServer, shared by its sessions). A published message is framed
// once and queued natively on every subscriber's connection: no embedder
// call per subscriber. Shared ownership (std::shared_ptr): the server's JS
// object and every session subscribed through it hold it, so neither
// outlives the other's use. Loop thread only.
//
// Shared compressor (permessage-deflate's sharedCompressor): the hub owns
// one deflater without context takeover. A published message at or over
// its threshold is deflated once into one compressed frame (RSV1) queued
// on every subscriber that negotiated deflate under the shared mode; the
// others get the plain frame, built once too. The same deflater serves
// those subscribers' own sends (each message starts from a fresh context,
// so whose message came before does not matter).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/websocket/ws_deflate.h"

namespace sluice {

class WebSocketSession;

class WsHub {
 public:
  // False when `s` already was (is not) subscribed.
  bool Subscribe(WebSocketSession* s, const std::string& topic);
  bool Unsubscribe(WebSocketSession* s, const std::string& topic);
  // The session is going away: off every topic it is on (`topics`, the
  // session's own list).
  void RemoveAll(WebSocketSession* s, const std::vector<std::string>& topics);
  size_t Subscribers(const std::string& topic) const;

  struct PublishResult {
    size_t queued = 0;   // subscribers the frame was queued for
    size_t dropped = 0;  // subscribers over their backpressure limit
  };
  // Frames the message once and queues it for every subscriber of `topic`
  // but `exclude` (may be null). With a shared compressor, `compress` and
  // the message at or over its threshold: deflated once, the compressed
  // frame to the shared-mode subscribers, the plain one to the rest.
  // Subscribers are not called back; the embedder hears only their drains.
  PublishResult Publish(const std::string& topic, uint8_t opcode,
                        const char* data, size_t len,
                        const WebSocketSession* exclude, bool compress = true);

  // Turns the shared compressor on (once, before sessions use it); its
  // no-context-takeover is forced.
  void EnableSharedDeflate(const WsDeflateConfig& config);
  // The shared deflater, or null when off.
  WsDeflate* shared_deflate() const { return shared_.get(); }

 private:
  std::unordered_map<std::string, std::vector<WebSocketSession*>> topics_;
  std::unique_ptr<WsDeflate> shared_;
  std::string deflated_;  // a published message, deflated (reused)
};

}  // namespace sluice
