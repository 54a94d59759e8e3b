#include "core/websocket/ws_session.h"

#include <algorithm>
#include <cstring>

#include "core/net/connection.h"
#include "core/net/listener.h"
#include "core/net/output_queue.h"
#include "core/net/server_delegate.h"
#include "core/websocket/ws_delegate.h"
#include "core/websocket/ws_frame.h"
#include "core/websocket/ws_hub.h"

namespace sluice {

WebSocketSession::WebSocketSession(WsTransport* transport, const WsConfig& config,
                                   std::shared_ptr<WsHub> hub)
    : t_(transport),
      config_(config),
      parser_(this, config.parser),
      deflate_(config.deflate.enabled ? new WsDeflate(config.deflate) : nullptr),
      hub_(std::move(hub)) {}

WebSocketSession::~WebSocketSession() {
  if (hub_) hub_->RemoveAll(this, topics_);
}

WsDelegate* WebSocketSession::delegate() const {
  return t_->connection()->listener()->delegate()->websocket();
}

void WebSocketSession::Start() {
  if (config_.idle_timeout_ms) t_->SetDeadline(kWsDeadlineIdle, config_.idle_timeout_ms);
}

void WebSocketSession::OnRead(const char* data, size_t len) {
  if (len == 0 || t_->Gone() || failed_ || close_received_) return;
  if (config_.idle_timeout_ms) {
    t_->SetDeadline(kWsDeadlineIdle, config_.idle_timeout_ms);
    ping_outstanding_ = false;
  }
  const int err = parser_.Execute(data, len);
  if (err != 0 && !failed_ && !t_->Gone()) {
    FailConnection(err, parser_.error_message());
  }
}

void WebSocketSession::OnPeerEnd() {
  // The peer left without (or after) its close frame: nothing more can
  // arrive; our queued output still goes (FIN / END_STREAM after it).
  if (t_->Gone()) return;
  close_received_ = true;
  Finish();
}

void WebSocketSession::OnDeadline(WsDeadline kind) {
  if (t_->Gone()) return;
  if (kind == kWsDeadlineClose) {
    // The peer never answered our close frame.
    t_->Abort();
    return;
  }
  if (t_->Output() == nullptr) return;
  if (ping_outstanding_) {
    // Silent through a whole second period after our ping: gone.
    t_->Abort();
    return;
  }
  ping_outstanding_ = true;
  Send(kWsPing, nullptr, 0, true);
  t_->SetDeadline(kWsDeadlineIdle, config_.idle_timeout_ms);
}

void WebSocketSession::OnClose() {
  // No publish reaches a closing transport; the session itself lives
  // until the transport frees it.
  if (hub_) hub_->RemoveAll(this, topics_);
  topics_.clear();
}

size_t WebSocketSession::buffered_amount() const {
  return t_->Backlog();
}

OutputQueue* WebSocketSession::BeginSend(uint8_t opcode, size_t len, bool fin,
                                         int* result) {
  OutputQueue* q = open() ? t_->Output() : nullptr;
  if (q == nullptr) {
    *result = kWsNotOpen;
    return nullptr;
  }
  // Control frames are never dropped: they are tiny, and a pong or a
  // close must not be lost to a full buffer.
  if (!WsIsControl(opcode) && config_.max_backpressure != 0 &&
      t_->Backlog() > config_.max_backpressure) {
    *result = kWsDropped;
    return nullptr;
  }
  uint8_t op = opcode;
  if (!WsIsControl(opcode)) {
    // A message sent in fragments: its first frame has the opcode, the
    // rest are continuations.
    if (fragmenting_) op = kWsContinuation;
    fragmenting_ = !fin;
  }
  char* h = q->Reserve(kWsMaxServerHeader);
  q->Commit(WsWriteHeader(h, fin, false, op, len));
  *result = kWsSent;
  return q;
}

int WebSocketSession::EndSend() {
  return t_->Queued();
}

int WebSocketSession::Send(uint8_t opcode, const char* data, size_t len, bool fin) {
  int result = 0;
  OutputQueue* q = BeginSend(opcode, len, fin, &result);
  if (q == nullptr) return result;
  q->Append(data, len);
  return EndSend();
}

bool WebSocketSession::WantsCompression(size_t len, bool fin, bool compress) const {
  return deflate_ != nullptr && compress && fin && !fragmenting_ &&
         len >= config_.deflate.threshold;
}

int WebSocketSession::SendCompressed(uint8_t opcode, const char* data, size_t len) {
  if (!open() || t_->Output() == nullptr) return kWsNotOpen;
  if (config_.max_backpressure != 0 && t_->Backlog() > config_.max_backpressure) {
    return kWsDropped;
  }
  // Shared mode: the hub's deflater (no context takeover, a window no
  // larger than the one negotiated here) spares this connection a
  // deflater of its own; it is used and reset within this call.
  WsDeflate* d = deflate_.get();
  if (TakesSharedFrames() && hub_ && hub_->shared_deflate()) d = hub_->shared_deflate();
  if (!d->Deflate(data, len, &deflated_)) return Send(opcode, data, len, true);
  OutputQueue& q = *t_->Output();
  char* h = q.Reserve(kWsMaxServerHeader);
  q.Commit(WsWriteHeader(h, true, true, opcode, deflated_.size()));
  if (deflated_.size() < kCopyBelow) {
    q.Append(deflated_.data(), deflated_.size());
  } else {
    // The queue owns the deflated bytes (moved out, no copy).
    q.AppendOwned(std::move(deflated_));
    deflated_ = std::string();
  }
  return EndSend();
}

int WebSocketSession::SendFrame(const char* frame, size_t len, ExternalRef* ref,
                                void (*retain)(ExternalRef*)) {
  OutputQueue* q = open() ? t_->Output() : nullptr;
  if (q == nullptr) return kWsNotOpen;
  // A fragmented message of our own is being sent: a whole frame in its
  // middle would break it. Subscribers mid-fragment miss the publish
  // (counted as dropped).
  if (fragmenting_) return kWsDropped;
  if (config_.max_backpressure != 0 && t_->Backlog() > config_.max_backpressure) {
    return kWsDropped;
  }
  if (len < kCopyBelow) {
    q->Append(frame, len);
  } else {
    retain(ref);
    q->AppendExternal(frame, len, ref);
  }
  return EndSend();
}

int WebSocketSession::Close(int code, const char* reason, size_t len) {
  if (!open() || t_->Output() == nullptr) return kWsNotOpen;
  char payload[kWsMaxControlPayload];
  size_t n = 0;
  if (code != 0) {
    payload[0] = static_cast<char>(code >> 8);
    payload[1] = static_cast<char>(code);
    n = 2 + std::min(len, kWsMaxControlPayload - 2);
    if (n > 2) memcpy(payload + 2, reason, n - 2);
  }
  // A close frame may interrupt a fragmented message of ours (it is a
  // control frame); no data frame follows it.
  Send(kWsClose, payload, n, true);
  close_sent_ = true;
  if (close_received_) {
    Finish();
  } else {
    t_->SetDeadline(kWsDeadlineIdle, 0);
    t_->SetDeadline(kWsDeadlineClose, config_.close_timeout_ms);
  }
  return kWsSent;
}

void WebSocketSession::Finish() {
  t_->SetDeadline(kWsDeadlineIdle, 0);
  t_->SetDeadline(kWsDeadlineClose, 0);
  // The server closes first (RFC 6455 7.1.1): FIN (or END_STREAM) once the
  // queue is written.
  t_->End();
}

void WebSocketSession::FailConnection(int code, const char* message) {
  if (!close_sent_ && t_->Output() != nullptr) {
    char payload[2] = {static_cast<char>(code >> 8), static_cast<char>(code)};
    Send(kWsClose, payload, 2, true);
  }
  failed_ = true;
  close_sent_ = true;
  if (WsDelegate* d = delegate()) d->OnWsError(this, code, message);
  if (t_->Gone()) return;
  Finish();
}

bool WebSocketSession::OnWsMessage(bool binary, bool compressed,
                                   const char* data, size_t len) {
  if (compressed) {
    // RSV1 passes the parser only when permessage-deflate was negotiated.
    // Inflation stops at maxPayload: a bomb costs at most that much.
    const int err = deflate_ ? deflate_->Inflate(data, len, parser_.max_payload(), &inflated_)
                             : static_cast<int>(kWsCloseProtocolError);
    if (err != 0) {
      FailConnection(err, err == kWsCloseTooBig ? "Max payload size exceeded"
                                                : "Invalid compressed data");
      return false;
    }
    if (!binary && !config_.parser.skip_utf8 &&
        !Utf8Validator::Valid(inflated_.data(), inflated_.size())) {
      FailConnection(kWsCloseInvalidData, "Invalid UTF-8 sequence");
      return false;
    }
    data = inflated_.data();
    len = inflated_.size();
  }
  if (WsDelegate* d = delegate()) d->OnWsMessage(this, binary, data, len);
  if (inflated_.capacity() > 65536) std::string().swap(inflated_);
  return !t_->Gone() && !failed_;
}

bool WebSocketSession::OnWsControl(uint8_t opcode, const char* data, size_t len) {
  WsDelegate* d = delegate();
  if (opcode == kWsPing) {
    if (config_.auto_pong && open()) Send(kWsPong, data, len, true);
    if (d) d->OnWsPing(this, data, len);
    return !t_->Gone() && !failed_;
  }
  if (opcode == kWsPong) {
    if (d) d->OnWsPong(this, data, len);
    return !t_->Gone() && !failed_;
  }
  // Close: nothing after it is parsed (RFC 6455 5.5.1).
  close_received_ = true;
  int code = kWsCloseNoStatus;
  if (len >= 2) {
    code = (static_cast<uint8_t>(data[0]) << 8) | static_cast<uint8_t>(data[1]);
  }
  if (d) d->OnWsPeerClose(this, code, len >= 2 ? data + 2 : data, len >= 2 ? len - 2 : 0);
  if (t_->Gone()) return false;
  if (!close_sent_) {
    // Echo the code (none for none), as ws does.
    Close(code == kWsCloseNoStatus ? 0 : code, nullptr, 0);
  } else {
    Finish();
  }
  return false;
}

bool WebSocketSession::Subscribe(const std::string& topic) {
  if (!hub_ || t_->Gone()) return false;
  if (!hub_->Subscribe(this, topic)) return false;
  topics_.push_back(topic);
  return true;
}

bool WebSocketSession::Unsubscribe(const std::string& topic) {
  if (!hub_ || !hub_->Unsubscribe(this, topic)) return false;
  topics_.erase(std::find(topics_.begin(), topics_.end(), topic));
  return true;
}

bool WebSocketSession::IsSubscribed(const std::string& topic) const {
  return std::find(topics_.begin(), topics_.end(), topic) != topics_.end();
}

}  // namespace sluice
