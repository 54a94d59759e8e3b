#include "core/http1/http1_session.h"

#include <cstring>

#include "core/net/connection.h"
#include "core/http2/http2_upgrade.h"
#include "core/http1/http1_pipe_body.h"
#include "core/net/listener.h"
#include "core/http1/response_serializer.h"

namespace sluice {

namespace {

bool EqualsIgnoreCase(std::string_view a, const char* lower) {
  size_t n = strlen(lower);
  if (a.size() != n) return false;
  for (size_t i = 0; i < n; i++) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    if (c != lower[i]) return false;
  }
  return true;
}

// Output corked beyond this is flushed at once instead of at the end of the
// dispatch: a handler writing a large body in a loop should not hold it all
// in memory before the first byte leaves.
constexpr size_t kCorkFlushBytes = 256 * 1024;

// A field value without the trailing whitespace llhttp leaves in it
// (RFC 9110 5.5: OWS around the value is not part of it).
std::string_view TrimOws(const char* p, size_t n) {
  while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t')) n--;
  return std::string_view(p, n);
}

inline Http1Session* From(llhttp_t* p) {
  return static_cast<Http1Session*>(p->data);
}

}  // namespace

Http1Session::Http1Session(Connection* conn) : conn_(conn) {
  llhttp_settings_init(&settings_);
  settings_.on_message_begin = OnMessageBeginCb;
  settings_.on_url = OnUrlCb;
  settings_.on_header_field = OnHeaderFieldCb;
  settings_.on_header_value = OnHeaderValueCb;
  settings_.on_headers_complete = OnHeadersCompleteCb;
  settings_.on_body = OnBodyCb;
  settings_.on_message_complete = OnMessageCompleteCb;
  // Fields and values may arrive in several spans (split across reads);
  // field completion marks where the value starts: an empty value produces
  // no on_header_value call at all.
  settings_.on_header_field_complete = [](llhttp_t* p) -> int {
    return From(p)->OnHeaderFieldComplete();
  };
  settings_.on_version = OnVersionCb;
  settings_.on_version_complete = OnVersionCompleteCb;
  settings_.on_chunk_extension_name = OnChunkExtensionCb;
  settings_.on_chunk_extension_value = OnChunkExtensionCb;
  // Called once a chunk-size line (extensions included) is complete.
  settings_.on_chunk_header = [](llhttp_t* p) -> int {
    From(p)->chunk_ext_bytes_ = 0;
    return 0;
  };
  llhttp_init(&parser_, HTTP_REQUEST, &settings_);
  parser_.data = this;
  // A connection that never sends a byte is cut after headersTimeout.
  conn_->SetDeadline(kDeadlineHeaders,
                     conn_->listener()->options().headers_timeout_ms);
}

Http1Session::~Http1Session() = default;

// ---- llhttp trampolines -------------------------------------------------

int Http1Session::OnMessageBeginCb(llhttp_t* p) {
  return From(p)->OnMessageBegin();
}
int Http1Session::OnUrlCb(llhttp_t* p, const char* at, size_t len) {
  return From(p)->OnUrl(at, len);
}
int Http1Session::OnHeaderFieldCb(llhttp_t* p, const char* at, size_t len) {
  return From(p)->OnHeaderField(at, len);
}
int Http1Session::OnHeaderValueCb(llhttp_t* p, const char* at, size_t len) {
  return From(p)->OnHeaderValue(at, len);
}
int Http1Session::OnHeadersCompleteCb(llhttp_t* p) {
  return From(p)->OnHeadersComplete();
}
int Http1Session::OnBodyCb(llhttp_t* p, const char* at, size_t len) {
  return From(p)->OnBody(at, len);
}
int Http1Session::OnMessageCompleteCb(llhttp_t* p) {
  return From(p)->OnMessageComplete();
}

// llhttp 8 ends the request line at CRLF or a bare LF; node's llhttp 9
// requires CRLF ("Expected CRLF after version", 400). The version span is
// fixed-size, so its end is reported without looking at the next byte:
// that byte is either in this read (check it now) or the first of the next
// one (cr_due_, checked in Execute).
int Http1Session::OnVersionCb(llhttp_t* p, const char* at, size_t len) {
  Http1Session* s = From(p);
  s->version_end_ = at + len;
  s->version_gen_ = s->exec_gen_;
  return 0;
}

