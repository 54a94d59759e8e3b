// libFuzzer harness over src/core's HTTP/1.1 session (see harness.h for the
// transport and the input format). A fake ServerDelegate answers each
// request — synchronously, at the end of its body, or later from the
// driver; with no body, a small one, a chunked one or a large referenced
// one, or from a native pipe (respondWithFile over mem_source.h's source);
// sometimes with Connection: close, a 100 Continue, or by destroying
// the connection — and checks the core's promises:
//   - requests arrive in order (seq 0, 1, 2...), heads only once;
//   - never more body bytes than the head's framing allows (Content-Length
//     exactly, none without framing or on CONNECT), no body after the end;
//   - zero-copy chunks lie in the buffer the delegate gave;
//   - each delivered request and its body bytes are those of a reference
//     parse: one llhttp call (strict, as the session) over every byte the
//     client wrote, with no splits, pauses or zero-copy buffers — the same
//     method, a body that is a prefix of the reference's (chunked framing
//     included), and equal to it when the session ended the request;
//   - no callback for a connection after OnConnectionClose;
//   - every referenced body is released exactly once;
//   - the bytes on the wire parse (llhttp, response mode) as the delegate's
//     responses in request order, each with the body it wrote, optionally
//     followed by one canned error response, and nothing after a response
//     that closes the connection.
// ASan/UBSan cover the rest (freed memory, overflows, leaks at teardown).
//
// Flags (byte 0): 1 body allocator (zero-copy uploads) · 2 small
// maxHeaderSize · 4 max_pipelined 2 · 8 half-close after the input · 16
// the client does not read until the end · 32 server.close() after the
// input · 64 small high-water mark · 128 answer deferred requests before
// the teardown. flags2 & 0x20: the teardown releases the listener with the
// connection open (the binding at environment teardown).
// Ops (per split record): &3: 1 = deadlines pass (time jumps by an amount
// chosen by op>>6), 2 = answer deferred requests, 3 = both · 4 = resume a
// user pause · 8 = refill a dry buffer pool (RetryReadBuffer) · 16 =
// server.close() · 32 = toggle client reading · 128 = do not answer the
// pending reads of pipe sources (respondWithFile) this time.
#include <llhttp.h>

#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>

#include "body_decoder.h"
#include "core/compress/compress_transform.h"
#include "core/net/connection.h"
#include "core/http1/http1_session.h"
#include "core/net/listener.h"
#include "core/net/output_queue.h"
#include "core/http1/http1_delegate.h"
#include "core/net/server_delegate.h"
#include "core/server/http_session_factory.h"
#include "harness.h"
#include "mem_source.h"

using namespace sluice;

namespace {

constexpr size_t kBigBody = 300 * 1024;  // above the 256 KiB cork flush
char g_big[kBigBody];
volatile unsigned g_sink;

char BodyByte(size_t j) { return static_cast<char>('a' + j % 26); }

bool IEquals(std::string_view a, const char* b) {
  size_t n = strlen(b);
  if (a.size() != n) return false;
  for (size_t i = 0; i < n; i++) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    if (c != b[i]) return false;
  }
  return true;
}

