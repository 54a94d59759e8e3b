#include "core/websocket/ws_hub.h"

#include <algorithm>
#include <cstring>

#include "core/net/output_queue.h"
#include "core/websocket/ws_frame.h"
#include "core/websocket/ws_session.h"

namespace sluice {

namespace {

// One published frame, referenced by every subscriber's queue that took
// it (large frames only); freed by the last Release (loop thread).
class SharedFrame final : public ExternalRef {
 public:
  explicit SharedFrame(size_t n) : bytes_(new char[n]), refs_(1) {}
  char* data() { return bytes_.get(); }
  void Release() override {
    if (--refs_ == 0) delete this;
  }
  static void Retain(ExternalRef* r) { static_cast<SharedFrame*>(r)->refs_++; }

 private:
  std::unique_ptr<char[]> bytes_;
  size_t refs_;
};

}  // namespace

bool WsHub::Subscribe(WebSocketSession* s, const std::string& topic) {
  std::vector<WebSocketSession*>& subs = topics_[topic];
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
  if (subs.empty()) topics_.erase(it);
  return true;
}

void WsHub::RemoveAll(WebSocketSession* s, const std::vector<std::string>& topics) {
  for (const std::string& t : topics) Unsubscribe(s, t);
}

size_t WsHub::Subscribers(const std::string& topic) const {
  auto it = topics_.find(topic);
  return it == topics_.end() ? 0 : it->second.size();
}

WsHub::PublishResult WsHub::Publish(const std::string& topic, uint8_t opcode,
                                    const char* data, size_t len,
                                    const WebSocketSession* exclude) {
  PublishResult r;
  auto it = topics_.find(topic);
  if (it == topics_.end()) return r;
  char header[kWsMaxServerHeader];
  const size_t hlen = WsWriteHeader(header, true, false, opcode, len);
  SharedFrame* frame = new SharedFrame(hlen + len);
  memcpy(frame->data(), header, hlen);
  if (len > 0) memcpy(frame->data() + hlen, data, len);
  // SendFrame writes into queues only (no embedder call), so the
  // subscriber list cannot change while it is walked.
  for (WebSocketSession* s : it->second) {
    if (s == exclude) continue;
    const int res = s->SendFrame(frame->data(), hlen + len, frame, &SharedFrame::Retain);
    if (res == kWsSent || res == kWsBuffered) {
      r.queued++;
    } else if (res == kWsDropped) {
      r.dropped++;
    }
  }
  frame->Release();
  return r;
}

}  // namespace sluice
