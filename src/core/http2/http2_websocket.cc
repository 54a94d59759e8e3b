#include "core/http2/http2_websocket.h"

#include <nghttp2/nghttp2.h>
#include <uv.h>

#include "core/http2/http2_session.h"
#include "core/net/connection.h"
#include "core/net/listener.h"
#include "core/websocket/ws_frame.h"

namespace sluice {

namespace {

// The bytes of one Queued call that are too large to copy (Buffers a send
// referenced, deflated or published frames): the staged queue moves in
// here and its large spans are referenced from the DATA queue; freed by
// the last span's Release (loop thread).
class StagedBytes final : public ExternalRef {
 public:
  explicit StagedBytes(OutputQueue&& q) : q_(std::move(q)) {}
  const OutputQueue& queue() const { return q_; }
  void Hold() { refs_++; }
  void Release() override {
    if (--refs_ == 0) delete this;
  }

 private:
  OutputQueue q_;
  size_t refs_ = 1;
};

}  // namespace

Http2WsStream::Http2WsStream(Http2Session* session, int32_t id,
                             const WsConfig& config, std::shared_ptr<WsHub> hub)
    : session_(session), id_(id), ws_(this, config, std::move(hub)) {}

Http2WsStream::Busy::~Busy() {
  if (--s_->busy_ == 0 && s_->detached_) delete s_;
}

Connection* Http2WsStream::connection() const { return session_->connection(); }

bool Http2WsStream::Gone() const {
  return detached_ || session_->connection()->destroyed();
}

void Http2WsStream::OnData(const char* data, size_t len) {
  Busy b(this);
  ws_.OnRead(data, len);
}

void Http2WsStream::OnPeerEnd() {
  Busy b(this);
  ws_.OnPeerEnd();
}

void Http2WsStream::OnGoingAway() {
  Busy b(this);
  if (!Gone()) ws_.Close(kWsCloseGoingAway, nullptr, 0);
}

uint64_t Http2WsStream::CheckDeadlines(uint64_t now) {
  Busy b(this);
  for (int k = 0; k < 2; k++) {
    if (deadlines_[k] == 0 || deadlines_[k] > now) continue;
    deadlines_[k] = 0;
    ws_.OnDeadline(static_cast<WsDeadline>(k));
    if (detached_) return 0;
  }
  uint64_t next = deadlines_[0];
  if (deadlines_[1] != 0 && (next == 0 || deadlines_[1] < next)) next = deadlines_[1];
  return next;
}

OutputQueue* Http2WsStream::Output() {
  return detached_ || ended_ || session_->connection()->closing() ? nullptr : &staged_;
}

void Http2WsStream::MoveStaged() {
  if (staged_.empty()) return;
  bool large = false;
  staged_.ForEachSpan([&](const char*, size_t n) { large = large || n >= kCopyBelow; });
  if (!large) {
    // Frames of a few bytes (the common case): copied, coalesced.
    staged_.ForEachSpan([&](const char* p, size_t n) { out_.Push(p, n, nullptr); });
    staged_.Clear();
  } else {
    auto* held = new StagedBytes(std::move(staged_));
    staged_ = OutputQueue();
    held->queue().ForEachSpan([&](const char* p, size_t n) {
      if (n >= kCopyBelow) {
        held->Hold();
        out_.Push(p, n, held);
      } else {
        out_.Push(p, n, nullptr);
      }
    });
    held->Release();
  }
  session_->ResumeData(id_);
}

int Http2WsStream::Queued() {
  MoveStaged();
  // Over the high-water mark (the peer's window is shut, or the
  // connection is slow): the stream's drain is due once DATA frames take
  // the queue below it.
  return session_->NeedsDrain(id_) ? kWsBuffered : kWsSent;
}

void Http2WsStream::SetDeadline(WsDeadline kind, uint32_t ms) {
  if (ms == 0) {
    deadlines_[kind] = 0;
    return;
  }
  deadlines_[kind] = uv_now(session_->connection()->listener()->loop()) + ms;
  session_->ArmWsDeadline(deadlines_[kind]);
}

void Http2WsStream::End() {
  if (ended_ || detached_) return;
  MoveStaged();
  ended_ = true;
  out_.set_ended();
  session_->ResumeData(id_);
}

void Http2WsStream::Abort() {
  if (detached_) return;
  session_->ResetStream(id_, NGHTTP2_CANCEL, false);
}

ssize_t Http2WsStream::Available(size_t max, bool* eof) {
  return out_.Available(max, eof);
}

void Http2WsStream::Emit(OutputQueue& q, size_t len) {
  emitted_ += len;
  out_.Emit(q, len);
}

void Http2WsStream::Detach() {
  detached_ = true;
  ws_.OnClose();
  out_.Detach();
  staged_.Clear();
  if (busy_ == 0) delete this;
}

}  // namespace sluice

// ---- Http2Session's WebSocket calls ---------------------------------------------

namespace sluice {

int Http2Session::AcceptWebSocket(int32_t id, HeaderList& headers,
                                  const WsConfig& config, std::shared_ptr<WsHub> hub) {
  Stream* st = Find(id);
  if (st == nullptr || dead()) return kResultClosed;
  if (st->responded || st->remote_ended) return kResultInvalid;
  int r = Respond(id, 200, headers, 0);
  if (r != kResultOk) return r;
  auto* ws = new Http2WsStream(this, id, config, std::move(hub));
  r = AttachBodySource(id, ws);
  if (r != kResultOk) {
    ws->Detach();
    return r;
  }
  st = Find(id);
  st->websocket = ws;
  ws->ws()->Start();
  return kResultOk;
}

WebSocketSession* Http2Session::WebSocketOf(int32_t id) {
  Stream* st = Find(id);
  return st != nullptr && st->websocket != nullptr ? st->websocket->ws() : nullptr;
}

bool Http2Session::FeedWebSocket(int32_t id, const char* data, size_t len) {
  Stream* st = Find(id);
  if (st == nullptr || st->websocket == nullptr || dead()) return false;
  // OnData guards the stream's lifetime (a handler that resets it).
  st->websocket->OnData(data, len);
  return true;
}

void Http2Session::ArmWsDeadline(uint64_t at) {
  if (ws_deadline_ != 0 && ws_deadline_ <= at) return;
  ws_deadline_ = at;
  const uint64_t now = uv_now(conn_->listener()->loop());
  conn_->SetDeadline(kDeadlineWsIdle, at > now ? at - now : 1);
}

void Http2Session::CheckWsDeadlines() {
  ws_deadline_ = 0;
  const uint64_t now = uv_now(conn_->listener()->loop());
  // A deadline's handler (a ping, an abort) only submits frames: the
  // stream map does not change while it is walked.
  uint64_t next = 0;
  for (auto& it : streams_) {
    Http2WsStream* ws = it.second->websocket;
    if (ws == nullptr) continue;
    const uint64_t at = ws->CheckDeadlines(now);
    if (at != 0 && (next == 0 || at < next)) next = at;
  }
  if (next != 0) ArmWsDeadline(next);
}

}  // namespace sluice
