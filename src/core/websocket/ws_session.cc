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
  // A deflate in flight uses deflate_ on a worker: the job keeps it and
  // frees it once the worker is done.
  if (job_ != nullptr) job_->Orphan(std::move(deflate_));
}

WsDelegate* WebSocketSession::delegate() const {
  return t_->connection()->listener()->delegate()->websocket();
}

ServerMetrics& WebSocketSession::metrics() const {
  return t_->connection()->listener()->metrics();
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
  return job_ == nullptr ? t_->Backlog() : t_->Backlog() + HeldBytes();
}

size_t WebSocketSession::HeldBytes() const {
  size_t n = job_ != nullptr ? job_->input_size() : 0;
  for (const Held& h : held_) n += h.frames ? h.frames->size() : h.input.size();
  return n;
}

OutputQueue* WebSocketSession::Sink() {
  OutputQueue* q = t_->Output();
  if (q == nullptr || job_ == nullptr) return q;
  if (held_.empty() || !held_.back().frames) {
    held_.emplace_back();
    held_.back().frames = std::make_unique<OutputQueue>();
  }
  return held_.back().frames.get();
}

OutputQueue* WebSocketSession::BeginSend(uint8_t opcode, size_t len, bool fin,
                                         int* result) {
  OutputQueue* q = open() ? Sink() : nullptr;
  if (q == nullptr) {
    *result = kWsNotOpen;
    return nullptr;
  }
  // Control frames are never dropped: they are tiny, and a pong or a
  // close must not be lost to a full buffer.
  if (!WsIsControl(opcode) && config_.max_backpressure != 0 &&
      buffered_amount() > config_.max_backpressure) {
    metrics().ws_sends_dropped++;
    *result = kWsDropped;
    return nullptr;
  }
  // The caller appends the payload now: a message's last frame sends it.
  if (fin && !WsIsControl(opcode)) metrics().ws_messages_sent++;
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
  if (config_.max_backpressure != 0 && buffered_amount() > config_.max_backpressure) {
    metrics().ws_sends_dropped++;
    return kWsDropped;
  }
  // Counted as sent once taken: a message deflated off the loop or held
  // behind one is on its way (it goes unless the transport does).
  metrics().ws_messages_sent++;
  // Shared mode: the hub's deflater (no context takeover, a window no
  // larger than the one negotiated here) spares this connection a
  // deflater of its own; it is used and reset within this call, so never
  // on the threadpool (other connections use it on the loop thread).
  const bool shared = TakesSharedFrames() && hub_ && hub_->shared_deflate();
  if (!shared && (job_ != nullptr || len >= WsDeflateJob::kAsyncThreshold)) {
    // Off the loop thread; while a job is in flight the deflater is the
    // worker's, so any compressed send waits behind it (in order).
    if (job_ != nullptr) {
      held_.emplace_back();
      held_.back().opcode = opcode;
      held_.back().input.assign(data, len);
    } else {
      StartDeflate(opcode, std::string(data, len));
    }
    return EndSend();
  }
  WsDeflate* d = shared ? hub_->shared_deflate() : deflate_.get();
  if (!d->Deflate(data, len, &deflated_)) return Send(opcode, data, len, true);
  AppendMessage(t_->Output(), opcode, true, &deflated_, std::string());
  return EndSend();
}

void WebSocketSession::AppendMessage(OutputQueue* q, uint8_t opcode, bool ok,
                                     std::string* deflated, const std::string& plain) {
  const std::string& body = ok ? *deflated : plain;
  char* h = q->Reserve(kWsMaxServerHeader);
  q->Commit(WsWriteHeader(h, true, ok, opcode, body.size()));
  if (body.size() < kCopyBelow || !ok) {
    q->Append(body.data(), body.size());
  } else {
    // The queue owns the deflated bytes (moved out, no copy).
    q->AppendOwned(std::move(*deflated));
    *deflated = std::string();
  }
}

void WebSocketSession::StartDeflate(uint8_t opcode, std::string&& input) {
  WsDeflateJob* job = new WsDeflateJob(deflate_.get(), opcode, std::move(input));
  if (job->Queue(t_->connection()->loop(), this) == 0) {
    job_ = job;
    return;
  }
  // Not queued (uv_queue_work failed): deflated here after all.
  const bool ok = deflate_->Deflate(job->input().data(), job->input().size(), &deflated_);
  AppendMessage(t_->Output(), opcode, ok, &deflated_, job->input());
  job->Destroy();
}