std::string_view Trim(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

struct Ref : ExternalRef {
  int* live;
  explicit Ref(int* l) : live(l) { ++*live; }
  void Release() override {
    --*live;
    delete this;
  }
};

struct Req {
  uint32_t seq;
  int method;
  bool has_cl = false;
  uint64_t cl = 0;
  bool chunked = false;       // some Transfer-Encoding
  bool ended = false;         // OnRequestEnd / complete head
  uint64_t body = 0;
  bool answered = false;
  uint8_t decision = 0;
  bool expect_continue = false;
  std::string bytes;          // the body as delivered
};

// The reference parse of what the client wrote (see the head comment).
class Reference {
 public:
  struct R {
    int method = -1;
    bool head_done = false;
    bool complete = false;
    std::string body;
  };
  std::vector<R> reqs;

  explicit Reference(const std::string& bytes) {
    llhttp_settings_t st;
    llhttp_settings_init(&st);
    st.on_message_begin = [](llhttp_t* p) {
      static_cast<Reference*>(p->data)->reqs.emplace_back();
      return 0;
    };
    st.on_headers_complete = [](llhttp_t* p) {
      R& r = static_cast<Reference*>(p->data)->reqs.back();
      r.method = p->method;
      r.head_done = true;
      return 0;
    };
    st.on_body = [](llhttp_t* p, const char* at, size_t len) {
      static_cast<Reference*>(p->data)->reqs.back().body.append(at, len);
      return 0;
    };
    st.on_message_complete = [](llhttp_t* p) {
      static_cast<Reference*>(p->data)->reqs.back().complete = true;
      return 0;
    };
    llhttp_t parser;
    llhttp_init(&parser, HTTP_REQUEST, &st);
    parser.data = this;
    const char* data = bytes.data();
    const char* end = data + bytes.size();
    // As Http1Session::Execute: an Upgrade request is answered as a normal
    // one and parsing goes on; nothing after a CONNECT is HTTP.
    while (data < end) {
      llhttp_errno_t e = llhttp_execute(&parser, data, static_cast<size_t>(end - data));
      if (e != HPE_PAUSED_UPGRADE || parser.method == HTTP_CONNECT) break;
      data = llhttp_get_error_pos(&parser);
      llhttp_resume_after_upgrade(&parser);
    }
  }
};

struct Expected {
  int method;
  size_t body_len;   // bytes the delegate wrote (0 if none), before coding
  bool no_body;      // HEAD / 204 / 304
  bool close;        // the response closes the connection
  Coding coding = Coding::kIdentity;  // a compressed pipe body
};

class Delegate final : public ServerDelegate, public Http1Delegate {
 public:
  explicit Delegate(const fuzz::Input& in) : in_(in) {}

  Connection* conn = nullptr;
  bool closed = false;
  bool released = false;  // Listener::Release called: no more calls
  bool server_closed = false;
  int live_refs = 0;
  std::map<uint32_t, Expected> expected;  // by seq: what was answered
  std::map<uint32_t, int> methods;
  std::deque<uint32_t> deferred;
  fuzz::Sources sources;
  std::deque<fuzz::PipeDone> pipes;  // one per started pipe body
  bool user_paused = false;
  bool dry = false;
  int dispatch = 0;

  Http1Session* session() {
    if (closed || !conn || conn->destroyed()) return nullptr;
    return static_cast<Http1Session*>(conn->session());
  }
  uint8_t NextDecision() {
    uint32_t i = counter_++;
    return static_cast<uint8_t>(in_.decisions[i % 8] ^ (i / 8));
  }

  void OnDispatchBegin() override { dispatch++; }
  void OnDispatchEnd() override { dispatch--; }
  Http1Delegate* http1() override { return this; }

  void OnRequest(Connection* c, const RequestHead& head) override {
    Parsing(c);
    FUZZ_CHECK(head.seq == next_seq_, "seq %u, expected %u", head.seq, next_seq_);
    FUZZ_CHECK(!cur_ || cur_->ended, "head %u before request %u ended",
               head.seq, cur_ ? cur_->seq : 0);
    next_seq_++;
    reqs_.push_back(Req());
    Req& r = reqs_.back();
    r.seq = head.seq;
    r.method = head.method;
    r.expect_continue = head.expect_continue;
    methods[head.seq] = head.method;
    bool has_te = false;
    for (auto& h : head.headers) {
      if (IEquals(h.first, "content-length")) {
        std::string_view v = Trim(h.second);
        FUZZ_CHECK(!r.has_cl, "two Content-Length headers accepted");
        uint64_t n = 0;
        bool digits = !v.empty();
        for (char ch : v) {
          if (ch < '0' || ch > '9') { digits = false; break; }
          n = n * 10 + static_cast<uint64_t>(ch - '0');
        }
        FUZZ_CHECK(digits, "Content-Length '%.*s' accepted",
                   static_cast<int>(v.size()), v.data());
        r.has_cl = true;
        r.cl = n;
      } else if (IEquals(h.first, "transfer-encoding")) {
        has_te = true;
      }
    }
    FUZZ_CHECK(!(has_te && r.has_cl),
               "Content-Length and Transfer-Encoding both accepted");
    r.chunked = has_te;
    if (head.method == HTTP_CONNECT) {
      FUZZ_CHECK(head.complete, "CONNECT with a body");
    }
    if (!has_te && (!r.has_cl || r.cl == 0)) {
      FUZZ_CHECK(head.complete, "request %u without body framing is not complete",
                 head.seq);
    }
    r.decision = NextDecision();
    r.ended = head.complete;
    cur_ = &r;
    if (!head.complete && r.expect_continue && (r.decision & 0x20)) {
      if (Http1Session* s = session()) s->WriteContinue(r.seq);
    }
    Decide(r, /*at_end=*/head.complete);
  }

  void OnBody(Connection* c, uint32_t seq, const char* data, size_t len,
              int64_t user_offset) override {
    Parsing(c);
    FUZZ_CHECK(cur_ && cur_->seq == seq, "body for %u, current %u", seq,
               cur_ ? cur_->seq : 0);
    FUZZ_CHECK(!cur_->ended, "body after the end of request %u", seq);
    FUZZ_CHECK(len > 0, "empty body chunk");
    FUZZ_CHECK(cur_->method != HTTP_CONNECT, "body on CONNECT");
    cur_->body += len;
    cur_->bytes.append(data, len);
    if (cur_->has_cl) {
      FUZZ_CHECK(cur_->body <= cur_->cl, "%llu body bytes for Content-Length %llu",
                 static_cast<unsigned long long>(cur_->body),
                 static_cast<unsigned long long>(cur_->cl));
    } else {
      FUZZ_CHECK(cur_->chunked, "body without framing");
    }
    if (user_offset >= 0) {
      FUZZ_CHECK(ubuf_ != nullptr, "offset without a body buffer");
      FUZZ_CHECK(static_cast<size_t>(user_offset) + len <= ubuf_len_ &&
                     data == ubuf_ + user_offset,
                 "zero-copy chunk outside the body buffer");
    }
    unsigned sum = 0;  // read every byte (ASan)
    for (size_t i = 0; i < len; i++) sum += static_cast<unsigned char>(data[i]);
    g_sink += sum;
    uint8_t d = NextDecision();
    if ((d & 0x0f) == 0x0f && !user_paused) {
      // req.push() returned false
      user_paused = true;
      c->Pause(Connection::kPauseUser);
    }
  }

  BufferResult AcquireBodyBuffer(Connection* c, size_t size, char** base,
                                 size_t* len) override {
    Alive(c);
    FUZZ_CHECK(ubuf_ == nullptr, "second body buffer without a release");
    uint8_t d = NextDecision();
    switch (d & 7) {
      case 0:
        dry = true;
        return BufferResult::kDry;
      case 1:
        return BufferResult::kFallback;
      case 2:
        if (d & 0x80) return BufferResult::kError;
        [[fallthrough]];
      default: {
        size_t n = (d & 0x40) ? 16 + (d >> 3) * 8 : size;
        ubuf_ = static_cast<char*>(malloc(n));
        ubuf_len_ = n;
        *base = ubuf_;
        *len = n;
        return BufferResult::kOk;
      }
    }
  }

  void ReleaseBodyBuffer(Connection* c) override {
    Alive(c);
    FUZZ_CHECK(ubuf_ != nullptr, "release without a body buffer");
    // Freed now: a read into it after this is a use after free.
    free(ubuf_);
    ubuf_ = nullptr;
    ubuf_len_ = 0;
  }

  void OnRequestEnd(
      Connection* c, uint32_t seq,
      const std::vector<std::pair<std::string_view, std::string_view>>&
          trailers) override {
    Parsing(c);
    FUZZ_CHECK(cur_ && cur_->seq == seq && !cur_->ended, "end of %u", seq);
    if (cur_->has_cl) {
      FUZZ_CHECK(cur_->body == cur_->cl, "request ended after %llu of %llu bytes",
                 static_cast<unsigned long long>(cur_->body),
                 static_cast<unsigned long long>(cur_->cl));
    }
    for (auto& t : trailers) {
      volatile size_t n = t.first.size() + t.second.size();
      (void)n;
    }
    FUZZ_CHECK(trailers.empty() || cur_->chunked, "trailers without chunked");
    cur_->ended = true;
    Decide(*cur_, true);
  }

  void OnDrain(Connection* c) override { Alive(c); }

  void OnClientError(Connection* c, const ClientError& err) override {
    Alive(c);
    FUZZ_CHECK(err.status >= 400 && err.status < 500, "status %d", err.status);
    FUZZ_CHECK(error_status_ == 0, "second client error %d after %d",
               err.status, error_status_);
    error_status_ = err.status;
    uint8_t d = NextDecision();
    if ((d & 7) == 7) {
      c->Destroy();
    } else if (Http1Session* s = session()) {
      s->SendErrorAndClose(err.status);
    }
  }

  void OnConnectionClose(Connection* c) override {
    Alive(c);
    closed = true;
    cur_ = nullptr;
    free(ubuf_);  // the embedder drops its hold itself
    ubuf_ = nullptr;
  }

  void OnServerClosed() override {
    FUZZ_CHECK(!released, "OnServerClosed after Listener::Release");
    FUZZ_CHECK(!server_closed, "OnServerClosed twice");
    server_closed = true;
  }

  // Answers what waits for the driver.
  void AnswerDeferred() {
    while (!deferred.empty()) {
      uint32_t seq = deferred.front();
      deferred.pop_front();
      Req* r = FindReq(seq);
      if (r && !r->answered) Answer(*r);
    }
  }

  int error_status() const { return error_status_; }

  // Compares what the session delivered with the reference parse.
  void CheckAgainst(const Reference& ref) const {
    for (const Req& r : reqs_) {
      FUZZ_CHECK(r.seq < ref.reqs.size() && ref.reqs[r.seq].head_done,
                 "request %u delivered; one parse of the same bytes has %zu",
                 r.seq, ref.reqs.size());
      const Reference::R& x = ref.reqs[r.seq];
      FUZZ_CHECK(x.method == r.method, "request %u: method %d, reference %d",
                 r.seq, r.method, x.method);
      FUZZ_CHECK(r.bytes.size() <= x.body.size() &&
                     x.body.compare(0, r.bytes.size(), r.bytes) == 0,
                 "request %u: %zu body bytes delivered are not the reference's "
                 "(%zu bytes)", r.seq, r.bytes.size(), x.body.size());
      if (r.ended) {
        FUZZ_CHECK(x.complete && x.body.size() == r.bytes.size(),
                   "request %u ended with %zu body bytes; reference: %zu%s",
                   r.seq, r.bytes.size(), x.body.size(),
                   x.complete ? "" : ", incomplete");
      }
    }
  }
  void DropBodyBuffer() {
    free(ubuf_);
    ubuf_ = nullptr;
  }

 private:
  void Alive(Connection* c) {
    FUZZ_CHECK(!released, "delegate call after Listener::Release");
    FUZZ_CHECK(!closed, "callback after OnConnectionClose");
    FUZZ_CHECK(c == conn, "unknown connection");
  }
  // Request events: none after a client error (the input is dead).
  void Parsing(Connection* c) {
    Alive(c);
    FUZZ_CHECK(error_status_ == 0, "request event after client error %d",
               error_status_);
  }

  Req* FindReq(uint32_t seq) {
    for (auto& r : reqs_) {
      if (r.seq == seq) return &r;
    }
    return nullptr;
  }

  // When to answer: bits 0-1 of the request's decision.
  void Decide(Req& r, bool at_end) {
    if (r.answered) return;
    switch (r.decision & 3) {
      case 0:  // at once, even before the body
        Answer(r);
        break;
      case 1:  // at the end of the body
        if (at_end) Answer(r);
        break;
      case 2:  // from the driver, later
        if (!at_end || r.ended) {
          for (uint32_t s : deferred) {
            if (s == r.seq) return;
          }
          deferred.push_back(r.seq);
        }
        break;
      case 3:  // from the driver, after the end
        if (at_end) deferred.push_back(r.seq);
        break;
    }
  }

  void Answer(Req& r) {
    r.answered = true;
    Http1Session* s = session();
    if (!s) return;
    uint8_t d = r.decision;
    if ((d & 0xc0) == 0xc0 && (d & 0x10)) {
      conn->Destroy();
      return;
    }
    int status = 200;
    if ((d & 0xc0) == 0x80) status = (d & 0x10) ? 204 : 304;
    bool close = (d & 0x10) != 0 && status == 200;
    // A native pipe body (respondWithFile) instead: one response in four;
    // the binding holds such a head back until the first data.
    uint8_t p = NextDecision();
    bool pipe = (p & 3) == 3 && status == 200;
    if (pipe) s->HoldOutput(r.seq);
    int rc = 0;
    int err = 0;
    OutputQueue* q = s->BeginHead(r.seq, status, "", &err);
    if (!q) {
      FUZZ_CHECK(err == kResultClosed || err == kResultNoRequest,
                 "BeginHead(%u) failed: %d", r.seq, err);
      return;
    }
    char line[64];
    int n = snprintf(line, sizeof line, "X-Seq: %u\r\n", r.seq);
    q->Append(line, static_cast<size_t>(n));
    uint32_t flags = 0;
    if (close) {
      q->Append("Connection: close\r\n", 19);
      flags |= kHeadUserConnection | kHeadUserConnectionClose;
    }
    int body_mode = (d >> 2) & 3;
    size_t body_len = 0;
    if (pipe) {
      // respondWithFile: Content-Length or chunked, then the pipe; one in
      // four through the native compressor (FileSource → CompressTransform
      // → sink, as js_file.cc builds it): then chunked, with
      // Content-Encoding, and the checker inflates it.
      size_t total = ((p >> 3) & 7) * 40000 + (p & 4);
      bool known = (p & 0x80) != 0;
      CompressParams cp;
      bool comp = fuzz::PickCompression(NextDecision(), &cp);
      if (comp) {
        known = false;
        char ce[64];
        int m = snprintf(ce, sizeof ce, "Content-Encoding: %s\r\n",
                         fuzz::CodingName(cp.coding));
        q->Append(ce, static_cast<size_t>(m));
      }
      rc = s->FinishHead(r.seq, flags | (known ? kHeadWholeBody : 0), total);
      FUZZ_CHECK(rc == kResultOk, "FinishHead: %d", rc);
      bool no_body = r.method == HTTP_HEAD;
      expected[r.seq] = Expected{r.method, no_body ? 0 : total, no_body, close,
                                 comp ? cp.coding : Coding::kIdentity};
      PipeSource* src = new fuzz::MemSource(&sources, total,
                                            (p & 0x20) ? 1000 : 200000,
                                            (p & 4) != 0, (p & 0x40) ? 1 : -1);
      if (comp) {
        CompressTransform* t = CompressTransform::Create(
            conn->listener()->loop(), PipeBufferPool::ForThisThread(), cp);
        FUZZ_CHECK(t != nullptr, "CompressTransform::Create failed");
        t->SetUpstream(src);
        src = t;
      }
      pipes.emplace_back();
      fuzz::PipeDone* done = &pipes.back();
      rc = s->StartPipeBody(r.seq, src, done);
      FUZZ_CHECK(rc == kResultOk || rc == 1 || rc == kResultClosed, "StartPipeBody: %d", rc);
      if (rc != kResultOk) pipes.pop_back();
      return;
    }
    if (body_mode == 1) body_len = 1 + r.seq % 50;
    if (body_mode == 3) body_len = kBigBody;
    if (body_mode == 2) {
      // chunked, several writes
    } else {
      flags |= kHeadWholeBody;
    }
    bool no_body = r.method == HTTP_HEAD || status != 200;
    rc = s->FinishHead(r.seq, flags, body_len);
    FUZZ_CHECK(rc == kResultOk, "FinishHead: %d", rc);
    size_t written = 0;
    auto write = [&](size_t len, bool external) {
      Http1Session* s2 = session();
      if (!s2) return;
      int e = 0;
      OutputQueue* bq = s2->BeginBody(r.seq, len, &e);
      if (!bq) {
        FUZZ_CHECK(e == kResultOk || e == kResultClosed, "BeginBody: %d", e);
        return;
      }
      if (external) {
        bq->AppendExternal(g_big + written % 26, len, new Ref(&live_refs));
      } else {
        char* p = bq->Reserve(len);
        for (size_t j = 0; j < len; j++) p[j] = BodyByte(written + j);
        bq->Commit(len);
      }
      written += len;
      s2->EndBody(r.seq);
    };
    if (body_mode == 1) write(body_len, false);
    if (body_mode == 3) write(body_len, true);
    if (body_mode == 2) {
      write(3, false);
      write(10, false);
      write(kBigBody / 2, true);
    }
    expected[r.seq] = Expected{r.method, no_body ? 0 : written, no_body,
                               close};
    if (Http1Session* s3 = session()) {
      rc = s3->End(r.seq, body_mode == 2 && (d & 0x20) ? "X-T: 1\r\n" : "");
      FUZZ_CHECK(rc == kResultOk || rc == kResultClosed, "End: %d", rc);
    }
  }

  const fuzz::Input& in_;
  uint32_t counter_ = 0;
  uint32_t next_seq_ = 0;
  std::deque<Req> reqs_;
  Req* cur_ = nullptr;
  char* ubuf_ = nullptr;
  size_t ubuf_len_ = 0;
  int error_status_ = 0;
};

// Parses what the client received and checks it against the delegate's
// answers.
class ResponseChecker {
 public:
  ResponseChecker(const Delegate& d) : d_(d) {
    llhttp_settings_init(&settings_);
    settings_.on_header_field = [](llhttp_t* p, const char* at, size_t len) {
      auto* self = static_cast<ResponseChecker*>(p->data);
      if (self->in_value_) {
        self->Field();
        self->name_.clear();
        self->value_.clear();
      }
      self->in_value_ = false;
      self->name_.append(at, len);
      return 0;
    };
    settings_.on_header_value = [](llhttp_t* p, const char* at, size_t len) {
      auto* self = static_cast<ResponseChecker*>(p->data);
      self->in_value_ = true;
      self->value_.append(at, len);
      return 0;
    };
    settings_.on_message_begin = [](llhttp_t* p) {
      auto* self = static_cast<ResponseChecker*>(p->data);
      self->seq_ = -1;
      self->body_ = 0;
      self->encoding_.clear();
      self->name_.clear();
      self->value_.clear();
      self->in_value_ = false;
      self->message_open_ = true;
      return 0;
    };
    settings_.on_headers_complete = [](llhttp_t* p) -> int {
      auto* self = static_cast<ResponseChecker*>(p->data);
      if (self->in_value_) self->Field();
      return self->HeadersComplete(p->status_code);
    };
    settings_.on_body = [](llhttp_t* p, const char* at, size_t len) {
      auto* self = static_cast<ResponseChecker*>(p->data);
      // Decoded (compressed pipe bodies) or as is: the body pattern.
      bool ok = self->decoder_.Feed(at, len, [self](const char* b, size_t n) {
        for (size_t i = 0; i < n; i++) {
          FUZZ_CHECK(b[i] == BodyByte(self->body_ + i),
                     "response %d: body byte %zu corrupt (%s)", self->seq_,
                     self->body_ + i, fuzz::CodingName(self->decoder_.coding()));
        }
        self->body_ += n;
      });
      FUZZ_CHECK(ok, "response %d: %s body does not decode", self->seq_,
                 fuzz::CodingName(self->decoder_.coding()));
      return 0;
    };
    settings_.on_message_complete = [](llhttp_t* p) {
      auto* self = static_cast<ResponseChecker*>(p->data);
      self->message_open_ = false;
      return self->Complete(p->status_code);
    };
    llhttp_init(&parser_, HTTP_RESPONSE, &settings_);
    parser_.data = this;
  }

  void Check(const std::string& wire, bool cut) {
    if (wire.empty()) return;
    llhttp_errno_t e = llhttp_execute(&parser_, wire.data(), wire.size());
    FUZZ_CHECK(e == HPE_OK, "response stream does not parse: %s (%s) after "
               "%zu responses", llhttp_errno_name(e),
               parser_.reason ? parser_.reason : "", next_);
    // The last response may be cut short only when the connection was
    // destroyed (timeout with a body in flight, a destroying delegate).
    if (message_open_) {
      FUZZ_CHECK(cut, "response %d incomplete on a graceful close", seq_);
    }
  }

 private:
  void Field() {
    if (IEquals(name_, "x-seq")) seq_ = atoi(value_.c_str());
    if (IEquals(name_, "content-encoding")) encoding_ = value_;
  }

  int HeadersComplete(int status) {
    FUZZ_CHECK(!after_close_, "a response after one that closed");
    if (status == 100) {
      FUZZ_CHECK(seq_ < 0, "100 with X-Seq");
      return 0;
    }
    if (seq_ < 0) {
      // A canned error response from the core (400, 408, 413, 431...).
      FUZZ_CHECK(status >= 400, "response without X-Seq: %d", status);
      FUZZ_CHECK(status == d_.error_status(),
                 "error response %d, delegate saw %d", status,
                 d_.error_status());
      after_close_ = true;
      return 1;  // no body
    }
    FUZZ_CHECK(static_cast<size_t>(seq_) == next_,
               "response for %d, expected %zu (out of order)", seq_, next_);
    auto it = d_.expected.find(static_cast<uint32_t>(seq_));
    FUZZ_CHECK(it != d_.expected.end(), "response %d never answered", seq_);
    Coding c = it->second.coding;
    FUZZ_CHECK(c == Coding::kIdentity ? encoding_.empty()
                                      : encoding_ == fuzz::CodingName(c),
               "response %d: Content-Encoding '%s'", seq_, encoding_.c_str());
    decoder_.Init(it->second.no_body ? Coding::kIdentity : c);
    next_++;
    return it->second.no_body ? 1 : 0;
  }

  int Complete(int status) {
    if (status == 100 || seq_ < 0) return 0;
    const Expected& x = d_.expected.at(static_cast<uint32_t>(seq_));
    FUZZ_CHECK(body_ == x.body_len, "response %d: %zu body bytes, wrote %zu",
               seq_, body_, x.body_len);
    FUZZ_CHECK(decoder_.finished(), "response %d: %s stream not finished",
               seq_, fuzz::CodingName(decoder_.coding()));
    if (getenv("FUZZ_VERBOSE")) {  // what was checked, for a replayed input
      fprintf(stderr, "http1 client: response %d status %d body %zu (%s)\n",
              seq_, status, body_, fuzz::CodingName(decoder_.coding()));
    }
    if (!llhttp_should_keep_alive(&parser_)) after_close_ = true;
    return 0;
  }

  const Delegate& d_;
  llhttp_t parser_;
  llhttp_settings_t settings_;
  std::string name_, value_;
  std::string encoding_;
  fuzz::BodyDecoder decoder_;
  bool in_value_ = false;
  bool message_open_ = false;
  bool after_close_ = false;
  int seq_ = -1;
  size_t body_ = 0;
  size_t next_ = 0;
};

// The driver loop's view of this harness (harness.h RunChunks); op 4
// resumes a user pause, op 8 refills a dry body-buffer pool.
class Ops final : public fuzz::Harness {
 public:
  explicit Ops(Delegate& d) : d_(d) {}
  bool Alive() override { return !d_.closed; }
  void AnswerDeferred() override { d_.AnswerDeferred(); }
  void RunSources() override { d_.sources.Run(); }
  void OnOp(uint8_t op) override {
    if ((op & 4) && d_.user_paused && Alive()) {
      d_.user_paused = false;
      d_.conn->Resume(Connection::kPauseUser);
    }
    if ((op & 8) && d_.dry) {
      d_.dry = false;
      if (!d_.closed && d_.conn) d_.conn->RetryReadBuffer();
    }
  }

 private:
  Delegate& d_;
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  for (size_t i = 0; i < kBigBody; i++) g_big[i] = BodyByte(i);
  signal(SIGPIPE, SIG_IGN);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in = fuzz::Decode(data, size);
  uv_loop_t loop;
  uv_loop_init(&loop);
  ServerOptions o;
  o.body_allocator = (in.flags & 1) != 0;
  if (in.flags & 2) o.max_header_size = 64 + (in.flags2 & 0x3f) * 8;
  if (in.flags & 4) o.max_pipelined = 2;
  if (in.flags & 64) o.high_water_mark = 1024;
  o.body_buffer_size = 256u << (in.flags2 >> 6);
  o.body_buffer_min_free = 64;
  Delegate d(in);
  Listener* l = new Listener(&loop, &d, HttpSessionFactory::Get(), o);
  fuzz::Driver drv(&loop);
  d.conn = Connection::Adopt(l, drv.server_fd());
  FUZZ_CHECK(d.conn != nullptr, "adopt failed");
  bool reading = !(in.flags & 16);
  drv.set_reading(reading);
  auto alive = [&]() { return !d.closed; };
  Ops ops(d);
  fuzz::RunChunks(in, drv, &loop, l, d.conn, ops, &reading);
  if (in.flags & 128) d.AnswerDeferred();
  if (d.user_paused && alive()) {
    d.user_paused = false;
    d.conn->Resume(Connection::kPauseUser);
  }
  drv.set_reading(true);
  drv.Pump();
  if (in.flags & 8) {
    drv.ShutdownWrite();
    drv.Pump();
  }
  if (in.flags & 32) {
    l->Close();
    drv.Pump();
  }
  d.AnswerDeferred();
  d.sources.Run();
  drv.Pump();
  d.sources.Run();
  drv.Pump();
  if ((in.flags2 & 0x20) && alive()) {
    // As the binding at environment teardown (a terminated worker): the
    // listener is released with the connection still open, and the
    // delegate must hear nothing more.
    d.released = true;
    l->Release();
    drv.Pump();
    drv.ServerClosed();
    fuzz::CloseLoop(&loop);
    drv.Drain();
    FUZZ_CHECK(drv.peer_closed(), "connection left open after Release");
    d.DropBodyBuffer();  // the embedder's own teardown
  } else {
    l->Close();
    // Whatever is still open is cut: its last response may be incomplete.
    if (alive()) l->CloseAllConnections();
    drv.Pump();
    drv.ServerClosed();
    FUZZ_CHECK(d.closed, "connection not closed at teardown");
    FUZZ_CHECK(d.server_closed, "OnServerClosed missing");
    drv.Drain();
    l->Release();
    fuzz::CloseLoop(&loop);
  }
  fuzz::CheckNothingLeft(d.live_refs, d.sources, d.pipes);
  ResponseChecker rc(d);
  rc.Check(drv.received(), true);
  d.CheckAgainst(Reference(drv.sent()));
  return 0;
}