int Http1Session::OnVersionCompleteCb(llhttp_t* p) {
  Http1Session* s = From(p);
  // A span piece from an earlier read ended at that read's end: the
  // terminator is this read's first byte.
  const char* next =
      s->version_gen_ == s->exec_gen_ ? s->version_end_ : s->exec_start_;
  if (next < s->exec_end_) {
    if (*next == '\r') return 0;
    s->invalid_header_ = true;
    s->invalid_code_ = "HPE_INVALID_VERSION";
    s->invalid_reason_ = "Expected CRLF after version";
    return -1;
  }
  s->cr_due_ = true;
  return 0;
}

// Chunk extensions are parsed and dropped; their size per chunk is bounded
// as node 20 bounds it (16 KiB, then 413), or a client could make the
// parser chew on one endless chunk-size line.
int Http1Session::OnChunkExtensionCb(llhttp_t* p, const char* at,
                                     size_t len) {
  (void)at;
  Http1Session* s = From(p);
  size_t max = s->conn_->listener()->options().max_chunk_extensions_size;
  s->chunk_ext_bytes_ += len;
  if (max > 0 && s->chunk_ext_bytes_ > max) {
    s->ext_overflow_ = true;
    return -1;
  }
  return 0;
}

int Http1Session::OnHeaderFieldComplete() {
  // llhttp 8 accepts an empty field name (": x"); node's llhttp 9 answers
  // 400. (With no name span at all, fields_.back() would not be ours.)
  if (!in_field_ || fields_.empty() || fields_.back().first.len == 0) {
    invalid_header_ = true;
    invalid_code_ = "HPE_INVALID_HEADER_TOKEN";
    invalid_reason_ = "Invalid header token";
    return -1;
  }
  const Span& name = fields_.back().first;
  if (in_trailers_ && name.len == 14 &&
      EqualsIgnoreCase(std::string_view(arena_.data() + name.off, name.len),
                       "content-length")) {
    // A framing header after the body it would have framed: node's llhttp
    // 9 refuses it (400), so a proxy in front cannot be told otherwise.
    invalid_header_ = true;
    invalid_code_ = "HPE_INVALID_CONTENT_LENGTH";
    invalid_reason_ = "Content-Length can't be present with Transfer-Encoding";
    return -1;
  }
  fields_.back().second = Span{static_cast<uint32_t>(arena_.size()), 0};
  in_field_ = false;
  return 0;
}

// ---- parsing -------------------------------------------------------------

bool Http1Session::AllocRead(size_t suggested, uv_buf_t* buf) {
  (void)suggested;
  if (!ubuf_base_ || !in_body_ || ubuf_used_ >= ubuf_len_) return false;
  *buf = uv_buf_init(ubuf_base_ + ubuf_used_,
                     static_cast<unsigned int>(ubuf_len_ - ubuf_used_));
  return true;
}

void Http1Session::OnRead(const char* data, size_t len) {
  bool in_ubuf = ubuf_base_ && data >= ubuf_base_ &&
                 data < ubuf_base_ + ubuf_len_;
  if (in_ubuf) ubuf_used_ = static_cast<size_t>(data - ubuf_base_) + len;
  if (parse_dead_ || conn_->closing()) return;  // discard
  if (!unparsed_.empty()) {
    // Reads are stopped while input is held back; keep order regardless.
    unparsed_.append(data, len);
    return;
  }
  read_in_ubuf_ = in_ubuf;
  Execute(data, len);
  read_in_ubuf_ = false;
  PrepareBodyBuffer();
}

void Http1Session::PrepareBodyBuffer() {
  const ServerOptions& o = conn_->listener()->options();
  if (!o.body_allocator || conn_->closing() || parse_dead_) return;
  if (!in_body_) {
    // Between requests no buffer is held: an idle keep-alive connection
    // must not pin pool memory.
    RetireBodyBuffer();
    return;
  }
  if (ubuf_base_ && ubuf_len_ - ubuf_used_ >= o.body_buffer_min_free) return;
  RetireBodyBuffer();
  char* base = nullptr;
  size_t len = 0;
  ServerDelegate* d = conn_->listener()->delegate();
  switch (d->AcquireBodyBuffer(conn_, o.body_buffer_size, &base, &len)) {
    case ServerDelegate::BufferResult::kOk:
      ubuf_base_ = base;
      ubuf_len_ = len;
      ubuf_used_ = 0;
      if (waiting_memory_) {
        waiting_memory_ = false;
        conn_->Resume(Connection::kPauseMemory);
      }
      break;
    case ServerDelegate::BufferResult::kFallback:
      break;  // this read goes to the shared buffer and is copied
    case ServerDelegate::BufferResult::kDry:
      // TCP backpressure instead of unbounded copying: the peer's window
      // fills while we wait for the pool (RetryBodyBuffer).
      waiting_memory_ = true;
      conn_->Pause(Connection::kPauseMemory);
      break;
    case ServerDelegate::BufferResult::kError:
      conn_->Destroy();
      break;
  }
}

