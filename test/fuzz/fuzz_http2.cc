// libFuzzer harness over src/core's HTTP/2 session (nghttp2), through the
// same Connection, socketpair and input format as fuzz_http1.cc (see
// harness.h). The client preface is prepended to the fuzzer's bytes unless
// flag 128 is set (then the bytes are HTTP/1.1, which may upgrade with
// Upgrade: h2c). A fake Http2Delegate answers each stream — at once, at the
// end of its body or later from the driver; with no body, JS-style writes
// (copied or referenced), trailers, or a reset; sometimes pausing the
// request body; or from a native pipe (mem_source.h) — and checks:
//   - streams are reported once, with odd increasing ids, and closed once;
//   - no data/end/drain/trailers callback for an unknown or closed stream,
//     no data after the end, never more data than a content-length allows
//     and exactly that much at the end;
//   - no callback after OnConnectionClose;
//   - every referenced body is released exactly once.
// Flags (byte 0): 1 small windows · 2 small maxHeaderSize · 4 max 2
// concurrent streams · 8 half-close after the input · 16 the client does
// not read until the end · 32 server.close() after the input · 64 small
// high-water mark · 128 no preface (HTTP/1.1, h2c upgrade).
// Ops: as fuzz_http1 (&3: deadlines / deferred answers, 4 resume paused
// streams, 16 server.close(), 32 toggle client reading), and 8: GOAWAY
// (Shutdown) · 64+8: Terminate.
#include <llhttp.h>

#include <cstring>
#include <deque>
#include <map>
#include <string>

#include "core/connection.h"
#include "core/http1_session.h"
#include "core/http2_delegate.h"
#include "core/http2_headers.h"
#include "core/http2_session.h"
#include "core/listener.h"
#include "core/server_delegate.h"
#include "harness.h"
#include "mem_source.h"

using namespace sluice;

namespace {

constexpr size_t kBigBody = 200 * 1024;
char g_big[kBigBody];
volatile unsigned g_sink;

struct Ref : ExternalRef {
  int* live;
  explicit Ref(int* l) : live(l) { ++*live; }
  void Release() override {
    --*live;
    delete this;
  }
};

struct Stream {
  int32_t id;
  bool ended = false;
  bool closed = false;
  bool answered = false;
  bool has_cl = false;
  uint64_t cl = 0;
  uint64_t body = 0;
  bool paused = false;
  bool head = false;
  uint8_t decision = 0;
};

class Delegate final : public ServerDelegate, public Http2Delegate {
 public:
  explicit Delegate(const fuzz::Input& in) : in_(in) {}

  Connection* conn = nullptr;
  Http2Session* h2 = nullptr;
  bool closed = false;
  bool server_closed = false;
  int live_refs = 0;
  std::deque<int32_t> deferred;
  fuzz::Sources sources;
  std::deque<fuzz::PipeDone> pipes;  // one per started pipe body

  // The connection's HTTP/2 session, once it speaks HTTP/2.
  Http2Session* H2() {
    if (closed || conn->destroyed()) return nullptr;
    return dynamic_cast<Http2Session*>(conn->session());
  }

  uint8_t NextDecision() {
    uint32_t i = counter_++;
    return static_cast<uint8_t>(in_.decisions[i % 8] ^ (i / 8));
  }

  // ---- ServerDelegate (HTTP/1.1 before an upgrade) ----
  void OnDispatchBegin() override {}
  void OnDispatchEnd() override {}
  void OnRequest(Connection* c, const RequestHead& head) override {
    Alive(c);
    if (head.complete) Answer1(head.seq);
  }
  void OnBody(Connection* c, uint32_t, const char*, size_t, int64_t) override {
    Alive(c);
  }
  void OnRequestEnd(Connection* c, uint32_t seq,
                    const std::vector<std::pair<std::string_view,
                                                std::string_view>>&) override {
    Alive(c);
    Answer1(seq);
  }
  void OnDrain(Connection* c) override { Alive(c); }
  void OnClientError(Connection* c, const ClientError& err) override {
    Alive(c);
    if (!H2() && !c->destroyed()) {
      static_cast<Http1Session*>(c->session())->SendErrorAndClose(err.status);
    } else {
      c->Destroy();
    }
  }
  void OnConnectionClose(Connection* c) override {
    Alive(c);
    closed = true;
    h2 = nullptr;
  }
  void OnServerClosed() override {
    FUZZ_CHECK(!server_closed, "OnServerClosed twice");
    server_closed = true;
  }
  Http2Delegate* http2() override { return this; }

