#include "core/http2/http2_session.h"

#include <algorithm>
#include <cstring>
#include <deque>

#include "core/compress/compress_job.h"
#include "core/compress/compress_stream.h"
#include "core/compress/compressor.h"
#include "core/net/connection.h"
#include "core/http2/http2_headers.h"
#include "core/http2/http2_pipe_body.h"
#include "core/net/listener.h"

namespace sluice {

namespace {

// DATA frames are produced only while the writer holds less than this
// (queued + in flight): enough for a few large writevs on loopback, small
// enough that a slow peer does not make us frame megabytes ahead.
constexpr size_t kSendBacklogLimit = 512 * 1024;
// Control frames (SETTINGS/PING ACKs, WINDOW_UPDATE, HEADERS) stay in
// nghttp2's own queue once the writer holds this much: a peer that sends
// PINGs without reading then trips nghttp2's outbound-ACK flood limit
// (NGHTTP2_ERR_FLOODED) instead of growing our queue without bound.
constexpr size_t kControlBacklogLimit = 1024 * 1024;
// Shares one ExternalRef among several segments: the queue holds one count,
// each OutputQueue segment another; the last Release releases the inner.
class CountedRef final : public ExternalRef {
 public:
  explicit CountedRef(ExternalRef* inner) : inner_(inner) {}
  void Add() { count_++; }
  void Release() override {
    if (--count_ == 0) {
      if (inner_) inner_->Release();
      delete this;
    }
  }

 private:
  ExternalRef* inner_;
  int count_ = 1;
};

inline Http2Session* From(void* user) {
  return static_cast<Http2Session*>(user);
}

}  // namespace

// ---- per-stream state --------------------------------------------------------

// The body JS writes: chunks waiting for nghttp2 to frame them. Copied
// chunks are owned here; referenced ones hold a CountedRef.
class Http2Session::WriteQueue final : public Http2BodySource {
 public:
  ~WriteQueue() override { Clear(); }

  void Push(const char* data, size_t len, ExternalRef* ref) {
    if (len == 0) {
      if (ref) ref->Release();
      return;
    }
    if (ref == nullptr) {
      // Coalesce small copied writes into the last owned chunk.
      if (!chunks_.empty() && chunks_.back().ref == nullptr &&
          chunks_.back().own.size() + len <= 16384) {
        chunks_.back().own.append(data, len);
      } else {
        chunks_.emplace_back();
        chunks_.back().own.assign(data, len);
      }
    } else {
      chunks_.emplace_back();
      Chunk& c = chunks_.back();
      c.ext = data;
      c.len = len;
      c.ref = new CountedRef(ref);
    }
    size_ += len;
  }

  // Bytes this queue now owns (compressor output): small ones coalesced
  // with their neighbours, larger ones moved into an OwnedBytes that the
  // DATA frames reference (not copied again).
  void PushOwned(std::string&& bytes) {
    if (bytes.empty()) return;
    if (bytes.size() < kCopyBelow) {
      Push(bytes.data(), bytes.size(), nullptr);
      return;
    }
    OwnedBytes* r = new OwnedBytes(std::move(bytes));
    Push(r->data(), r->size(), r);
  }

  size_t size() const { return size_; }
  void set_ended() { ended_ = true; }

  ssize_t Available(size_t max, bool* eof) override {
    if (size_ == 0) {
      if (ended_) {
        *eof = true;
        return 0;
      }
      return kBodyWouldBlock;
    }
    size_t n = std::min(max, size_);
    *eof = ended_ && n == size_;
    return static_cast<ssize_t>(n);
  }

  void Emit(OutputQueue& q, size_t len) override {
    while (len > 0 && !chunks_.empty()) {
      Chunk& c = chunks_.front();
      size_t clen = c.ref ? c.len : c.own.size();
      const char* base = c.ref ? c.ext : c.own.data();
      size_t k = std::min(len, clen - c.off);
      if (c.ref && k >= kCopyBelow) {
        c.ref->Add();
        q.AppendExternal(base + c.off, k, c.ref);
      } else {
        q.Append(base + c.off, k);
      }
      c.off += k;
      len -= k;
      size_ -= k;
      if (c.off == clen) {
        if (c.ref) c.ref->Release();
        chunks_.pop_front();
      }
    }
  }

  void Detach() override { Clear(); }

 private:
  struct Chunk {
    const char* ext = nullptr;
    size_t len = 0;
    size_t off = 0;
    CountedRef* ref = nullptr;  // null: bytes in `own`
    std::string own;
  };
  void Clear() {
    for (Chunk& c : chunks_) {
      if (c.ref) c.ref->Release();
    }
    chunks_.clear();
    size_ = 0;
  }
  std::deque<Chunk> chunks_;
  size_t size_ = 0;
  bool ended_ = false;
};

// A whole body compressing on the threadpool for RespondCompressed: the
// response waits here (head, flags, trailers) until the job is done.
// Owned by its Stream: a stream that closes (reset, connection closed)
// destroys it, and CompressJob::Destroy then frees the job after the
// worker finishes without calling back, so nothing the worker uses is
// freed under it.
class Http2Session::PendingCompress final : public CompressJob::Client {
 public:
  PendingCompress(Http2Session* s, int32_t id, int status,
                  Http2HeaderList&& headers, uint32_t flags,
                  Http2HeaderList* trailers, CompressJob* job)
      : session_(s),
        id_(id),
        job_(job),
        status(status),
        flags(flags),
        headers(std::move(headers)) {
    if (trailers && !trailers->empty()) {
      this->trailers = std::make_unique<Http2HeaderList>(std::move(*trailers));
    }
  }
  ~PendingCompress() override {
    if (job_) job_->Destroy();
  }
  // The job is done (loop thread, from uv's after-work callback): the
  // session takes the job back and finishes the response.
  void OnCompressDone(CompressJob* job, int st) override {
    job_ = nullptr;
    session_->OnCompressDone(id_, job, st);  // may free this
  }

 private:
  Http2Session* session_;
  int32_t id_;
  CompressJob* job_;