void Http1Session::RetireBodyBuffer() {
  if (!ubuf_base_) return;
  ubuf_base_ = nullptr;
  ubuf_len_ = 0;
  ubuf_used_ = 0;
  conn_->listener()->delegate()->ReleaseBodyBuffer(conn_);
}

void Http1Session::RetryBodyBuffer() {
  if (!waiting_memory_ || conn_->closing()) return;
  PrepareBodyBuffer();
}

void Http1Session::Execute(const char* data, size_t len) {
  const char* end = data + len;
  exec_start_ = data;
  exec_end_ = end;
  exec_gen_++;
  if (cr_due_ && len > 0) {
    // The previous read ended right after the request line's version.
    cr_due_ = false;
    if (*data != '\r') {
      invalid_header_ = true;
      invalid_code_ = "HPE_INVALID_VERSION";
      invalid_reason_ = "Expected CRLF after version";
      HandleParseError(HPE_INVALID_VERSION, data);
      return;
    }
  }
  while (true) {
    llhttp_errno_t err = llhttp_execute(&parser_, data, end - data);
    // Headers complete but their body not in this read yet: deliver now so
    // the handler can start (and answer 100-continue).
    if (head_pending_ && !conn_->destroyed()) DeliverHead(false);
    if (err == HPE_OK) return;
    if (conn_->destroyed()) return;
    const char* pos = llhttp_get_error_pos(&parser_);
    if (err == HPE_PAUSED) {
      // Too many responses pending: hold the rest back (see
      // OnMessageComplete) and stop reading until responses drain.
      unparsed_.assign(pos, end - pos);
      conn_->Pause(Connection::kPausePipeline);
      return;
    }
    if (err == HPE_PAUSED_UPGRADE && conn_->session() != this) {
      // Switched to HTTP/2 (h2c upgrade): what follows is HTTP/2.
      parse_dead_ = true;
      if (pos < end && !conn_->closing()) {
        conn_->session()->OnRead(pos, static_cast<size_t>(end - pos));
      }
      return;
    }
    if (err == HPE_PAUSED_UPGRADE && parser_.method == HTTP_CONNECT) {
      // What follows a CONNECT is tunnel data, never HTTP: parsing it as
      // requests would be smuggling. lib/ closes the connection, as node
      // does without a 'connect' listener.
      parse_dead_ = true;
      return;
    }
    if (err == HPE_PAUSED_UPGRADE) {
      // No protocol switch is offered over HTTP/1.1 here: the upgrade
      // request was answered as a normal request; keep parsing HTTP.
      llhttp_resume_after_upgrade(&parser_);
      data = pos;
      if (data >= end) return;
      continue;
    }
    HandleParseError(err, pos);
    return;
  }
}

void Http1Session::ResumeParsing() {
  if (unparsed_.empty() || parse_dead_ || conn_->closing()) return;
  std::string input;
  input.swap(unparsed_);
  llhttp_resume(&parser_);
  Execute(input.data(), input.size());
  PrepareBodyBuffer();
}

int Http1Session::CheckHeaderBudget(size_t len) {
  header_bytes_ += len;
  if (header_bytes_ > conn_->listener()->options().max_header_size) {
    header_overflow_ = true;
    return -1;
  }
  return 0;
}

int Http1Session::OnMessageBegin() {
  message_in_progress_ = true;
  arena_.clear();
  fields_.clear();
  url_ = Span{0, 0};
  in_field_ = false;
  in_trailers_ = false;
  head_pending_ = false;
  trailer_start_ = 0;
  header_bytes_ = 0;
  invalid_header_ = false;
  invalid_code_ = nullptr;
  invalid_reason_ = nullptr;
  body_bytes_ = 0;
  chunk_ext_bytes_ = 0;
  current_seq_ = next_seq_++;
  const ServerOptions& o = conn_->listener()->options();
  conn_->ClearDeadline(kDeadlineKeepAlive);
  conn_->SetDeadline(kDeadlineHeaders, o.headers_timeout_ms);
  conn_->SetDeadline(kDeadlineRequest, o.request_timeout_ms);
  return 0;
}

