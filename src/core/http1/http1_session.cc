#include "core/http1/http1_session.h"

#include <cstring>

#include "core/net/connection.h"
#include "core/http2/http2_upgrade.h"
#include "core/net/tunnel_session.h"
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
  settings_.on_header_value_complete = [](llhttp_t* p) -> int {
    return From(p)->OnHeaderValueComplete();
  };
  settings_.on_version = OnVersionCb;
  settings_.on_version_complete = OnVersionCompleteCb;
  settings_.on_chunk_extension_name = OnChunkExtensionCb;
  settings_.on_chunk_extension_value = OnChunkExtensionValueCb;
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
  if (LineFoldScanner::Result r = s->fold_.Span(at, at + len)) {
    return s->RefuseLines(r);
  }
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

// Node answers every line fold, and a bare LF ending the head or the
// trailers, with 400 (HPE_INVALID_HEADER_TOKEN): a front proxy that reads
// such a line differently would otherwise frame the request differently
// than we do.
int Http1Session::RefuseLines(LineFoldScanner::Result why) {
  fold_.Disarm();
  invalid_header_ = true;
  invalid_code_ = "HPE_INVALID_HEADER_TOKEN";
  if (why == LineFoldScanner::kBareLfEnd) {
    invalid_reason_ = "Invalid header field char";
    return -1;
  }
  // node's two wordings: a fold after an empty first line, and after a
  // value.
  bool after_value = !in_field_ && !fields_.empty() &&
                     fields_.back().second.len > 0;
  invalid_reason_ = after_value ? "Unexpected whitespace after header value"
                                : "Invalid header value char";
  return -1;
}

// llhttp 8.1 accepts two chunk-extension values node's llhttp 9 refuses
// (400): a DEL or control byte inside a quoted value, and an empty value
// followed by ";" ("3;a=;"). An empty value's span is reported where the
// value would start: at the byte after "=".
int Http1Session::OnChunkExtensionValueCb(llhttp_t* p, const char* at,
                                          size_t len) {
  Http1Session* s = From(p);
  if (OnChunkExtensionCb(p, at, len) != 0) return -1;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = static_cast<unsigned char>(at[i]);
    if (c == 0x7f || (c < 0x20 && c != '\t')) {
      s->invalid_header_ = true;
      s->invalid_code_ = "HPE_STRICT";
      s->invalid_reason_ = "Invalid character in chunk extensions quoted value";
      return -1;
    }
  }
  // (An empty span at the read's end is reported again from the next one.)
  if (len == 0 && at < s->exec_end_ && *at == ';') {
    s->invalid_header_ = true;
    s->invalid_code_ = "HPE_STRICT";
    s->invalid_reason_ = "Invalid character in chunk extensions";
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
  if (!in_trailers_ && (parser_.flags & F_CONTENT_LENGTH) != 0 &&
      name.len == 17 &&
      EqualsIgnoreCase(std::string_view(arena_.data() + name.off, name.len),
                       "transfer-encoding")) {
    // Transfer-Encoding after Content-Length, whatever its value (llhttp
    // 8.1 lets an empty one through): node's llhttp 9 answers 400.
    invalid_header_ = true;
    invalid_code_ = "HPE_INVALID_TRANSFER_ENCODING";
    invalid_reason_ = "Transfer-Encoding can't be present with Content-Length";
    return -1;
  }
  fields_.back().second = Span{static_cast<uint32_t>(arena_.size()), 0};
  in_field_ = false;
  return 0;
}

int Http1Session::OnHeaderValueComplete() {
  if (fields_.empty()) return 0;
  const auto& f = fields_.back();
  if (f.first.len != 17 ||
      !EqualsIgnoreCase(std::string_view(arena_.data() + f.first.off, 17),
                        "transfer-encoding") ||
      !TrimOws(arena_.data() + f.second.off, f.second.len).empty()) {
    return 0;
  }
  // An empty Transfer-Encoding (head or trailers): llhttp 8.1 and node
  // 20's llhttp 9.3 ignore it, node 22's llhttp 9.4 answers 400. What a
  // proxy makes of an empty coding is anyone's guess: refuse it.
  invalid_header_ = true;
  invalid_code_ = "HPE_INVALID_TRANSFER_ENCODING";
  invalid_reason_ = "Empty Transfer-Encoding";
  return -1;
}