 public:
  int status;
  uint32_t flags;
  Http2HeaderList headers;
  std::unique_ptr<Http2HeaderList> trailers;
};

// Frees a stream's CompressStream (now, or once its job in flight returns;
// the sink is not called after this).
struct CompressStreamDeleter {
  void operator()(CompressStream* c) const { c->Destroy(); }
};

// One stream. It is its compressor's sink: a CompressStream is owned by
// its Stream and destroyed with it, so a sink call always finds the
// Stream alive.
struct Http2Session::Stream final : public CompressStream::Sink {
  explicit Stream(Http2Session* s) : session(s) {}
  // CompressStream → stream, on the loop thread when a queued job is done
  // (never from inside Write/Finish): the session queues the output.
  void OnCompressed(CompressStream*, CompressStream::Result& r) override {
    session->OnStreamCompressed(this, r);
  }

  Http2Session* session;
  int32_t id = 0;
  // Header fields being received (request head, then trailers): offsets
  // into arena.
  std::string arena;
  struct Field { uint32_t name_off, name_len, value_off, value_len; };
  std::vector<Field> fields;
  size_t header_bytes = 0;
  bool too_large = false;
  bool delivered = false;      // reported with OnStream
  bool head_request = false;
  bool remote_ended = false;
  bool client_reset = false;  // the client sent RST_STREAM
  // Response.
  bool responded = false;
  bool no_body = false;        // HEAD, 204, 304, or respond(endStream)
  bool ended = false;          // End called
  bool wait_for_trailers = false;
  bool deferred = false;       // the data provider returned DEFERRED
  bool drain_wanted = false;
  bool cancel_submitted = false;  // CancelOpenStreams reset it already
  std::unique_ptr<Http2HeaderList> trailers;  // from End, sent after the body
  std::unique_ptr<WriteQueue> queue;          // JS writes
  Http2BodySource* source = nullptr;          // queue.get() or a native one
  // Response compression: the ordered streaming compressor of Write/End
  // (inline below CompressStream::kInlineBelow, else on the threadpool),
  // or the whole body on the threadpool (RespondCompressed).
  std::unique_ptr<CompressStream, CompressStreamDeleter> compressor;
  // End came while compression work was queued: the body ends (and the
  // trailers go) when the compressor reports `finished`.
  bool end_after_compress = false;
  std::unique_ptr<PendingCompress> pending;
  // Request-body flow control.
  bool read_paused = false;
  size_t unacked = 0;

  Http2Fields Collect() const {
    Http2Fields out;
    out.reserve(fields.size());
    for (const Field& f : fields) {
      out.emplace_back(
          std::string_view(arena.data() + f.name_off, f.name_len),
          std::string_view(arena.data() + f.value_off, f.value_len));
    }
    return out;
  }
  void DetachSource() {
    if (source) {
      Http2BodySource* s = source;
      source = nullptr;
      s->Detach();
    }
  }
};

// ---- lifecycle -----------------------------------------------------------------

Http2Session::Http2Session(Connection* conn)
    : conn_(conn),
      high_water_mark_(conn->listener()->options().high_water_mark) {
  // The HTTP/1.1 head deadlines no longer apply; idleness is measured as
  // time without open streams.
  conn_->ClearDeadline(kDeadlineHeaders);
  conn_->ClearDeadline(kDeadlineRequest);
  Init();
}

Http2Session::~Http2Session() {
  for (auto& it : streams_) it.second->DetachSource();
  streams_.clear();
  if (session_) nghttp2_session_del(session_);
}

nghttp2_session_callbacks* Http2Session::Callbacks() {
  // Shared by every session of every thread (immutable after setup; nghttp2
  // copies them into each session). Freed by the holder's destructor when
  // the addon is unloaded: a worker that alone loaded it unloads it at its
  // end, and the next one to load it makes a new set (LeakSanitizer found
  // one set lost per worker).
  struct Holder {
    nghttp2_session_callbacks* cbs;
    ~Holder() { nghttp2_session_callbacks_del(cbs); }
  };
  static Holder holder{[] {
    nghttp2_session_callbacks* c;
    nghttp2_session_callbacks_new(&c);
    nghttp2_session_callbacks_set_send_callback(c, SendCb);
    nghttp2_session_callbacks_set_send_data_callback(c, SendDataCb);
    nghttp2_session_callbacks_set_on_begin_headers_callback(c,
                                                            OnBeginHeadersCb);
    nghttp2_session_callbacks_set_on_header_callback(c, OnHeaderCb);
    nghttp2_session_callbacks_set_on_frame_recv_callback(c, OnFrameRecvCb);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
        c, OnDataChunkRecvCb);
    nghttp2_session_callbacks_set_on_stream_close_callback(c,
                                                           OnStreamCloseCb);
    return c;
  }()};
  return holder.cbs;
}

int Http2Session::Init() {
  nghttp2_option* opt;
  if (nghttp2_option_new(&opt) != 0) return NGHTTP2_ERR_NOMEM;
  // Stream windows follow consumption by the embedder (PauseStream).
  nghttp2_option_set_no_auto_window_update(opt, 1);
  // nghttp2's flood protections (outbound ACK queue bound, SETTINGS entry
  // limit, rapid-reset rate limit in newer versions) stay at their
  // defaults: on.
  int r = nghttp2_session_server_new2(&session_, Callbacks(), this, opt);
  nghttp2_option_del(opt);
  if (r != 0) session_ = nullptr;
  return r;
}

int Http2Session::Start() {
  if (!session_) return NGHTTP2_ERR_NOMEM;
  const ServerOptions& o = conn_->listener()->options();
  nghttp2_settings_entry iv[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS,
       static_cast<uint32_t>(o.http2_max_concurrent_streams)},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE,
       static_cast<uint32_t>(o.http2_stream_window)},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE,
       static_cast<uint32_t>(o.max_header_size)},
  };
  int r = nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, iv,
                                  sizeof(iv) / sizeof(iv[0]));
  if (r != 0) return r;
  r = nghttp2_session_set_local_window_size(
      session_, NGHTTP2_FLAG_NONE, 0,
      static_cast<int32_t>(o.http2_connection_window));
  if (r != 0) return r;
  UpdateIdleDeadline();
  conn_->MarkDirty();
  return 0;
}

