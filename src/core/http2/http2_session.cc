#include "core/http2/http2_session.h"

#include "core/http2/http2_compression.h"
#include "core/stream/header_list.h"
#include "core/http2/http2_pipe_body.h"
#include "core/http2/http2_stream.h"
#include "core/http2/http2_websocket.h"
#include "core/net/connection.h"
#include "core/stream/request_rules.h"
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

inline Http2Session* From(void* user) {
  return static_cast<Http2Session*>(user);
}

}  // namespace

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
    nghttp2_session_callbacks_set_on_frame_send_callback(c, OnFrameSendCb);
    nghttp2_session_callbacks_set_on_frame_not_send_callback(c,
                                                             OnFrameNotSendCb);
    nghttp2_session_callbacks_set_on_begin_headers_callback(c,
                                                            OnBeginHeadersCb);
    nghttp2_session_callbacks_set_on_header_callback(c, OnHeaderCb);
    nghttp2_session_callbacks_set_on_frame_recv_callback(c, OnFrameRecvCb);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
        c, OnDataChunkRecvCb);
    nghttp2_session_callbacks_set_on_stream_close_callback(c,
                                                           OnStreamCloseCb);
    nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(
        c, OnInvalidFrameRecvCb);
    nghttp2_session_callbacks_set_on_invalid_header_callback(
        c, OnInvalidHeaderCb);
    return c;
  }()};
  return holder.cbs;
}

int Http2Session::Init() {
  nghttp2_option* opt;
  if (nghttp2_option_new(&opt) != 0) return NGHTTP2_ERR_NOMEM;
  // Stream windows follow consumption by the embedder (PauseStream).
  nghttp2_option_set_no_auto_window_update(opt, 1);
  nghttp2_option_set_max_settings(
      opt, conn_->listener()->options().http2_max_settings);
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
       static_cast<uint32_t>(o.http2_max_header_list_size != 0
                                 ? o.http2_max_header_list_size
                                 : o.max_header_size)},
      // Extended CONNECT (RFC 8441), last: left out unless enabled.
      {NGHTTP2_SETTINGS_ENABLE_CONNECT_PROTOCOL, 1},
  };
  const size_t n = sizeof(iv) / sizeof(iv[0]) - (o.http2_connect_protocol ? 0 : 1);
  int r = nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, iv, n);
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

ReadBuffers::Want Http2Session::ReadMemory() const {
  if (dead() || fatal_ || !conn_->listener()->options().body_allocator) {
    return ReadBuffers::kNone;
  }
  return ReadBuffers::kPrefer;
}

bool Http2Session::KeepsReadBuffer() const {
  // While a request body is arriving the next read likely brings more of
  // it: keep filling the buffer views were cut from rather than pinning a
  // fresh one per read.
  if (!conn_->read_buffers().holds()) return false;  // no allocator, or none held
  for (const auto& it : streams_) {
    const Stream* st = it.second.get();
    if (st->delivered && !st->remote_ended && !st->body_refused) return true;
  }
  return false;
}

void Http2Session::OnRead(const char* data, size_t len) {
  if (dead() || fatal_) return;
  if (!start_reported_) {
    // The connection's first HTTP/2 bytes: the session has started for
    // the embedder, whatever its first frame does (a SETTINGS nghttp2
    // refuses ends the connection before any other event).
    start_reported_ = true;
    if (Http2Delegate* d = conn_->listener()->delegate()->http2()) {
      d->OnSessionStart(this);
      if (dead()) return;
    }
  }
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
      if (r == NGHTTP2_ERR_FLOODED) Refused(ServerMetrics::kFlood);
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
  if (kind == kDeadlineWsIdle) CheckWsDeadlines();
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
  if (!deferred_resets_.empty() && !dead()) {
    std::vector<int32_t> ids;
    ids.swap(deferred_resets_);
    for (int32_t id : ids) {
      Stream* st = Find(id);
      if (st == nullptr || !st->reset_deferred) continue;
      st->reset_deferred = false;
      nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, id,
                                st->reset_code);
    }
    SendPending();
  }
  in_flush_ = false;
  if (dead()) return;
  bool want_write = nghttp2_session_want_write(session_) != 0;
  if ((!nghttp2_session_want_read(session_) && !want_write) ||
      ((fatal_ || goaway_ || eof_) && streams_.empty() && !want_write)) {
    if (destroy_after_flush_) {
      conn_->Destroy();
    } else {
      conn_->EndGracefully();
    }
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
      case Event::kFrameError:
        // Not Find(): the reset may have closed the stream in the same
        // send; its kClose is queued after this event.
        d->OnStreamFrameError(this, e.id, static_cast<uint8_t>(e.status),
                              e.code);
        break;
      case Event::kBodyDone:
        break;
    }
  }
  l->EndDispatch();
}