  // ---- Http2Delegate ----
  void OnStream(Http2Session* s, int32_t id, const Http2Fields& headers,
                bool end_stream) override {
    Session(s);
    FUZZ_CHECK(id > last_id_ && (id & 1), "stream %d after %d", id, last_id_);
    last_id_ = id;
    Stream& st = streams_[id];
    st.id = id;
    st.ended = end_stream;
    st.decision = NextDecision();
    bool regular = false;
    for (auto& h : headers) {
      FUZZ_CHECK(!(regular && !h.first.empty() && h.first[0] == ':'),
                 "pseudo-header after a regular one");
      if (!h.first.empty() && h.first[0] != ':') regular = true;
      if (h.first == "content-length") {
        uint64_t n = 0;
        for (char ch : h.second) {
          if (ch >= '0' && ch <= '9') n = n * 10 + static_cast<uint64_t>(ch - '0');
        }
        st.has_cl = true;
        st.cl = n;
      }
      if (h.first == ":method" && h.second == "HEAD") st.head = true;
    }
    if ((st.decision & 0x0f) == 0x0f && !end_stream) {
      st.paused = true;
      s->PauseStream(id);
    }
    Decide(st, end_stream);
  }

  void OnStreamData(Http2Session* s, int32_t id, const char* data,
                    size_t len) override {
    Session(s);
    Stream* st = Open(id, "data");
    FUZZ_CHECK(!st->ended, "data after the end of stream %d", id);
    unsigned sum = 0;
    for (size_t i = 0; i < len; i++) sum += static_cast<unsigned char>(data[i]);
    g_sink += sum;
    st->body += len;
    if (st->has_cl) {
      FUZZ_CHECK(st->body <= st->cl, "stream %d: %llu bytes, content-length %llu",
                 id, static_cast<unsigned long long>(st->body),
                 static_cast<unsigned long long>(st->cl));
    }
  }

  void OnStreamEnd(Http2Session* s, int32_t id, const Http2Fields&) override {
    Session(s);
    Stream* st = Open(id, "end");
    FUZZ_CHECK(!st->ended, "stream %d ended twice", id);
    if (st->has_cl) {
      FUZZ_CHECK(st->body == st->cl, "stream %d ended after %llu of %llu", id,
                 static_cast<unsigned long long>(st->body),
                 static_cast<unsigned long long>(st->cl));
    }
    st->ended = true;
    Decide(*st, true);
  }

  void OnStreamDrain(Http2Session* s, int32_t id) override {
    Session(s);
    Open(id, "drain");
  }

  void OnStreamWantTrailers(Http2Session* s, int32_t id) override {
    Session(s);
    Open(id, "want trailers");
    Http2HeaderList t;
    t.Add("x-trailer", "1");
    s->SendTrailers(id, t);
  }

  void OnStreamClose(Http2Session* s, int32_t id, uint32_t) override {
    Session(s);
    Stream* st = Open(id, "close");
    st->closed = true;
  }

  void OnGoaway(Http2Session* s, uint32_t, int32_t) override { Session(s); }

  void AnswerDeferred() {
    while (!deferred.empty()) {
      int32_t id = deferred.front();
      deferred.pop_front();
      auto it = streams_.find(id);
      if (it != streams_.end() && !it->second.answered) Answer(it->second);
    }
  }

  void ResumeAll() {
    for (auto& it : streams_) {
      Stream& st = it.second;
      if (st.paused && !st.closed && H2()) {
        st.paused = false;
        H2()->ResumeStream(st.id);
      }
    }
  }