int Http1Session::OnUrl(const char* at, size_t len) {
  if (CheckHeaderBudget(len) != 0) return -1;
  if (url_.len == 0) url_.off = static_cast<uint32_t>(arena_.size());
  arena_.append(at, len);
  url_.len += static_cast<uint32_t>(len);
  return 0;
}

int Http1Session::OnHeaderField(const char* at, size_t len) {
  if (!in_trailers_ && CheckHeaderBudget(len) != 0) return -1;
  if (!in_field_) {
    fields_.push_back(
        {Span{static_cast<uint32_t>(arena_.size()), 0}, Span{0, 0}});
    in_field_ = true;
  }
  arena_.append(at, len);
  fields_.back().first.len += static_cast<uint32_t>(len);
  return 0;
}

int Http1Session::OnHeaderValue(const char* at, size_t len) {
  if (!in_trailers_ && CheckHeaderBudget(len) != 0) return -1;
  // llhttp 8 accepts obs-fold (a value continued on the next line after
  // whitespace), which RFC 9112 lets a server reject and node rejects. It
  // shows as a second span of the same value that does not simply continue
  // the previous one across a read boundary.
  if (fields_.back().second.len > 0 &&
      !(at == exec_start_ && value_span_hit_end_)) {
    invalid_header_ = true;
    return -1;
  }
  value_span_hit_end_ = (at + len == exec_end_);
  arena_.append(at, len);
  fields_.back().second.len += static_cast<uint32_t>(len);
  return 0;
}

int Http1Session::OnHeadersComplete() {
  Request r;
  r.seq = current_seq_;
  r.method = parser_.method;
  r.http10 = parser_.http_major < 1 ||
             (parser_.http_major == 1 && parser_.http_minor == 0);
  r.req_keep_alive = llhttp_should_keep_alive(&parser_) != 0;
  requests_.push_back(std::move(r));
  conn_->ClearDeadline(kDeadlineHeaders);
  head_pending_ = true;
  in_trailers_ = true;
  in_body_ = (parser_.flags & F_CHUNKED) != 0 ||
             ((parser_.flags & F_CONTENT_LENGTH) != 0 &&
              parser_.content_length > 0);
  trailer_start_ = fields_.size();
  if ((parser_.flags & F_CONTENT_LENGTH) != 0 &&
      parser_.content_length >
          conn_->listener()->options().max_request_body_size) {
    // Refused before a body byte is read. The handler still gets the
    // request (its req emits 'error'); the parser stops here, so the body
    // is never taken for a next request.
    body_too_large_ = true;
    DeliverHead(false);
    return -1;
  }
  return 0;
}

void Http1Session::DeliverHead(bool complete) {
  head_pending_ = false;
  head_.seq = current_seq_;
  head_.method = parser_.method;
  head_.http_major = parser_.http_major;
  head_.http_minor = parser_.http_minor;
  head_.url = std::string_view(arena_.data() + url_.off, url_.len);
  head_.headers.clear();
  head_.expect_continue = false;
  head_.has_expect = false;
  head_.has_host = false;
  // maxHeadersCount: lines past it are dropped, as node drops them.
  size_t nfields = trailer_start_;
  size_t max_fields = conn_->listener()->options().max_headers_count;
  if (max_fields > 0 && nfields > max_fields) nfields = max_fields;
  for (size_t i = 0; i < nfields; i++) {
    const auto& f = fields_[i];
    std::string_view name(arena_.data() + f.first.off, f.first.len);
    std::string_view value = TrimOws(arena_.data() + f.second.off, f.second.len);
    if (name.size() == 6 && EqualsIgnoreCase(name, "expect")) {
      head_.has_expect = true;
      if (EqualsIgnoreCase(value, "100-continue")) head_.expect_continue = true;
    } else if (name.size() == 4 && EqualsIgnoreCase(name, "host")) {
      head_.has_host = true;
    }
    head_.headers.emplace_back(name, value);
  }
  head_.keep_alive = llhttp_should_keep_alive(&parser_) != 0;
  head_.upgrade = parser_.upgrade != 0;
  head_.complete = complete;
  // h2c upgrade: a complete request, alone in flight, may switch the
  // connection to HTTP/2 (http2_upgrade.h), where it becomes stream 1.
  if (complete && head_.upgrade && requests_.size() == 1 &&
      UpgradeToHttp2(conn_, head_)) {
    requests_.clear();
    return;
  }
  conn_->listener()->delegate()->OnRequest(conn_, head_);
}

