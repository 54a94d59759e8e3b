#include "core/http1/http1_parser.h"

#include <cstring>

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

// A field value without the trailing whitespace llhttp leaves in it
// (RFC 9110 5.5: OWS around the value is not part of it).
std::string_view TrimOws(const char* p, size_t n) {
  while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t')) n--;
  return std::string_view(p, n);
}

inline Http1Parser* From(llhttp_t* p) {
  return static_cast<Http1Parser*>(p->data);
}

}  // namespace

Http1Parser::Http1Parser(Http1ParserListener* listener,
                         const ServerOptions* options, bool detect_http2)
    : listener_(listener),
      options_(options),
      detect_http2_(detect_http2),
      lenient_(options->insecure_http_parser) {
  llhttp_settings_init(&settings_);
  settings_.on_message_begin = OnMessageBeginCb;
  settings_.on_url = OnUrlCb;
  // Fields and values may arrive in several spans (split across reads);
  // field completion marks where the value starts: an empty value produces
  // no on_header_value call at all.
  settings_.on_header_field = OnHeaderFieldCb;
  settings_.on_header_value = OnHeaderValueCb;
  settings_.on_header_field_complete = OnHeaderFieldCompleteCb;
  settings_.on_header_value_complete = OnHeaderValueCompleteCb;
  settings_.on_headers_complete = OnHeadersCompleteCb;
  settings_.on_body = OnBodyCb;
  settings_.on_message_complete = OnMessageCompleteCb;
  settings_.on_version = OnVersionCb;
  settings_.on_version_complete = OnVersionCompleteCb;
  settings_.on_chunk_header = OnChunkHeaderCb;
  settings_.on_chunk_extension_name = OnChunkExtensionCb;
  settings_.on_chunk_extension_value = OnChunkExtensionValueCb;
  llhttp_init(&parser_, HTTP_REQUEST, &settings_);
  parser_.data = this;
  if (lenient_) {
    // Kept by llhttp_reset between messages.
    llhttp_set_lenient_headers(&parser_, 1);
    llhttp_set_lenient_chunked_length(&parser_, 1);
    llhttp_set_lenient_keep_alive(&parser_, 1);
    llhttp_set_lenient_transfer_encoding(&parser_, 1);
  }
}

// ---- llhttp trampolines -------------------------------------------------
// Called by llhttp_execute / llhttp_finish on this parser, so only from
// inside Execute or Finish; `at` points into the input being parsed.

int Http1Parser::OnMessageBeginCb(llhttp_t* p) {
  return From(p)->OnMessageBegin();
}
int Http1Parser::OnUrlCb(llhttp_t* p, const char* at, size_t len) {
  return From(p)->OnUrl(at, len);
}
int Http1Parser::OnHeaderFieldCb(llhttp_t* p, const char* at, size_t len) {
  return From(p)->OnHeaderField(at, len);
}
int Http1Parser::OnHeaderValueCb(llhttp_t* p, const char* at, size_t len) {
  return From(p)->OnHeaderValue(at, len);
}
int Http1Parser::OnHeaderFieldCompleteCb(llhttp_t* p) {
  return From(p)->OnHeaderFieldComplete();
}
int Http1Parser::OnHeaderValueCompleteCb(llhttp_t* p) {
  return From(p)->OnHeaderValueComplete();
}
int Http1Parser::OnHeadersCompleteCb(llhttp_t* p) {
  return From(p)->OnHeadersComplete();
}
int Http1Parser::OnBodyCb(llhttp_t* p, const char* at, size_t len) {
  return From(p)->OnBody(at, len);
}
int Http1Parser::OnMessageCompleteCb(llhttp_t* p) {
  return From(p)->OnMessageComplete();
}
int Http1Parser::OnVersionCb(llhttp_t* p, const char* at, size_t len) {
  return From(p)->OnVersion(at, len);
}
int Http1Parser::OnVersionCompleteCb(llhttp_t* p) {
  return From(p)->OnVersionComplete();
}
// Called once a chunk-size line (extensions included) is complete.
int Http1Parser::OnChunkHeaderCb(llhttp_t* p) {
  From(p)->chunk_ext_bytes_ = 0;
  return 0;
}
int Http1Parser::OnChunkExtensionCb(llhttp_t* p, const char* at,
                                    size_t len) {
  (void)at;
  return From(p)->OnChunkExtension(len);
}
int Http1Parser::OnChunkExtensionValueCb(llhttp_t* p, const char* at,
                                         size_t len) {
  return From(p)->OnChunkExtensionValue(at, len);
}

