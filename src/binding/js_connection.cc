#include "binding/js_connection.h"
#include "binding/js_values.h"
#include "binding/wire_protocol.h"
#include "binding/js_tls.h"

#include <string>

#include "binding/addon_data.h"
#include "core/net/listener.h"
#include "core/net/tunnel_session.h"

namespace sluice {

namespace {

// A string argument as latin1 into *out; false (and *out untouched) when
// `v` is not a string. One napi call answers both questions: a non-string
// gets napi_string_expected, so no napi_typeof comes first.
bool Latin1IfString(napi_env env, napi_value v, std::string* out) {
  size_t len = 0;
  if (napi_get_value_string_latin1(env, v, nullptr, 0, &len) != napi_ok) return false;
  out->resize(len + 1);
  napi_get_value_string_latin1(env, v, &(*out)[0], len + 1, &len);
  out->resize(len);
  return true;
}

}  // namespace

bool JsConnection::ReadBody(napi_env env, napi_value v, BodyArg* b) {
  // The common body is a string. Its length in UTF-16 units (no pass over
  // the characters) says whether the UTF-8 fits `text`: then it is
  // encoded now, in the one pass it needs; a longer one gets its UTF-8
  // length here and is encoded where it goes (AppendBody).
  size_t units = 0;
  if (napi_get_value_string_utf16(env, v, nullptr, 0, &units) == napi_ok) {
    b->value = v;
    b->is_string = true;
    size_t len = 0;
    if (units <= kShortTextUnits) {
      napi_get_value_string_utf8(env, v, b->text, sizeof b->text, &len);
      b->data = b->text;
    } else {
      napi_get_value_string_utf8(env, v, nullptr, 0, &len);
    }
    b->len = len;
    return true;
  }
  if (GetBytes(env, v, &b->data, &b->len)) {
    b->value = v;
    return true;
  }
  // Nullish: no body (value stays null); anything else cannot be sent.
  return IsNullish(env, v);
}

size_t JsConnection::BodyArg::EncodeTo(napi_env env, char* dst) const {
  size_t written = 0;
  napi_get_value_string_utf8(env, value, dst, len + 1, &written);
  return written;
}

napi_value ConnectionObject(napi_env env, Connection* c) {
  return HandleFor<JsConnection>(c, GetAddonData(env)->connection_ctor);
}

Counters& GetCounters() {
  static Counters counters;
  return counters;
}

Napi::Function JsConnection::Init(Napi::Env env) {
  return DefineClass(
      env, "NativeConnection",
      {
          InstanceMethod<&JsConnection::SeqCall<&JsConnection::Respond>>("respond"),
          InstanceMethod<&JsConnection::SeqCall<&JsConnection::Write>>("write"),
          InstanceMethod<&JsConnection::SeqCall<&JsConnection::End>>("end"),
          InstanceMethod<&JsConnection::SeqCall<&JsConnection::WriteContinue>>("writeContinue"),
          InstanceMethod<&JsConnection::SeqCall<&JsConnection::WriteInfo>>("writeInfo"),
          InstanceMethod<&JsConnection::Pause>("pause"),
          InstanceMethod<&JsConnection::Resume>("resume"),
          InstanceMethod<&JsConnection::Destroy>("destroy"),
          InstanceMethod<&JsConnection::SendError>("sendError"),
          InstanceMethod<&JsConnection::WriteRaw>("writeRaw"),
          InstanceMethod<&JsConnection::EndRaw>("endRaw"),
          InstanceMethod<&JsConnection::Peer>("peer"),
          InstanceMethod<&JsConnection::Local>("local"),
          InstanceMethod<&JsConnection::Stats>("stats"),
          InstanceMethod<&JsConnection::SetKeepAlive>("setKeepAlive"),
          InstanceMethod<&JsConnection::Tls>("tls"),
          InstanceMethod<&JsConnection::SniDone>("sniDone"),
          InstanceMethod<&JsConnection::TlsQueryMethod>("tlsQuery"),
          InstanceMethod<&JsConnection::RetryBodyBuffer>("retryBodyBuffer"),
          InstanceMethod<&JsConnection::CopyReads>("copyReads"),
          InstanceMethod<&JsConnection::Handle>("handle"),
          InstanceMethod<&JsConnection::WsAccept>("wsAccept"),
          InstanceMethod<&JsConnection::WsFeed>("wsFeed"),
          InstanceMethod<&JsConnection::WsSend>("wsSend"),
          InstanceMethod<&JsConnection::WsClose>("wsClose"),
          InstanceMethod<&JsConnection::WsBuffered>("wsBuffered"),
          InstanceMethod<&JsConnection::WsSubscribe>("wsSubscribe"),
          InstanceMethod<&JsConnection::WsUnsubscribe>("wsUnsubscribe"),
          InstanceMethod<&JsConnection::WsIsSubscribed>("wsIsSubscribed"),
          InstanceMethod<&JsConnection::WsTopics>("wsTopics"),
          InstanceMethod<&JsConnection::WsPublish>("wsPublish"),
      });
}

void JsConnection::Detach() {
  if (Connection* c = core()) {
    bytes_read_ = c->bytes_read();
    bytes_written_ = c->writer().bytes_written();
  }
  CoreWrap<JsConnection, Connection>::Detach();
}

Connection* JsConnection::alive() const {
  Connection* c = core();
  return c != nullptr && !c->destroyed() ? c : nullptr;
}

bool JsConnection::RawOk() const {
  Connection* c = core();
  if (!c || c->destroyed()) return false;
  // HTTP/1.1, a tunnel after an accepted Upgrade / CONNECT, or a
  // WebSocket (pause / resume); never the HTTP/2 session an h2c upgrade
  // switched to.
  Session* s = c->session();
  return (s != nullptr && (s->AsHttp1() != nullptr || s->AsWebSocket() != nullptr)) ||
         dynamic_cast<TunnelSession*>(s) != nullptr;
}

Http1Session* JsConnection::live() const {
  Connection* c = core();
  if (!c || c->destroyed()) return nullptr;
  // After an h2c upgrade the connection's session is an Http2Session: the
  // HTTP/1.1 objects of earlier requests must then find no session.
  Session* s = c->session();
  return s != nullptr ? s->AsHttp1() : nullptr;
}

int JsConnection::Result(int err) const {
  if (err < 0) return err;
  Http1Session* s = live();
  if (s && s->NeedsDrain()) {
    core()->WantDrain();
    return wire::kResultWaitDrain;
  }
  return 0;
}

int JsConnection::AppendBody(uint32_t seq, const BodyArg& body) {
  napi_env env = Env();
  Http1Session* s = live();
  if (!s) return kResultClosed;
  int err = 0;
  Counters& counters = GetCounters();
  const size_t len = body.len;
  OutputQueue* q = s->BeginBody(seq, len, &err);
  if (!q) return err;
  if (body.is_string && !body.EncodedText()) {
    // Encoded straight into the output buffer: no intermediate Buffer.
    const size_t written = body.EncodeTo(env, q->Reserve(len + 1));
    q->Commit(written);
    counters.body_bytes_copied += written;
  } else if (len < kCopyBelow || body.EncodedText()) {
    q->Append(body.data, len);
    counters.body_bytes_copied += len;
  } else {
    q->AppendExternal(body.data, len, new NapiValueRef(env, body.value));
    counters.body_bytes_referenced += len;
  }
  s->EndBody(seq);
  return kResultOk;
}

int JsConnection::Respond(const Napi::CallbackInfo& info, Http1Session* s,
                          uint32_t seq) {
  napi_value a[6];
  for (size_t i = 0; i < 6; i++) a[i] = info[i];
  return RespondArgs(info.Env(), a, s, seq);
}

Napi::Value JsConnection::Handle(const Napi::CallbackInfo& info) {
  napi_value out = nullptr;
  napi_create_external(info.Env(), this, nullptr, nullptr, &out);
  return Napi::Value(info.Env(), out);
}

napi_value JsConnection::RespondFast(napi_env env, napi_callback_info cbinfo) {
  // Missing arguments read as undefined (napi_get_cb_info fills them).
  napi_value argv[7];
  size_t argc = 7;
  napi_get_cb_info(env, cbinfo, &argc, argv, nullptr, nullptr);
  int r = kResultClosed;
  void* p = nullptr;
  if (napi_get_value_external(env, argv[0], &p) == napi_ok && p != nullptr) {
    JsConnection* w = static_cast<JsConnection*>(p);
    uint32_t seq = 0;
    napi_get_value_uint32(env, argv[1], &seq);
    if (Http1Session* s = w->live()) r = w->RespondArgs(env, argv + 1, s, seq);
  } else {
    r = kResultInvalid;
  }
  napi_value out = nullptr;
  napi_create_int32(env, r, &out);
  return out;
}

int JsConnection::RespondArgs(napi_env env, const napi_value* a,
                              Http1Session* s, uint32_t seq) {
  uint32_t sf = 0;
  napi_get_value_uint32(env, a[1], &sf);
  int status = static_cast<int>(sf & wire::kStatusMask);
  uint32_t flags = sf >> wire::kStatusFlagsShift;
  // Strings only where lib/ passes one (a reason, a header block,
  // trailers); undefined otherwise.
  std::string text;
  Latin1IfString(env, a[2], &text);
  BodyArg body;
  if (!ReadBody(env, a[4], &body)) return kResultBadBody;
  int err = 0;
  OutputQueue* q = s->BeginHead(seq, status, text, &err);
  if (!q) return err;
  // The header block, "Name: value\r\n" lines validated by lib/, encoded
  // as latin1 (as node does) straight into the output buffer.
  napi_value block = a[3];
  size_t len = 0;
  if (napi_get_value_string_latin1(env, block, nullptr, 0, &len) == napi_ok && len > 0) {
    char* p = q->Reserve(len + 1);
    napi_get_value_string_latin1(env, block, p, len + 1, &len);
    q->Commit(len);
  }
  err = s->FinishHead(seq, flags & wire::kCoreHeadFlagsMask, body.len);
  if (err == 0 && body.len > 0) err = AppendBody(seq, body);
  if (err == 0 && (flags & wire::kHeadEnd)) {
    text.clear();
    Latin1IfString(env, a[5], &text);
    err = s->End(seq, text);
  }
  return Result(err);
}

int JsConnection::Write(const Napi::CallbackInfo& info, Http1Session* s,
                        uint32_t seq) {
  (void)s;
  BodyArg body;
  if (!ReadBody(info.Env(), info[1], &body) || body.value == nullptr) return kResultBadBody;
  return Result(AppendBody(seq, body));
}

int JsConnection::End(const Napi::CallbackInfo& info, Http1Session* s,
                      uint32_t seq) {
  napi_env env = info.Env();
  BodyArg body;
  if (!ReadBody(env, info[1], &body)) return kResultBadBody;
  int err = 0;
  if (body.value != nullptr) err = AppendBody(seq, body);
  if (err == 0) {
    std::string trailers;
    Latin1IfString(env, info[2], &trailers);
    err = s->End(seq, trailers);
  }
  return Result(err);
}

int JsConnection::WriteContinue(const Napi::CallbackInfo& info,
                                Http1Session* s, uint32_t seq) {
  (void)info;
  return s->WriteContinue(seq);
}

int JsConnection::WriteInfo(const Napi::CallbackInfo& info, Http1Session* s,
                            uint32_t seq) {
  napi_env env = info.Env();
  int status = info[1].As<Napi::Number>().Int32Value();
  std::string lines;
  if (IsString(env, info[2])) Latin1(env, info[2], &lines);
  return s->WriteInformational(seq, status, lines);
}

Napi::Value JsConnection::Pause(const Napi::CallbackInfo& info) {
  if (RawOk()) core()->Pause(Connection::kPauseUser);
  return info.Env().Undefined();
}

Napi::Value JsConnection::Resume(const Napi::CallbackInfo& info) {
  if (RawOk()) core()->Resume(Connection::kPauseUser);
  return info.Env().Undefined();
}

Napi::Value JsConnection::Destroy(const Napi::CallbackInfo& info) {
  // Any protocol: the socket of node's 'connection' event may carry
  // HTTP/2 by now.
  if (Connection* c = alive()) c->Destroy();
  return info.Env().Undefined();
}

Napi::Value JsConnection::SendError(const Napi::CallbackInfo& info) {
  Http1Session* s = live();
  if (s) s->SendErrorAndClose(info[0].As<Napi::Number>().Int32Value());
  return info.Env().Undefined();
}

Napi::Value JsConnection::WriteRaw(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  if (!RawOk() || core()->closing()) return Napi::Boolean::New(env, false);
  OutputQueue& q = core()->writer().queue();
  if (IsString(env, info[0])) {
    std::string s;
    Latin1(env, info[0], &s);
    q.Append(s.data(), s.size());
  } else {
    const char* data;
    size_t len;
    if (GetBytes(env, info[0], &data, &len)) q.Append(data, len);
  }
  core()->MarkDirty();
  // Backpressure as net.Socket#write: false once the backlog reaches the
  // high-water mark; the delegate's OnDrain follows when it empties.
  if (core()->writer().Backlog() >= core()->listener()->options().high_water_mark) {
    core()->WantDrain();
    return Napi::Boolean::New(env, false);
  }
  return Napi::Boolean::New(env, true);
}

Napi::Value JsConnection::EndRaw(const Napi::CallbackInfo& info) {
  if (info.Length() > 0 && !IsNullish(info.Env(), info[0])) WriteRaw(info);
  if (RawOk()) core()->EndGracefully();
  return info.Env().Undefined();
}

Napi::Value JsConnection::Peer(const Napi::CallbackInfo& info) {
  return Napi::Value(info.Env(), AddressArray(info.Env(), alive(), AddressKind::kPeer));
}

Napi::Value JsConnection::Local(const Napi::CallbackInfo& info) {
  return Napi::Value(info.Env(), AddressArray(info.Env(), alive(), AddressKind::kLocal));
}

Napi::Value JsConnection::RetryBodyBuffer(const Napi::CallbackInfo& info) {
  if (live()) core()->RetryReadBuffer();
  return info.Env().Undefined();
}

Napi::Value JsConnection::CopyReads(const Napi::CallbackInfo& info) {
  if (Http1Session* s = live()) s->CopyReads(true);
  return info.Env().Undefined();
}

Napi::Value JsConnection::Stats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  Connection* c = core();
  if (c) {
    o.Set("flushes", Napi::Number::New(env, static_cast<double>(c->writer().flushes())));
    o.Set("backlog", Napi::Number::New(env, static_cast<double>(c->writer().Backlog())));
    // Memory held per connection (tests of idle connections): sessions
    // a protocol switch retired and not yet freed, output buffer kept.
    o.Set("retiredSessions", Napi::Number::New(env, static_cast<double>(c->retired_sessions())));
    o.Set("outputCapacity", Napi::Number::New(
        env, static_cast<double>(c->writer().queue().inline_capacity() +
                                 c->writer().wire().inline_capacity())));
  }
  o.Set("bytesRead", Napi::Number::New(
      env, static_cast<double>(c ? c->bytes_read() : bytes_read_)));
  o.Set("bytesWritten", Napi::Number::New(
      env, static_cast<double>(c ? c->writer().bytes_written() : bytes_written_)));
  // Ending or closed: no more output will be taken (node's writableEnded).
  o.Set("ending", Napi::Boolean::New(env, c == nullptr || c->closing()));
  return o;
}