int Http2Session::StartUpgrade(const uint8_t* settings, size_t len,
                               bool head_request,
                               const Http2Fields& request_headers) {
  int r = Start();
  if (r != 0) return r;
  r = nghttp2_session_upgrade2(session_, settings, len, head_request ? 1 : 0,
                               nullptr);
  if (r != 0) return r;
  client_ids_.Open(1);
  auto st = std::make_unique<Stream>(this);
  st->id = 1;
  st->head_request = head_request;
  st->remote_ended = true;
  for (const auto& f : request_headers) {
    Stream::Field fld;
    fld.name_off = static_cast<uint32_t>(st->arena.size());
    fld.name_len = static_cast<uint32_t>(f.first.size());
    st->arena.append(f.first.data(), f.first.size());
    fld.value_off = static_cast<uint32_t>(st->arena.size());
    fld.value_len = static_cast<uint32_t>(f.second.size());
    st->arena.append(f.second.data(), f.second.size());
    st->fields.push_back(fld);
  }
  Stream* s = st.get();
  streams_[1] = std::move(st);
  UpdateIdleDeadline();
  DeliverHeaders(s, true);
  return 0;
}

bool Http2Session::dead() const {
  return closed_ || session_ == nullptr || conn_->destroyed();
}

Http2Session::Stream* Http2Session::Find(int32_t id) {
  auto it = streams_.find(id);
  return it == streams_.end() ? nullptr : it->second.get();
}

void Http2Session::UpdateIdleDeadline() {
  if (streams_.empty()) {
    conn_->SetDeadline(kDeadlineKeepAlive,
                       conn_->listener()->options().keep_alive_timeout_ms);
  } else {
    conn_->ClearDeadline(kDeadlineKeepAlive);
  }
}

// ---- Session ---------------------------------------------------------------------

void Http2Session::OnRead(const char* data, size_t len) {
  if (dead() || fatal_) return;
  // After Shutdown: its GOAWAY goes into the corked output before more
  // input is parsed. nghttp2 stops accepting new streams, and caps the
  // last_stream_id of any later GOAWAY, only once the GOAWAY is sent;
  // parsed first, a new stream would be processed although the GOAWAY
  // tells the client it was not (it may retry it elsewhere), and a later
  // GOAWAY (a connection error) would raise last_stream_id (RFC 9113 6.8).
  // Found by the fuzz harness's client session.
  if (goaway_ && nghttp2_session_want_write(session_)) {
    SendPending();
    if (dead()) return;
  }
  // The prescan feeds nghttp2 (Feed) and asks CheckFrame about the frames
  // whose answer must not depend on nghttp2's version.
  prescan_.Scan(reinterpret_cast<const uint8_t*>(data), len, *this);
  if (conn_->destroyed()) return;
  conn_->MarkDirty();
}

bool Http2Session::Feed(const uint8_t* data, size_t len) {
  if (dead() || fatal_) return false;
  ssize_t r = nghttp2_session_mem_recv(session_, data, len);
  if (conn_->destroyed()) return false;
  if (r < 0) {
    if (r == NGHTTP2_ERR_FLOODED || r == NGHTTP2_ERR_BAD_CLIENT_MAGIC) {
      conn_->Destroy();
      return false;
    }
    // A connection error nghttp2 did not already answer: GOAWAY, then close.
    nghttp2_session_terminate_session2(session_, TerminateLastId(),
                                       NGHTTP2_PROTOCOL_ERROR);
    fatal_ = true;
    return false;
  }
  return !dead() && !fatal_;
}

FramePrescan::Action Http2Session::OnFrame(const PrescanFrame& f) {
  if (dead() || fatal_) return FramePrescan::kStop;
  // Each Terminate below is a connection error answered before nghttp2
  // sees the frame; nothing after it is parsed. Streams already handed to
  // the embedder keep what they submitted (their responses may precede
  // the GOAWAY).
  int32_t id = f.stream_id;
  switch (f.type) {
    case FramePrescan::kPriority: {
      if (id == 0) {
        Terminate(NGHTTP2_PROTOCOL_ERROR);  // RFC 9113 6.3
        return FramePrescan::kStop;
      }
      if (f.peeked == 5) {
        int32_t dep = static_cast<int32_t>(
            ((uint32_t{f.payload[0]} << 24) | (uint32_t{f.payload[1]} << 16) |
             (uint32_t{f.payload[2]} << 8) | f.payload[3]) &
            0x7fffffffu);
        if (dep == id) {
          // A stream cannot depend on itself (RFC 9113 5.3.1): a stream
          // error on a stream nghttp2 holds; on an idle or forgotten one a
          // RST_STREAM cannot be sent (idle: forbidden; forgotten: nghttp2
          // sends none), so a connection error, which 5.4.1 allows.
          if (nghttp2_session_find_stream(session_, id) != nullptr) {
            nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, id,
                                      NGHTTP2_PROTOCOL_ERROR);
            conn_->MarkDirty();
            return FramePrescan::kDrop;
          }
          Terminate(NGHTTP2_PROTOCOL_ERROR);
          return FramePrescan::kStop;
        }
      }
      return FramePrescan::kPass;
    }
    case FramePrescan::kWindowUpdate: {
      if (f.peeked != 4) return FramePrescan::kPass;  // nghttp2: size error
      uint32_t inc = ((uint32_t{f.payload[0]} << 24) |
                      (uint32_t{f.payload[1]} << 16) |
                      (uint32_t{f.payload[2]} << 8) | f.payload[3]) &
                     0x7fffffffu;
      if (inc == 0 || nghttp2_session_find_stream(session_, id) == nullptr) {
        // 0: nghttp2's PROTOCOL_ERROR. A stream nghttp2 does not hold:
        // idle is nghttp2's connection error; a closed one may still get
        // WINDOW_UPDATEs (RFC 9113 6.9), ignored.
        return FramePrescan::kPass;
      }
      // The stream's send window may not exceed 2^31-1 (RFC 9113 6.9.1):
      // a stream error FLOW_CONTROL_ERROR (newer nghttp2 would end the
      // connection). The window is never below 0 here (nghttp2 reports 0
      // for a negative one, where no increment can overflow).
      int32_t window = nghttp2_session_get_stream_remote_window_size(
          session_, id);
      if (window >= 0 && inc > static_cast<uint32_t>(INT32_MAX - window)) {
        nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, id,
                                  NGHTTP2_FLOW_CONTROL_ERROR);
        conn_->MarkDirty();
        return FramePrescan::kDrop;
      }
      return FramePrescan::kPass;
    }
    case FramePrescan::kData:
    case FramePrescan::kHeaders: {
      if ((id & 1) == 0) return FramePrescan::kPass;  // nghttp2's to refuse
      if (client_ids_.WasClosedByClient(id) && Find(id) == nullptr) {
        // DATA or HEADERS after the client's own END_STREAM or RST_STREAM,
        // the stream gone (RFC 9113 5.1 "closed"; 6.1). nghttp2 answers
        // this only while it still keeps the closed stream (not after
        // 1.61), and drops such a DATA frame before any callback.
        Terminate(NGHTTP2_STREAM_CLOSED);
        return FramePrescan::kStop;
      }
      if (f.type == FramePrescan::kHeaders && !client_ids_.Open(id)) {
        // A HEADERS on an id the client skipped (RFC 9113 5.1.1).
        Terminate(NGHTTP2_PROTOCOL_ERROR);
        return FramePrescan::kStop;
      }
      return FramePrescan::kPass;
    }
    default:
      return FramePrescan::kPass;
  }
}