// ---- parsing -------------------------------------------------------------

ReadBuffers::Want Http1Session::ReadMemory() const {
  if (parse_dead_) return ReadBuffers::kNone;  // input is discarded
  return in_body_ ? ReadBuffers::kRequire : ReadBuffers::kPrefer;
}

void Http1Session::OnRead(const char* data, size_t len) {
  if (parse_dead_ || conn_->closing()) return;  // discard
  if (!unparsed_.empty()) {
    // Reads are stopped while input is held back; keep order regardless.
    unparsed_.append(data, len);
    return;
  }
  read_in_ubuf_ = conn_->read_buffers().Contains(data, len);
  Execute(data, len);
  read_in_ubuf_ = false;
}

void Http1Session::Execute(const char* data, size_t len) {
  const char* end = data + len;
  exec_start_ = data;
  exec_end_ = end;
  exec_gen_++;
  fold_.BeginRead(data);
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
    // What this input held of a body goes out before anything that must
    // follow it (an error, the next input).
    FlushBodyRun();
    // Headers complete but their body not in this read yet: deliver now so
    // the handler can start (and answer 100-continue).
    if (head_pending_ && !conn_->destroyed()) DeliverHead(false);
    if (err == HPE_OK) {
      // The read ended inside a head: its tail (after the last span) may
      // hold the start of a fold that no later callback would see whole.
      if (LineFoldScanner::Result r = fold_.ReadEnd(end)) {
        RefuseLines(r);
        HandleParseError(HPE_INVALID_HEADER_TOKEN, end);
      }
      return;
    }
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
    if (err == HPE_PAUSED_UPGRADE &&
        (conn_->listener()->options().tunnel_events &
         (parser_.method == HTTP_CONNECT ? kTunnelConnect : kTunnelUpgrade))) {
      // The embedder takes the connection over ('upgrade' / 'connect'):
      // from here on it is a byte stream. What followed the head in this
      // read is the event's `head`.
      parse_dead_ = true;
      SwitchToTunnel(pos, static_cast<size_t>(end - pos));
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

void Http1Session::SwitchToTunnel(const char* head, size_t len) {
  for (int k = 0; k < kDeadlineCount; k++) {
    conn_->ClearDeadline(static_cast<DeadlineKind>(k));
  }
  // The read buffer's hold is dropped after this read (Connection asks the
  // new session, which wants no embedder memory); `head` is copied by the
  // delegate before that.
  uint32_t seq = head_.seq;
  // The connection owns the new session; this one is retired (it may be on
  // the stack: Execute returns right after this).
  conn_->ReplaceSession(new TunnelSession(conn_));
  conn_->listener()->delegate()->OnUpgrade(conn_, seq, head, len);
}

void Http1Session::ResumeParsing() {
  if (unparsed_.empty() || parse_dead_ || conn_->closing()) return;
  std::string input;
  input.swap(unparsed_);
  llhttp_resume(&parser_);
  Execute(input.data(), input.size());
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
  if (url_.len == 0) fold_.Arm(at);
  if (LineFoldScanner::Result r = fold_.Span(at, at + len)) {
    return RefuseLines(r);
  }
  if (url_.len == 0) url_.off = static_cast<uint32_t>(arena_.size());
  arena_.append(at, len);
  url_.len += static_cast<uint32_t>(len);
  return 0;
}

int Http1Session::OnHeaderField(const char* at, size_t len) {
  if (!in_trailers_ && CheckHeaderBudget(len) != 0) return -1;
  if (LineFoldScanner::Result r = fold_.Span(at, at + len)) {
    return RefuseLines(r);
  }
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
  if (LineFoldScanner::Result r = fold_.Span(at, at + len)) {
    return RefuseLines(r);
  }
  arena_.append(at, len);
  fields_.back().second.len += static_cast<uint32_t>(len);
  return 0;
}

int Http1Session::OnHeadersComplete() {
  // Before anything is dispatched: the last line may have been folded, or
  // the blank line be a bare LF.
  if (LineFoldScanner::Result r =
          fold_.HeadEnd(exec_end_, (parser_.flags & F_CHUNKED) != 0)) {
    return RefuseLines(r);
  }
  if (!(parser_.flags & F_CONNECTION_CLOSE) && HasCloseToken()) {
    // "Connection: close\t": llhttp 8.1 reads "close" only when SP, "," or
    // the line end follows; node 22's llhttp 9.4 also takes HTAB, and then
    // refuses anything pipelined after this request. Do the same, so that
    // no front proxy sees fewer requests on the connection than we serve.
    parser_.flags |= F_CONNECTION_CLOSE;
  }
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

bool Http1Session::HasCloseToken() const {
  for (size_t i = 0; i < fields_.size(); i++) {
    const auto& f = fields_[i];
    if (f.first.len != 10 ||
        !EqualsIgnoreCase(std::string_view(arena_.data() + f.first.off, 10),
                          "connection")) {
      continue;
    }
    std::string_view v(arena_.data() + f.second.off, f.second.len);
    while (!v.empty()) {
      size_t comma = v.find(',');
      std::string_view token = v.substr(0, comma);
      while (!token.empty() && (token.front() == ' ' || token.front() == '\t')) {
        token.remove_prefix(1);
      }
      while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) {
        token.remove_suffix(1);
      }
      if (EqualsIgnoreCase(token, "close")) return true;
      if (comma == std::string_view::npos) break;
      v.remove_prefix(comma + 1);
    }
  }
  return false;
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
  if (LineFoldScanner::Result r = fold_.Body(at, at + len)) {
    return RefuseLines(r);
  }
  body_bytes_ += len;
  if (body_bytes_ > conn_->listener()->options().max_request_body_size) {
    // A chunked body grew past maxRequestBodySize: none of this chunk is
    // delivered (see RejectBody).
    body_too_large_ = true;
    return -1;
  }
  AddBodySpan(at, len);
  return 0;
}

void Http1Session::AddBodySpan(const char* at, size_t len) {
  if (len == 0) return;
  ReadBuffers& rb = conn_->read_buffers();
  bool in_ubuf = read_in_ubuf_ && rb.Contains(at, len);
  if (run_len_ > 0 && in_ubuf != run_in_ubuf_) FlushBodyRun();
  if (run_len_ == 0) {
    run_in_ubuf_ = in_ubuf;
    run_copied_ = false;
    run_len_ = len;
    if (in_ubuf) {
      run_off_ = static_cast<size_t>(at - rb.base());
    } else {
      run_ptr_ = at;
    }
    return;
  }
  if (run_in_ubuf_) {
    // The span lies after the run in the same read; the bytes between
    // (chunk framing) are parsed already and nothing else refers to them.
    char* dst = rb.base() + run_off_ + run_len_;
    if (dst != at) memmove(dst, at, len);
    run_len_ += len;
    return;
  }
  if (!run_copied_ && run_ptr_ + run_len_ == at) {
    run_len_ += len;
    return;
  }
  if (!run_copied_) {
    run_copy_.assign(run_ptr_, run_len_);
    run_copied_ = true;
  }
  run_copy_.append(at, len);
  run_len_ += len;
}

bool Http1Session::FlushBodyRun() {
  if (run_len_ == 0) return !conn_->destroyed();
  size_t len = run_len_;
  run_len_ = 0;
  if (conn_->destroyed()) return false;
  ServerDelegate* d = conn_->listener()->delegate();
  if (run_in_ubuf_) {
    ReadBuffers& rb = conn_->read_buffers();
    rb.NoteViewCut();
    d->OnBody(conn_, current_seq_, rb.base() + run_off_, len,
              static_cast<int64_t>(run_off_));
  } else {
    d->OnBody(conn_, current_seq_, run_copied_ ? run_copy_.data() : run_ptr_,
              len, -1);
    // A body of tiny chunks must not leave a large copy buffer behind.
    if (run_copy_.capacity() > 4096) std::string().swap(run_copy_);
  }
  return !conn_->destroyed();
}

int Http1Session::OnMessageComplete() {
  // A chunked body's last chunk and trailers end here.
  if (LineFoldScanner::Result r = fold_.MessageEnd(exec_end_)) {
    return RefuseLines(r);
  }
  // The body's last bytes reach the request before its end.
  if (!FlushBodyRun()) return -1;
  message_in_progress_ = false;
  in_body_ = false;
  in_trailers_ = false;
  conn_->ClearDeadline(kDeadlineHeaders);
  conn_->ClearDeadline(kDeadlineRequest);
  if (Request* r = Find(current_seq_)) r->body_done = true;
  // An empty chunked body can still carry trailers: then the head goes
  // out first and the trailers with the end, as for any other body.
  bool has_trailers = fields_.size() > trailer_start_;
  if (head_pending_ && !has_trailers) {
    DeliverHead(true);
  } else {
    if (head_pending_) {
      DeliverHead(false);
      if (conn_->destroyed()) return -1;
    }
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
  if (header_overflow_) {
    ReportClientError(431, "HPE_HEADER_OVERFLOW", "Header overflow", pos);
    return;
  }
  if (ext_overflow_) {
    // As node 20: 413 for chunk extensions over 16 KiB.
    ReportClientError(413, "HPE_CHUNK_EXTENSIONS_OVERFLOW",
                      "Chunk extensions overflow", pos);
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
                                      : "Invalid header value char", pos);
    return;
  }
  if (err == HPE_USER) {
    // A callback stopped the parser because the connection is going away.
    parse_dead_ = true;
    return;
  }
  const char* reason = llhttp_get_error_reason(&parser_);
  if (err == HPE_INVALID_METHOD && NotHttp1(pos)) {
    // Neither HTTP/1.x nor the HTTP/2 preface, on a port that serves both:
    // the client may speak HTTP/2 (an invalid preface, RFC 9113 3.4: a
    // connection error whose GOAWAY may be omitted) as well as anything
    // else, so the default answer is no HTTP/1.1 bytes, only a close
    // (status 0). clientError is still reported.
    ReportClientError(0, llhttp_errno_name(err), reason ? reason : "", pos);
    return;
  }
  ReportClientError(400, llhttp_errno_name(err), reason ? reason : "", pos);
}

bool Http1Session::NotHttp1(const char* pos) const {
  // Only the connection's first request on a port that also detects h2c.
  if (next_seq_ != 1 || conn_->listener()->delegate()->http2() == nullptr) {
    return false;
  }
  if (pos < exec_start_ || pos > exec_end_) return false;
  // The rest of the request line, as far as this read holds it: a client
  // speaking HTTP/1.x names its version there. A line not complete in
  // this read is given the benefit of the doubt (400).
  const char* eol = static_cast<const char*>(
      memchr(pos, '\n', static_cast<size_t>(exec_end_ - pos)));
  if (eol == nullptr) return false;
  static constexpr char kVersion[] = " HTTP/1.";
  static constexpr size_t kVersionLen = sizeof(kVersion) - 1;
  std::string_view line(pos, static_cast<size_t>(eol - pos));
  return line.find(std::string_view(kVersion, kVersionLen)) ==
         std::string_view::npos;
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
  conn_->listener()->delegate()->OnClientError(conn_, e);
  if (!conn_->closing()) {
    // A handler that never finishes its response must not keep the
    // connection: bound it like any closing connection.
    conn_->SetDeadline(kDeadlineLinger, conn_->listener()->options().linger_ms);
  }
}

void Http1Session::ReportClientError(int status, const char* code,
                                     const char* reason, const char* pos) {
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
  if (pos != nullptr && pos >= exec_start_ && pos <= exec_end_) {
    // Found in the input being parsed: that input and the offset.
    e.raw = exec_start_;
    e.raw_len = static_cast<size_t>(exec_end_ - exec_start_);
    e.bytes_parsed = static_cast<size_t>(pos - exec_start_);
  }
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
  in_body_ = false;
  run_len_ = 0;
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
    *err = kResultClosed;
    return nullptr;
  }
  Request* r = Find(seq);
  if (!r || r->ended) {
    *err = kResultNoRequest;
    return nullptr;
  }
  if (r->head_sent) {
    *err = kResultHeadersSent;
    return nullptr;
  }
  r->head_sent = true;
  r->no_body = r->method == HTTP_HEAD || status == 204 || status == 304 ||
               (status >= 100 && status < 200);
  OutputQueue& q = QueueFor(*r);
  AppendStatusLine(q, status, reason);
  *err = kResultOk;
  return &q;
}

int Http1Session::FinishHead(uint32_t seq, uint32_t flags, uint64_t body_len) {
  Request* r = Find(seq);
  if (!r || !r->head_sent) return kResultNoRequest;
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
  return kResultOk;
}

OutputQueue* Http1Session::BeginBody(uint32_t seq, size_t len, int* err) {
  *err = kResultOk;
  if (conn_->closing()) {
    *err = kResultClosed;
    return nullptr;
  }
  Request* r = Find(seq);
  if (!r || r->ended) {
    *err = kResultNoRequest;
    return nullptr;
  }
  if (!r->head_sent) {
    *err = kResultHeadersNotSent;
    return nullptr;
  }
  size_t max_out = conn_->listener()->options().max_output_buffer;
  if (max_out > 0 && len > 0 && conn_->writer().Backlog() > max_out) {
    // maxOutputBuffer: the client does not read and the handler ignores
    // 'drain'. Destroy (not end): nothing more of this response can get
    // through. The connection object lives until its close callback.
    conn_->Destroy();
    *err = kResultClosed;
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
  if (conn_->closing()) return kResultClosed;
  Request* r = Find(seq);
  if (!r || r->ended) return kResultNoRequest;
  if (!r->head_sent) return kResultHeadersNotSent;
  if (r->chunked && !r->no_body) {
    OutputQueue& q = QueueFor(*r);
    q.Append("0\r\n", 3);
    q.Append(trailers.data(), trailers.size());
    q.Append("\r\n", 2);
  }
  r->ended = true;
  if (IsFront(*r)) Advance();
  return kResultOk;
}

int Http1Session::WriteContinue(uint32_t seq) {
  if (conn_->closing()) return kResultClosed;
  Request* r = Find(seq);
  if (!r || r->head_sent) return kResultNoRequest;
  if (body_too_large_ && seq == current_seq_) {
    // Its Content-Length is over maxRequestBodySize: the 413 that follows
    // is the answer to the expectation; no body is invited.
    return kResultOk;
  }
  QueueFor(*r).Append("HTTP/1.1 100 Continue\r\n\r\n", 25);
  if (IsFront(*r)) conn_->MarkDirty();
  return kResultOk;
}

int Http1Session::WriteInformational(uint32_t seq, int status,
                                     std::string_view header_lines) {
  if (conn_->closing()) return kResultClosed;
  if (status <= 100 || status > 199) return kResultNoRequest;
  Request* r = Find(seq);
  if (!r || r->ended) return kResultNoRequest;
  if (r->head_sent) return kResultHeadersSent;
  OutputQueue& q = QueueFor(*r);
  AppendStatusLine(q, status, std::string_view());
  q.Append(header_lines.data(), header_lines.size());
  q.Append("\r\n", 2);
  if (IsFront(*r)) conn_->MarkDirty();
  return kResultOk;
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
  if (status == 0) {
    // Input that is not HTTP/1.x (ReportClientError's status 0): no answer.
    conn_->Destroy();
    return;
  }
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