// ---- driving llhttp --------------------------------------------------------

Http1Parser::Status Http1Parser::Execute(const char* data, size_t len,
                                         char* ubuf_base) {
  const char* end = data + len;
  exec_start_ = data;
  exec_end_ = end;
  exec_gen_++;
  ubuf_base_ = ubuf_base;
  done_refused_ = false;
  fold_.BeginRead(data);
  if (cr_due_ && len > 0) {
    // The previous read ended right after the request line's version.
    cr_due_ = false;
    if (*data != '\r') {
      Refuse("HPE_INVALID_VERSION", "Expected CRLF after version");
      return Fail(HPE_INVALID_VERSION, data);
    }
  }
  llhttp_errno_t err = llhttp_execute(&parser_, data, len);
  // What this input held of a body goes out before anything that must
  // follow it (an error, the next input).
  FlushBodyRun();
  // Headers complete but their body not in this read yet: deliver now so
  // the handler can start (and answer 100-continue).
  if (head_pending_ && !listener_->Stopped()) DeliverHead(false);
  if (err == HPE_OK) {
    // The read ended inside a head: its tail (after the last span) may
    // hold the start of a fold that no later callback would see whole.
    if (LineFoldScanner::Result r = fold_.ReadEnd(end)) {
      RefuseLines(r);
      return Fail(HPE_INVALID_HEADER_TOKEN, end);
    }
    return Status::kOk;
  }
  if (listener_->Stopped() || done_refused_) return Status::kStopped;
  pos_ = llhttp_get_error_pos(&parser_);
  if (err == HPE_PAUSED) return Status::kPaused;
  if (err == HPE_PAUSED_UPGRADE) return Status::kUpgrade;
  return Fail(err, pos_);
}

Http1Parser::Status Http1Parser::Fail(llhttp_errno_t err, const char* pos) {
  if (header_overflow_) {
    error_ = {Error::kClientError, 431, "HPE_HEADER_OVERFLOW",
              "Header overflow"};
  } else if (ext_overflow_) {
    // As node 20: 413 for chunk extensions over 16 KiB.
    error_ = {Error::kClientError, 413, "HPE_CHUNK_EXTENSIONS_OVERFLOW",
              "Chunk extensions overflow"};
  } else if (body_too_large_) {
    error_ = {Error::kBodyTooLarge, 413, "ERR_SLUICE_BODY_TOO_LARGE",
              "Request body too large"};
  } else if (invalid_header_) {
    error_ = {Error::kClientError, 400,
              invalid_code_ ? invalid_code_ : "HPE_INVALID_HEADER_TOKEN",
              invalid_reason_ ? invalid_reason_ : "Invalid header value char"};
  } else if (err == HPE_USER) {
    // A callback stopped the parser because the connection is going away.
    error_ = {Error::kStopped, 0, nullptr, nullptr};
  } else {
    const char* reason = llhttp_get_error_reason(&parser_);
    // A first request line that names a protocol version other than
    // HTTP/1.x, on a port that also serves h2c, may come from an HTTP/2
    // client with a bad preface (RFC 9113 3.4: a connection error whose
    // GOAWAY may be omitted): it gets no HTTP/1.1 bytes, only a close
    // (status 0; h2spec reads an HTTP/1.1 answer as a broken frame).
    // Every other parse error is answered 400, as node — also a line with
    // no version at all (`FOO /`).
    int status = err == HPE_INVALID_METHOD && NamesOtherProtocol(pos) ? 0 : 400;
    error_ = {Error::kClientError, status, llhttp_errno_name(err),
              reason ? reason : ""};
  }
  error_.at = pos;
  return Status::kError;
}

bool Http1Parser::NamesOtherProtocol(const char* pos) const {
  // Only the connection's first request on a port that also detects h2c.
  if (messages_ != 1 || !detect_http2_) return false;
  if (pos < exec_start_ || pos > exec_end_) return false;
  // The rest of the request line, as far as this read holds it. A line not
  // complete in this read is given the benefit of the doubt (400).
  const char* eol = static_cast<const char*>(
      memchr(pos, '\n', static_cast<size_t>(exec_end_ - pos)));
  if (eol == nullptr) return false;
  std::string_view line(pos, static_cast<size_t>(eol - pos));
  // METHOD SP TARGET SP VERSION: a third token is a version; one that is
  // not HTTP/1.x names another protocol.
  size_t first_space = line.find(' ');
  if (first_space == std::string_view::npos ||
      line.find(' ', first_space + 1) == std::string_view::npos) {
    return false;
  }
  static constexpr std::string_view kVersion = " HTTP/1.";
  return line.find(kVersion) == std::string_view::npos;
}