void WebSocketSession::OnDeflateDone(WsDeflateJob* job, bool ok) {
  job_ = nullptr;
  OutputQueue* q = t_->Gone() ? nullptr : t_->Output();
  if (q == nullptr) {
    // The transport takes no more output: what was held goes with it.
    held_.clear();
    job->Destroy();
    return;
  }
  AppendMessage(q, job->opcode(), ok, &job->output(), job->input());
  job->Destroy();
  // What was sent meanwhile follows, in order, up to the next message
  // large enough for a job of its own.
  while (!held_.empty() && job_ == nullptr) {
    Held& h = held_.front();
    if (h.frames) {
      q->Splice(*h.frames);
      held_.pop_front();
      continue;
    }
    const uint8_t opcode = h.opcode;
    std::string input = std::move(h.input);
    held_.pop_front();
    if (input.size() >= WsDeflateJob::kAsyncThreshold) {
      StartDeflate(opcode, std::move(input));
    } else {
      const bool ok2 = deflate_->Deflate(input.data(), input.size(), &deflated_);
      AppendMessage(q, opcode, ok2, &deflated_, input);
    }
  }
  t_->Queued();
  if (job_ == nullptr && end_pending_) {
    end_pending_ = false;
    t_->End();
  }
}

int WebSocketSession::SendFrame(const char* frame, size_t len, ExternalRef* ref,
                                void (*retain)(ExternalRef*)) {
  OutputQueue* q = open() ? Sink() : nullptr;
  if (q == nullptr) return kWsNotOpen;
  // A fragmented message of our own is being sent: a whole frame in its
  // middle would break it. Subscribers mid-fragment miss the publish
  // (counted as dropped).
  if (fragmenting_ || (config_.max_backpressure != 0 &&
                      buffered_amount() > config_.max_backpressure)) {
    metrics().ws_publishes_dropped++;
    return kWsDropped;
  }
  metrics().ws_messages_sent++;
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
  // Output held behind a threadpool deflate is not in the transport's
  // queue yet: the end waits for it (OnDeflateDone).
  if (job_ != nullptr) {
    end_pending_ = true;
    return;
  }
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
  metrics().ws_messages_received++;
  if (WsDelegate* d = delegate()) d->OnWsMessage(this, binary, data, len);
  if (inflated_.capacity() > 65536) std::string().swap(inflated_);
  return !t_->Gone() && !failed_;
}

bool WebSocketSession::OnWsControl(uint8_t opcode, const char* data, size_t len) {
  WsDelegate* d = delegate();
  if (opcode == kWsPing) {
    if (config_.auto_pong && open() && !AutoPong(data, len)) return false;
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

bool WebSocketSession::AutoPong(const char* data, size_t len) {
  const uint32_t max = config_.max_pending_auto_pongs;
  if (max != 0 && PendingAutoPongs() >= max) {
    // As ws: no close frame (it would wait behind the pongs the peer does
    // not read), no error; the embedder hears the close (1006).
    t_->Abort();
    return false;
  }
  const int r = Send(kWsPong, data, len, true);
  if (max != 0 && (r == kWsSent || r == kWsBuffered)) {
    // Behind a threadpool deflate the pong is held, not yet in the
    // transport: its end is an estimate (input sizes, not deflated ones),
    // corrected once nothing at all is left to write (PendingAutoPongs).
    pong_marks_.push_back(t_->Appended() + (job_ != nullptr ? HeldBytes() : 0));
  }
  return true;
}

size_t WebSocketSession::PendingAutoPongs() {
  if (job_ == nullptr && t_->Backlog() == 0) {
    pong_marks_.clear();
    return 0;
  }
  const uint64_t written = t_->Written();
  auto out = pong_marks_.begin();
  while (out != pong_marks_.end() && *out <= written) ++out;
  pong_marks_.erase(pong_marks_.begin(), out);  // at most a few dozen entries
  return pong_marks_.size();
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
