#include "core/http3/http3_session.h"

#include <cstring>

#include "core/http3/http3_compression.h"
#include "core/http3/http3_pipe_body.h"
#include "core/http3/varint.h"
#include "core/stream/request_rules.h"

namespace sluice {

using http3::FrameReader;
using http3::FrameType;
using http3::H3Error;
using http3::HeaderField;

namespace {

constexpr uint64_t kTypeData = static_cast<uint64_t>(FrameType::kData);
constexpr uint64_t kTypeHeaders = static_cast<uint64_t>(FrameType::kHeaders);
constexpr uint64_t kTypeSettings = static_cast<uint64_t>(FrameType::kSettings);
constexpr uint64_t kTypeGoaway = static_cast<uint64_t>(FrameType::kGoaway);
constexpr uint64_t kTypeCancelPush = static_cast<uint64_t>(FrameType::kCancelPush);
constexpr uint64_t kTypeMaxPushId = static_cast<uint64_t>(FrameType::kMaxPushId);
constexpr uint64_t kTypePushPromise = static_cast<uint64_t>(FrameType::kPushPromise);

constexpr uint64_t kErr(H3Error e) { return static_cast<uint64_t>(e); }

// The longest HEADERS frame a request stream takes: one longer than the
// field-section limit is skipped unread and answered 431 (skipping costs
// no memory: with no dynamic table a section changes no QPACK state), but
// past this bound it is H3_EXCESSIVE_LOAD, so a peer cannot keep a stream
// busy with an endless head.
uint64_t HardHeadersFrameLimit(uint64_t limit) {
  constexpr uint64_t kMinSlack = 16 * 1024;
  if (limit > UINT64_MAX / 4) return UINT64_MAX;
  uint64_t hard = limit * 4;
  return hard - limit < kMinSlack ? limit + kMinSlack : hard;
}

// The largest DATA frame a file body is cut into (a pipe buffer's size):
// smaller when the stream's send buffer has less room, so that the frame
// usually fits whole.
constexpr size_t kBodyFrameMax = 128 * 1024;

// HTTP/2's frame types with no HTTP/3 meaning (RFC 9114 §7.2.8): an error
// wherever they appear.
bool Http2OnlyType(uint64_t t) { return t == 0x2 || t == 0x6 || t == 0x8 || t == 0x9; }

}  // namespace

QuicAppCodes Http3Session::QuicCodes() {
  QuicAppCodes c;
  c.no_error = kErr(H3Error::kNoError);
  c.internal_error = kErr(H3Error::kInternal);
  c.cancelled = kErr(H3Error::kRequestCancelled);
  c.stream_refused = kErr(H3Error::kRequestRejected);
  return c;
}

// ---- a request stream ------------------------------------------------------

struct Http3Session::Request final : FrameReader::Listener {
  Request(Http3Session* sess, QuicStream* st, uint64_t max_field)
      : session(sess),
        stream(st),
        id(st->id()),
        reader(this, HardHeadersFrameLimit(max_field)),
        max_field_section(max_field),
        open_count(&sess->metrics().streams_open[ServerMetrics::kHttp3]),
        start_ns(uv_hrtime()) {
    ++*open_count;
  }
  ~Request() override { --*open_count; }

  H3Error OnFrameHeader(uint64_t type, uint64_t length) override {
    if (type == kTypeData) {
      if (phase != kBody) return H3Error::kFrameUnexpected;
      return H3Error::kNoError;
    }
    if (type == kTypeHeaders) {
      // Longer than the limit: every field section encodes in fewer bytes
      // than its RFC 9204 size (name + value + 32 per line) unless its
      // encoder inflates it on purpose, so it is skipped unread, not
      // buffered, and gets the 431 the decoder would give it.
      bool oversized = length > max_field_section;
      if (phase == kHead) {
        skip_section = oversized;
        return H3Error::kNoError;
      }
      if (phase == kBody) {
        phase = kTrailers;
        // Trailers cannot be answered: the handler has the head.
        return oversized ? H3Error::kMessage : H3Error::kNoError;
      }
      return H3Error::kFrameUnexpected;  // after trailers
    }
    if (type == kTypeSettings || type == kTypeGoaway || type == kTypeCancelPush ||
        type == kTypeMaxPushId || type == kTypePushPromise || Http2OnlyType(type)) {
      return H3Error::kFrameUnexpected;
    }
    return H3Error::kNoError;  // unknown and reserved types are ignored
  }

  H3Error OnFramePayload(uint64_t type, const uint8_t* data, size_t len,
                         bool frame_end) override {
    if (type == kTypeHeaders) {
      if (skip_section) {
        if (frame_end) {
          skip_section = false;
          session->HeadTooLarge(this);
        }
        return H3Error::kNoError;
      }
      fields_in.append(reinterpret_cast<const char*>(data), len);
      if (!frame_end) return H3Error::kNoError;
      return session->OnHead(this);
    }
    if (type == kTypeData) {
      if (too_large) return H3Error::kNoError;  // answered 431: the body is dropped
      body_bytes += len;
      if (has_length && body_bytes > content_length) {
        message_error = true;
        return H3Error::kNoError;
      }
      if (len == 0 || message_error) return H3Error::kNoError;
      if (!head_delivered) DeliverHead(false);
      if (!closed && !body_discard) {
        // A payload in the stream's hold is lent out as a view: it counts
        // against the limits until the embedder gives it back (Consume).
        int64_t offset = hold.Offset(data, len);
        if (offset >= 0) {
          hold.views = true;
          hold.held += len;
          session->held_total_ += len;
        }
        session->delegate_->OnStreamData(session, id, data, len, offset);
      }
    }
    return H3Error::kNoError;
  }

  void DeliverHead(bool end_stream) {
    head_delivered = true;
    Http3Fields view;
    view.reserve(fields.size());
    for (const HeaderField& f : fields) view.emplace_back(f.name, f.value);
    session->delegate_->OnStream(session, id, view, end_stream);
    if (end_stream) ended = true;
  }