void Http2Session::OnEof() {
  eof_ = true;
  CancelOpenStreams();
  conn_->MarkDirty();  // OnFlush closes once the streams are done
}

void Http2Session::OnWritesDone() {
  if (dead()) return;
  if (send_blocked_ || nghttp2_session_want_write(session_)) {
    conn_->MarkDirty();
  }
}

void Http2Session::OnTimeout(int kind) {
  if (kind == kDeadlineKeepAlive && streams_.empty()) Shutdown();
}

bool Http2Session::IsIdle() const { return streams_.empty(); }

void Http2Session::OnServerClosing() { Shutdown(); }

void Http2Session::OnClose() {
  closed_ = true;
  for (auto& it : streams_) it.second->DetachSource();
  // Stream events die with the connection; body listeners are still told.
  std::vector<Event> events;
  events.swap(events_);
  for (const Event& e : events) {
    if (e.kind == Event::kBodyDone) e.listener->OnPipeBodyDone(e.status);
  }
}

void Http2Session::OnFlush() {
  if (dead() || in_flush_) return;
  in_flush_ = true;
  SendPending();
  in_flush_ = false;
  if (dead()) return;
  bool want_write = nghttp2_session_want_write(session_) != 0;
  if ((!nghttp2_session_want_read(session_) && !want_write) ||
      ((fatal_ || goaway_ || eof_) && streams_.empty() && !want_write)) {
    conn_->EndGracefully();
    return;
  }
  // Stopped on the writer's bound with nothing in flight: the bytes queued
  // now go out in this flush; go round again for more.
  if (send_blocked_ && !conn_->writer().HasWritesInFlight()) conn_->MarkDirty();
}

void Http2Session::CancelOpenStreams() {
  // The peer's EOF (FIN) ends every stream, as node:http2 does when its
  // socket ends: no request body, WINDOW_UPDATE or RST_STREAM can follow,
  // so a stream still waiting for any of them would wait forever, holding
  // its queued buffers, compression job or pipe. Each open stream is reset
  // (CANCEL); nghttp2 closes it when the frame is produced (OnFlush), and
  // OnStreamCloseCb tells the embedder ('aborted' when its response had
  // not ended, then 'close') and frees what the stream held. Responses not
  // complete by then are not delivered, as with node:http2.
  if (dead() || fatal_) return;
  for (auto& it : streams_) {
    Stream* st = it.second.get();
    if (st->cancel_submitted) continue;
    if (nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, st->id,
                                  NGHTTP2_CANCEL) == 0) {
      st->cancel_submitted = true;
    }
  }
}

void Http2Session::SendPending() {
  if (sending_ || dead()) return;
  sending_ = true;
  send_blocked_ = false;
  int r = nghttp2_session_send(session_);
  sending_ = false;
  if (r != 0 && r != NGHTTP2_ERR_WOULDBLOCK) {
    conn_->Destroy();
    return;
  }
  if (!events_.empty()) DeliverEvents();
}

void Http2Session::DeliverEvents() {
  Listener* l = conn_->listener();
  Http2Delegate* d = l->delegate()->http2();
  std::vector<Event> events;
  events.swap(events_);
  l->BeginDispatch();
  for (const Event& e : events) {
    if (e.kind == Event::kBodyDone) {
      // Always told, even when the connection closed meanwhile.
      e.listener->OnPipeBodyDone(e.status);
      continue;
    }
    if (dead() || !d) continue;
    switch (e.kind) {
      case Event::kClose:
        d->OnStreamClose(this, e.id, e.code);
        break;
      case Event::kDrain:
        if (Find(e.id)) d->OnStreamDrain(this, e.id);
        break;
      case Event::kWantTrailers:
        if (Find(e.id)) d->OnStreamWantTrailers(this, e.id);
        break;
      case Event::kBodyDone:
        break;
    }
  }
  l->EndDispatch();
}

// ---- nghttp2 callbacks: output -----------------------------------------------------

ssize_t Http2Session::SendCb(nghttp2_session*, const uint8_t* data,
                             size_t len, int, void* user) {
  // Control frames and headers: small, copied into the corked buffer.
  Http2Session* self = From(user);
  Writer& w = self->conn_->writer();
  if (w.Backlog() >= kControlBacklogLimit) {
    self->send_blocked_ = true;  // OnWritesDone sends the rest
    return NGHTTP2_ERR_WOULDBLOCK;
  }
  w.queue().Append(reinterpret_cast<const char*>(data), len);
  return static_cast<ssize_t>(len);
}