int Http1Session::OnBody(const char* at, size_t len) {
  if (head_pending_) {
    DeliverHead(false);
    if (conn_->destroyed()) return -1;
  }
  body_bytes_ += len;
  if (body_bytes_ > conn_->listener()->options().max_request_body_size) {
    // A chunked body grew past maxRequestBodySize: none of this chunk is
    // delivered (see RejectBody).
    body_too_large_ = true;
    return -1;
  }
  int64_t offset = -1;
  if (read_in_ubuf_ && at >= ubuf_base_ && at + len <= ubuf_base_ + ubuf_len_) {
    offset = at - ubuf_base_;
  }
  conn_->listener()->delegate()->OnBody(conn_, current_seq_, at, len, offset);
  return conn_->destroyed() ? -1 : 0;
}

int Http1Session::OnMessageComplete() {
  message_in_progress_ = false;
  in_body_ = false;
  in_trailers_ = false;
  conn_->ClearDeadline(kDeadlineHeaders);
  conn_->ClearDeadline(kDeadlineRequest);
  if (Request* r = Find(current_seq_)) r->body_done = true;
  if (head_pending_) {
    DeliverHead(true);
  } else {
    trailers_.clear();
    size_t tend = fields_.size();
    size_t max_fields = conn_->listener()->options().max_headers_count;
    if (max_fields > 0 && tend - trailer_start_ > max_fields) {
      tend = trailer_start_ + max_fields;
    }
    for (size_t i = trailer_start_; i < tend; i++) {
      const auto& f = fields_[i];
      trailers_.emplace_back(
          std::string_view(arena_.data() + f.first.off, f.first.len),
          TrimOws(arena_.data() + f.second.off, f.second.len));
    }
    conn_->listener()->delegate()->OnRequestEnd(conn_, current_seq_,
                                                trailers_);
  }
  if (conn_->destroyed()) return -1;
  if (parse_dead_) return -1;
  if (requests_.empty() && !conn_->closing()) {
    // Answered synchronously: idle again.
    conn_->SetDeadline(kDeadlineKeepAlive,
                       conn_->listener()->options().keep_alive_timeout_ms);
  }
  if (requests_.size() >= conn_->listener()->options().max_pipelined) {
    return HPE_PAUSED;
  }
  return 0;
}

void Http1Session::HandleParseError(llhttp_errno_t err, const char* pos) {
  (void)pos;
  if (header_overflow_) {
    ReportClientError(431, "HPE_HEADER_OVERFLOW", "Header overflow");
    return;
  }
  if (ext_overflow_) {
    // As node 20: 413 for chunk extensions over 16 KiB.
    ReportClientError(413, "HPE_CHUNK_EXTENSIONS_OVERFLOW",
                      "Chunk extensions overflow");
    return;
  }
  if (body_too_large_) {
    RejectBody();
    return;
  }
  if (invalid_header_) {
    ReportClientError(400,
                      invalid_code_ ? invalid_code_ : "HPE_INVALID_HEADER_TOKEN",
                      invalid_reason_ ? invalid_reason_
                                      : "Invalid header value char");
    return;
  }
  if (err == HPE_USER) {
    // A callback stopped the parser because the connection is going away.
    parse_dead_ = true;
    return;
  }
  const char* reason = llhttp_get_error_reason(&parser_);
  ReportClientError(400, llhttp_errno_name(err), reason ? reason : "");
}

