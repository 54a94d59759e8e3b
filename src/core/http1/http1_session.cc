#include "core/http1/http1_session.h"

#include "core/body/file_source.h"

#include "core/common/text.h"
#include "core/net/connection.h"
#include "core/http2/http2_upgrade.h"
#include "core/net/tunnel_session.h"
#include "core/http1/http1_pipe_body.h"
#include "core/net/listener.h"
#include "core/http1/response_serializer.h"

namespace sluice {

namespace {

// Output corked beyond this is flushed at once instead of at the end of the
// dispatch: a handler writing a large body in a loop should not hold it all
// in memory before the first byte leaves.
constexpr size_t kCorkFlushBytes = 256 * 1024;

}  // namespace

Http1Session::Http1Session(Connection* conn)
    : conn_(conn),
      // h2c detection only on cleartext (over TLS, ALPN chose already).
      parser_(this, &conn->listener()->options(),
              conn->listener()->delegate()->http2() != nullptr &&
                  conn->tls() == nullptr) {
  // A connection that never sends a byte is cut after headersTimeout, and
  // as node, requestTimeout also counts from the connection's start.
  const ServerOptions& o = conn_->listener()->options();
  conn_->SetDeadline(kDeadlineHeaders, o.headers_timeout_ms);
  conn_->SetDeadline(kDeadlineRequest, o.request_timeout_ms);
}

Http1Session::~Http1Session() = default;

// ---- parsing -------------------------------------------------------------

ReadBuffers::Want Http1Session::ReadMemory() const {
  if (parse_dead_) return ReadBuffers::kNone;  // input is discarded
  return parser_.in_body() ? ReadBuffers::kRequire : ReadBuffers::kPrefer;
}

void Http1Session::OnRead(const char* data, size_t len) {
  if (copy_reads_ && !conn_->destroyed()) {
    // Copied before parsing: the parser may move a chunked body's bytes
    // down over its framing inside this very buffer. Delivered after it,
    // even when the input is discarded (as node's socket still emits what
    // it reads after its parser gave up).
    std::string copy(data, len);
    Consume(data, len);
    delegate()->OnReadCopy(conn_, copy.data(), copy.size());
    return;
  }
  Consume(data, len);
}

void Http1Session::Consume(const char* data, size_t len) {
  if (parse_dead_ || conn_->closing()) return;  // discard
  if (!unparsed_.empty() || static_pending_ > 0) {
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
  char* ubuf = read_in_ubuf_ ? conn_->read_buffers().base() : nullptr;
  while (true) {
    switch (parser_.Execute(data, static_cast<size_t>(end - data), ubuf)) {
      case Http1Parser::Status::kOk:
      case Http1Parser::Status::kStopped:
        return;
      case Http1Parser::Status::kError:
        HandleParseError();
        return;
      case Http1Parser::Status::kPaused:
        // Too many responses pending, or too much output waiting for the
        // client: hold the rest back (see OnMessageDone) and stop reading
        // until responses finish / the output drains.
        unparsed_.assign(parser_.pos(), end - parser_.pos());
        if (output_pause_) {
          // Lifted by the connection when the backlog drains.
          output_pause_ = false;
          conn_->Pause(Connection::kPauseOutput);
        } else {
          conn_->Pause(Connection::kPausePipeline);
        }
        // Nothing held back: the parser may go on with the next read,
        // which only comes once reading resumes (a serveStatic lookup
        // resumes it itself, StaticDone).
        if (unparsed_.empty() && static_pending_ == 0) parser_.Resume();
        return;
      case Http1Parser::Status::kUpgrade:
        break;
    }
    const char* pos = parser_.pos();
    if (conn_->session() != this) {
      // Switched to HTTP/2 (h2c upgrade): what follows is HTTP/2.
      parse_dead_ = true;
      if (pos < end && !conn_->closing()) {
        conn_->session()->OnRead(pos, static_cast<size_t>(end - pos));
      }
      return;
    }
    if (conn_->listener()->options().tunnel_events &
        (parser_.method() == HTTP_CONNECT ? kTunnelConnect : kTunnelUpgrade)) {
      // The embedder takes the connection over ('upgrade' / 'connect'):
      // from here on it is a byte stream. What followed the head in this
      // read is the event's `head`.
      parse_dead_ = true;
      SwitchToTunnel(pos, static_cast<size_t>(end - pos));
      return;
    }
    if (parser_.method() == HTTP_CONNECT) {
      // What follows a CONNECT is tunnel data, never HTTP: parsing it as
      // requests would be smuggling. lib/ closes the connection, as node
      // does without a 'connect' listener.
      parse_dead_ = true;
      return;
    }
    // No protocol switch is offered over HTTP/1.1 here: the upgrade
    // request was answered as a normal request; keep parsing HTTP.
    parser_.ResumeAfterUpgrade();
    data = pos;
    if (data >= end) return;
  }
}

void Http1Session::SwitchToTunnel(const char* head, size_t len) {
  for (int k = 0; k < kDeadlineCount; k++) {
    conn_->ClearDeadline(static_cast<DeadlineKind>(k));
  }
  // The read buffer's hold is dropped after this read (Connection asks the
  // new session, which wants no embedder memory); `head` is copied by the
  // delegate before that.
  uint32_t seq = current_seq_;
  // The connection owns the new session; this one is retired (it may be on
  // the stack: Execute returns right after this).
  conn_->ReplaceSession(new TunnelSession(conn_));
  delegate()->OnUpgrade(conn_, seq, head, len);
}

void Http1Session::ResumeParsing() {
  if (unparsed_.empty() || parse_dead_ || conn_->closing() ||
      static_pending_ > 0) {
    return;
  }
  std::string input;
  input.swap(unparsed_);
  parser_.Resume();
  Execute(input.data(), input.size());
}

// ---- parser events ---------------------------------------------------------

Http1Delegate* Http1Session::delegate() const {
  return conn_->listener()->delegate()->http1();
}

bool Http1Session::Stopped() const { return conn_->destroyed(); }

int Http1Session::OnMessageBegin() {
  current_seq_ = next_seq_++;
  const ServerOptions& o = conn_->listener()->options();
  conn_->ClearDeadline(kDeadlineKeepAlive);
  conn_->SetDeadline(kDeadlineHeaders, o.headers_timeout_ms);
  conn_->SetDeadline(kDeadlineRequest, o.request_timeout_ms);
  return 0;
}

// llhttp's method code as ServerMetrics counts it.
static ServerMetrics::Method MetricsMethod(int method) {
  switch (method) {
    case HTTP_GET: return ServerMetrics::kGet;
    case HTTP_HEAD: return ServerMetrics::kHead;
    case HTTP_POST: return ServerMetrics::kPost;
    case HTTP_PUT: return ServerMetrics::kPut;
    case HTTP_DELETE: return ServerMetrics::kDelete;
    case HTTP_PATCH: return ServerMetrics::kPatch;
    case HTTP_OPTIONS: return ServerMetrics::kOptions;
    default: return ServerMetrics::kOther;
  }
}

int Http1Session::OnHeadersComplete() {
  Request r;
  r.seq = current_seq_;
  r.method = parser_.method();
  r.start_ns = uv_hrtime();
  r.http10 = parser_.http10();
  r.req_keep_alive = parser_.keep_alive();
  const uint64_t max_requests =
      conn_->listener()->options().max_requests_per_socket;
  if (parser_.http11() && max_requests > 0) {
    // As node's parserOnIncoming: only HTTP/1.1 requests count.
    http11_requests_++;
    r.limit_reached = http11_requests_ >= max_requests;
    r.over_limit = http11_requests_ > max_requests;
  }
  requests_.push_back(std::move(r));
  conn_->ClearDeadline(kDeadlineHeaders);
  return 0;
}

// What the access log needs of a request, copied from its head.
// The peer's address is formatted once per connection (`peer`).
static std::unique_ptr<AccessLogEntry> NewLogEntry(Connection* conn, const RequestHead& head,
                                                   std::string* peer) {
  auto e = std::make_unique<AccessLogEntry>();
  if (peer->empty()) {
    int port = 0;
    int family = 0;
    conn->GetPeer(peer, &port, &family);
  }
  e->remote_addr = *peer;
  e->method = llhttp_method_name(static_cast<llhttp_method_t>(head.method));
  e->url = std::string(head.url);
  e->protocol = head.http_major != 1 ? "HTTP/0.9" : head.http_minor == 0 ? "HTTP/1.0" : "HTTP/1.1";
  for (const auto& f : head.headers) e->NoteHeader(f.first, f.second);
  return e;
}

void Http1Session::OnHead(RequestHead& head) {
  head.seq = current_seq_;
  if (conn_->listener()->access_log() != nullptr && !requests_.empty()) {
    requests_.back().log = NewLogEntry(conn_, head, &log_peer_);
  }
  // h2c upgrade: a complete request, alone in flight, may switch the
  // connection to HTTP/2 (http2_upgrade.h), where it becomes stream 1.
  if (head.complete && head.upgrade && requests_.size() == 1 &&
      UpgradeToHttp2(conn_, head)) {
    requests_.clear();
    static_pending_ = 0;  // their lookups were cancelled with them
    return;
  }
  if (const Request* r = Find(head.seq)) head.over_request_limit = r->over_limit;
  // serveStatic: a complete, bodiless GET / HEAD without Expect or
  // Upgrade may be answered here, never reaching the embedder. HTTP/1.1
  // without Host and requests over maxRequestsPerSocket go on to lib/,
  // which answers them (400 / 503) as node does.
  if (StaticFiles* sf = conn_->listener()->static_files()) {
    if (head.complete && !head.upgrade && !head.has_expect &&
        (head.method == HTTP_GET || head.method == HTTP_HEAD) &&
        (head.has_host || parser_.http10()) && !head.over_request_limit &&
        TryStatic(sf, head)) {
      return;
    }
  }
  delegate()->OnRequest(conn_, head);
}

bool Http1Session::TryStatic(StaticFiles* files, RequestHead& head) {
  StaticLookup* raw = files->Match(head.url, head.method == HTTP_HEAD);
  if (raw == nullptr) return false;
  StaticLookupPtr lookup(raw);
  char lower[24];
  for (const auto& f : head.headers) {
    // Only the fields StaticConditionals knows (5 to 19 bytes).
    if (f.first.size() < 5 || f.first.size() > 19) continue;
    for (size_t i = 0; i < f.first.size(); i++) lower[i] = AsciiLower(f.first[i]);
    raw->TakeHeader(std::string_view(lower, f.first.size()), f.second);
  }
  // kAnswered: OnStaticAnswer ran inside Begin; kFallThrough: not ours.
  const StaticLookup::Start started = raw->Begin(this, head.seq);
  if (started != StaticLookup::kPending) return started == StaticLookup::kAnswered;
  Request* r = Find(head.seq);
  if (r == nullptr) return true;  // the lookup is cancelled with `lookup`
  auto saved = std::make_unique<Request::SavedHead>();
  saved->head = head;
  saved->url.assign(head.url.data(), head.url.size());
  saved->fields.reserve(head.headers.size());
  for (const auto& f : head.headers) {
    saved->fields.emplace_back(std::string(f.first), std::string(f.second));
  }
  r->saved_head = std::move(saved);
  r->static_lookup = std::move(lookup);
  static_pending_++;
  return true;
}

void Http1Session::OnStaticAnswer(uint64_t tag, StaticAnswer& a) {
  const uint32_t seq = static_cast<uint32_t>(tag);
  Request* r = Find(seq);
  StaticAnswerDispatch scope(conn_->listener(), r != nullptr ? &r->static_lookup : nullptr);
  if (scope.async()) r->saved_head.reset();
  int err = kResultOk;
  OutputQueue* q = nullptr;
  if (r != nullptr) {
    if (a.body != nullptr) HoldOutput(seq);
    q = BeginHead(seq, a.status, std::string_view(), &err);
  }
  if (q == nullptr) {
    if (a.body != nullptr) a.body->Close();
  } else {
    for (const auto& h : *a.headers) {
      q->Append(h.first.data(), h.first.size());
      q->Append(": ", 2);
      q->Append(h.second.data(), h.second.size());
      q->Append("\r\n", 2);
    }
    const std::string& alt_svc = conn_->listener()->alt_svc();
    if (!alt_svc.empty()) {
      q->Append("Alt-Svc: ", 9);
      q->Append(alt_svc.data(), alt_svc.size());
      q->Append("\r\n", 2);
    }
    uint32_t flags = 0;
    if (a.content_length >= 0) {
      q->Append("Content-Length: ", 16);
      AppendDecimal(*q, static_cast<uint64_t>(a.content_length));
      q->Append("\r\n", 2);
      flags |= kHeadUserContentLength;
    }
    FinishHead(seq, flags, 0);
    if (a.body != nullptr) {
      StartPipeBody(seq, a.body, nullptr, a.body == a.file ? a.file : nullptr);
    } else {
      End(seq, std::string_view());
    }
  }
  if (scope.async()) StaticDone();  // before the scope's dispatch ends
}

void Http1Session::OnStaticFallThrough(uint64_t tag) {
  const uint32_t seq = static_cast<uint32_t>(tag);
  Request* r = Find(seq);
  if (r == nullptr || r->saved_head == nullptr) return;
  StaticLookupPtr done = std::move(r->static_lookup);
  std::unique_ptr<Request::SavedHead> saved = std::move(r->saved_head);
  RequestHead head = saved->head;
  head.url = saved->url;
  head.headers.clear();
  for (const auto& f : saved->fields) head.headers.emplace_back(f.first, f.second);
  Listener* l = conn_->listener();
  l->BeginDispatch();
  delegate()->OnRequest(conn_, head);
  if (!conn_->closing()) StaticDone();
  l->EndDispatch();
}

void Http1Session::StaticDone() {
  if (static_pending_ == 0 || --static_pending_ > 0) return;
  if (parse_dead_ || conn_->closing()) return;
  // OnMessageDone paused the parser for the lookup: go on with what was
  // held back (or with new reads).
  if (unparsed_.empty()) parser_.Resume();
  if (requests_.size() < conn_->listener()->options().max_pipelined) {
    conn_->Resume(Connection::kPausePipeline);
  }
}

void Http1Session::OnBody(const char* data, size_t len, int64_t offset) {
  // A view of the read buffer is handed out: it stays held (AfterRead).
  if (offset >= 0) conn_->read_buffers().NoteViewCut();
  delegate()->OnBody(conn_, current_seq_, data, len,
                                        offset);
}

void Http1Session::OnMessageEnd() {
  conn_->ClearDeadline(kDeadlineHeaders);
  conn_->ClearDeadline(kDeadlineRequest);
  if (Request* r = Find(current_seq_)) r->body_done = true;
}

void Http1Session::OnTrailers(const Http1Fields& trailers) {
  delegate()->OnRequestEnd(conn_, current_seq_, trailers);
}

int Http1Session::OnMessageDone() {
  if (parse_dead_) return -1;
  // A serveStatic lookup is pending: the next request waits for it.
  if (static_pending_ > 0) return HPE_PAUSED;
  if (requests_.empty() && !conn_->closing()) {
    // Answered synchronously: idle again.
    conn_->SetDeadline(kDeadlineKeepAlive,
                       conn_->listener()->options().KeepAliveDeadlineMs());
  }
  if (requests_.size() >= conn_->listener()->options().max_pipelined) {
    return HPE_PAUSED;
  }
  // As node's flood protection: a client pipelining requests while it
  // does not read the responses gets no further request parsed until the
  // output it has not taken falls below the high-water mark (otherwise
  // synchronous responses would pile up without bound).
  if (OutputBacklogged()) {
    output_pause_ = true;
    return HPE_PAUSED;
  }
  return 0;
}

// ---- errors and the connection's end ---------------------------------------

void Http1Session::HandleParseError() {
  const Http1Parser::Error& e = parser_.error();
  switch (e.kind) {
    case Http1Parser::Error::kBodyTooLarge:
      RejectBody();
      return;
    case Http1Parser::Error::kStopped:
      parse_dead_ = true;
      return;
    case Http1Parser::Error::kClientError:
      ReportClientError(e.status, e.code, e.reason, e.at);
      return;
  }
}

void Http1Session::RejectBody() {
  parse_dead_ = true;
  unparsed_.clear();
  parser_.Abandon();
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
  e.code = parser_.error().code;
  e.reason = parser_.error().reason;
  delegate()->OnClientError(conn_, e);
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
  const char* in = parser_.input_begin();
  const char* in_end = parser_.input_end();
  if (pos != nullptr && in != nullptr && pos >= in && pos <= in_end) {
    // Found in the input being parsed: that input and the offset.
    e.raw = in;
    e.raw_len = static_cast<size_t>(in_end - in);
    e.bytes_parsed = static_cast<size_t>(pos - in);
  }
  delegate()->OnClientError(conn_, e);
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
  if (parser_.in_message() && !parser_.Finish()) {
    // The client ended its side mid-request (head or body): as node, a
    // client error (400 unless the embedder answers; a request being
    // received is aborted when the connection closes).
    ReportClientError(400, "HPE_INVALID_EOF_STATE", "Invalid EOF state", nullptr);
    return;
  }
  if (requests_.empty() || !conn_->listener()->options().http_allow_half_open) {
    // As node's socketOnEnd without httpAllowHalfOpen: what was written so
    // far goes out, then our FIN, then the close, which aborts the
    // requests still in flight (their responses can no longer be sent).
    conn_->EndGracefully();
  }
  // Otherwise (httpAllowHalfOpen) the last response closes the connection
  // (see Advance).
}

void Http1Session::OnTimeout(int kind) {
  if (kind == kDeadlineKeepAlive) {
    if (!IsIdle()) return;
    if (conn_->listener()->options().keep_alive_timeout_events &&
        delegate()->OnKeepAliveTimeout(conn_)) {
      return;
    }
    conn_->Destroy();
    return;
  }
  if (kind == kDeadlineLinger) {
    conn_->Destroy();
    return;
  }
  // headersTimeout / requestTimeout
  if (!parser_.in_message()) {
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
  return requests_.empty() && !parser_.in_message();
}

bool Http1Session::CanFreeRetired() const {
  if (static_pending_ > 0 || pumping_ || in_pipe_api_ > 0) return false;
  for (const Request& r : requests_) {
    if (r.pipe_body || r.static_lookup) return false;
  }
  return true;
}

void Http1Session::OnServerClosing() {
  server_closing_ = true;
  close_seq_ = next_seq_;
  // Requests in flight now (begun, even if their head is still arriving)
  // are answered with their usual keep-alive header, as node's close(),
  // which closes idle connections only; the connection then closes after
  // the last of them (Advance) and later ones say Connection: close.
  if (!IsIdle()) return;
  if (conn_->writer().Backlog() > 0) {
    // The last response has not left yet (ended in this very handler,
    // say): as node, whose response is in flight until its write
    // completes ('finish'), the connection is not idle now, and stays a
    // keep-alive connection: closed when its keep-alive timeout expires,
    // a later request is answered with Connection: close.
    conn_->SetDeadline(kDeadlineKeepAlive, conn_->listener()->options().KeepAliveDeadlineMs());
    return;
  }
  if (next_seq_ == 0 && !eof_) {
    // Accepted but no request seen yet: the client has probably sent it
    // (it is on the wire, or this connection was just taken from the
    // accept queue) and would see a reset where it expects an answer.
    // Wait for it, as long as an idle keep-alive connection would be kept;
    // its response carries Connection: close. OnTimeout(kDeadlineKeepAlive)
    // closes the connection if nothing comes.
    conn_->SetDeadline(kDeadlineKeepAlive, conn_->listener()->options().KeepAliveDeadlineMs());
    return;
  }
  conn_->EndGracefully();
}

void Http1Session::OnClose() {
  requests_.clear();  // releases staged external refs
  static_pending_ = 0;  // their lookups were cancelled with them
  unparsed_.clear();
  parser_.DropBody();
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
  r->status = status;
  r->status_no_body = status == 204 || status == 304;
  r->no_body = r->method == HTTP_HEAD || r->status_no_body ||
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
  const bool closing =
      server_closing_ && static_cast<int32_t>(seq - close_seq_) >= 0;
  bool keep_alive = r->req_keep_alive && !closing && !eof_ &&
                    !(flags & kHeadUserConnectionClose);
  const uint64_t max_requests = l->options().max_requests_per_socket;
  // As node: a 204 / 304 the user framed as chunked gets no chunks and
  // closes the connection (a proxy could read chunks it never gets).
  if (r->status_no_body && (flags & kHeadUserChunked)) keep_alive = false;
  // The framing is decided first (it can rule out keep-alive) and written
  // last: node's order is Date, Connection, Keep-Alive, then the framing
  // header, which byte-exact clients and tests expect.
  enum { kFrameNone, kFrameLength, kFrameChunked } frame = kFrameNone;
  if (r->no_body) {
    // No framing: HEAD's length headers are the user's to set.
  } else if (flags & kHeadUserTransferEncoding) {
    r->chunked = (flags & kHeadUserChunked) != 0;
    if (!r->chunked) keep_alive = false;  // delimited by close
  } else if (flags & kHeadUserContentLength) {
    // The user framed it.
  } else if (flags & kHeadWholeBody) {
    frame = kFrameLength;
  } else if (!r->http10) {
    frame = kFrameChunked;
    r->chunked = true;
  } else {
    keep_alive = false;  // HTTP/1.0 body of unknown length: ends at close
  }
  if (!(flags & kHeadUserDate)) {
    q.Append(l->date().HeaderLine(), DateCache::kHeaderLineLen);
  }
  if (!(flags & kHeadUserConnection)) {
    // maxRequestsPerSocket reached: as node, the head tells the client to
    // close, but the connection is kept (close_after stays false), so
    // requests pipelined behind this one are still read and answered (503,
    // 'dropRequest').
    if (keep_alive && !r->limit_reached) {
      if (flags & kHeadUserKeepAlive) {
        q.Append("Connection: keep-alive\r\n", 24);
      } else {
        // Connection and Keep-Alive, formatted once per listener.
        const std::string_view lines = l->keep_alive_lines().Get(
            l->options().keep_alive_timeout_ms, max_requests);
        q.Append(lines.data(), lines.size());
      }
    } else {
      q.Append("Connection: close\r\n", 19);
    }
  }
  if (frame == kFrameLength) {
    q.Append("Content-Length: ", 16);
    AppendDecimal(q, body_len);
    q.Append("\r\n", 2);
  } else if (frame == kFrameChunked) {
    q.Append("Transfer-Encoding: chunked\r\n", 28);
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
  if (r->log) r->log->body_bytes += len;
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
  if (parser_.body_too_large() && seq == current_seq_) {
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

bool Http1Session::OutputBacklogged() const {
  const size_t backlog = conn_->writer().Backlog();
  const size_t hwm = conn_->listener()->options().high_water_mark;
  if (backlog < hwm) return false;
  // Output the kernel refused (a write in flight) is output the client has
  // not taken. Output merely queued in this dispatch is not, up to a bound:
  // a batch of pipelined responses still leaves in one write.
  return conn_->writer().HasWritesInFlight() || backlog >= kOutputBatchBound * hwm;
}

bool Http1Session::NeedsDrain() const {
  return conn_->writer().Backlog() >= conn_->listener()->options().high_water_mark;
}

void Http1Session::Advance() {
  while (!requests_.empty() && requests_.front().ended) {
    const Request& done = requests_.front();
    bool close = done.close_after;
    const uint64_t now = uv_hrtime();
    Listener* l = conn_->listener();
    l->metrics().RecordResponse(ServerMetrics::kHttp1, MetricsMethod(done.method), done.status,
                                done.start_ns, now);
    if (done.log && l->access_log() != nullptr) {
      l->access_log()->Write(*done.log, done.status, static_cast<double>(now - done.start_ns) / 1e9);
    }
    requests_.pop_front();
    if (close) {
      // Anything pipelined after a closing response is dropped, as node
      // does: the client must retry it on a new connection.
      requests_.clear();
      static_pending_ = 0;  // their lookups were cancelled with them
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
    if (!parser_.in_message()) {
      if (eof_ || server_closing_) {
        conn_->EndGracefully();
        return;
      }
      conn_->SetDeadline(kDeadlineKeepAlive,
                         conn_->listener()->options().KeepAliveDeadlineMs());
    }
  }
  if (static_pending_ == 0 &&
      requests_.size() <= conn_->listener()->options().max_pipelined / 2) {
    conn_->Resume(Connection::kPausePipeline);  // a no-op unless paused so
  }
  // A response whose body comes from a pipe reached the front: it may
  // start sending (it only pulls while it is the front one).
  if (!requests_.empty() && requests_.front().pipe_body) PumpPipeBody();
}

void Http1Session::SendErrorAndClose(int status) {
  if (conn_->closing()) return;
  if (status == 0) {
    // A first line naming another protocol (the parser's status 0): no
    // answer.
    conn_->Destroy();
    return;
  }
  conn_->listener()->metrics().refused[ServerMetrics::kHttp1][ServerMetrics::RefusalOf(status)]++;
  if (!requests_.empty() && requests_.front().head_sent) {
    // Part of a response is already on the wire: an error response would
    // corrupt it. Just close.
    conn_->Destroy();
    return;
  }
  requests_.clear();
  static_pending_ = 0;  // their lookups were cancelled with them
  parse_dead_ = true;
  OutputQueue& q = conn_->writer().queue();
  AppendStatusLine(q, status, "");
  q.Append("Connection: close\r\n\r\n", 21);
  conn_->EndGracefully();
}

}  // namespace sluice