ssize_t Http2Session::ReadCb(nghttp2_session* session, int32_t id, uint8_t*,
                             size_t len, uint32_t* data_flags,
                             nghttp2_data_source* source, void* user) {
  Http2Session* self = From(user);
  Stream* st = static_cast<Stream*>(source->ptr);
  if (st->source == nullptr) {
    st->deferred = true;
    return NGHTTP2_ERR_DEFERRED;
  }
  bool eof = false;
  ssize_t n = st->source->Available(len, &eof);
  if (n == Http2BodySource::kBodyWouldBlock) {
    st->deferred = true;
    return NGHTTP2_ERR_DEFERRED;
  }
  if (n < 0) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;  // RST_STREAM
  if (n > 0) *data_flags |= NGHTTP2_DATA_FLAG_NO_COPY;
  if (eof) {
    *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    if (st->trailers && !st->trailers->empty()) {
      *data_flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
      nghttp2_submit_trailer(session, id, st->trailers->nv(),
                             st->trailers->size());
      st->trailers.reset();
    } else if (st->wait_for_trailers) {
      *data_flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
      self->events_.push_back({Event::kWantTrailers, id, 0, nullptr, 0});
    }
  }
  return n;
}

int Http2Session::SendDataCb(nghttp2_session*, nghttp2_frame* frame,
                             const uint8_t* framehd, size_t len,
                             nghttp2_data_source* source, void* user) {
  Http2Session* self = From(user);
  Writer& w = self->conn_->writer();
  if (w.Backlog() >= kSendBacklogLimit) {
    // Called again with the same frame once the writer drains.
    self->send_blocked_ = true;
    return NGHTTP2_ERR_WOULDBLOCK;
  }
  Stream* st = static_cast<Stream*>(source->ptr);
  OutputQueue& q = w.queue();
  q.Append(reinterpret_cast<const char*>(framehd), 9);
  size_t padlen = frame->data.padlen;
  if (padlen > 0) {
    char pl = static_cast<char>(padlen - 1);
    q.Append(&pl, 1);
  }
  if (st->source) st->source->Emit(q, len);
  if (padlen > 1) {
    static const char zeros[256] = {0};
    q.Append(zeros, padlen - 1);
  }
  if (st->drain_wanted && !self->Backlogged(st)) {
    st->drain_wanted = false;
    self->events_.push_back({Event::kDrain, st->id, 0, nullptr, 0});
  }
  return 0;
}

// ---- nghttp2 callbacks: input ---------------------------------------------------------

int Http2Session::OnBeginHeadersCb(nghttp2_session* session,
                                   const nghttp2_frame* frame, void* user) {
  Http2Session* self = From(user);
  if (frame->hd.type != NGHTTP2_HEADERS) return 0;
  int32_t id = frame->hd.stream_id;
  if (frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
    if (self->goaway_ && id > self->goaway_last_id_) {
      // Opened after our GOAWAY, which told the client it is not
      // processed (Shutdown from a handler while the rest of this input
      // was still being parsed): refused, so the client may retry it; the
      // embedder never sees it.
      nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, id,
                                NGHTTP2_REFUSED_STREAM);
      return 0;
    }
    auto st = std::make_unique<Stream>(self);
    st->id = id;
    self->streams_[id] = std::move(st);
    self->UpdateIdleDeadline();
  } else if (Stream* st = self->Find(id)) {
    // Trailers: the head's fields were delivered and dropped already.
    st->arena.clear();
    st->fields.clear();
    st->header_bytes = 0;
  }
  return 0;
}

int Http2Session::OnHeaderCb(nghttp2_session*, const nghttp2_frame* frame,
                             const uint8_t* name, size_t namelen,
                             const uint8_t* value, size_t valuelen, uint8_t,
                             void* user) {
  Http2Session* self = From(user);
  Stream* st = self->Find(frame->hd.stream_id);
  if (!st || st->too_large) return 0;
  st->header_bytes += namelen + valuelen;
  if (st->header_bytes > self->conn_->listener()->options().max_header_size) {
    st->too_large = true;
    st->arena.clear();
    st->fields.clear();
    return 0;
  }
  Stream::Field f;
  f.name_off = static_cast<uint32_t>(st->arena.size());
  f.name_len = static_cast<uint32_t>(namelen);
  st->arena.append(reinterpret_cast<const char*>(name), namelen);
  f.value_off = static_cast<uint32_t>(st->arena.size());
  f.value_len = static_cast<uint32_t>(valuelen);
  st->arena.append(reinterpret_cast<const char*>(value), valuelen);
  st->fields.push_back(f);
  return 0;
}