bool Http1Parser::Finish() {
  llhttp_errno_t err = llhttp_finish(&parser_);
  // OK with no message left: a message delimited by EOF completed.
  return err == HPE_OK && !message_in_progress_;
}

void Http1Parser::Abandon() {
  message_in_progress_ = false;
  in_body_ = false;
}

// ---- the head ------------------------------------------------------------

int Http1Parser::CheckHeaderBudget(size_t len) {
  header_bytes_ += len;
  if (header_bytes_ > options_->max_header_size) {
    header_overflow_ = true;
    return -1;
  }
  return 0;
}

int Http1Parser::Refuse(const char* code, const char* reason) {
  invalid_header_ = true;
  invalid_code_ = code;
  invalid_reason_ = reason;
  return -1;
}

int Http1Parser::OnMessageBegin() {
  message_in_progress_ = true;
  messages_++;
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
  return listener_->OnMessageBegin();
}

int Http1Parser::OnUrl(const char* at, size_t len) {
  if (CheckHeaderBudget(len) != 0) return -1;
  // Lenient parsing (insecureHTTPParser) leaves the scanner unarmed: no
  // line fold or bare-LF refusal.
  if (url_.len == 0 && !lenient_) fold_.Arm(at);
  if (LineFoldScanner::Result r = fold_.Span(at, at + len)) {
    return RefuseLines(r);
  }
  if (url_.len == 0) url_.off = static_cast<uint32_t>(arena_.size());
  arena_.append(at, len);
  url_.len += static_cast<uint32_t>(len);
  return 0;
}

// llhttp 8 ends the request line at CRLF or a bare LF; node's llhttp 9
// requires CRLF ("Expected CRLF after version", 400). The version span is
// fixed-size, so its end is reported without looking at the next byte:
// that byte is either in this read (check it now) or the first of the next
// one (cr_due_, checked in Execute).
int Http1Parser::OnVersion(const char* at, size_t len) {
  if (LineFoldScanner::Result r = fold_.Span(at, at + len)) {
    return RefuseLines(r);
  }
  version_end_ = at + len;
  version_gen_ = exec_gen_;
  return 0;
}

int Http1Parser::OnVersionComplete() {
  // A span piece from an earlier read ended at that read's end: the
  // terminator is this read's first byte.
  const char* next = version_gen_ == exec_gen_ ? version_end_ : exec_start_;
  if (lenient_) return 0;
  if (next < exec_end_) {
    if (*next == '\r') return 0;
    return Refuse("HPE_INVALID_VERSION", "Expected CRLF after version");
  }
  cr_due_ = true;
  return 0;
}

