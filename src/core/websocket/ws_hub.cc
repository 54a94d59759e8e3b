#include "core/websocket/ws_hub.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "core/common/loop_tracked.h"
#include "core/net/output_queue.h"
#include "core/websocket/ws_frame.h"
#include "core/websocket/ws_session.h"

namespace sluice {

namespace {

// One published frame, referenced by every subscriber's queue that took
// it (large frames only); freed by the last Release (loop thread).
class SharedFrame final : public ExternalRef {
 public:
  // The frame of a `len`-byte payload (header + copy of it).
  SharedFrame(bool rsv1, uint8_t opcode, const char* payload, size_t len) : refs_(1) {
    char header[kWsMaxServerHeader];
    const size_t hlen = WsWriteHeader(header, true, rsv1, opcode, len);
    size_ = hlen + len;
    bytes_.reset(new char[size_]);
    memcpy(bytes_.get(), header, hlen);
    if (len > 0) memcpy(bytes_.get() + hlen, payload, len);
  }
  const char* data() const { return bytes_.get(); }
  size_t size() const { return size_; }
  void Release() override {
    if (--refs_ == 0) delete this;
  }
  static void Retain(ExternalRef* r) { static_cast<SharedFrame*>(r)->refs_++; }

 private:
  std::unique_ptr<char[]> bytes_;
  size_t size_ = 0;
  size_t refs_;
};

}  // namespace

// One report of topic changes: a zero timer that fires on the next loop
// turn and closes itself. Holds the hub weakly (the hub may go first: the
// report is then dropped); LoopTracked, so an environment teardown waits
// for its close callback.
class WsTopicWake {
 public:
  static void Start(uv_loop_t* loop, std::weak_ptr<WsHub> hub) {
    WsTopicWake* w = new WsTopicWake(std::move(hub));
    uv_timer_init(loop, &w->timer_);
    w->timer_.data = w;
    // Referenced: it fires on the next loop turn whatever else is
    // pending. Unreferenced, a loop with nothing else alive (an
    // environment's teardown waiting for LoopTracked objects) would never
    // run it, and the wait would never end.
    uv_timer_start(&w->timer_, OnTimer, 0, 0);
  }

 private:
  explicit WsTopicWake(std::weak_ptr<WsHub> hub) : hub_(std::move(hub)) {}
  // libuv -> report, loop thread, top level.
  static void OnTimer(uv_timer_t* t) {
    WsTopicWake* w = static_cast<WsTopicWake*>(t->data);
    if (std::shared_ptr<WsHub> hub = w->hub_.lock()) hub->FireTopicWatch();
    uv_close(reinterpret_cast<uv_handle_t*>(t), OnClosed);
  }
  static void OnClosed(uv_handle_t* h) { delete static_cast<WsTopicWake*>(h->data); }

  LoopTracked tracked_;
  uv_timer_t timer_;
  std::weak_ptr<WsHub> hub_;
};

void WsHub::WatchTopics(uv_loop_t* loop, WsTopicWatcher* watcher) {
  watch_loop_ = loop;
  watcher_ = watcher;
  changed_.clear();
  if (watcher_ == nullptr) return;
  // The topics subscribed before the watch began are changes too.
  for (const auto& t : topics_) changed_.insert(t.first);
  if (!changed_.empty() && !wake_pending_) {
    wake_pending_ = true;
    WsTopicWake::Start(watch_loop_, weak_from_this());
  }
}

void WsHub::TopicFlipped(const std::string& topic) {
  if (watcher_ == nullptr) return;
  changed_.insert(topic);
  if (!wake_pending_) {
    wake_pending_ = true;
    WsTopicWake::Start(watch_loop_, weak_from_this());
  }
}

void WsHub::FireTopicWatch() {
  wake_pending_ = false;
  if (watcher_ != nullptr && !changed_.empty()) watcher_->OnTopicsChanged();
}

std::vector<std::pair<std::string, bool>> WsHub::TakeTopicChanges() {
  std::vector<std::pair<std::string, bool>> out;
  out.reserve(changed_.size());
  for (const std::string& t : changed_) out.emplace_back(t, topics_.count(t) != 0);
  changed_.clear();
  return out;
}

bool WsHub::Subscribe(WebSocketSession* s, const std::string& topic) {
  auto it = topics_.find(topic);
  if (it == topics_.end()) {
    topics_[topic].push_back(s);
    TopicFlipped(topic);
    return true;
  }
  std::vector<WebSocketSession*>& subs = it->second;
  if (std::find(subs.begin(), subs.end(), s) != subs.end()) return false;
  subs.push_back(s);
  return true;
}

bool WsHub::Unsubscribe(WebSocketSession* s, const std::string& topic) {
  auto it = topics_.find(topic);
  if (it == topics_.end()) return false;
  std::vector<WebSocketSession*>& subs = it->second;
  auto pos = std::find(subs.begin(), subs.end(), s);
  if (pos == subs.end()) return false;
  // Order among subscribers is not kept: swap with the last.
  *pos = subs.back();
  subs.pop_back();
  if (subs.empty()) {
    topics_.erase(it);
    TopicFlipped(topic);
  }
  return true;
}

void WsHub::RemoveAll(WebSocketSession* s, const std::vector<std::string>& topics) {
  for (const std::string& t : topics) Unsubscribe(s, t);
}

size_t WsHub::Subscribers(const std::string& topic) const {
  auto it = topics_.find(topic);
  return it == topics_.end() ? 0 : it->second.size();
}

void WsHub::EnableSharedDeflate(const WsDeflateConfig& config) {
  WsDeflateConfig c = config;
  c.enabled = true;
  c.server_no_context_takeover = true;
  c.shared = true;
  shared_.reset(new WsDeflate(c));
}

WsHub::PublishResult WsHub::Publish(const std::string& topic, uint8_t opcode,
                                    const char* data, size_t len,
                                    const WebSocketSession* exclude, bool compress) {
  PublishResult r;
  auto it = topics_.find(topic);
  if (it == topics_.end()) return r;
  // Each frame is built on first need: a topic whose subscribers all
  // take the compressed one never builds the plain one, and the other
  // way round. `deflate_tried` keeps a zlib failure from being retried
  // per subscriber (they then get the plain frame).
  const bool may_compress = compress && shared_ && len >= shared_->config().threshold;
  bool deflate_tried = false;
  SharedFrame* plain = nullptr;
  SharedFrame* packed = nullptr;
  // SendFrame writes into queues only (no embedder call), so the
  // subscriber list cannot change while it is walked.
  for (WebSocketSession* s : it->second) {
    if (s == exclude) continue;
    SharedFrame* frame = nullptr;
    if (may_compress && s->TakesSharedFrames()) {
      if (!deflate_tried) {
        deflate_tried = true;
        if (shared_->Deflate(data, len, &deflated_)) {
          packed = new SharedFrame(true, opcode, deflated_.data(), deflated_.size());
        }
        if (deflated_.capacity() > 65536) std::string().swap(deflated_);
      }
      frame = packed;
    }
    if (frame == nullptr) {
      if (plain == nullptr) plain = new SharedFrame(false, opcode, data, len);
      frame = plain;
    }
    const int res = s->SendFrame(frame->data(), frame->size(), frame, &SharedFrame::Retain);
    if (res == kWsSent || res == kWsBuffered) {
      r.queued++;
    } else if (res == kWsDropped) {
      r.dropped++;
    }
  }
  if (plain) plain->Release();
  if (packed) packed->Release();
  return r;
}

}  // namespace sluice