int Http2Session::OnFrameRecvCb(nghttp2_session* session,
                                const nghttp2_frame* frame, void* user) {
  Http2Session* self = From(user);
  int32_t id = frame->hd.stream_id;
  bool end_stream = (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
  switch (frame->hd.type) {
    case NGHTTP2_HEADERS: {
      Stream* st = self->Find(id);
      if (!st) return 0;
      if (frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
        if (end_stream) st->remote_ended = true;
        if (st->too_large) {
          // As HTTP/1.1's 431; the handler never sees the stream.
          Http2HeaderList h;
          h.AddStatus(431);
          nghttp2_submit_response(session, id, h.nv(), h.size(), nullptr);
          st->responded = true;
          return 0;
        }
        self->DeliverHeaders(st, end_stream);
      } else if (end_stream) {
        st->remote_ended = true;
        self->DeliverEnd(st);
      }
      break;
    }
    case NGHTTP2_DATA: {
      if (!end_stream) return 0;
      Stream* st = self->Find(id);
      if (!st) return 0;
      st->remote_ended = true;
      st->fields.clear();
      self->DeliverEnd(st);
      break;
    }
    case NGHTTP2_RST_STREAM: {
      if (Stream* st = self->Find(id)) st->client_reset = true;
      break;
    }
    case NGHTTP2_GOAWAY: {
      Http2Delegate* d = self->conn_->listener()->delegate()->http2();
      if (d) {
        d->OnGoaway(self, frame->goaway.error_code,
                    frame->goaway.last_stream_id);
      }
      break;
    }
    default:
      break;
  }
  return self->conn_->destroyed() ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
}

void Http2Session::DeliverHeaders(Stream* st, bool end_stream) {
  Http2Fields fields = st->Collect();
  for (const auto& f : fields) {
    if (f.first == ":method") {
      st->head_request = f.second == "HEAD";
      break;
    }
  }
  st->delivered = true;
  Http2Delegate* d = conn_->listener()->delegate()->http2();
  if (d) d->OnStream(this, st->id, fields, end_stream);
  // `st` may be gone now (reset from the handler); do not touch it.
  if (Stream* s = Find(st->id)) {
    s->arena.clear();
    s->arena.shrink_to_fit();
    s->fields.clear();
    s->fields.shrink_to_fit();
  }
}

void Http2Session::DeliverEnd(Stream* st) {
  if (!st->delivered) return;
  Http2Fields trailers = st->Collect();
  Http2Delegate* d = conn_->listener()->delegate()->http2();
  if (d) d->OnStreamEnd(this, st->id, trailers);
}

int Http2Session::OnDataChunkRecvCb(nghttp2_session* session, uint8_t,
                                    int32_t id, const uint8_t* data,
                                    size_t len, void* user) {
  Http2Session* self = From(user);
  // The connection window follows arrival: one paused stream must not
  // stall the others. The stream window follows consumption.
  nghttp2_session_consume_connection(session, len);
  Stream* st = self->Find(id);
  if (!st || !st->delivered) {
    nghttp2_session_consume_stream(session, id, len);
    return 0;
  }
  Http2Delegate* d = self->conn_->listener()->delegate()->http2();
  if (d) d->OnStreamData(self, id, reinterpret_cast<const char*>(data), len);
  if (self->conn_->destroyed()) return NGHTTP2_ERR_CALLBACK_FAILURE;
  st = self->Find(id);
  if (st && st->read_paused) {
    st->unacked += len;
  } else {
    nghttp2_session_consume_stream(session, id, len);
  }
  return 0;
}

int Http2Session::OnStreamCloseCb(nghttp2_session*, int32_t id,
                                  uint32_t error_code, void* user) {
  Http2Session* self = From(user);
  auto it = self->streams_.find(id);
  if (it == self->streams_.end()) return 0;
  std::unique_ptr<Stream> st = std::move(it->second);
  self->streams_.erase(it);
  if (st->remote_ended || st->client_reset) self->client_ids_.ClosedByClient(id);
  st->DetachSource();
  self->UpdateIdleDeadline();
  self->conn_->MarkDirty();  // OnFlush decides whether the session is done
  if (!st->delivered) return 0;
  if (self->sending_) {
    self->events_.push_back({Event::kClose, id, error_code, nullptr, 0});
    return 0;
  }
  Http2Delegate* d = self->conn_->listener()->delegate()->http2();
  if (d) d->OnStreamClose(self, id, error_code);
  return self->conn_->destroyed() ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
}

// ---- stream API --------------------------------------------------------------------------

int Http2Session::SubmitWithBody(Stream* st, Http2HeaderList& headers) {
  nghttp2_data_provider prd;
  prd.source.ptr = st;
  prd.read_callback = ReadCb;
  return nghttp2_submit_response(session_, st->id, headers.nv(),
                                 headers.size(), &prd);
}

int Http2Session::Respond(int32_t id, int status, Http2HeaderList& headers,
                          uint32_t flags) {
  if (dead()) return kResultClosed;
  Stream* st = Find(id);
  if (!st) return kResultNoRequest;
  if (st->responded) return kResultHeadersSent;
  return SubmitResponse(st, status, headers, flags);
}

int Http2Session::SubmitResponse(Stream* st, int status,
                                 Http2HeaderList& headers, uint32_t flags) {
  int32_t id = st->id;
  st->responded = true;
  st->no_body = st->head_request || status == 204 || status == 304 ||
                (flags & kH2EndStream);
  if (st->no_body) st->compressor.reset();
  st->wait_for_trailers = (flags & kH2WaitForTrailers) != 0;
  int r;
  if (st->no_body && !st->wait_for_trailers) {
    st->ended = true;
    r = nghttp2_submit_response(session_, id, headers.nv(), headers.size(),
                                nullptr);
  } else {
    st->queue = std::make_unique<WriteQueue>();
    st->source = st->queue.get();
    if (st->no_body) {
      st->ended = true;
      st->queue->set_ended();
    }
    r = SubmitWithBody(st, headers);
  }
  conn_->MarkDirty();
  return r == 0 ? kResultOk : kResultInvalid;
}

int Http2Session::SendInformational(int32_t id, Http2HeaderList& headers) {
  if (dead()) return kResultClosed;
  Stream* st = Find(id);
  if (!st) return kResultNoRequest;
  if (st->responded) return kResultHeadersSent;
  int r = nghttp2_submit_headers(session_, NGHTTP2_FLAG_NONE, id, nullptr,
                                 headers.nv(), headers.size(), nullptr);
  conn_->MarkDirty();
  return r < 0 ? kResultInvalid : kResultOk;
}

int Http2Session::StreamFor(int32_t id, bool responded, Stream** st) {
  *st = dead() ? nullptr : Find(id);
  if (dead()) return kResultClosed;
  if (!*st) return kResultNoRequest;
  if ((*st)->responded != responded) {
    return responded ? kResultHeadersNotSent : kResultHeadersSent;
  }
  return kResultOk;
}

int Http2Session::Write(int32_t id, const char* data, size_t len,
                        ExternalRef* ref) {
  Stream* st;
  int err = StreamFor(id, true, &st);
  if (err == kResultOk && st->ended) {
    err = st->no_body ? kResultOk : kResultEnded;
  } else if (err == kResultOk &&
             (st->queue == nullptr || st->source != st->queue.get())) {
    err = kResultInvalid;  // a native source owns the body
  }
  if (err != kResultOk || st->ended) {
    if (ref) ref->Release();
    return err;
  }
  size_t max_out = conn_->listener()->options().max_output_buffer;
  if (max_out > 0 && len > 0 && st->queue->size() > max_out) {
    // maxOutputBuffer, per stream: the peer does not take the body and the
    // handler ignores 'drain'. Reset the stream (as HTTP/1.1 destroys its
    // connection): nothing more of this response can get through.
    if (ref) ref->Release();
    ResetStream(id, NGHTTP2_INTERNAL_ERROR);
    return kResultClosed;
  }
  if (st->compressor) {
    // Small writes with nothing queued are compressed now; the others on
    // the threadpool, in order (OnStreamCompressed queues their output).
    // The stream takes `ref` (released once the bytes are compressed) or
    // copies the bytes when it queues them.
    std::string out;
    int cr = st->compressor->Write(data, len, Compressor::kNoFlush, ref, &out);
    if (cr < 0) {
      ResetStream(id, NGHTTP2_INTERNAL_ERROR);
      return kResultInvalid;
    }
    if (cr != CompressStream::kInline) return kResultOk;  // the sink resumes
    st->queue->PushOwned(std::move(out));
  } else {
    st->queue->Push(data, len, ref);
  }
  if (st->deferred) {
    st->deferred = false;
    nghttp2_session_resume_data(session_, id);
  }
  conn_->MarkDirty();
  return kResultOk;
}

int Http2Session::End(int32_t id, Http2HeaderList* trailers) {
  if (dead()) return kResultClosed;
  Stream* st = Find(id);
  if (!st) return kResultNoRequest;
  if (!st->responded) return kResultHeadersNotSent;
  if (st->ended) return kResultOk;
  bool body_done = true;
  if (st->compressor && st->queue && st->source == st->queue.get()) {
    std::string out;
    int cr = st->compressor->Finish(nullptr, 0, nullptr, &out);
    if (cr < 0) {
      st->compressor.reset();
      ResetStream(id, NGHTTP2_INTERNAL_ERROR);
      return kResultInvalid;
    }
    if (cr == CompressStream::kInline) {
      st->compressor.reset();  // its state (up to ~1 MiB for brotli) goes now
      st->queue->PushOwned(std::move(out));
    } else {
      // Behind queued work: OnStreamCompressed ends the body once the
      // compressor has finished. Writes are refused from now on.
      st->end_after_compress = true;
      body_done = false;
    }
  }
  st->ended = true;
  if (trailers && !trailers->empty()) {
    st->trailers = std::make_unique<Http2HeaderList>(std::move(*trailers));
  }
  if (!body_done) return kResultOk;
  if (st->queue && st->source == st->queue.get()) st->queue->set_ended();
  if (st->deferred) {
    st->deferred = false;
    nghttp2_session_resume_data(session_, id);
  }
  conn_->MarkDirty();
  return kResultOk;
}

int Http2Session::StartCompression(int32_t id, const CompressParams& params) {
  if (dead()) return kResultClosed;
  Stream* st = Find(id);
  if (!st) return kResultNoRequest;
  if (st->ended || st->pending || st->compressor ||
      (st->queue && (st->source != st->queue.get() || st->queue->size() > 0))) {
    return kResultInvalid;
  }
  if (st->responded && st->no_body) return kResultOk;  // nothing to compress
  CompressStream* c =
      CompressStream::Create(conn_->listener()->loop(), params, st);
  if (c == nullptr) return kResultInvalid;
  st->compressor.reset(c);
  return kResultOk;
}

int Http2Session::FlushCompression(int32_t id) {
  if (dead()) return kResultClosed;
  Stream* st = Find(id);
  if (!st) return kResultNoRequest;
  if (!st->compressor || !st->queue || st->ended) return kResultOk;
  // Ordered after the writes before it: inline when nothing is queued,
  // else its output comes through OnStreamCompressed.
  std::string out;
  int cr = st->compressor->Write(nullptr, 0, Compressor::kSyncFlush, nullptr,
                                 &out);
  if (cr < 0) {
    ResetStream(id, NGHTTP2_INTERNAL_ERROR);
    return kResultInvalid;
  }
  if (out.empty()) return kResultOk;
  st->queue->PushOwned(std::move(out));
  if (st->deferred) {
    st->deferred = false;
    nghttp2_session_resume_data(session_, id);
  }
  conn_->MarkDirty();
  return kResultOk;
}

void Http2Session::OnStreamCompressed(Stream* st,
                                      CompressStream::Result& r) {
  if (dead()) {
    st->compressor.reset();  // the connection is closing: nothing to send
    return;
  }
  int32_t id = st->id;
  Listener* l = conn_->listener();
  // From uv's after-work callback: the embedder's scopes (a drain or a
  // stream close reaches JS) and one flush at the end.
  l->BeginDispatch();
  if (r.error != 0) {
    st->compressor.reset();  // deleted after this callback returns
    ResetStream(id, NGHTTP2_INTERNAL_ERROR);
  } else if (st->queue && st->source == st->queue.get()) {
    st->queue->PushOwned(std::move(r.out));
    if (r.finished) {
      st->compressor.reset();
      if (st->end_after_compress) {
        st->end_after_compress = false;
        st->queue->set_ended();
      }
    }
    if (st->drain_wanted && !Backlogged(st)) {
      st->drain_wanted = false;
      events_.push_back({Event::kDrain, id, 0, nullptr, 0});
    }
    if (st->deferred) {
      st->deferred = false;
      nghttp2_session_resume_data(session_, id);
    }
  }
  conn_->MarkDirty();  // OnFlush sends the frames and delivers the drain
  l->EndDispatch();
}

bool Http2Session::Backlogged(Stream* st) const {
  return (st->queue && st->queue->size() >= high_water_mark_) ||
         (st->compressor &&
          st->compressor->pending_bytes() > CompressStream::kHighWater);
}

namespace {
// Holds a finished CompressJob while its output sits in a stream's queue
// (referenced, not copied); the last segment written frees it.
class JobOutputRef final : public ExternalRef {
 public:
  explicit JobOutputRef(CompressJob* job) : job_(job) {}
  void Release() override {
    job_->Destroy();
    delete this;
  }

 private:
  CompressJob* job_;
};
}  // namespace

int Http2Session::RespondCompressed(int32_t id, int status,
                                    Http2HeaderList& headers, uint32_t flags,
                                    CompressJob* job,
                                    Http2HeaderList* trailers) {
  Stream* st;
  int err = StreamFor(id, false, &st);
  if (err != kResultOk) {
    job->Destroy();
    return err;
  }
  if (job->input_size() < CompressJob::kAsyncThreshold) {
    if (job->RunInline() != 0) {
      job->Destroy();
      return kResultInvalid;
    }
    return FinishCompressed(st, status, headers, flags, job, trailers);
  }
  // Marked responded now (a second respond fails, writes are refused);
  // submitted to nghttp2 once the work is done.
  st->responded = true;
  st->ended = true;
  st->pending = std::make_unique<PendingCompress>(
      this, id, status, std::move(headers), flags, trailers, job);
  int r = job->Queue(conn_->listener()->loop(), st->pending.get());
  if (r != 0) {
    st->pending.reset();  // destroys the job (not queued)
    return kResultInvalid;
  }
  return kResultOk;
}

int Http2Session::FinishCompressed(Stream* st, int status,
                                   Http2HeaderList& headers, uint32_t flags,
                                   CompressJob* job,
                                   Http2HeaderList* trailers) {
  int32_t id = st->id;
  size_t n = job->output_size();
  headers.Add("content-length", std::to_string(n));
  st->ended = false;
  st->compressor.reset();
  int err = SubmitResponse(st, status, headers, flags);
  if (err != kResultOk || st->no_body || !st->queue) {
    job->Destroy();
    return err;
  }
  if (n < 4096) {
    st->queue->Push(job->output(), n, nullptr);
    job->Destroy();
  } else {
    st->queue->Push(job->output(), n, new JobOutputRef(job));
  }
  return End(id, trailers);
}

void Http2Session::OnCompressDone(int32_t id, CompressJob* job, int status) {
  Stream* st = dead() ? nullptr : Find(id);
  if (!st || !st->pending) {
    job->Destroy();
    if (st) st->pending.reset();
    return;
  }
  std::unique_ptr<PendingCompress> p = std::move(st->pending);
  Listener* l = conn_->listener();
  // From uv's after-work callback: the embedder's scopes (a stream close
  // may reach JS) and one flush at the end.
  l->BeginDispatch();
  if (status != 0) {
    job->Destroy();
    ResetStream(id, NGHTTP2_INTERNAL_ERROR);
  } else if (FinishCompressed(st, p->status, p->headers, p->flags, job,
                              p->trailers.get()) != kResultOk) {
    ResetStream(id, NGHTTP2_INTERNAL_ERROR);
  }
  conn_->MarkDirty();
  l->EndDispatch();
}

int Http2Session::SendTrailers(int32_t id, Http2HeaderList& trailers) {
  if (dead()) return kResultClosed;
  Stream* st = Find(id);
  if (!st) return kResultNoRequest;
  int r = nghttp2_submit_trailer(session_, id, trailers.nv(), trailers.size());
  conn_->MarkDirty();
  return r == 0 ? kResultOk : kResultInvalid;
}

int Http2Session::ResetStream(int32_t id, uint32_t code) {
  if (dead()) return kResultClosed;
  if (!Find(id)) return kResultNoRequest;
  int r = nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, id, code);
  conn_->MarkDirty();
  return r == 0 ? kResultOk : kResultInvalid;
}