int Http1Parser::OnHeaderField(const char* at, size_t len) {
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

int Http1Parser::OnHeaderValue(const char* at, size_t len) {
  if (!in_trailers_ && CheckHeaderBudget(len) != 0) return -1;
  if (LineFoldScanner::Result r = fold_.Span(at, at + len)) {
    return RefuseLines(r);
  }
  arena_.append(at, len);
  fields_.back().second.len += static_cast<uint32_t>(len);
  return 0;
}

int Http1Parser::OnHeaderFieldComplete() {
  // llhttp 8 accepts an empty field name (": x"); node's llhttp 9 answers
  // 400. (With no name span at all, fields_.back() would not be ours.)
  if (!in_field_ || fields_.empty() || fields_.back().first.len == 0) {
    return Refuse("HPE_INVALID_HEADER_TOKEN", "Invalid header token");
  }
  const Span& name = fields_.back().first;
  if (in_trailers_ && name.len == 14 &&
      EqualsIgnoreCase(std::string_view(arena_.data() + name.off, name.len),
                       "content-length")) {
    // A framing header after the body it would have framed: node's llhttp
    // 9 refuses it (400), so a proxy in front cannot be told otherwise.
    return Refuse("HPE_INVALID_CONTENT_LENGTH",
                  "Content-Length can't be present with Transfer-Encoding");
  }
  if (!in_trailers_ && (parser_.flags & F_CONTENT_LENGTH) != 0 &&
      name.len == 17 &&
      EqualsIgnoreCase(std::string_view(arena_.data() + name.off, name.len),
                       "transfer-encoding")) {
    // Transfer-Encoding after Content-Length, whatever its value (llhttp
    // 8.1 lets an empty one through): node's llhttp 9 answers 400.
    return Refuse("HPE_INVALID_TRANSFER_ENCODING",
                  "Transfer-Encoding can't be present with Content-Length");
  }
  fields_.back().second = Span{static_cast<uint32_t>(arena_.size()), 0};
  in_field_ = false;
  return 0;
}

int Http1Parser::OnHeaderValueComplete() {
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
  return Refuse("HPE_INVALID_TRANSFER_ENCODING", "Empty Transfer-Encoding");
}

// Node answers every line fold, and a bare LF ending the head or the
// trailers, with 400 (HPE_INVALID_HEADER_TOKEN): a front proxy that reads
// such a line differently would otherwise frame the request differently
// than we do.
int Http1Parser::RefuseLines(LineFoldScanner::Result why) {
  fold_.Disarm();
  if (why == LineFoldScanner::kBareLfEnd) {
    return Refuse("HPE_INVALID_HEADER_TOKEN", "Invalid header field char");
  }
  // node's two wordings: a fold after an empty first line, and after a
  // value.
  bool after_value = !in_field_ && !fields_.empty() &&
                     fields_.back().second.len > 0;
  return Refuse("HPE_INVALID_HEADER_TOKEN",
                after_value ? "Unexpected whitespace after header value"
                            : "Invalid header value char");
}

int Http1Parser::OnHeadersComplete() {
  // Before anything is dispatched: the last line may have been folded, or
  // the blank line be a bare LF. A CONNECT has no body whatever its
  // framing headers say (llhttp completes it here): what follows is tunnel
  // data, which the scanner must not read as chunk framing.
  bool chunked = (parser_.flags & F_CHUNKED) != 0 &&
                 parser_.method != HTTP_CONNECT;
  if (LineFoldScanner::Result r = fold_.HeadEnd(exec_end_, chunked)) {
    return RefuseLines(r);
  }
  if (!(parser_.flags & F_CONNECTION_CLOSE) && HasCloseToken()) {
    // "Connection: close\t": llhttp 8.1 reads "close" only when SP, "," or
    // the line end follows; node 22's llhttp 9.4 also takes HTAB, and then
    // refuses anything pipelined after this request. Do the same, so that
    // no front proxy sees fewer requests on the connection than we serve.
    parser_.flags |= F_CONNECTION_CLOSE;
  }
  if (listener_->OnHeadersComplete() != 0) return -1;
  head_pending_ = true;
  in_trailers_ = true;
  in_body_ = (parser_.flags & F_CHUNKED) != 0 ||
             ((parser_.flags & F_CONTENT_LENGTH) != 0 &&
              parser_.content_length > 0);
  trailer_start_ = fields_.size();
  if ((parser_.flags & F_CONTENT_LENGTH) != 0 &&
      parser_.content_length > options_->max_request_body_size) {
    // Refused before a body byte is read. The handler still gets the
    // request (its req emits 'error'); the parser stops here, so the body
    // is never taken for a next request.
    body_too_large_ = true;
    DeliverHead(false);
    return -1;
  }
  return 0;
}

bool Http1Parser::HasCloseToken() const {
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

void Http1Parser::DeliverHead(bool complete) {
  head_pending_ = false;
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
  size_t max_fields = options_->max_headers_count;
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
  listener_->OnHead(head_);
}

// ---- the body ------------------------------------------------------------

// Chunk extensions are parsed and dropped; their size per chunk is bounded
// as node 20 bounds it (16 KiB, then 413), or a client could make the
// parser chew on one endless chunk-size line.
int Http1Parser::OnChunkExtension(size_t len) {
  size_t max = options_->max_chunk_extensions_size;
  chunk_ext_bytes_ += len;
  if (max > 0 && chunk_ext_bytes_ > max) {
    ext_overflow_ = true;
    return -1;
  }
  return 0;
}

// llhttp 8.1 accepts two chunk-extension values node's llhttp 9 refuses
// (400): a DEL or control byte inside a quoted value, and an empty value
// followed by ";" ("3;a=;"). An empty value's span is reported where the
// value would start: at the byte after "=".
int Http1Parser::OnChunkExtensionValue(const char* at, size_t len) {
  if (OnChunkExtension(len) != 0) return -1;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = static_cast<unsigned char>(at[i]);
    if (c == 0x7f || (c < 0x20 && c != '\t')) {
      return Refuse("HPE_STRICT",
                    "Invalid character in chunk extensions quoted value");
    }
  }
  // (An empty span at the read's end is reported again from the next one.)
  if (len == 0 && at < exec_end_ && *at == ';') {
    return Refuse("HPE_STRICT", "Invalid character in chunk extensions");
  }
  return 0;
}

int Http1Parser::OnBody(const char* at, size_t len) {
  if (head_pending_) {
    DeliverHead(false);
    if (listener_->Stopped()) return -1;
  }
  if (LineFoldScanner::Result r = fold_.Body(at, at + len)) {
    return RefuseLines(r);
  }
  body_bytes_ += len;
  if (body_bytes_ > options_->max_request_body_size) {
    // A chunked body grew past maxRequestBodySize: none of this chunk is
    // delivered (the session answers 413).
    body_too_large_ = true;
    return -1;
  }
  AddBodySpan(at, len);
  return 0;
}

void Http1Parser::AddBodySpan(const char* at, size_t len) {
  if (len == 0) return;
  bool in_ubuf = ubuf_base_ != nullptr;
  if (run_len_ > 0 && in_ubuf != run_in_ubuf_) FlushBodyRun();
  if (run_len_ == 0) {
    run_in_ubuf_ = in_ubuf;
    run_copied_ = false;
    run_len_ = len;
    if (in_ubuf) {
      run_off_ = static_cast<size_t>(at - ubuf_base_);
    } else {
      run_ptr_ = at;
    }
    return;
  }
  if (run_in_ubuf_) {
    // The span lies after the run in the same read; the bytes between
    // (chunk framing) are parsed already and nothing else refers to them.
    char* dst = ubuf_base_ + run_off_ + run_len_;
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

bool Http1Parser::FlushBodyRun() {
  if (run_len_ == 0) return !listener_->Stopped();
  size_t len = run_len_;
  run_len_ = 0;
  if (listener_->Stopped()) return false;
  if (run_in_ubuf_) {
    listener_->OnBody(ubuf_base_ + run_off_, len,
                      static_cast<int64_t>(run_off_));
  } else {
    listener_->OnBody(run_copied_ ? run_copy_.data() : run_ptr_, len, -1);
    // A body of tiny chunks must not leave a large copy buffer behind.
    if (run_copy_.capacity() > 4096) std::string().swap(run_copy_);
  }
  return !listener_->Stopped();
}

int Http1Parser::OnMessageComplete() {
  // A chunked body's last chunk and trailers end here.
  if (LineFoldScanner::Result r = fold_.MessageEnd(exec_end_)) {
    return RefuseLines(r);
  }
  // The body's last bytes reach the request before its end.
  if (!FlushBodyRun()) return -1;
  message_in_progress_ = false;
  in_body_ = false;
  in_trailers_ = false;
  listener_->OnMessageEnd();
  // An empty chunked body can still carry trailers: then the head goes
  // out first and the trailers with the end, as for any other body.
  bool has_trailers = fields_.size() > trailer_start_;
  if (head_pending_ && !has_trailers) {
    DeliverHead(true);
  } else {
    if (head_pending_) {
      DeliverHead(false);
      if (listener_->Stopped()) return -1;
    }
    trailers_.clear();
    size_t tend = fields_.size();
    size_t max_fields = options_->max_headers_count;
    if (max_fields > 0 && tend - trailer_start_ > max_fields) {
      tend = trailer_start_ + max_fields;
    }
    for (size_t i = trailer_start_; i < tend; i++) {
      const auto& f = fields_[i];
      trailers_.emplace_back(
          std::string_view(arena_.data() + f.first.off, f.first.len),
          TrimOws(arena_.data() + f.second.off, f.second.len));
    }
    listener_->OnTrailers(trailers_);
  }
  if (listener_->Stopped()) return -1;
  int r = listener_->OnMessageDone();
  // llhttp names any refusal from this callback HPE_CB_MESSAGE_COMPLETE;
  // the listener's -1 means "no more input" (e.g. the response closed the
  // connection), which is not the client's fault.
  if (r == -1) done_refused_ = true;
  return r;
}

}  // namespace sluice
