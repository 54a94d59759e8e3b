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
//   - every referenced body is released exactly once;
//   - the server's bytes, read by an nghttp2 CLIENT session (h2_client.h):
//     valid HTTP/2, responses only on streams the client opened, no
//     HEADERS/DATA after a stream's END_STREAM or RST_STREAM, DATA never
//     beyond a content-length, bodies (compressed ones decoded) equal to
//     what the delegate wrote, and a complete response for each stream the
//     server closed without error (see h2_client.h for the exact rules).
// Flags (byte 0): 1 small windows · 2 small maxHeaderSize · 4 max 2
// concurrent streams · 8 half-close after the input · 16 the client does
// not read until the end · 32 server.close() after the input · 64 small
// high-water mark · 128 no preface (HTTP/1.1, h2c upgrade).
// Ops: as fuzz_http1 (harness.h RunChunks: &3 deadlines / deferred
// answers, 16 server.close(), 32 toggle client reading, 128 hold pipe
// sources), and 4: resume paused streams · 8: GOAWAY (Shutdown) · 64+8:
// Terminate.
#include <llhttp.h>

#include <cstring>
#include <deque>
#include <map>
#include <string>

#include "body_decoder.h"
#include "core/compress/compress_transform.h"
#include "core/net/connection.h"
#include "core/server/http_session_factory.h"
#include "core/http1/http1_session.h"
#include "core/http2/http2_delegate.h"
#include "core/stream/header_list.h"
#include "core/http2/http2_session.h"
#include "core/net/listener.h"
#include "core/http1/http1_delegate.h"
#include "core/net/server_delegate.h"
#include "h2_client.h"
#include "harness.h"
#include "mem_source.h"

using namespace sluice;

namespace {

constexpr size_t kBigBody = 200 * 1024;
char g_big[kBigBody + 26];  // the pattern from any offset % 26
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
  uint32_t close_code = 0;     // OnStreamClose's code
  bool answered = false;
  bool responded = false;      // Respond returned kResultOk
  bool reset_by_us = false;    // the delegate reset it
  fuzz::ExpectedBody body_out;  // what the response body should decode to
  bool has_cl = false;
  uint64_t cl = 0;
  uint64_t body = 0;
  bool paused = false;
  bool head = false;
  uint8_t decision = 0;
};

class Delegate final : public ServerDelegate,
                       public Http1Delegate,
                       public Http2Delegate,
                       public fuzz::H2Expectations {
 public:
  explicit Delegate(const fuzz::Input& in) : in_(in) {}

  // fuzz::H2Expectations (the client checker asks what the server knew).
  bool Reported(int32_t id) const override { return streams_.count(id) != 0; }
  bool IsHead(int32_t id) const override {
    auto it = streams_.find(id);
    return it != streams_.end() && it->second.head;
  }
  const fuzz::ExpectedBody* Body(int32_t id) const override {
    auto it = streams_.find(id);
    return it == streams_.end() ? nullptr : &it->second.body_out;
  }
  // Streams whose complete response the client must have: the request
  // ended, the delegate responded, and the server closed the stream
  // without an error (nghttp2 handed over its last frame).
  std::vector<int32_t> Completed() const {
    std::vector<int32_t> ids;
    for (auto& it : streams_) {
      const Stream& st = it.second;
      if (st.ended && st.responded && !st.reset_by_us && st.closed &&
          st.close_code == 0) {
        ids.push_back(st.id);
      }
    }
    return ids;
  }

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

  // ---- ServerDelegate, Http1Delegate (HTTP/1.1 before an upgrade) ----
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
  Http1Delegate* http1() override { return this; }

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
      s->Pause(id, true);
    }
    Decide(st, end_stream);
  }

  void OnStreamData(Http2Session* s, int32_t id, const char* data,
                    size_t len, int64_t user_offset) override {
    Session(s);
    if (user_offset >= 0) s->Consume(id, len);  // no view is kept
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
    HeaderList t;
    t.Add("x-trailer", "1");
    s->SendTrailers(id, t);
  }

  void OnStreamClose(Http2Session* s, int32_t id, uint32_t code) override {
    Session(s);
    Stream* st = Open(id, "close");
    st->closed = true;
    st->close_code = code;
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
        H2()->Pause(st.id, false);
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
      st.reset_by_us = true;
      int r = s->ResetStream(st.id, 8, false);
      FUZZ_CHECK(r == kResultOk || r == kResultNoRequest || r == kResultClosed, "reset: %d", r);
      return;
    }
    int status = (d & 0xc0) == 0x80 ? 204 : 200;
    int body_mode = (d >> 2) & 3;
    HeaderList hl;
    hl.AddStatus(status);
    hl.Add("x-id", std::to_string(st.id));
    uint32_t flags = 0;
    // A native pipe body (respondWithFile) in one response of four; one
    // pipe in four through the native compressor (as js_file.cc builds
    // it for HTTP/1.1: FileSource → CompressTransform → sink).
    uint8_t p = NextDecision();
    bool pipe = (p & 3) == 3 && status == 200;
    size_t total = ((p >> 3) & 7) * 40000 + (p & 4);
    CompressParams cp;
    bool comp = pipe && fuzz::PickCompression(NextDecision(), &cp);
    if (pipe) body_mode = 1;
    size_t len = 0;  // the body the delegate will produce
    if (pipe) {
      len = total;
    } else if (body_mode == 1) {
      len = 5;
    } else if (body_mode == 2) {
      len = 100 + kBigBody;
    } else if (body_mode == 3) {
      len = kBigBody / 2;
    }
    if (body_mode == 0 || status == 204) flags |= kH2EndStream;
    if (body_mode == 2 && (d & 0x20)) flags |= kH2WaitForTrailers;
    bool no_body = (flags & kH2EndStream) || st.head;
    // content-length, when the length is known up front (not for chunked
    // writes nor compressed bodies): the client checks DATA against it.
    if ((p & 0x80) && status == 200 && !comp && body_mode != 2) {
      hl.Add("content-length", std::to_string(body_mode == 0 ? 0 : len));
    }
    if (comp) hl.Add("content-encoding", fuzz::CodingName(cp.coding));
    st.body_out.length = no_body ? 0 : len;
    st.body_out.coding = comp ? cp.coding : Coding::kIdentity;
    int r = s->Respond(st.id, status, hl, flags);
    if (r != kResultOk) {
      FUZZ_CHECK(r == kResultNoRequest || r == kResultClosed || r == kResultInvalid,
                 "respond: %d", r);
      return;
    }
    st.responded = true;
    if (flags & kH2EndStream) return;
    if (pipe) {
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
      r = s->StartPipeBody(st.id, src, &pipes.back());
      FUZZ_CHECK(r == kResultOk || r == 1 || r == kResultNoRequest || r == kResultClosed,
                 "StartPipeBody: %d", r);
      if (r != kResultOk) pipes.pop_back();
      return;
    }
    size_t written = 0;  // the pattern continues across writes
    auto write = [&](size_t n, bool external) {
      if (!h2 || closed) return;
      const char* at = g_big + written % 26;
      written += n;
      int e = external ? h2->Write(st.id, at, n, new Ref(&live_refs))
                       : h2->Write(st.id, at, n, nullptr);
      FUZZ_CHECK(e == kResultOk || e == kResultNoRequest || e == kResultClosed, "write: %d", e);
    };
    if (body_mode == 1) write(5, false);
    if (body_mode == 2) {
      write(100, false);
      write(kBigBody, true);
    }
    if (body_mode == 3) write(kBigBody / 2, true);
    if (!h2 || closed) return;
    if (body_mode == 2 && (d & 0x20)) return;  // trailers via the callback
    HeaderList t;
    if (d & 0x20) t.Add("x-t", "1");
    r = h2->End(st.id, (d & 0x20) ? &t : nullptr);
    FUZZ_CHECK(r == kResultOk || r == kResultNoRequest || r == kResultClosed || r == kResultEnded,
               "end: %d", r);
  }

  const fuzz::Input& in_;
  uint32_t counter_ = 0;
  int32_t last_id_ = 0;
  std::map<int32_t, Stream> streams_;
};

