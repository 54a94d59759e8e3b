// WsHub: topics and their subscribers for pub/sub (one per JS
// WebSocketServer, shared by its sessions). A published message is framed
// once and queued natively on every subscriber's connection: no embedder
// call per subscriber. Shared ownership (std::shared_ptr): the server's JS
// object and every session subscribed through it hold it, so neither
// outlives the other's use. Loop thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

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
  // but `exclude` (may be null). Subscribers are not called back; the
  // embedder hears only their drains.
  PublishResult Publish(const std::string& topic, uint8_t opcode,
                        const char* data, size_t len,
                        const WebSocketSession* exclude);

 private:
  std::unordered_map<std::string, std::vector<WebSocketSession*>> topics_;
};

}  // namespace sluice
