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
//
// Topic watch (the pub/sub bus, lib/websocket/pubsub/): the embedder hears
// when topics gain their first or lose their last local subscriber, so a
// process listens to a topic on the bus only while it has a subscriber.
// Not per Subscribe call: changes are collected into a set (a topic that
// flips back and forth within one loop turn is one entry) and reported
// once, from a zero timer of their own, never from inside Subscribe or a
// session's teardown (the embedder may run JS there).
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/websocket/ws_deflate.h"

namespace sluice {

class WebSocketSession;

// Told of topic changes. Called by the hub's wake timer (libuv, loop thread,
// top level: it may run JS and re-enter the hub, e.g. TakeTopicChanges).
class WsTopicWatcher {
 public:
  virtual ~WsTopicWatcher() = default;
  virtual void OnTopicsChanged() = 0;
};

class WsHub : public std::enable_shared_from_this<WsHub> {
 public:
  // Starts (non-null) or stops (null) the topic watch; `loop` runs the
  // wake timer. The watcher must outlive the watch (stop it first).
  void WatchTopics(uv_loop_t* loop, WsTopicWatcher* watcher);
  // The topics whose has-a-subscriber state may have flipped since the
  // last call, each with whether it has a subscriber now; clears them.
  std::vector<std::pair<std::string, bool>> TakeTopicChanges();

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
  friend class WsTopicWake;
  // A topic gained its first or lost its last subscriber.
  void TopicFlipped(const std::string& topic);
  void FireTopicWatch();

  std::unordered_map<std::string, std::vector<WebSocketSession*>> topics_;
  uv_loop_t* watch_loop_ = nullptr;
  WsTopicWatcher* watcher_ = nullptr;
  std::unordered_set<std::string> changed_;
  bool wake_pending_ = false;
  std::unique_ptr<WsDeflate> shared_;
  std::string deflated_;  // a published message, deflated (reused)
};

}  // namespace sluice