Napi::Value JsConnection::SetKeepAlive(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Connection* c = alive();
  if (!c) return Napi::Number::New(env, UV_EBADF);
  bool enable = info.Length() > 0 && info[0].ToBoolean().Value();
  double delay = info.Length() > 1 && info[1].IsNumber()
                     ? info[1].As<Napi::Number>().DoubleValue() : 0;
  unsigned int delay_s = delay >= 1 && delay < 4e9 ? static_cast<unsigned int>(delay) : 0;
  return Napi::Number::New(env, c->SetKeepAlive(enable, delay_s));
}

Napi::Value JsConnection::Tls(const Napi::CallbackInfo& info) {
  return TlsInfo(info.Env(), core());
}

Napi::Value JsConnection::TlsQueryMethod(const Napi::CallbackInfo& info) {
  return TlsQuery(info, core());
}

Napi::Value JsConnection::SniDone(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  TlsContext ctx;
  if (info.Length() > 0 && !info[0].IsNull() && !info[0].IsUndefined()) {
    ctx = UnwrapContext(env, info[0]);
    if (!ctx) {
      Napi::TypeError::New(env, "a native TLS context expected").ThrowAsJavaScriptException();
      return env.Undefined();
    }
  }
  // A connection closed meanwhile (handshakeTimeout, the client left)
  // is detached or closing: the answer is dropped.
  if (Connection* c = alive()) c->SniAnswered(std::move(ctx));
  return env.Undefined();
}

}  // namespace sluice