 private:
  void Alive(Connection* c) {
    FUZZ_CHECK(!closed, "callback after OnConnectionClose");
    FUZZ_CHECK(c == conn, "unknown connection");
  }
  void Session(Http2Session* s) {
    FUZZ_CHECK(!closed, "stream callback after OnConnectionClose");
    FUZZ_CHECK(s->connection() == conn, "unknown session");
    h2 = s;
  }
  Stream* Open(int32_t id, const char* what) {
    auto it = streams_.find(id);
    FUZZ_CHECK(it != streams_.end(), "%s for unknown stream %d", what, id);
    FUZZ_CHECK(!it->second.closed, "%s for closed stream %d", what, id);
    return &it->second;
  }

  void Answer1(uint32_t seq) {
    if (conn->destroyed() || H2()) return;
    auto* s = static_cast<Http1Session*>(conn->session());
    int err = 0;
    if (OutputQueue* q = s->BeginHead(seq, 200, "", &err)) {
      (void)q;
      s->FinishHead(seq, kHeadWholeBody, 0);
      s->End(seq, "");
    }
  }

  void Decide(Stream& st, bool at_end) {
    if (st.answered) return;
    switch (st.decision & 3) {
      case 0: Answer(st); break;
      case 1: if (at_end) Answer(st); break;
      case 2: if (!at_end) deferred.push_back(st.id); else if (!st.answered) deferred.push_back(st.id); break;
      case 3: if (at_end) deferred.push_back(st.id); break;
    }
  }

  void Answer(Stream& st) {
    st.answered = true;
    if (!h2 || closed || st.closed) return;
    Http2Session* s = h2;
    uint8_t d = st.decision;
    if ((d & 0xc0) == 0xc0 && (d & 0x10)) {
      int r = s->ResetStream(st.id, 8);
      FUZZ_CHECK(r == kH2Ok || r == kH2NoStream || r == kH2Closed, "reset: %d", r);
      return;
    }
    int status = (d & 0xc0) == 0x80 ? 204 : 200;
    int body_mode = (d >> 2) & 3;
    Http2HeaderList hl;
    hl.AddStatus(status);
    hl.Add("x-id", std::to_string(st.id));
    uint32_t flags = 0;
    // A native pipe body (respondWithFile) in one response of four.
    uint8_t p = NextDecision();
    bool pipe = (p & 3) == 3 && status == 200;
    if (pipe) body_mode = 1;
    if (body_mode == 0 || status == 204) flags |= kH2EndStream;
    if (body_mode == 2 && (d & 0x20)) flags |= kH2WaitForTrailers;
    int r = s->Respond(st.id, status, hl, flags);
    if (r != kH2Ok) {
      FUZZ_CHECK(r == kH2NoStream || r == kH2Closed || r == kH2Invalid,
                 "respond: %d", r);
      return;
    }
    if (flags & kH2EndStream) return;
    if (pipe) {
      size_t total = ((p >> 3) & 7) * 40000 + (p & 4);
      auto* src = new fuzz::MemSource(&sources, total, (p & 0x20) ? 1000 : 200000,
                                      (p & 4) != 0, (p & 0x40) ? 1 : -1);
      pipes.emplace_back();
      r = s->StartPipeBody(st.id, src, &pipes.back());
      FUZZ_CHECK(r == kH2Ok || r == 1 || r == kH2NoStream || r == kH2Closed,
                 "StartPipeBody: %d", r);
      if (r != kH2Ok) pipes.pop_back();
      return;
    }
    auto write = [&](size_t len, bool external) {
      if (!h2 || closed) return;
      int e = external
                  ? h2->Write(st.id, g_big, len, new Ref(&live_refs))
                  : h2->Write(st.id, g_big, len, nullptr);
      FUZZ_CHECK(e == kH2Ok || e == kH2NoStream || e == kH2Closed, "write: %d", e);
    };
    if (body_mode == 1) write(5, false);
    if (body_mode == 2) {
      write(100, false);
      write(kBigBody, true);
    }
    if (body_mode == 3) write(kBigBody / 2, true);
    if (!h2 || closed) return;
    if (body_mode == 2 && (d & 0x20)) return;  // trailers via the callback
    Http2HeaderList t;
    if (d & 0x20) t.Add("x-t", "1");
    r = h2->End(st.id, (d & 0x20) ? &t : nullptr);
    FUZZ_CHECK(r == kH2Ok || r == kH2NoStream || r == kH2Closed || r == kH2Ended,
               "end: %d", r);
  }