  enum Phase { kHead, kBody, kTrailers };
  Http3Session* session;
  QuicStream* stream;
  uint64_t id;
  FrameReader reader;
  uint64_t max_field_section;
  Phase phase = kHead;
  bool skip_section = false;            // a HEADERS frame past the limit, dropped
  std::string fields_in;                // the HEADERS payload being assembled
  std::vector<HeaderField> fields;      // the decoded head (then trailers)
  bool head_ready = false;              // decoded, not yet delivered
  bool head_delivered = false;
  bool ended = false;                   // OnStreamEnd (or end_stream) delivered
  bool fin = false;                     // the request's data ended
  bool paused = false;
  bool is_head = false;
  bool has_length = false;
  bool message_error = false;
  bool body_discard = false;
  bool too_large = false;               // head over the limit: 431, never delivered
  uint64_t content_length = 0;
  uint64_t body_bytes = 0;
  Http3BodyHold hold;                   // read memory from the embedder
  bool feeding = false;                 // inside reader.Feed (ReadRequest)
  // Output.
  std::string out;                      // framed bytes not yet taken by QUIC
  bool responded = false;
  bool no_body = false;                 // HEAD, or a 204/304 head: no DATA
  Http3PipeBody* body = nullptr;        // a native file body (owned)
  bool body_ended = false;              // End called (or the head ended it): no more DATA
  bool wait_for_trailers = false;       // respond({ waitForTrailers }): FIN after SendTrailers
  bool trailers_due = false;            // body ended with wait_for_trailers
  bool want_trailers_told = false;      // OnStreamWantTrailers delivered
  bool notified = false;                // in the session's notify_ list
  // Response compression: the streaming compressor, or a whole body on
  // the threadpool (whose head waits in it). Freed with the request.
  std::unique_ptr<Http3Compression> compression;
  // End came while compression work was queued: the body ends (and these
  // trailers go) once the compressor reports it finished.
  bool end_after_compress = false;
  std::vector<HeaderField> end_trailers;
  bool out_fin = false;                 // FIN queued after `out`
  bool out_done = false;                // FIN handed to QUIC
  bool drain_wanted = false;
  bool closed = false;                  // OnStreamClose delivered
  // serveStatic: the lookup while its job runs (its deleter cancels it:
  // no answer reaches a request that went away), and a fall-through whose
  // head waits for the next pass (Attend delivers `fields`).
  StaticLookupPtr static_lookup;
  bool static_deliver = false;
  // Metrics (ServerMetrics, the endpoint's): its open-stream gauge (the
  // endpoint outlives its connections' sessions and their requests), the
  // request's method, its response's status (0: none sent) and when the
  // stream opened; recorded once (RecordDone).
  uint64_t* open_count;
  uint64_t start_ns;
  uint8_t metrics_method = ServerMetrics::kOther;
  int status = 0;
  bool recorded = false;
};

// What the client's control stream tells (the frame and ID rules are
// ControlStreamReader's): nothing this server acts on yet — its SETTINGS
// only bound what we send (no dynamic table is used either way), its
// GOAWAY names a push id (we push nothing).
class Http3Session::ControlFrames final : public http3::ControlStreamReader::Delegate {
 public:
  H3Error OnSettings(const http3::Settings& s) override {
    (void)s;
    return H3Error::kNoError;
  }
  H3Error OnGoaway(uint64_t id) override {
    (void)id;
    return H3Error::kNoError;
  }
};

// A unidirectional stream the peer opened: its type, then the reader of
// its kind (control, QPACK encoder, QPACK decoder).
struct Http3Session::UniIn {
  uint8_t type_buf[8];
  size_t type_len = 0;
  bool typed = false;
  uint64_t type = 0;
  ControlFrames control_delegate;
  std::unique_ptr<http3::ControlStreamReader> control;
  std::unique_ptr<http3::QpackEncoderStreamReader> qpack_encoder;
  std::unique_ptr<http3::QpackDecoderStreamReader> qpack_decoder;
};

// ---- Http3Session ----------------------------------------------------------

Http3Session::Http3Session(QuicConnection* conn, Http3Delegate* delegate,
                           const Http3Limits& limits, std::shared_ptr<StaticFiles> static_files,
                           DateCache* date)
    : conn_(conn),
      delegate_(delegate),
      limits_(limits),
      static_files_(std::move(static_files)),
      date_(date) {}

Http3Session::~Http3Session() {
  // OnConnectionClose dropped every body; this covers a session deleted
  // without it (no pass reached it).
  for (auto& it : requests_) DropBody(it.second.get());
}

void Http3Session::AppendFrame(std::string* out, uint64_t type, const std::string& payload) {
  uint8_t hdr[16];
  size_t n = http3::WriteFrameHeader(hdr, type, payload.size());
  out->append(reinterpret_cast<const char*>(hdr), n);
  out->append(payload);
}

void Http3Session::SendOnStream(QuicStream* s, std::string* pending) {
  if (s == nullptr || pending->empty()) return;
  ptrdiff_t n = s->Write(reinterpret_cast<const uint8_t*>(pending->data()), pending->size(),
                         false);
  if (n < 0) {
    ConnectionError(H3Error::kClosedCriticalStream, "critical stream lost");
    return;
  }
  pending->erase(0, static_cast<size_t>(n));
}

void Http3Session::OnConnectionReady() {
  // Our control stream: its type, then SETTINGS (RFC 9114 §6.2.1). The
  // QPACK streams announce themselves and stay silent (no dynamic table).
  control_ = conn_->OpenUniStream();
  qpack_enc_ = conn_->OpenUniStream();
  qpack_dec_ = conn_->OpenUniStream();
  if (control_ == nullptr || qpack_enc_ == nullptr || qpack_dec_ == nullptr) {
    ConnectionError(H3Error::kStreamCreation, "cannot open critical streams");
    return;
  }
  uint8_t b[8];
  control_out_.assign(reinterpret_cast<const char*>(b),
                      http3::WriteVarint(b, static_cast<uint64_t>(http3::UniStreamType::kControl)));
  http3::Settings mine;
  mine.max_field_section_size = limits_.max_field_section_size;
  std::string payload;
  http3::SerializeSettings(mine, &payload);
  AppendFrame(&control_out_, kTypeSettings, payload);
  SendOnStream(control_, &control_out_);
  std::string t(1, static_cast<char>(http3::UniStreamType::kQpackEncoder));
  SendOnStream(qpack_enc_, &t);
  t.assign(1, static_cast<char>(http3::UniStreamType::kQpackDecoder));
  SendOnStream(qpack_dec_, &t);
}

void Http3Session::OnStreamOpen(QuicStream* s) {
  dead_.clear();
  if (!s->bidi()) {
    uni_in_[s] = std::make_unique<UniIn>();
    return;
  }
  if (!s->peer_initiated()) return;
  if (going_away_) {
    // After GOAWAY: not processed, the client may retry it elsewhere.
    s->Reset(kErr(H3Error::kRequestRejected));
    s->Release();
    return;
  }
  auto r = std::make_unique<Request>(this, s, limits_.max_field_section_size);
  s->user_data = r.get();
  if (!any_request_ || s->id() > max_request_id_seen_) max_request_id_seen_ = s->id();
  any_request_ = true;
  requests_[s->id()] = std::move(r);
}

Http3Session::Request* Http3Session::Find(uint64_t id) const {
  auto it = requests_.find(id);
  return it == requests_.end() ? nullptr : it->second.get();
}

bool Http3Session::Writable(const Request* r) const {
  return r != nullptr && !r->closed && !closed_;
}

void Http3Session::OnStreamReadable(QuicStream* s) {
  dead_.clear();
  if (closed_) return;
  if (s->bidi()) {
    auto* r = static_cast<Request*>(s->user_data);
    if (r == nullptr || r->fin) return;
    if (!r->paused) {
      ReadRequest(r);
    } else if (s->PollReset()) {
      // Unread, a paused request would never see the client's reset.
      ResetWhileHeldBack(r);
    }
    return;
  }
  auto it = uni_in_.find(s);
  if (it != uni_in_.end()) ReadUni(s, it->second.get());
}

void Http3Session::ReadRequest(Request* r) {
  uint8_t stack[16384];
  uint64_t id = r->id;
  for (;;) {
    uint8_t* buf = stack;
    size_t cap = sizeof(stack);
    if (limits_.body_allocator) {
      if (!ReadTarget(r, stack, sizeof(stack), &buf, &cap)) {
        r = Find(id);
        if (r == nullptr || closed_) return;
        // Held back (a limit, a dry pool): the client's reset must still
        // end the request and give its memory back.
        if (r->stream->PollReset()) {
          ResetWhileHeldBack(r);
          return;
        }
        break;
      }
      r = Find(id);  // the allocator ran (user code)
      if (r == nullptr || closed_) return;
    }
    ptrdiff_t n = r->stream->Read(buf, cap);
    if (n == QuicStream::kBlocked) break;
    if (n == QuicStream::kReset) {
      CloseRequest(r, r->stream->reset_code());
      return;
    }
    if (n == QuicStream::kFin) {
      r->fin = true;
      ReleaseHold(r);
      r = Find(id);
      if (r == nullptr || closed_) return;
      if (!r->reader.AtFrameBoundary() || r->phase == Request::kHead) {
        // A truncated frame, or no header section at all: malformed.
        Reset(id, kErr(r->phase == Request::kHead && r->reader.AtFrameBoundary()
                           ? H3Error::kRequestIncomplete
                           : H3Error::kFrame));
        return;
      }
      if (r->has_length && r->body_bytes != r->content_length) r->message_error = true;
      if (r->message_error) {
        Reset(id, kErr(H3Error::kMessage));
        return;
      }
      if (r->too_large) {
        MaybeFinish(r);  // the 431 is out (or going): nothing to deliver
        return;
      }
      DeliverEnd(r);
      return;
    }
    if (buf != stack) r->hold.used += static_cast<size_t>(n);
    Request* fed = r;  // stays allocated (dead_) until the next entry
    r->feeding = true;
    H3Error e = r->reader.Feed(buf, static_cast<size_t>(n));
    fed->feeding = false;
    // The delegate may have closed the request meanwhile; then its hold,
    // which Feed was still parsing, is released only now.
    r = Find(id);
    if (r == nullptr || closed_) {
      ReleaseHold(fed);
      return;
    }
    if (buf != stack) {
      AfterHoldRead(r);
      r = Find(id);
      if (r == nullptr || closed_) return;
    }
    if (e != H3Error::kNoError) {
      if (e == H3Error::kMessage || e == H3Error::kRequestRejected) {
        Reset(id, kErr(e));
      } else {
        ConnectionError(e, "request stream");
      }
      return;
    }
    if (r->message_error) {
      Reset(id, kErr(H3Error::kMessage));
      return;
    }
    if (r->too_large) {
      if (!r->responded) {
        metrics().refused[ServerMetrics::kHttp3][ServerMetrics::kHeadersTooLarge]++;
        const HeaderField h431[] = {{":status", "431"}, {"content-length", "0"}};
        Respond(id, h431, 2, true);  // may close the request (MaybeFinish)
      }
      if (Find(id) == nullptr) return;
    }
    if (r->paused) break;
  }
  if (r->head_ready && !r->head_delivered) r->DeliverHead(false);
}

H3Error Http3Session::OnHead(Request* r) {
  std::vector<HeaderField> fields;
  http3::QpackStatus st = http3::DecodeFieldSection(
      reinterpret_cast<const uint8_t*>(r->fields_in.data()), r->fields_in.size(),
      limits_.max_field_section_size, &fields);
  r->fields_in.clear();
  if (st == http3::QpackStatus::kDecompressionFailed) return H3Error::kQpackDecompressionFailed;
  if (st == http3::QpackStatus::kTooLarge) {
    if (r->phase == Request::kTrailers) return H3Error::kMessage;  // the handler has the head
    HeadTooLarge(r);
    return H3Error::kNoError;
  }
  if (r->phase == Request::kTrailers) {
    for (const HeaderField& f : fields) {
      if (!TrailerFieldOk(f.name, f.value)) return H3Error::kMessage;
    }
    if (!r->head_delivered) {
      // Trailers straight after the head (no DATA): the head, still in
      // r->fields, goes out first. The delegate may close the request
      // (it stays allocated until the next entry).
      r->DeliverHead(false);
      if (r->closed) return H3Error::kNoError;
    }
    r->fields = std::move(fields);
    return H3Error::kNoError;
  }
  // The rules HTTP/2 shares (core/stream/request_rules.h); no :protocol
  // is advertised, so extended CONNECT is malformed here.
  RequestRules rules(false);
  for (const HeaderField& f : fields) {
    if (!rules.Field(f.name, f.value)) return H3Error::kMessage;
  }
  if (!rules.End()) return H3Error::kMessage;
  const CheckedHead& head = rules.head();
  if (head.method == "CONNECT") return H3Error::kRequestRejected;  // not served
  r->is_head = head.method == "HEAD";
  r->metrics_method = ServerMetrics::MethodOf(head.method);
  r->has_length = head.has_content_length;
  r->content_length = head.content_length;
  r->fields = std::move(fields);
  r->phase = Request::kBody;
  r->head_ready = true;
  return H3Error::kNoError;
}

void Http3Session::HeadTooLarge(Request* r) {
  // RFC 9114 §4.2.2: a header section larger than the advertised
  // SETTINGS_MAX_FIELD_SECTION_SIZE gets a 431, as on HTTP/1.1 and
  // HTTP/2; nothing past the limit was kept. ReadRequest answers once
  // this Feed returns; the body (if any) is read and dropped until the
  // stream is released.
  r->too_large = true;
  r->phase = Request::kBody;
  r->body_discard = true;
}

void Http3Session::DeliverEnd(Request* r) {
  uint64_t id = r->id;
  if (!r->head_delivered) {
    r->head_ready = false;
    // A bodiless GET / HEAD under a mount never reaches the delegate.
    if (TryStatic(r)) return;
    r->DeliverHead(true);  // the whole request in one: no body
    r = Find(id);
    if (r != nullptr) MaybeFinish(r);
    return;
  }
  if (r->ended) return;
  r->ended = true;
  Http3Fields trailers;
  if (r->phase == Request::kTrailers) {
    for (const HeaderField& f : r->fields) trailers.emplace_back(f.name, f.value);
  }
  delegate_->OnStreamEnd(this, id, trailers);
  r = Find(id);
  if (r != nullptr) MaybeFinish(r);
}

void Http3Session::ReadUni(QuicStream* s, UniIn* u) {
  uint8_t buf[4096];
  for (;;) {
    ptrdiff_t n = s->Read(buf, sizeof(buf));
    if (n == QuicStream::kBlocked) return;
    if (n == QuicStream::kFin || n == QuicStream::kReset) {
      bool critical = u->typed && (u->type == 0x00 || u->type == 0x02 || u->type == 0x03);
      uni_in_.erase(s);
      s->Release();
      if (critical) ConnectionError(H3Error::kClosedCriticalStream, "critical stream closed");
      return;
    }
    const uint8_t* p = buf;
    size_t len = static_cast<size_t>(n);
    if (!u->typed) {
      // The stream type varint may arrive split.
      size_t take = 0;
      while (take < len && u->type_len < sizeof(u->type_buf)) {
        u->type_buf[u->type_len++] = p[take++];
        uint64_t t;
        if (http3::ReadVarint(u->type_buf, u->type_len, &t) != 0) {
          u->typed = true;
          u->type = t;
          break;
        }
      }
      p += take;
      len -= take;
      if (!u->typed) continue;
      switch (u->type) {
        case 0x00:  // control
          if (have_peer_control_) {
            ConnectionError(H3Error::kStreamCreation, "second control stream");
            return;
          }
          have_peer_control_ = true;
          u->control = std::make_unique<http3::ControlStreamReader>(
              &u->control_delegate, http3::ControlStreamReader::Role::kServer,
              limits_.max_field_section_size);
          break;
        case 0x01:  // push: only servers push
          ConnectionError(H3Error::kStreamCreation, "push stream from a client");
          return;
        case 0x02:  // QPACK encoder: with capacity 0, only "capacity 0" is valid
          if (have_peer_qpack_encoder_) {
            ConnectionError(H3Error::kStreamCreation, "second QPACK encoder stream");
            return;
          }
          have_peer_qpack_encoder_ = true;
          u->qpack_encoder = std::make_unique<http3::QpackEncoderStreamReader>(0);
          break;
        case 0x03:  // QPACK decoder: only stream cancellations are valid
          if (have_peer_qpack_decoder_) {
            ConnectionError(H3Error::kStreamCreation, "second QPACK decoder stream");
            return;
          }
          have_peer_qpack_decoder_ = true;
          u->qpack_decoder = std::make_unique<http3::QpackDecoderStreamReader>();
          break;
        default:
          // Unknown (and reserved grease) types: ignored (RFC 9114 §6.2).
          uni_in_.erase(s);
          s->Release();
          return;
      }
    }
    if (len > 0) {
      H3Error e = u->control         ? u->control->Feed(p, len)
                  : u->qpack_encoder ? u->qpack_encoder->Feed(p, len)
                  : u->qpack_decoder ? u->qpack_decoder->Feed(p, len)
                                     : H3Error::kNoError;
      if (e != H3Error::kNoError) {
        ConnectionError(e, "control or QPACK stream");
        return;
      }
    }
  }
}

void Http3Session::OnStreamWritable(QuicStream* s) {
  dead_.clear();
  if (s == control_) {
    SendOnStream(control_, &control_out_);
    return;
  }
  auto* r = static_cast<Request*>(s->user_data);
  if (r == nullptr || !s->bidi()) return;
  uint64_t id = r->id;
  Flush(r);
  r = Find(id);
  if (r != nullptr && r->body != nullptr) PumpBody(r);
}

void Http3Session::OnStreamStopped(QuicStream* s, uint64_t code) {
  dead_.clear();
  if (closed_) return;
  if (s == control_ || s == qpack_enc_ || s == qpack_dec_) {
    // Our critical streams must stay open (RFC 9114 §6.2.1, RFC 9204 §4.2).
    ConnectionError(H3Error::kClosedCriticalStream, "critical stream stopped");
    return;
  }
  auto* r = static_cast<Request*>(s->user_data);
  if (r == nullptr || !s->bidi()) return;
  // The client will read no more of the response (a cancelled download):
  // the request is over, whether or not the response was blocked on flow
  // control or not yet started. A file body stops here (its fd is closed
  // once the reads in flight finish), the handler hears the close. A
  // STOP_SENDING with H3_NO_ERROR still cuts the response short.
  CloseRequest(r, code == kErr(H3Error::kNoError) ? kErr(H3Error::kRequestCancelled) : code);
}

void Http3Session::OnPass() {
  dead_.clear();
  if (closed_) return;
  if (!notify_.empty()) {
    std::vector<uint64_t> ids;
    ids.swap(notify_);
    for (uint64_t id : ids) {
      Request* r = Find(id);
      if (r == nullptr) continue;
      r->notified = false;
      Attend(r);
      if (closed_) return;
    }
  }
  if (woken_.empty()) return;
  std::vector<uint64_t> ids;
  ids.swap(woken_);
  for (uint64_t id : ids) {
    Request* r = Find(id);
    if (r == nullptr || r->body == nullptr) continue;
    r->body->woken = false;
    PumpBody(r);
  }
}

void Http3Session::WakeBody(uint64_t id) {
  Request* r = Find(id);
  if (r == nullptr || r->body == nullptr || r->body->woken) return;
  r->body->woken = true;
  woken_.push_back(id);
  // Outside a pass (a file read completing on the loop): the endpoint runs
  // one on this loop turn; inside one, another round follows.
  conn_->endpoint()->RequestFlush();
}

int Http3Session::StartPipeBody(uint64_t id, PipeSource* source, PipeBodyListener* listener) {
  Request* r = Find(id);
  const int err = !Writable(r)                          ? kResultClosed
                  : !r->responded                       ? kResultHeadersNotSent
                  : r->body_ended || r->body != nullptr ? kResultEnded
                  : r->no_body                          ? kResultNoBody
                                                        : kResultOk;
  if (err != kResultOk) {
    source->Close();
    return err;
  }
  r->body_ended = true;
  // A native source brings its own compressor (CompressTransform).
  r->compression.reset();
  r->body = new Http3PipeBody(this, id, source, listener);
  // The first pull happens in a pass (WakeBody), not here: this call comes
  // from JS, and a source may answer from inside Start.
  r->body->Start();
  WakeBody(id);
  return kResultOk;
}

void Http3Session::PumpBody(Request* r) {
  uint64_t id = r->id;
  // One frame at a time, each handed to QUIC whole unless the stream's
  // buffer filled up: then its rest waits in `out` (at most one frame)
  // and OnStreamWritable resumes.
  while (r->body != nullptr && !r->closed && r->out.empty() &&
         !r->stream->write_blocked()) {
    uint64_t room = r->stream->WriteRoom();
    size_t max = kBodyFrameMax;
    if (room > 16 && room - 16 < max) max = static_cast<size_t>(room - 16);
    PipeSlice slice;
    ssize_t n = r->body->pipe()->Pull(max, &slice);
    if (n == kPipeWouldBlock) return;  // OnPipeReadable wakes it
    if (n == kPipeEof || n < 0) {
      FinishBody(r, n == kPipeEof ? 0 : static_cast<int>(n));
      return;
    }
    uint8_t hdr[16];
    size_t hn = http3::WriteFrameHeader(hdr, kTypeData, static_cast<uint64_t>(n));
    bool ok = WriteBody(r, hdr, hn) &&
              WriteBody(r, reinterpret_cast<const uint8_t*>(slice.data), slice.len);
    slice.buf->Unref();
    if (!ok) {
      // The stream can no longer be written (the peer stopped it).
      CloseRequest(r, kErr(H3Error::kRequestCancelled));
      return;
    }
    r = Find(id);
    if (r == nullptr) return;
  }
}

bool Http3Session::WriteBody(Request* r, const uint8_t* data, size_t len) {
  if (!r->out.empty()) {
    r->out.append(reinterpret_cast<const char*>(data), len);
    return true;
  }
  ptrdiff_t n = r->stream->Write(data, len, false);
  if (n < 0) return false;
  if (static_cast<size_t>(n) < len) {
    r->out.append(reinterpret_cast<const char*>(data) + n, len - static_cast<size_t>(n));
  }
  return true;
}

void Http3Session::FinishBody(Request* r, int status) {
  uint64_t id = r->id;
  Http3PipeBody* b = r->body;
  r->body = nullptr;
  PipeBodyListener* l = b->TakeListener();
  b->Destroy();  // the source closes its file once its reads are done
  if (status == 0) {
    // Every byte is framed: the FIN (or the trailers) follows them. The
    // listener hears of it before the stream's close (as on HTTP/2, where
    // the end is reported once the last DATA frame is queued).
    EndOutput(r, nullptr, 0);
    if (l != nullptr) l->OnPipeBodyDone(0);
    r = Find(id);
    if (r != nullptr) Flush(r);
    return;
  }
  // The file failed mid-body (truncated, an I/O error): the client must
  // see a failed response, never a short one that looks complete.
  Reset(id, kErr(H3Error::kInternal));
  if (l != nullptr) l->OnPipeBodyDone(status);
}

void Http3Session::DropBody(Request* r) {
  Http3PipeBody* b = r->body;
  if (b == nullptr) return;
  r->body = nullptr;
  PipeBodyListener* l = b->TakeListener();
  b->Destroy();
  if (l != nullptr) l->OnPipeBodyDone(UV_ECANCELED);
}

void Http3Session::Flush(Request* r) {
  if (r->out_done || r->closed) return;
  if (!r->out.empty() || r->out_fin) {
    ptrdiff_t n = r->stream->Write(reinterpret_cast<const uint8_t*>(r->out.data()),
                                   r->out.size(), r->out_fin);
    if (n < 0) {
      CloseRequest(r, kErr(H3Error::kRequestCancelled));
      return;
    }
    r->out.erase(0, static_cast<size_t>(n));
    if (r->out.empty() && r->out_fin) r->out_done = true;
  }
  uint64_t id = r->id;
  if (r->drain_wanted && !Backlogged(r)) {
    r->drain_wanted = false;
    delegate_->OnStreamDrain(this, id);
    r = Find(id);
    if (r == nullptr) return;
  }
  MaybeFinish(r);
}

void Http3Session::MaybeFinish(Request* r) {
  if (!r->out_done || r->closed) return;
  if (!r->ended && !r->fin) {
    // The response is complete before the request: the rest of the
    // request is not needed (RFC 9114 §4.1: STOP_SENDING with
    // H3_NO_ERROR, which OpenSSL sends when the stream is freed).
    r->body_discard = true;
  }
  CloseRequest(r, kErr(H3Error::kNoError));
}

ServerMetrics& Http3Session::metrics() const { return conn_->endpoint()->metrics(); }

void Http3Session::NoteStatus(Request* r, const HeaderField* fields, size_t n) {
  if (n == 0 || fields[0].name != ":status") return;
  int status = 0;
  for (char c : fields[0].value) status = c >= '0' && c <= '9' ? status * 10 + (c - '0') : 1000;
  r->status = status;
}

void Http3Session::RecordDone(Request* r) {
  if (r->recorded) return;
  r->recorded = true;
  metrics().RecordResponse(ServerMetrics::kHttp3, static_cast<ServerMetrics::Method>(r->metrics_method),
                           r->status, r->start_ns, uv_hrtime());
}

void Http3Session::CloseRequest(Request* r, uint64_t code) {
  uint64_t id = r->id;
  QuicStream* s = r->stream;
  bool tell = r->head_delivered && !r->closed;
  r->closed = true;
  RecordDone(r);
  // A file body still running stops here (its fd is released once the
  // reads in flight are done); its listener hears UV_ECANCELED. So does
  // compression: a job a worker still runs is freed when it returns.
  DropBody(r);
  r->compression.reset();
  r->static_lookup.reset();  // a lookup in flight is cancelled: no answer comes
  r->static_deliver = false;
  s->user_data = nullptr;
  // Not answered: the stream is reset so the client is not left waiting.
  if (!r->out_done) s->Reset(code == kErr(H3Error::kNoError) ? kErr(H3Error::kRequestCancelled)
                                                             : code);
  s->Release();
  // Kept until the next entry from the connection: this may run inside
  // the request's own FrameReader::Feed (a delegate that answered from
  // OnStream or OnStreamData).
  dead_.push_back(std::move(requests_[id]));
  requests_.erase(id);
  // Its read memory goes back before the close is told; the request is no
  // longer findable, so nothing the embedder does meanwhile reaches it.
  // Not while this stream's bytes are being parsed (a delegate that reset
  // it from OnStreamData): the embedder could free the buffer under
  // FrameReader::Feed; ReadRequest releases it once Feed returns.
  if (!r->feeding) ReleaseHold(r);
  if (tell) delegate_->OnStreamClose(this, id, code);
  if (going_away_ && requests_.empty() && !closed_) conn_->Close(kErr(H3Error::kNoError), "");
}

void Http3Session::ResetWhileHeldBack(Request* r) {
  CloseRequest(r, r->stream->reset_code());
  if (closed_) return;
  // OpenSSL 3.5 frees a stream's receive buffer on RESET_STREAM without
  // retiring the bytes it held (or that were in flight up to the final
  // size) from the connection-level flow controller, so the peer's
  // connection window shrinks by them for good; enough such resets and
  // every stream of the connection stalls. A connection that lost credit
  // this way is retired: GOAWAY, its open requests finish, new ones go to a
  // new connection.
  Goaway();
}

void Http3Session::ConnectionError(H3Error e, const char* why) {
  if (closed_) return;
  conn_->Close(kErr(e), why);
}

// ---- request bodies in embedder memory --------------------------------------

uint64_t Http3Session::BodyBudget(const Request* r) const {
  uint64_t s = limits_.body_stream_limit > r->hold.held ? limits_.body_stream_limit - r->hold.held : 0;
  uint64_t c = limits_.body_connection_limit > held_total_
                   ? limits_.body_connection_limit - held_total_
                   : 0;
  return s < c ? s : c;
}

bool Http3Session::ReadTarget(Request* r, uint8_t* stack, size_t stack_len, uint8_t** dst,
                              size_t* cap) {
  *dst = stack;
  *cap = stack_len;
  // Bytes that are never delivered (a 431's body, a bad message) and the
  // FIN or a reset with nothing before it take no embedder memory. Asking
  // only when bytes wait keeps idle streams, polled on every pass, from
  // calling the allocator.
  if (body_failed_) return false;  // the connection is closing
  if (r->too_large || r->message_error || r->body_discard) return true;
  size_t pending = r->stream->Pending();
  if (pending == 0) return true;
  bool in_body = r->phase != Request::kHead;
  uint64_t budget = BodyBudget(r);
  if (budget == 0) {
    if (!in_body) return true;  // a head still gets through (as a copy)
    // At a limit: unread, the stream's bytes keep the peer's QUIC windows
    // shut until views are given back (Consume asks for another pass).
    body_stalled_ = true;
    return false;
  }
  if (r->hold.waiting) return !in_body;  // a dry pool: until RetryBodyBuffers
  if (!r->hold.holds()) {
    uint8_t* base = nullptr;
    size_t len = 0;
    uint64_t id = r->id;
    Http3BufferResult res =
        delegate_->AcquireBodyBuffer(this, id, limits_.body_buffer_size, &base, &len);
    r = Find(id);
    if (r == nullptr || closed_ || r->closed) return false;
    switch (res) {
      case Http3BufferResult::kOk:
        if (base == nullptr || len == 0) return true;
        r->hold.Take(base, len);
        break;
      case Http3BufferResult::kFallback:
        return true;
      case Http3BufferResult::kDry:
        // Heads (and what of a body shares their read) are copied, so
        // requests without a body keep flowing; a body waits for memory
        // rather than growing copies without bound (as HTTP/1.1's; HTTP/2
        // copies instead because its connection's control frames share the
        // socket — here they have streams of their own).
        r->hold.waiting = true;
        return !in_body;
      case Http3BufferResult::kError:
        body_failed_ = true;
        ConnectionError(H3Error::kInternal, "request body allocator failed");
        return false;
    }
  }
  *dst = r->hold.base + r->hold.used;
  *cap = r->hold.room();
  // Never lend more than the limits allow: a read's DATA payload is at
  // most its size.
  if (*cap > budget) *cap = static_cast<size_t>(budget);
  return true;
}

void Http3Session::AfterHoldRead(Request* r) {
  bool in_body = r->phase != Request::kHead && !r->fin && !r->too_large && !r->message_error;
  if (!r->hold.Keep(in_body, limits_.body_buffer_min_free)) ReleaseHold(r);
}

void Http3Session::ReleaseHold(Request* r) {
  if (!r->hold.holds()) return;
  r->hold.Forget();
  delegate_->ReleaseBodyBuffer(this, r->id);
}

void Http3Session::Consume(uint64_t id, size_t n) {
  if (closed_ || n == 0) return;
  held_total_ -= n < held_total_ ? n : held_total_;
  Request* r = Find(id);
  if (r != nullptr) r->hold.held -= n < r->hold.held ? n : r->hold.held;
  if (body_stalled_) {
    // Some stream was left unread at a limit: the next pass reads on
    // (a pass inside this one when called from a delegate call).
    body_stalled_ = false;
    conn_->endpoint()->RequestFlush();
  }
}

void Http3Session::RetryBodyBuffers() {
  if (closed_) return;
  bool any = false;
  for (auto& it : requests_) {
    if (it.second->hold.waiting) {
      it.second->hold.waiting = false;
      any = true;
    }
  }
  if (any) conn_->endpoint()->RequestFlush();
}

int Http3Session::Respond(uint64_t id, const HeaderField* fields, size_t n, bool end,
                          bool wait_for_trailers) {
  Request* r = Find(id);
  if (!Writable(r)) return kResultClosed;
  if (r->responded) return kResultHeadersSent;
  r->responded = true;
  r->wait_for_trailers = wait_for_trailers;
  WriteHead(r, fields, n, end);
  return kResultOk;
}

void Http3Session::WriteHead(Request* r, const HeaderField* fields, size_t n, bool end) {
  NoteStatus(r, fields, n);
  r->no_body = r->is_head;
  if (n > 0 && fields[0].name == ":status" &&
      (fields[0].value == "204" || fields[0].value == "304")) {
    r->no_body = true;
  }
  if (r->no_body) r->compression.reset();
  std::string block;
  http3::EncodeFieldSection(fields, n, &block);
  AppendFrame(&r->out, kTypeHeaders, block);
  if (end) {
    r->body_ended = true;
    EndOutput(r, nullptr, 0);
  }
  Flush(r);
}

void Http3Session::AppendData(Request* r, const uint8_t* data, size_t len) {
  if (len == 0 || r->no_body) return;
  uint8_t hdr[16];
  size_t hn = http3::WriteFrameHeader(hdr, kTypeData, len);
  r->out.append(reinterpret_cast<const char*>(hdr), hn);
  r->out.append(reinterpret_cast<const char*>(data), len);
}

void Http3Session::EndOutput(Request* r, const HeaderField* trailers, size_t n) {
  if (n > 0) {
    std::string block;
    http3::EncodeFieldSection(trailers, n, &block);
    AppendFrame(&r->out, kTypeHeaders, block);
  } else if (r->wait_for_trailers) {
    // The handler sends them from 'wantTrailers' (SendTrailers); told in
    // the next pass, not from inside the call that ended the body.
    r->trailers_due = true;
    Notify(r);
    return;
  }
  r->out_fin = true;
}

bool Http3Session::Backlogged(const Request* r) const {
  return r->out.size() >= limits_.high_water ||
         (r->compression != nullptr &&
          r->compression->pending_bytes() > CompressStream::kHighWater);
}

void Http3Session::Notify(Request* r) {
  if (r->notified) return;
  r->notified = true;
  notify_.push_back(r->id);
  // Outside a pass (a compression job returning on the loop): the
  // endpoint runs one on this loop turn; inside one, another round follows.
  conn_->endpoint()->RequestFlush();
}

void Http3Session::Attend(Request* r) {
  uint64_t id = r->id;
  if (r->static_deliver) {
    // A mount's lookup fell through (OnStaticFallThrough): the request
    // goes to the delegate as if there were no mount.
    r->static_deliver = false;
    r->DeliverHead(true);
    r = Find(id);
    if (r == nullptr) return;
    MaybeFinish(r);
    r = Find(id);
    if (r == nullptr) return;
  }
  if (r->compression != nullptr) {
    CompressionReady(r);
    r = Find(id);
    if (r == nullptr) return;
  }
  if (r->trailers_due && !r->want_trailers_told && !r->closed) {
    r->want_trailers_told = true;
    delegate_->OnStreamWantTrailers(this, id);
    r = Find(id);
    if (r == nullptr) return;
  }
  if (r->out_fin && !r->out_done) Flush(r);  // SendTrailers' section and FIN
}

int Http3Session::Informational(uint64_t id, const HeaderField* fields, size_t n) {
  Request* r = Find(id);
  if (!Writable(r)) return kResultClosed;
  if (r->responded) return kResultHeadersSent;
  std::string block;
  http3::EncodeFieldSection(fields, n, &block);
  AppendFrame(&r->out, kTypeHeaders, block);
  Flush(r);
  return kResultOk;
}

int Http3Session::Write(uint64_t id, const uint8_t* data, size_t len, ExternalRef* ref) {
  Request* r = Find(id);
  int err = kResultOk;
  if (!Writable(r)) {
    err = kResultClosed;
  } else if (!r->responded) {
    err = kResultHeadersNotSent;
  } else if (r->body_ended || r->body != nullptr) {
    err = kResultEnded;
  }
  if (err != kResultOk || len == 0 || r->no_body) {
    if (ref != nullptr) ref->Release();
    return err;
  }
  if (r->compression != nullptr && r->compression->streaming()) {
    // Small writes with nothing queued are compressed now; the others on
    // the threadpool, in order (CompressionReady frames their output).
    std::string out;
    int cr = r->compression->Write(data, len, ref, &out);
    if (cr < 0) {
      Reset(id, kErr(H3Error::kInternal));
      return kResultInvalid;
    }
    if (cr != CompressStream::kInline) {
      if (Backlogged(r)) r->drain_wanted = true;
      return kResultOk;
    }
    AppendData(r, reinterpret_cast<const uint8_t*>(out.data()), out.size());
  } else {
    AppendData(r, data, len);
    if (ref != nullptr) ref->Release();
  }
  Flush(r);
  r = Find(id);
  if (r != nullptr && Backlogged(r)) r->drain_wanted = true;
  return kResultOk;
}

int Http3Session::End(uint64_t id, const HeaderField* trailers, size_t n) {
  Request* r = Find(id);
  if (!Writable(r)) return kResultClosed;
  if (!r->responded) return kResultHeadersNotSent;
  if (r->body_ended || r->body != nullptr) return kResultEnded;
  r->body_ended = true;
  if (r->compression != nullptr && r->compression->streaming()) {
    std::string out;
    int cr = r->compression->Finish(&out);
    if (cr < 0) {
      Reset(id, kErr(H3Error::kInternal));
      return kResultInvalid;
    }
    if (cr != CompressStream::kInline) {
      // Behind queued work: CompressionReady ends the body once the
      // compressor has finished. Writes are refused from now on.
      r->end_after_compress = true;
      r->end_trailers.assign(trailers, trailers + n);
      return kResultOk;
    }
    r->compression.reset();  // its state (up to ~1 MiB for brotli) goes now
    AppendData(r, reinterpret_cast<const uint8_t*>(out.data()), out.size());
  }
  EndOutput(r, trailers, n);
  Flush(r);
  return kResultOk;
}

int Http3Session::SendTrailers(uint64_t id, const HeaderField* trailers, size_t n) {
  Request* r = Find(id);
  if (!Writable(r)) return kResultClosed;
  if (!r->trailers_due || r->out_fin) return kResultInvalid;
  r->trailers_due = false;
  r->wait_for_trailers = false;
  EndOutput(r, trailers, n);
  // Handed to QUIC in the next pass (this loop turn), not here: the FIN
  // would close the request, and its 'close' would reach JS from inside
  // sendTrailers() — node:http2 closes the stream later, so a second
  // sendTrailers() there reports the trailers sent, not the stream gone.
  Notify(r);
  return kResultOk;
}

// ---- response compression ----------------------------------------------------

int Http3Session::StartCompression(uint64_t id, const CompressParams& params) {
  Request* r = Find(id);
  if (!Writable(r)) return kResultClosed;
  // Before or after Respond (the compat res makes its compressor before
  // the head leaves); WriteHead drops it if the head says there is no body.
  if (r->body_ended || r->body != nullptr || r->compression != nullptr) return kResultInvalid;
  if (r->responded && r->no_body) return kResultOk;  // nothing to compress
  auto c = std::make_unique<Http3Compression>(this, id);
  if (!c->StartStream(conn_->endpoint()->loop(), params)) return kResultInvalid;
  r->compression = std::move(c);
  return kResultOk;
}

int Http3Session::FlushCompression(uint64_t id) {
  Request* r = Find(id);
  if (!Writable(r)) return kResultClosed;
  if (r->compression == nullptr || !r->compression->streaming() || r->body_ended) {
    return kResultOk;
  }
  // Ordered after the writes before it: inline when nothing is queued,
  // else its output comes through CompressionReady.
  std::string out;
  int cr = r->compression->Flush(&out);
  if (cr < 0) {
    Reset(id, kErr(H3Error::kInternal));
    return kResultInvalid;
  }
  if (out.empty()) return kResultOk;
  AppendData(r, reinterpret_cast<const uint8_t*>(out.data()), out.size());
  Flush(r);
  return kResultOk;
}

int Http3Session::RespondCompressed(uint64_t id, std::vector<HeaderField>&& head,
                                    CompressJob* job, std::vector<HeaderField>&& trailers,
                                    bool wait_for_trailers) {
  Request* r = Find(id);
  const int err = !Writable(r) ? kResultClosed : r->responded ? kResultHeadersSent : kResultOk;
  if (err != kResultOk) {
    job->Destroy();
    return err;
  }
  r->responded = true;
  r->wait_for_trailers = wait_for_trailers;
  if (job->input_size() < CompressJob::kAsyncThreshold) {
    if (job->RunInline() != 0) {
      job->Destroy();
      return kResultInvalid;
    }
    SendCompressed(r, head, job, trailers);
    return kResultOk;
  }
  // Marked responded and ended now (a second respond fails, writes are
  // refused); written once the work is done (CompressionReady).
  r->body_ended = true;
  auto c = std::make_unique<Http3Compression>(this, id);
  c->head = std::move(head);
  c->trailers = std::move(trailers);
  if (c->QueueBody(conn_->endpoint()->loop(), job) != 0) return kResultInvalid;
  r->compression = std::move(c);
  return kResultOk;
}

void Http3Session::SendCompressed(Request* r, std::vector<HeaderField>& head, CompressJob* job,
                                  std::vector<HeaderField>& trailers) {
  uint64_t id = r->id;
  size_t n = job->output_size();
  head.push_back({"content-length", std::to_string(n)});
  r->body_ended = true;
  // The head and the body are framed before anything is flushed: one
  // Flush hands both to QUIC.
  NoteStatus(r, head.data(), head.size());
  r->no_body = r->is_head;
  if (!head.empty() && head[0].name == ":status" &&
      (head[0].value == "204" || head[0].value == "304")) {
    r->no_body = true;
  }
  std::string block;
  http3::EncodeFieldSection(head.data(), head.size(), &block);
  AppendFrame(&r->out, kTypeHeaders, block);
  AppendData(r, reinterpret_cast<const uint8_t*>(job->output()), n);
  job->Destroy();
  EndOutput(r, trailers.data(), trailers.size());
  r = Find(id);
  if (r != nullptr) Flush(r);
}

void Http3Session::CompressionReady(Request* r) {
  uint64_t id = r->id;
  Http3Compression::Ready rd;
  r->compression->TakeReady(&rd);
  if (rd.error != 0) {
    if (rd.job != nullptr) rd.job->Destroy();
    Reset(id, kErr(H3Error::kInternal));
    return;
  }
  if (rd.job != nullptr) {
    // The whole body is compressed: head, body and end now.
    std::unique_ptr<Http3Compression> c = std::move(r->compression);
    SendCompressed(r, c->head, rd.job, c->trailers);
    return;
  }
  AppendData(r, reinterpret_cast<const uint8_t*>(rd.out.data()), rd.out.size());
  if (rd.finished) {
    r->compression.reset();
    if (r->end_after_compress) {
      r->end_after_compress = false;
      std::vector<HeaderField> t = std::move(r->end_trailers);
      EndOutput(r, t.data(), t.size());
    }
  }
  Flush(r);  // the output, and a drain once the backlog is under its bounds
}

void Http3Session::OnCompressionReady(uint64_t id) {
  Request* r = Find(id);
  if (r != nullptr && !closed_) Notify(r);
}

int Http3Session::Reset(uint64_t id, uint64_t code) {
  Request* r = Find(id);
  if (r == nullptr || r->closed) return kResultClosed;
  r->out.clear();
  r->stream->Reset(code);
  r->out_done = false;
  CloseRequest(r, code);
  return kResultOk;
}

bool Http3Session::NeedsDrain(uint64_t id) {
  Request* r = Find(id);
  return r != nullptr && r->drain_wanted;
}

bool Http3Session::IsHeadRequest(uint64_t id) {
  Request* r = Find(id);
  return r != nullptr && r->is_head;
}

void Http3Session::Pause(uint64_t id, bool paused) {
  Request* r = Find(id);
  if (r == nullptr) return;
  r->paused = paused;
  // Unread data holds QUIC's stream window shut: that is the
  // backpressure. Resuming reads on the next pass.
  if (!paused) conn_->endpoint()->RequestFlush();
}

void Http3Session::Goaway() {
  if (going_away_ || closed_) return;
  going_away_ = true;
  // The first request id not processed (RFC 9114 §5.2).
  uint64_t next = any_request_ ? max_request_id_seen_ + 4 : 0;
  std::string payload;
  uint8_t b[8];
  payload.assign(reinterpret_cast<const char*>(b), http3::WriteVarint(b, next));
  AppendFrame(&control_out_, kTypeGoaway, payload);
  SendOnStream(control_, &control_out_);
  // Nothing in flight: close once the GOAWAY has gone out, without
  // waiting for it to be acknowledged (a peer that vanished never
  // acknowledges it, and a flushing close would then hold the connection
  // until the endpoint's grace period ran out).
  if (requests_.empty()) conn_->CloseAfterSend(kErr(H3Error::kNoError), "server closing");
}

void Http3Session::OnGoingAway() { Goaway(); }

bool Http3Session::Busy() const {
  // A request counts once its head reached the handler or an answer was
  // started (a 431, a file body); one still short of its header section
  // does not.
  for (const auto& it : requests_) {
    const Request& r = *it.second;
    // A mount's lookup in flight is a request being served.
    if (r.head_delivered || r.responded || r.static_lookup != nullptr || r.static_deliver) {
      return true;
    }
  }
  return false;
}

void Http3Session::Terminate(uint64_t code) {
  if (closed_) return;
  conn_->Close(code, "");
}

void Http3Session::OnConnectionClose(uint64_t error_code, bool transport) {
  if (closed_) return;
  closed_ = true;
  uint64_t code = transport ? kErr(H3Error::kRequestCancelled) : error_code;
  while (!requests_.empty()) {
    auto it = requests_.begin();
    dead_.push_back(std::move(it->second));
    Request* r = dead_.back().get();
    requests_.erase(it);
    RecordDone(r);
    r->stream->user_data = nullptr;
    DropBody(r);
    r->compression.reset();
    r->static_lookup.reset();
    ReleaseHold(r);
    if (r->head_delivered && !r->closed) {
      r->closed = true;
      delegate_->OnStreamClose(this, r->id, code == kErr(H3Error::kNoError)
                                                ? kErr(H3Error::kRequestCancelled)
                                                : code);
    }
  }
  uni_in_.clear();
  woken_.clear();
  notify_.clear();
  delegate_->OnSessionClose(this);
}

// ---- serveStatic ------------------------------------------------------------

bool Http3Session::TryStatic(Request* r) {
  if (static_files_ == nullptr || static_files_->empty() || closed_) return false;
  std::string_view method, path;
  for (const HeaderField& f : r->fields) {
    if (f.name == ":method") method = f.value;
    else if (f.name == ":path") path = f.value;
  }
  const bool head = method == "HEAD";
  if ((!head && method != "GET") || path.empty()) return false;
  StaticLookup* raw = static_files_->Match(path, head);
  if (raw == nullptr) return false;
  StaticLookupPtr lookup(raw);
  for (const HeaderField& f : r->fields) {
    if (f.name.empty() || f.name[0] == ':') continue;
    raw->TakeHeader(f.name, f.value);  // HTTP/3 names are lower case (OnHead)
  }
  const uint64_t id = r->id;
  // kAnswered: OnStaticAnswer ran inside Begin; kFallThrough: not ours.
  const StaticLookup::Start started = raw->Begin(this, id);
  if (started != StaticLookup::kPending) return started == StaticLookup::kAnswered;
  r = Find(id);
  if (r == nullptr) return true;  // gone: `lookup` cancels it
  r->static_lookup = std::move(lookup);
  return true;
}

void Http3Session::OnStaticAnswer(uint64_t tag, StaticAnswer& a) {
  const uint64_t id = tag;
  Request* r = Find(id);
  // Kept alive until this returns: the response may close `r`.
  StaticLookupPtr done = TakeHeldLookup(r != nullptr ? &r->static_lookup : nullptr);
  const bool async = done != nullptr;
  if (!Writable(r)) {
    // Nobody to answer (a lookup is cancelled when its request goes, so
    // this is defensive): the body reference is ours to drop.
    if (a.body != nullptr) a.body->Close();
    return;
  }
  std::vector<HeaderField> h;
  h.reserve(a.headers->size() + 3);
  h.push_back({":status", std::to_string(a.status)});
  // Date as HTTP/1.1's answers; no alt-svc (this is HTTP/3).
  ForEachAnswerField(a, date_ != nullptr ? date_->Value() : std::string_view(), std::string_view(),
                     [&h](std::string_view n, std::string_view v) {
                       h.push_back({std::string(n), std::string(v)});
                     });
  // Respond may close `r` (a response without a body ends the stream);
  // nothing of it is touched afterwards.
  int rc = Respond(id, h.data(), h.size(), a.body == nullptr);
  if (a.body != nullptr) {
    if (rc != kResultOk) {
      a.body->Close();
    } else if (StartPipeBody(id, a.body, nullptr) == kResultNoBody) {
      End(id, nullptr, 0);  // HEAD: the source was closed, the stream ends
    }
    // Other StartPipeBody errors closed the source; the stream is gone.
  }
  // Outside a pass the stream writes above already asked for one; a file
  // body's first pull asked too (WakeBody). Asking again is free and keeps
  // this answer from depending on those details.
  if (async) conn_->endpoint()->RequestFlush();
}

void Http3Session::OnStaticFallThrough(uint64_t tag) {
  Request* r = Find(tag);
  if (r == nullptr || r->static_lookup == nullptr) return;
  // Freed when this returns (the lookup allows it from inside its call).
  StaticLookupPtr done = std::move(r->static_lookup);
  // Called from the job's completion, outside the endpoint's pass (and
  // its dispatch scope): the delegate hears of the request from the next
  // pass. r->fields still holds the decoded head.
  r->static_deliver = true;
  Notify(r);
}

// ---- StreamSession ------------------------------------------------------------

namespace {

// The QPACK field list of `h` (same bytes, other shape).
std::vector<http3::HeaderField> FieldsOf(const HeaderList* h) {
  std::vector<http3::HeaderField> out;
  if (h == nullptr) return out;
  out.reserve(h->size());
  for (size_t i = 0; i < h->size(); i++) {
    auto f = h->Field(i);
    out.push_back({std::string(f.first), std::string(f.second)});
  }
  return out;
}

}  // namespace

int Http3Session::Respond(uint64_t id, int, HeaderList& headers, uint32_t flags) {
  std::vector<http3::HeaderField> f = FieldsOf(&headers);
  return Respond(id, f.data(), f.size(), (flags & kH2EndStream) != 0,
                 (flags & kH2WaitForTrailers) != 0);
}

int Http3Session::SendInformational(uint64_t id, HeaderList& headers) {
  std::vector<http3::HeaderField> f = FieldsOf(&headers);
  return Informational(id, f.data(), f.size());
}

int Http3Session::Write(uint64_t id, const char* data, size_t len, ExternalRef* ref) {
  return Write(id, reinterpret_cast<const uint8_t*>(data), len, ref);
}

int Http3Session::End(uint64_t id, HeaderList* trailers) {
  std::vector<http3::HeaderField> f = FieldsOf(trailers);
  return End(id, f.data(), f.size());
}

int Http3Session::SendTrailers(uint64_t id, HeaderList& trailers) {
  std::vector<http3::HeaderField> f = FieldsOf(&trailers);
  return SendTrailers(id, f.data(), f.size());
}

int Http3Session::ResetStream(uint64_t id, uint32_t code, bool) {
  return Reset(id, http3::H3CodeOfHttp2(code));
}

int Http3Session::RespondCompressed(uint64_t id, int, HeaderList& headers, uint32_t flags,
                                    CompressJob* job, HeaderList* trailers) {
  return RespondCompressed(id, FieldsOf(&headers), job, FieldsOf(trailers),
                           (flags & kH2WaitForTrailers) != 0);
}

std::string_view Http3Session::DateValue() {
  return date_ != nullptr ? date_->Value() : std::string_view();
}

}  // namespace sluice