void Http2Session::PauseStream(int32_t id) {
  if (Stream* st = Find(id)) st->read_paused = true;
}

void Http2Session::ResumeStream(int32_t id) {
  if (dead()) return;
  Stream* st = Find(id);
  if (!st) return;
  st->read_paused = false;
  if (st->unacked > 0) {
    nghttp2_session_consume_stream(session_, id, st->unacked);
    st->unacked = 0;
    conn_->MarkDirty();
  }
}

bool Http2Session::StreamNeedsDrain(int32_t id) {
  Stream* st = Find(id);
  if (!st || !Backlogged(st)) return false;
  st->drain_wanted = true;
  return true;
}

bool Http2Session::IsHeadRequest(int32_t id) {
  Stream* st = Find(id);
  return st && st->head_request;
}

int Http2Session::AttachBodySource(int32_t id, Http2BodySource* source) {
  if (dead()) return kResultClosed;
  Stream* st = Find(id);
  if (!st) return kResultNoRequest;
  if (!st->responded || st->ended || !st->queue || st->queue->size() > 0) {
    return kResultInvalid;
  }
  st->queue.reset();
  st->compressor.reset();  // a native source brings its own (CompressTransform)
  st->source = source;
  st->ended = true;  // the source decides the end from now on
  if (st->deferred) {
    st->deferred = false;
    nghttp2_session_resume_data(session_, id);
  }
  conn_->MarkDirty();
  return kResultOk;
}