void Http1Session::RejectBody() {
  parse_dead_ = true;
  unparsed_.clear();
  message_in_progress_ = false;
  in_body_ = false;
  conn_->ClearDeadline(kDeadlineHeaders);
  conn_->ClearDeadline(kDeadlineRequest);
  uint32_t seq = current_seq_;
  bool answered = false;
  Request* r = Find(seq);
  if (r && !r->head_sent) {
    // 413 in this request's turn (staged behind earlier responses), then
    // close: the rest of the body is never read.
    int err = 0;
    if (BeginHead(seq, 413, "", &err) != nullptr) {
      FinishHead(seq, kHeadUserConnectionClose | kHeadWholeBody, 0);
      End(seq, std::string_view());
      answered = true;
    }
  } else if (r) {
    // The handler answered already: close after its response.
    r->close_after = true;
  } else if (!conn_->closing()) {
    conn_->EndGracefully();  // its response is out already
  }
  // Tells the embedder which request failed and whether sluice answered
  // for it (status 413) or the handler's own response stands (0).
  ClientError e;
  e.status = answered ? 413 : 0;
  e.code = "ERR_SLUICE_BODY_TOO_LARGE";
  e.reason = "Request body too large";
  e.bytes_parsed = 0;
  conn_->listener()->delegate()->OnClientError(conn_, e);
  if (!conn_->closing()) {
    // A handler that never finishes its response must not keep the
    // connection: bound it like any closing connection.
    conn_->SetDeadline(kDeadlineLinger, conn_->listener()->options().linger_ms);
  }
}

void Http1Session::ReportClientError(int status, const char* code,
                                     const char* reason) {
  parse_dead_ = true;
  unparsed_.clear();
  // One clientError per connection: nothing is parsed any more, so the
  // request deadlines still armed (requestTimeout after headersTimeout
  // fired, or either after a parse error) must not report a timeout, and
  // answer 408, on top of the answer for this error. The linger deadline
  // below bounds the connection instead.
  conn_->ClearDeadline(kDeadlineHeaders);
  conn_->ClearDeadline(kDeadlineRequest);
  conn_->ClearDeadline(kDeadlineKeepAlive);
  ClientError e;
  e.status = status;
  e.code = code;
  e.reason = reason;
  e.bytes_parsed = 0;
  conn_->listener()->delegate()->OnClientError(conn_, e);
  if (!conn_->closing()) {
    // The embedder chose to answer itself; make sure the connection does
    // not outlive a forgotten answer.
    conn_->SetDeadline(kDeadlineLinger, conn_->listener()->options().linger_ms);
  }
}

void Http1Session::OnEof() {
  eof_ = true;
  if (parse_dead_) {
    conn_->Destroy();
    return;
  }
  if (message_in_progress_) {
    llhttp_errno_t err = llhttp_finish(&parser_);
    if (err == HPE_OK && !message_in_progress_) {
      // A message delimited by EOF completed.
    } else {
      // The client went away mid-request: the request is aborted.
      conn_->Destroy();
      return;
    }
  }
  if (requests_.empty()) {
    conn_->EndGracefully();
  }
  // Otherwise the last response closes the connection (see Advance).
}

void Http1Session::OnTimeout(int kind) {
  if (kind == kDeadlineKeepAlive) {
    if (IsIdle()) conn_->Destroy();
    return;
  }
  if (kind == kDeadlineLinger) {
    conn_->Destroy();
    return;
  }
  // headersTimeout / requestTimeout
  if (!message_in_progress_) {
    // A connection that never sent a request line: node answers 408 too.
    if (requests_.empty()) {
      ReportClientError(408, "ERR_HTTP_REQUEST_TIMEOUT", "Request timeout");
    }
    return;
  }
  Request* cur = Find(current_seq_);
  if (cur && cur->head_sent) {
    // The handler already answered; the rest of the body is overdue.
    conn_->Destroy();
    return;
  }
  ReportClientError(408, "ERR_HTTP_REQUEST_TIMEOUT", "Request timeout");
}

bool Http1Session::IsIdle() const {
  return requests_.empty() && !message_in_progress_;
}

void Http1Session::OnServerClosing() {
  server_closing_ = true;
  if (!IsIdle()) return;  // the last response says Connection: close
  if (next_seq_ == 0 && !eof_) {
    // Accepted but no request seen yet: the client has probably sent it
    // (it is on the wire, or this connection was just taken from the
    // accept queue) and would see a reset where it expects an answer.
    // Wait for it, as long as an idle keep-alive connection would be kept;
    // its response carries Connection: close. OnTimeout(kDeadlineKeepAlive)
    // closes the connection if nothing comes.
    conn_->SetDeadline(kDeadlineKeepAlive, conn_->listener()->options().keep_alive_timeout_ms);
    return;
  }
  conn_->EndGracefully();
}