// The driver loop's view of this harness (harness.h RunChunks).
class Ops final : public fuzz::Harness {
 public:
  Ops(Delegate& d, fuzz::H2Client& client, fuzz::Driver& drv)
      : d_(d), client_(client), drv_(drv) {}
  bool Alive() override { return !d_.closed; }
  void AnswerDeferred() override { d_.AnswerDeferred(); }
  void RunSources() override { d_.sources.Run(); }
  void OnOp(uint8_t op) override {
    if (op & 4) d_.ResumeAll();
    if ((op & 8) && d_.H2()) {
      if (op & 64) {
        d_.H2()->Terminate(0);
      } else {
        d_.H2()->Shutdown();
      }
    }
  }
  void BeforeSend(const fuzz::Chunk& ch) override { client_.Sent(ch.bytes); }
  void AfterPump() override { client_.Received(drv_.received()); }

 private:
  Delegate& d_;
  fuzz::H2Client& client_;
  fuzz::Driver& drv_;
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  for (size_t i = 0; i < sizeof g_big; i++) g_big[i] = static_cast<char>('a' + i % 26);
  signal(SIGPIPE, SIG_IGN);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in = fuzz::Decode(data, size);
  if (!(in.flags & 128)) {
    in.chunks.front().bytes.insert(0, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
  }
  fuzz::g_shutdowns = 0;
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
  Listener* l = new Listener(&loop, &d, HttpSessionFactory::Get(), o);
  fuzz::Driver drv(&loop);
  d.conn = Connection::Adopt(l, drv.server_fd());
  FUZZ_CHECK(d.conn != nullptr, "adopt failed");
  bool reading = !(in.flags & 16);
  drv.set_reading(reading);
  auto alive = [&]() { return !d.closed; };
  fuzz::H2Client client(&d, (in.flags & 128) != 0);
  Ops ops(d, client, drv);
  fuzz::RunChunks(in, drv, &loop, l, d.conn, ops, &reading);
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
  client.Received(drv.received());
  // Every stream the server closed without error has its whole response,
  // unless the connection was cut (closed with no FIN: queued output may
  // have been dropped).
  bool cut = d.closed && fuzz::g_shutdowns == 0;
  if (!cut) client.CheckComplete(d.Completed());
  l->Close();
  if (alive()) l->CloseAllConnections();
  drv.Pump();
  drv.ServerClosed();
  FUZZ_CHECK(d.closed, "connection not closed at teardown");
  FUZZ_CHECK(d.server_closed, "OnServerClosed missing");
  l->Release();
  fuzz::CloseLoop(&loop);
  fuzz::CheckNothingLeft(d.live_refs, d.sources, d.pipes);
  client.Received(drv.received());  // what came after (GOAWAY, the rest)
  return 0;
}