  const fuzz::Input& in_;
  uint32_t counter_ = 0;
  int32_t last_id_ = 0;
  std::map<int32_t, Stream> streams_;
};

uint64_t JumpFor(uint8_t op) {
  static const uint64_t kJumps[4] = {2500, 6000, 61000, 301000};
  return kJumps[op >> 6];
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  for (size_t i = 0; i < kBigBody; i++) g_big[i] = static_cast<char>('a' + i % 26);
  signal(SIGPIPE, SIG_IGN);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in = fuzz::Decode(data, size);
  if (!(in.flags & 128)) {
    in.chunks.front().bytes.insert(0, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
  }
  uv_loop_t loop;
  uv_loop_init(&loop);
  ServerOptions o;
  if (in.flags & 1) {
    o.http2_stream_window = 100;
    o.http2_connection_window = 65535;
  }
  if (in.flags & 2) o.max_header_size = 64 + (in.flags2 & 0x3f) * 8;
  if (in.flags & 4) o.http2_max_concurrent_streams = 2;
  if (in.flags & 64) o.high_water_mark = 1024;
  Delegate d(in);
  Listener* l = new Listener(&loop, &d, o);
  fuzz::Driver drv(&loop);
  d.conn = Connection::Adopt(l, drv.server_fd());
  FUZZ_CHECK(d.conn != nullptr, "adopt failed");
  bool reading = !(in.flags & 16);
  drv.set_reading(reading);
  auto alive = [&]() { return !d.closed; };
  for (const fuzz::Chunk& ch : in.chunks) {
    drv.Send(ch.bytes);
    drv.Pump();
    uint8_t op = ch.op;
    if ((op & 3) == 1 || (op & 3) == 3) {
      if (alive()) {
        l->BeginDispatch();
        d.conn->CheckDeadlines(uv_now(&loop) + JumpFor(op));
        l->EndDispatch();
      }
    }
    if ((op & 3) >= 2) d.AnswerDeferred();
    if (!(op & 128)) d.sources.Run();
    if (op & 4) d.ResumeAll();
    if ((op & 8) && d.H2()) {
      if (op & 64) {
        d.H2()->Terminate(0);
      } else {
        d.H2()->Shutdown();
      }
    }
    if (op & 16) l->Close();
    if (op & 32) {
      reading = !reading;
      drv.set_reading(reading);
    }
    drv.Pump();
  }
  d.ResumeAll();
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
  l->Close();
  if (alive()) l->CloseAllConnections();
  drv.Pump();
  drv.ServerClosed();
  FUZZ_CHECK(d.closed, "connection not closed at teardown");
  FUZZ_CHECK(d.server_closed, "OnServerClosed missing");
  l->Release();
  fuzz::CloseLoop(&loop);
  FUZZ_CHECK(d.live_refs == 0, "%d external refs not released", d.live_refs);
  d.sources.Run();  // frees sources closed while a read was pending
  FUZZ_CHECK(d.sources.live == 0, "%zu pipe sources not freed", d.sources.live);
  for (auto& p : d.pipes) {
    FUZZ_CHECK(p.calls == 1, "a pipe body ended %d times", p.calls);
  }
  FUZZ_CHECK(PipeBufferPool::ForThisThread()->outstanding() == 0,
             "%zu pipe buffers not returned",
             PipeBufferPool::ForThisThread()->outstanding());
  return 0;
}