// ---- nghttp2 callbacks: output -----------------------------------------------------

int Http2Session::OnFrameNotSendCb(nghttp2_session* session,
                                   const nghttp2_frame* frame,
                                   int lib_error_code, void* user) {
  Http2Session* self = From(user);
  if (frame->hd.type != NGHTTP2_HEADERS ||
      lib_error_code != NGHTTP2_ERR_FRAME_SIZE_ERROR) {
    return 0;
  }
  Stream* st = self->Find(frame->hd.stream_id);
  if (st == nullptr) return 0;
  if (st->delivered) {
    self->events_.push_back({Event::kFrameError, st->id,
                             NGHTTP2_FRAME_SIZE_ERROR, nullptr,
                             NGHTTP2_HEADERS});
  }
  nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, st->id,
                            NGHTTP2_FRAME_SIZE_ERROR);
  return 0;
}

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

int Http2Session::OnFrameSendCb(nghttp2_session* session,
                                const nghttp2_frame* frame, void* user) {
  if (frame->hd.type == NGHTTP2_RST_STREAM) {
    // Every reset the server sends passes here, whoever decided it:
    // nghttp2 (stream errors), the frame rules, or the embedder. NO_ERROR
    // (a refused body's end) and REFUSED_STREAM (nothing was processed)
    // cost no handler work.
    uint32_t code = frame->rst_stream.error_code;
    Http2Session* self = From(user);
    // REFUSED_STREAM before any GOAWAY of ours: nghttp2 refusing a stream
    // past SETTINGS_MAX_CONCURRENT_STREAMS.
    if (code == NGHTTP2_REFUSED_STREAM && !self->goaway_) self->Refused(ServerMetrics::kStreamLimit);
    if (code == NGHTTP2_NO_ERROR || code == NGHTTP2_REFUSED_STREAM) return 0;
    Stream* st = self->Find(frame->hd.stream_id);
    if (st != nullptr && (st->embedder_reset || st->cancel_submitted)) return 0;
    self->NoteProvokedReset(st);
    return 0;
  }
  if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM) == 0) return 0;
  if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) {
    return 0;
  }
  Http2Session* self = From(user);
  Stream* st = self->Find(frame->hd.stream_id);
  if (st == nullptr) return 0;
  st->end_stream_sent = true;
  if (st->reset_after_response &&
      (!st->remote_ended || st->reset_code != NGHTTP2_NO_ERROR)) {
    // The response is complete: the rest of a refused body is not wanted
    // (RFC 9113 8.1, NO_ERROR), or the embedder's reset follows it.
    nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, st->id,
                              st->reset_code);
  }
  return 0;
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
  if (st->log) st->log->body_bytes += len;
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
    st->start_ns = uv_hrtime();
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
  if (!st || st->too_large || st->calm) return 0;
  st->header_bytes += namelen + valuelen;
  const ServerOptions& o = self->conn_->listener()->options();
  if ((o.http2_max_header_pairs != 0 &&
       st->fields.size() >= o.http2_max_header_pairs) ||
      (o.http2_max_header_list_size != 0 &&
       st->header_bytes > o.http2_max_header_list_size)) {
    // node:http2's answer to its own limits: the stream is reset
    // ENHANCE_YOUR_CALM and never reaches the handler (OnFrameRecvCb);
    // the rest of the block is still decoded (HPACK state) and dropped.
    st->calm = true;
    st->arena.clear();
    st->fields.clear();
    nghttp2_submit_rst_stream(self->session_, NGHTTP2_FLAG_NONE, st->id,
                              NGHTTP2_ENHANCE_YOUR_CALM);
    self->conn_->MarkDirty();
    return 0;
  }
  if (st->header_bytes > o.max_header_size) {
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
      if (st->calm) return 0;  // reset in OnHeaderCb
      if (frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
        if (end_stream) st->remote_ended = true;
        if (st->too_large) {
          // As HTTP/1.1's 431; the handler never sees the stream.
          HeaderList h;
          h.AddStatus(431);
          nghttp2_submit_response(session, id, h.nv(), h.size(), nullptr);
          st->responded = true;
          return 0;
        }
        if (!self->RequestAllowed(*st)) {
          self->RefuseMalformed(st);
          return 0;
        }
        self->DeliverHeaders(st, end_stream);
      } else if (end_stream) {
        st->remote_ended = true;
        if (!TrailersAllowed(*st)) {
          self->RefuseMalformed(st);
          return 0;
        }
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
    case NGHTTP2_PING: {
      Http2Delegate* d = self->conn_->listener()->delegate()->http2();
      if (d) {
        d->OnPing(self, frame->ping.opaque_data,
                  (frame->hd.flags & NGHTTP2_FLAG_ACK) != 0);
      }
      break;
    }
    case NGHTTP2_SETTINGS: {
      Http2Delegate* d = self->conn_->listener()->delegate()->http2();
      if (d) d->OnSettings(self, (frame->hd.flags & NGHTTP2_FLAG_ACK) != 0);
      break;
    }
    case NGHTTP2_GOAWAY: {
      self->conn_->listener()->metrics().h2_goaways_received++;
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

int Http2Session::OnInvalidHeaderCb(nghttp2_session*, const nghttp2_frame*,
                                    const uint8_t*, size_t, const uint8_t*,
                                    size_t, uint8_t, void*) {
  // nghttp2 would drop the field and go on; HTTP/3 refuses the request
  // (RequestRules), so HTTP/2 does too: a stream error PROTOCOL_ERROR.
  return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
}

bool Http2Session::RequestAllowed(const Stream& st) const {
  // Straight from the arena: no Http2Fields is built for this.
  RequestRules rules(conn_->listener()->options().http2_connect_protocol);
  for (const Stream::Field& f : st.fields) {
    if (!rules.Field(st.Name(f), st.Value(f))) return false;
  }
  return rules.End();
}

bool Http2Session::TrailersAllowed(const Stream& st) {
  for (const Stream::Field& f : st.fields) {
    if (!TrailerFieldOk(st.Name(f), st.Value(f))) return false;
  }
  return true;
}

void Http2Session::Refused(ServerMetrics::Refusal reason) {
  conn_->listener()->metrics().refused[ServerMetrics::kHttp2][reason]++;
}

void Http2Session::RefuseMalformed(Stream* st) {
  // As nghttp2 answers the rules it checks itself: RST_STREAM
  // PROTOCOL_ERROR (RFC 9113 8.1.1), counted against the provoked-reset
  // budget when the embedder already has the stream (trailers).
  st->fields.clear();
  Refused(ServerMetrics::kBadRequest);
  nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, st->id,
                            NGHTTP2_PROTOCOL_ERROR);
  if (st->delivered) NoteProvokedReset(st);
  conn_->MarkDirty();
}

void Http2Session::DeliverHeaders(Stream* st, bool end_stream) {
  Http2Fields fields = st->Collect();
  for (const auto& f : fields) {
    if (f.first == ":method") {
      st->head_request = f.second == "HEAD";
      st->metrics_method = ServerMetrics::MethodOf(f.second);
      break;
    }
  }
  if (conn_->listener()->access_log() != nullptr) st->log = NewLogEntry(fields);
  // A content-length over maxRequestBodySize is refused before any body
  // byte (as HTTP/1.1); the handler still gets the stream.
  bool too_large = false;
  if (!end_stream) {
    uint64_t limit = conn_->listener()->options().max_request_body_size;
    for (const auto& f : fields) {
      if (f.first == "content-length") {
        uint64_t n = 0;
        bool digits = !f.second.empty() && f.second.size() <= 19;
        for (char c : f.second) {
          if (c < '0' || c > '9') digits = false;
          else n = n * 10 + static_cast<uint64_t>(c - '0');
        }
        too_large = digits && n > limit;
        break;
      }
    }
  }
  int32_t id = st->id;
  if (end_stream && !too_large && conn_->listener()->static_files() != nullptr &&
      TryStatic(st, fields)) {
    if (Stream* s = Find(id)) {
      // Swapped with an empty string, not shrink_to_fit(): libstdc++ 11+
      // implements that with reserve(), a GLIBCXX_3.4.29 import the
      // glibc baseline forbids (core/common/glibc_baseline.h).
      std::string().swap(s->arena);
      s->fields.clear();
      s->fields.shrink_to_fit();
    }
    return;
  }
  st->delivered = true;
  Http2Delegate* d = conn_->listener()->delegate()->http2();
  if (d) d->OnStream(this, id, fields, end_stream);
  // `st` may be gone now (reset from the handler); do not touch it.
  if (Stream* s = Find(id)) {
    std::string().swap(s->arena);
    s->fields.clear();
    s->fields.shrink_to_fit();
    if (too_large && !s->body_refused && !conn_->destroyed()) RefuseBody(s);
  }
}

std::unique_ptr<AccessLogEntry> Http2Session::NewLogEntry(const Http2Fields& fields) {
  auto e = std::make_unique<AccessLogEntry>();
  if (log_peer_.empty()) {
    int port = 0;
    int family = 0;
    conn_->GetPeer(&log_peer_, &port, &family);
  }
  e->remote_addr = log_peer_;
  e->protocol = "HTTP/2.0";
  for (const auto& f : fields) {
    if (f.first == ":method") e->method = std::string(f.second);
    else if (f.first == ":path") e->url = std::string(f.second);
    else e->NoteHeader(f.first, f.second);
  }
  return e;
}

void Http2Session::DeliverEnd(Stream* st) {
  if (st->websocket != nullptr) {
    st->websocket->OnPeerEnd();
    return;
  }
  // A refused body never ends: the embedder was told it failed.
  if (!st->delivered || st->body_refused) return;
  Http2Fields trailers = st->Collect();
  Http2Delegate* d = conn_->listener()->delegate()->http2();
  if (d) d->OnStreamEnd(this, st->id, trailers);
}

int Http2Session::OnDataChunkRecvCb(nghttp2_session* session, uint8_t,
                                    int32_t id, const uint8_t* data,
                                    size_t len, void* user) {
  Http2Session* self = From(user);
  Stream* st = self->Find(id);
  if (!st || !st->delivered || st->body_refused) {
    nghttp2_session_consume(session, id, len);  // nobody's: both windows
    return 0;
  }
  if (st->websocket != nullptr) {
    // A WebSocket's frames, parsed now (the bytes are not kept): the
    // connection window is credited at once, the stream's unless the
    // WebSocket is paused (then when it resumes, as a request body).
    nghttp2_session_consume_connection(session, len);
    if (st->read_paused) {
      st->unacked += len;
    } else {
      nghttp2_session_consume_stream(session, id, len);
    }
    st->websocket->OnData(reinterpret_cast<const char*>(data), len);
    return self->conn_->destroyed() ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
  }
  st->body_bytes += len;
  if (st->body_bytes >
      self->conn_->listener()->options().max_request_body_size) {
    // None of this chunk is delivered (as HTTP/1.1's chunked bodies).
    nghttp2_session_consume(session, id, len);
    self->RefuseBody(st);
    return self->conn_->destroyed() ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
  }
  // Bytes in the embedder's read buffer are handed out as a view; their
  // windows are credited when the embedder gives them back (Consume). The
  // prescan's carry-over and the shared buffer are copied: the connection
  // window follows their arrival (one paused stream must not stall the
  // others), the stream window their consumption.
  const char* p = reinterpret_cast<const char*>(data);
  ReadBuffers& rb = self->conn_->read_buffers();
  int64_t offset = -1;
  if (rb.Contains(p, len)) {
    offset = p - rb.base();
    rb.NoteViewCut();
  } else {
    nghttp2_session_consume_connection(session, len);
  }
  Http2Delegate* d = self->conn_->listener()->delegate()->http2();
  if (d) {
    d->OnStreamData(self, id, p, len, offset);
  } else if (offset >= 0) {
    nghttp2_session_consume_connection(session, len);
    offset = -1;
  }
  if (self->conn_->destroyed()) return NGHTTP2_ERR_CALLBACK_FAILURE;
  if (offset >= 0) return 0;
  st = self->Find(id);
  if (st && st->read_paused) {
    st->unacked += len;
  } else {
    nghttp2_session_consume_stream(session, id, len);
  }
  return 0;
}

void Http2Session::RefuseBody(Stream* st) {
  int32_t id = st->id;
  st->body_refused = true;
  Refused(ServerMetrics::kBodyTooLarge);
  // Bytes held back for a paused reader are no longer anyone's.
  if (st->unacked > 0) {
    nghttp2_session_consume_stream(session_, id, st->unacked);
    st->unacked = 0;
  }
  int status = 0;
  if (!st->responded) {
    // As HTTP/1.1's 413; the handler's own response is refused from now
    // on (responded).
    HeaderList h;
    h.AddStatus(413);
    st->responded = true;
    st->no_body = true;
    st->ended = true;
    st->compressor.reset();
    nghttp2_submit_response(session_, id, h.nv(), h.size(), nullptr);
    status = 413;
  }
  // The client is asked to stop sending with RST_STREAM(NO_ERROR) once
  // the response is complete (RFC 9113 8.1; OnFrameSendCb): one queued now
  // would make nghttp2 drop the response (it marks the stream closing at
  // submit time).
  st->reset_after_response = true;
  conn_->MarkDirty();
  Http2Delegate* d = conn_->listener()->delegate()->http2();
  if (d) d->OnStreamBodyTooLarge(this, id, status);
}

int Http2Session::OnInvalidFrameRecvCb(nghttp2_session*,
                                       const nghttp2_frame* frame, int,
                                       void* user) {
  Http2Session* self = From(user);
  // node's maxSessionInvalidFrames: past it the session is closed (GOAWAY
  // ENHANCE_YOUR_CALM), whatever the streams.
  if (++self->invalid_frames_ >
      self->conn_->listener()->options().http2_max_invalid_frames) {
    self->destroy_after_flush_ = true;
    self->Terminate(NGHTTP2_ENHANCE_YOUR_CALM);
    return 0;
  }
  // Only streams the embedder was given: their handler's work is what a
  // provoked reset wastes. The reset itself is counted here, not again
  // when it is sent (provoked).
  Stream* st = self->Find(frame->hd.stream_id);
  if (st != nullptr && st->delivered) self->NoteProvokedReset(st);
  return 0;
}

void Http2Session::NoteProvokedReset(Stream* st) {
  if (st != nullptr) {
    if (st->provoked) return;
    st->provoked = true;
  }
  if (goaway_ || dead()) return;
  if (provoked_resets_.Take(uv_now(conn_->listener()->loop()))) return;
  // Inside nghttp2's input or output processing: the GOAWAY is queued
  // (OnFlush sends it), fatal_ stops Feed before the next frame.
  Refused(ServerMetrics::kFlood);
  Terminate(NGHTTP2_ENHANCE_YOUR_CALM);
}

int Http2Session::OnStreamCloseCb(nghttp2_session*, int32_t id,
                                  uint32_t error_code, void* user) {
  Http2Session* self = From(user);
  auto it = self->streams_.find(id);
  if (it == self->streams_.end()) return 0;
  std::unique_ptr<Stream> st = std::move(it->second);
  self->streams_.erase(it);
  ServerMetrics& metrics = self->conn_->listener()->metrics();
  const uint64_t now = uv_hrtime();
  metrics.RecordResponse(ServerMetrics::kHttp2, static_cast<ServerMetrics::Method>(st->metrics_method),
                         st->status, st->start_ns, now);
  AccessLog* log = self->conn_->listener()->access_log();
  if (st->log && log != nullptr && st->status != 0) {
    log->Write(*st->log, st->status, static_cast<double>(now - st->start_ns) / 1e9);
  }
  if (st->client_reset) metrics.h2_resets_received++;
  else if (error_code != NGHTTP2_NO_ERROR) metrics.h2_resets_sent++;
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

void Http2Session::Shutdown(const uint8_t* opaque, size_t opaque_len) {
  if (dead() || goaway_) return;
  goaway_ = true;
  goaway_last_id_ = nghttp2_session_get_last_proc_stream_id(session_);
  nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE, goaway_last_id_,
                        NGHTTP2_NO_ERROR, opaque, opaque_len);
  conn_->listener()->metrics().h2_goaways_sent++;
  conn_->MarkDirty();
  // A WebSocket never finishes by itself: each is closed with 1001 (going
  // away), its stream ends after the close handshake. Closing only queues
  // frames: the stream map does not change while it is walked.
  for (auto& it : streams_) {
    if (it.second->websocket != nullptr) it.second->websocket->OnGoingAway();
  }
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
  conn_->listener()->metrics().h2_goaways_sent++;
  conn_->MarkDirty();
}

// ---- session control ----------------------------------------------------------

int Http2Session::SubmitPing(const uint8_t* payload) {
  if (dead()) return kResultClosed;
  int r = nghttp2_submit_ping(session_, NGHTTP2_FLAG_NONE, payload);
  conn_->MarkDirty();
  return r == 0 ? kResultOk : kResultInvalid;
}

int Http2Session::SubmitSettings(const nghttp2_settings_entry* iv, size_t n) {
  if (dead()) return kResultClosed;
  int r = nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, iv, n);
  conn_->MarkDirty();
  return r == 0 ? kResultOk : kResultInvalid;
}

uint32_t Http2Session::Setting(int32_t id, bool remote) const {
  if (session_ == nullptr) return 0;
  const auto which = static_cast<nghttp2_settings_id>(id);
  return remote ? nghttp2_session_get_remote_settings(session_, which)
                : nghttp2_session_get_local_settings(session_, which);
}

int Http2Session::SetLocalWindowSize(int32_t size) {
  if (dead()) return kResultClosed;
  int r = nghttp2_session_set_local_window_size(session_, NGHTTP2_FLAG_NONE, 0, size);
  conn_->MarkDirty();
  return r == 0 ? kResultOk : kResultInvalid;
}

int Http2Session::SubmitAltsvc(int32_t id, std::string_view origin,
                               std::string_view value) {
  if (dead()) return kResultClosed;
  int r = nghttp2_submit_altsvc(
      session_, NGHTTP2_FLAG_NONE, id,
      reinterpret_cast<const uint8_t*>(origin.data()), origin.size(),
      reinterpret_cast<const uint8_t*>(value.data()), value.size());
  conn_->MarkDirty();
  return r == 0 ? kResultOk : kResultInvalid;
}

int Http2Session::SubmitOrigin(std::string_view origins_lines) {
  if (dead()) return kResultClosed;
  std::vector<nghttp2_origin_entry> ov;
  size_t p = 0;
  while (p < origins_lines.size()) {
    size_t e = origins_lines.find('\n', p);
    if (e == std::string_view::npos) e = origins_lines.size();
    // nghttp2 copies the entries before it returns.
    ov.push_back({reinterpret_cast<uint8_t*>(const_cast<char*>(origins_lines.data() + p)),
                  e - p});
    p = e + 1;
  }
  int r = nghttp2_submit_origin(session_, NGHTTP2_FLAG_NONE, ov.data(), ov.size());
  conn_->MarkDirty();
  return r == 0 ? kResultOk : kResultInvalid;
}

int32_t Http2Session::StreamLocalWindowSize(int32_t id) const {
  if (session_ == nullptr) return 0;
  int32_t n = nghttp2_session_get_stream_local_window_size(session_, id);
  return n < 0 ? 0 : n;
}

void Http2Session::State(double out[kStateFields]) const {
  for (int i = 0; i < kStateFields; i++) out[i] = 0;
  nghttp2_session* s = session_;
  if (s == nullptr) return;
  out[0] = nghttp2_session_get_effective_local_window_size(s);
  out[1] = nghttp2_session_get_effective_recv_data_length(s);
  out[2] = nghttp2_session_get_next_stream_id(s);
  out[3] = nghttp2_session_get_local_window_size(s);
  out[4] = nghttp2_session_get_last_proc_stream_id(s);
  out[5] = nghttp2_session_get_remote_window_size(s);
  out[6] = static_cast<double>(nghttp2_session_get_outbound_queue_size(s));
  out[7] = static_cast<double>(nghttp2_session_get_hd_deflate_dynamic_table_size(s));
  out[8] = static_cast<double>(nghttp2_session_get_hd_inflate_dynamic_table_size(s));
}

// ---- serveStatic ------------------------------------------------------------

bool Http2Session::TryStatic(Stream* st, const Http2Fields& fields) {
  std::string_view method, path;
  for (const auto& f : fields) {
    if (f.first == ":method") method = f.second;
    else if (f.first == ":path") path = f.second;
  }
  const bool head = method == "HEAD";
  if ((!head && method != "GET") || path.empty()) return false;
  StaticLookup* raw = conn_->listener()->static_files()->Match(path, head);
  if (raw == nullptr) return false;
  StaticLookupPtr lookup(raw);
  for (const auto& f : fields) {
    if (f.first.empty() || f.first[0] == ':') continue;
    raw->TakeHeader(f.first, f.second);  // HTTP/2 names are lower case
  }
  const int32_t id = st->id;
  // kAnswered: OnStaticAnswer ran inside Begin; kFallThrough: not ours.
  const StaticLookup::Start started = raw->Begin(this, static_cast<uint64_t>(id));
  if (started != StaticLookup::kPending) return started == StaticLookup::kAnswered;
  Stream* s = Find(id);
  if (s == nullptr) return true;
  s->static_fields.reserve(fields.size());
  for (const auto& f : fields) {
    s->static_fields.emplace_back(std::string(f.first), std::string(f.second));
  }
  s->static_lookup = std::move(lookup);
  return true;
}

void Http2Session::OnStaticAnswer(uint64_t tag, StaticAnswer& a) {
  const int32_t id = static_cast<int32_t>(tag);
  Stream* st = Find(id);
  Listener* l = conn_->listener();
  StaticAnswerDispatch scope(l, st != nullptr ? &st->static_lookup : nullptr);
  if (scope.async()) st->static_fields.clear();
  if (st == nullptr || dead()) {
    if (a.body != nullptr) a.body->Close();
  } else {
    HeaderList h;
    h.AddStatus(a.status);
    // Date as HTTP/1.1's answers and node's respond() add it.
    ForEachAnswerField(a, l->date().Value(), l->alt_svc(),
                       [&h](std::string_view n, std::string_view v) { h.Add(n, v); });
    int r = Respond(id, a.status, h,
                    a.body != nullptr ? 0u : static_cast<uint32_t>(kH2EndStream));
    if (a.body != nullptr) {
      if (r == kResultOk) {
        StartPipeBody(id, a.body, nullptr);
      } else {
        a.body->Close();
      }
    }
  }
}

void Http2Session::OnStaticFallThrough(uint64_t tag) {
  const int32_t id = static_cast<int32_t>(tag);
  Stream* st = Find(id);
  if (st == nullptr || st->static_lookup == nullptr) return;
  StaticLookupPtr done = std::move(st->static_lookup);
  std::vector<std::pair<std::string, std::string>> saved;
  saved.swap(st->static_fields);
  Http2Fields fields;
  fields.reserve(saved.size());
  for (const auto& f : saved) fields.emplace_back(f.first, f.second);
  Listener* l = conn_->listener();
  l->BeginDispatch();
  st->delivered = true;
  Http2Delegate* d = l->delegate()->http2();
  if (d) d->OnStream(this, id, fields, true);
  l->EndDispatch();
}

}  // namespace sluice