void Http1Session::OnClose() {
  requests_.clear();  // releases staged external refs
  unparsed_.clear();
  // The embedder drops its hold on the body buffer in OnConnectionClose
  // (this may run outside any JS scope).
  ubuf_base_ = nullptr;
  in_body_ = false;
}

// ---- responses -------------------------------------------------------------

Http1Session::Request* Http1Session::Find(uint32_t seq) {
  if (requests_.empty()) return nullptr;
  uint32_t idx = seq - requests_.front().seq;
  if (idx >= requests_.size()) return nullptr;
  return &requests_[idx];
}

OutputQueue& Http1Session::QueueFor(Request& r) {
  return IsFront(r) && !r.hold_output ? conn_->writer().queue() : r.staged;
}

OutputQueue* Http1Session::BeginHead(uint32_t seq, int status,
                                     std::string_view reason, int* err) {
  if (conn_->closing()) {
    *err = kRespClosed;
    return nullptr;
  }
  Request* r = Find(seq);
  if (!r || r->ended) {
    *err = kRespNoRequest;
    return nullptr;
  }
  if (r->head_sent) {
    *err = kRespHeadersSent;
    return nullptr;
  }
  r->head_sent = true;
  r->no_body = r->method == HTTP_HEAD || status == 204 || status == 304 ||
               (status >= 100 && status < 200);
  OutputQueue& q = QueueFor(*r);
  AppendStatusLine(q, status, reason);
  *err = kRespOk;
  return &q;
}

int Http1Session::FinishHead(uint32_t seq, uint32_t flags, uint64_t body_len) {
  Request* r = Find(seq);
  if (!r || !r->head_sent) return kRespNoRequest;
  OutputQueue& q = QueueFor(*r);
  Listener* l = conn_->listener();
  bool keep_alive = r->req_keep_alive && !server_closing_ && !eof_ &&
                    !(flags & kHeadUserConnectionClose);
  // maxRequestsPerSocket: the last request's response closes (node's
  // semantics; requests beyond it are answered 503 by lib/).
  uint64_t max_requests = l->options().max_requests_per_socket;
  if (max_requests > 0 && static_cast<uint64_t>(r->seq) + 1 >= max_requests) {
    keep_alive = false;
  }
  if (!(flags & kHeadUserDate)) {
    q.Append(l->date().HeaderLine(), DateCache::kHeaderLineLen);
  }
  if (r->no_body) {
    // No framing: HEAD's length headers are the user's to set.
  } else if (flags & kHeadUserTransferEncoding) {
    r->chunked = (flags & kHeadUserChunked) != 0;
    if (!r->chunked) keep_alive = false;  // delimited by close
  } else if (flags & kHeadUserContentLength) {
    // The user framed it.
  } else if (flags & kHeadWholeBody) {
    q.Append("Content-Length: ", 16);
    AppendDecimal(q, body_len);
    q.Append("\r\n", 2);
  } else if (!r->http10) {
    q.Append("Transfer-Encoding: chunked\r\n", 28);
    r->chunked = true;
  } else {
    keep_alive = false;  // HTTP/1.0 body of unknown length: ends at close
  }
  if (!(flags & kHeadUserConnection)) {
    if (keep_alive) {
      q.Append("Connection: keep-alive\r\n", 24);
      uint64_t ka = l->options().keep_alive_timeout_ms;
      if (!(flags & kHeadUserKeepAlive) && ka > 0) {
        q.Append("Keep-Alive: timeout=", 20);
        AppendDecimal(q, ka / 1000);
        if (max_requests > 0) {
          q.Append(", max=", 6);
          AppendDecimal(q, max_requests);
        }
        q.Append("\r\n", 2);
      }
    } else {
      q.Append("Connection: close\r\n", 19);
    }
  }
  q.Append("\r\n", 2);
  r->close_after = !keep_alive;
  conn_->MarkDirty();
  return kRespOk;
}