void Http2Session::ResumeData(int32_t id) {
  if (dead()) return;
  Stream* st = Find(id);
  if (!st || !st->deferred) return;
  st->deferred = false;
  nghttp2_session_resume_data(session_, id);
  conn_->MarkDirty();
}

int Http2Session::StartPipeBody(int32_t id, PipeSource* source,
                                PipeBodyListener* listener) {
  Stream* st;
  int err = StreamFor(id, true, &st);
  if (err == kResultOk && st->no_body) {
    err = kResultNoBody;
  } else if (err == kResultOk &&
             (st->ended || !st->queue || st->queue->size() > 0)) {
    err = kResultInvalid;
  }
  if (err != kResultOk) {
    source->Close();
    return err;
  }
  Http2PipeBody* body = new Http2PipeBody(this, id, source, listener);
  AttachBodySource(id, body);
  // Start may fail synchronously (OnPipeError resets the stream).
  body->Start();
  return kResultOk;
}

void Http2Session::DeferBodyDone(PipeBodyListener* listener, int status) {
  events_.push_back({Event::kBodyDone, 0, 0, listener, status});
  // Delivered after the nghttp2 call in progress (SendPending).
  if (!sending_) conn_->MarkDirty();
}

void Http2Session::Shutdown() {
  if (dead() || goaway_) return;
  goaway_ = true;
  goaway_last_id_ = nghttp2_session_get_last_proc_stream_id(session_);
  nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE, goaway_last_id_,
                        NGHTTP2_NO_ERROR, nullptr, 0);
  conn_->MarkDirty();
}

int32_t Http2Session::TerminateLastId() const {
  // Never above an earlier GOAWAY's (RFC 9113 6.8), even when that one is
  // not sent yet and nghttp2 would not cap it.
  int32_t last = nghttp2_session_get_last_proc_stream_id(session_);
  return last < goaway_last_id_ ? last : goaway_last_id_;
}

void Http2Session::Terminate(uint32_t code) {
  if (dead()) return;
  goaway_ = true;
  fatal_ = true;
  nghttp2_session_terminate_session2(session_, TerminateLastId(), code);
  conn_->MarkDirty();
}

}  // namespace sluice