OutputQueue* Http1Session::BeginBody(uint32_t seq, size_t len, int* err) {
  *err = kRespOk;
  if (conn_->closing()) {
    *err = kRespClosed;
    return nullptr;
  }
  Request* r = Find(seq);
  if (!r || r->ended) {
    *err = kRespNoRequest;
    return nullptr;
  }
  if (!r->head_sent) {
    *err = kRespHeadersNotSent;
    return nullptr;
  }
  size_t max_out = conn_->listener()->options().max_output_buffer;
  if (max_out > 0 && len > 0 && conn_->writer().Backlog() > max_out) {
    // maxOutputBuffer: the client does not read and the handler ignores
    // 'drain'. Destroy (not end): nothing more of this response can get
    // through. The connection object lives until its close callback.
    conn_->Destroy();
    *err = kRespClosed;
    return nullptr;
  }
  if (r->no_body || len == 0) return nullptr;
  OutputQueue& q = QueueFor(*r);
  if (r->chunked) AppendChunkHeader(q, len);
  return &q;
}

void Http1Session::EndBody(uint32_t seq) {
  Request* r = Find(seq);
  if (!r) return;
  OutputQueue& q = QueueFor(*r);
  if (r->chunked) q.Append("\r\n", 2);
  if (IsFront(*r)) {
    if (q.size() >= kCorkFlushBytes) {
      conn_->Flush();
    } else {
      conn_->MarkDirty();
    }
  }
}

int Http1Session::End(uint32_t seq, std::string_view trailers) {
  if (conn_->closing()) return kRespClosed;
  Request* r = Find(seq);
  if (!r || r->ended) return kRespNoRequest;
  if (!r->head_sent) return kRespHeadersNotSent;
  if (r->chunked && !r->no_body) {
    OutputQueue& q = QueueFor(*r);
    q.Append("0\r\n", 3);
    q.Append(trailers.data(), trailers.size());
    q.Append("\r\n", 2);
  }
  r->ended = true;
  if (IsFront(*r)) Advance();
  return kRespOk;
}

int Http1Session::WriteContinue(uint32_t seq) {
  if (conn_->closing()) return kRespClosed;
  Request* r = Find(seq);
  if (!r || r->head_sent) return kRespNoRequest;
  if (body_too_large_ && seq == current_seq_) {
    // Its Content-Length is over maxRequestBodySize: the 413 that follows
    // is the answer to the expectation; no body is invited.
    return kRespOk;
  }
  QueueFor(*r).Append("HTTP/1.1 100 Continue\r\n\r\n", 25);
  if (IsFront(*r)) conn_->MarkDirty();
  return kRespOk;
}

bool Http1Session::HeadersSent(uint32_t seq) const {
  if (requests_.empty()) return true;
  uint32_t idx = seq - requests_.front().seq;
  if (idx >= requests_.size()) return true;
  return requests_[idx].head_sent;
}

bool Http1Session::NeedsDrain() const {
  return conn_->writer().Backlog() >= conn_->listener()->options().high_water_mark;
}

void Http1Session::Advance() {
  while (!requests_.empty() && requests_.front().ended) {
    bool close = requests_.front().close_after;
    requests_.pop_front();
    if (close) {
      // Anything pipelined after a closing response is dropped, as node
      // does: the client must retry it on a new connection.
      requests_.clear();
      parse_dead_ = true;
      unparsed_.clear();
      conn_->EndGracefully();
      return;
    }
    if (!requests_.empty() && !requests_.front().hold_output) {
      conn_->writer().queue().Splice(requests_.front().staged);
    }
  }
  conn_->MarkDirty();
  if (requests_.empty()) {
    if (!message_in_progress_) {
      if (eof_ || server_closing_) {
        conn_->EndGracefully();
        return;
      }
      conn_->SetDeadline(kDeadlineKeepAlive,
                         conn_->listener()->options().keep_alive_timeout_ms);
    }
  }
  if (!unparsed_.empty() &&
      requests_.size() <= conn_->listener()->options().max_pipelined / 2) {
    conn_->Resume(Connection::kPausePipeline);
  }
  // A response whose body comes from a pipe reached the front: it may
  // start sending (it only pulls while it is the front one).
  if (!requests_.empty() && requests_.front().pipe_body) PumpPipeBody();
}

void Http1Session::SendErrorAndClose(int status) {
  if (conn_->closing()) return;
  if (!requests_.empty() && requests_.front().head_sent) {
    // Part of a response is already on the wire: an error response would
    // corrupt it. Just close.
    conn_->Destroy();
    return;
  }
  requests_.clear();
  parse_dead_ = true;
  OutputQueue& q = conn_->writer().queue();
  AppendStatusLine(q, status, "");
  q.Append("Connection: close\r\n\r\n", 21);
  conn_->EndGracefully();
}

}  // namespace sluice
