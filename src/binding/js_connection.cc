#include "binding/js_connection.h"
#include "binding/js_values.h"
#include "binding/wire_protocol.h"

#include <string>

#include "binding/addon_data.h"
#include "core/net/listener.h"
#include "core/net/tunnel_session.h"

namespace sluice {

namespace {


// Byte length of a body value: a string (UTF-8) or binary view.
// Returns false for a type we cannot send.
bool BodyLength(napi_env env, napi_value v, size_t* len) {
  if (IsString(env, v)) {
    return napi_get_value_string_utf8(env, v, nullptr, 0, len) == napi_ok;
  }
  const char* data;
  return GetBytes(env, v, &data, len);
}

}  // namespace

Counters& GetCounters() {
  static Counters counters;
  return counters;
}

Napi::Function JsConnection::Init(Napi::Env env) {
  return DefineClass(
      env, "NativeConnection",
      {
          InstanceMethod<&JsConnection::Respond>("respond"),
          InstanceMethod<&JsConnection::Write>("write"),
          InstanceMethod<&JsConnection::End>("end"),
          InstanceMethod<&JsConnection::WriteContinue>("writeContinue"),
          InstanceMethod<&JsConnection::WriteInfo>("writeInfo"),
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
          InstanceMethod<&JsConnection::RetryBodyBuffer>("retryBodyBuffer"),
      });
}

JsConnection::JsConnection(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<JsConnection>(info) {}

void JsConnection::Attach(Connection* c) { conn_.Attach(c, Value()); }

void JsConnection::Detach() {
  if (Connection* c = conn_.get()) {
    bytes_read_ = c->bytes_read();
    bytes_written_ = c->writer().bytes_written();
  }
  conn_.Detach();
}

Connection* JsConnection::live() const {
  Connection* c = conn_.get();
  return c != nullptr && !c->destroyed() ? c : nullptr;
}

bool JsConnection::RawOk() const {
  Connection* c = conn_.get();
  if (!c || c->destroyed()) return false;
  // HTTP/1.1, or a tunnel after an accepted Upgrade / CONNECT; never the
  // HTTP/2 session an h2c upgrade switched to.
  Session* s = c->session();
  return dynamic_cast<Http1Session*>(s) != nullptr ||
         dynamic_cast<TunnelSession*>(s) != nullptr;
}

Http1Session* JsConnection::session() const {
  Connection* c = conn_.get();
  if (!c || c->destroyed()) return nullptr;
  // After an h2c upgrade the connection's session is an Http2Session: the
  // HTTP/1.1 objects of earlier requests must then find no session.
  return dynamic_cast<Http1Session*>(c->session());
}

int JsConnection::Result(int err) const {
  if (err < 0) return err;
  Http1Session* s = session();
  if (s && s->NeedsDrain()) {
    conn_.get()->WantDrain();
    return wire::kResultWaitDrain;
  }
  return 0;
}

int JsConnection::AppendBody(uint32_t seq, napi_value chunk) {
  napi_env env = Env();
  Http1Session* s = session();
  if (!s) return kResultClosed;
  int err = 0;
  Counters& counters = GetCounters();
  if (IsString(env, chunk)) {
    size_t len = 0;
    napi_get_value_string_utf8(env, chunk, nullptr, 0, &len);
    OutputQueue* q = s->BeginBody(seq, len, &err);
    if (!q) return err;
    // Encoded straight into the output buffer: no intermediate Buffer.
    char* p = q->Reserve(len + 1);
    size_t written = 0;
    napi_get_value_string_utf8(env, chunk, p, len + 1, &written);
    q->Commit(written);
    counters.body_bytes_copied += written;
    s->EndBody(seq);
    return kResultOk;
  }
  const char* data;
  size_t len;
  if (!GetBytes(env, chunk, &data, &len)) return kResultBadBody;
  OutputQueue* q = s->BeginBody(seq, len, &err);
  if (!q) return err;
  if (len < kCopyBelow) {
    q->Append(data, len);
    counters.body_bytes_copied += len;
  } else {
    q->AppendExternal(data, len, new NapiValueRef(env, chunk));
    counters.body_bytes_referenced += len;
  }
  s->EndBody(seq);
  return kResultOk;
}

Napi::Value JsConnection::Respond(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  Http1Session* s = session();
  if (!s) return Napi::Number::New(env, kResultClosed);
  uint32_t seq = info[0].As<Napi::Number>().Uint32Value();
  uint32_t sf = info[1].As<Napi::Number>().Uint32Value();
  int status = static_cast<int>(sf & wire::kStatusMask);
  uint32_t flags = sf >> wire::kStatusFlagsShift;
  std::string reason;
  if (IsString(env, info[2])) Latin1(env, info[2], &reason);
  napi_value body = info[4];
  bool has_body = !IsNullish(env, body);
  size_t body_len = 0;
  if (has_body && !BodyLength(env, body, &body_len)) {
    return Napi::Number::New(env, kResultBadBody);
  }
  int err = 0;
  OutputQueue* q = s->BeginHead(seq, status, reason, &err);
  if (!q) return Napi::Number::New(env, err);
  if (IsString(env, info[3])) {
    // The header block, "Name: value\r\n" lines validated by lib/, encoded
    // as latin1 (as node does) straight into the output buffer.
    napi_value block = info[3];
    size_t len = 0;
    napi_get_value_string_latin1(env, block, nullptr, 0, &len);
    if (len > 0) {
      char* p = q->Reserve(len + 1);
      napi_get_value_string_latin1(env, block, p, len + 1, &len);
      q->Commit(len);
    }
  }
  err = s->FinishHead(seq, flags & wire::kCoreHeadFlagsMask, body_len);
  if (err == 0 && has_body && body_len > 0) err = AppendBody(seq, body);
  if (err == 0 && (flags & wire::kHeadEnd)) {
    std::string trailers;
    if (IsString(env, info[5])) Latin1(env, info[5], &trailers);
    err = s->End(seq, trailers);
  }
  return Napi::Number::New(env, Result(err));
}

Napi::Value JsConnection::Write(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  if (!session()) return Napi::Number::New(env, kResultClosed);
  uint32_t seq = info[0].As<Napi::Number>().Uint32Value();
  return Napi::Number::New(env, Result(AppendBody(seq, info[1])));
}

Napi::Value JsConnection::End(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  Http1Session* s = session();
  if (!s) return Napi::Number::New(env, kResultClosed);
  uint32_t seq = info[0].As<Napi::Number>().Uint32Value();
  int err = 0;
  if (!IsNullish(env, info[1])) err = AppendBody(seq, info[1]);
  if (err == 0) {
    std::string trailers;
    if (IsString(env, info[2])) Latin1(env, info[2], &trailers);
    err = s->End(seq, trailers);
  }
  return Napi::Number::New(env, Result(err));
}

Napi::Value JsConnection::WriteContinue(const Napi::CallbackInfo& info) {
  Http1Session* s = session();
  if (!s) return Napi::Number::New(info.Env(), kResultClosed);
  uint32_t seq = info[0].As<Napi::Number>().Uint32Value();
  return Napi::Number::New(info.Env(), s->WriteContinue(seq));
}

Napi::Value JsConnection::WriteInfo(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  Http1Session* s = session();
  if (!s) return Napi::Number::New(env, kResultClosed);
  uint32_t seq = info[0].As<Napi::Number>().Uint32Value();
  int status = info[1].As<Napi::Number>().Int32Value();
  std::string lines;
  if (IsString(env, info[2])) Latin1(env, info[2], &lines);
  return Napi::Number::New(env, s->WriteInformational(seq, status, lines));
}

Napi::Value JsConnection::Pause(const Napi::CallbackInfo& info) {
  if (RawOk()) conn_.get()->Pause(Connection::kPauseUser);
  return info.Env().Undefined();
}

Napi::Value JsConnection::Resume(const Napi::CallbackInfo& info) {
  if (RawOk()) conn_.get()->Resume(Connection::kPauseUser);
  return info.Env().Undefined();
}

Napi::Value JsConnection::Destroy(const Napi::CallbackInfo& info) {
  // Any protocol: the socket of node's 'connection' event may carry
  // HTTP/2 by now.
  if (Connection* c = live()) c->Destroy();
  return info.Env().Undefined();
}

Napi::Value JsConnection::SendError(const Napi::CallbackInfo& info) {
  Http1Session* s = session();
  if (s) s->SendErrorAndClose(info[0].As<Napi::Number>().Int32Value());
  return info.Env().Undefined();
}

Napi::Value JsConnection::WriteRaw(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  if (!RawOk() || conn_.get()->closing()) return Napi::Boolean::New(env, false);
  OutputQueue& q = conn_.get()->writer().queue();
  if (IsString(env, info[0])) {
    std::string s;
    Latin1(env, info[0], &s);
    q.Append(s.data(), s.size());
  } else {
    const char* data;
    size_t len;
    if (GetBytes(env, info[0], &data, &len)) q.Append(data, len);
  }
  conn_.get()->MarkDirty();
  // Backpressure as net.Socket#write: false once the backlog reaches the
  // high-water mark; the delegate's OnDrain follows when it empties.
  if (conn_.get()->writer().Backlog() >= conn_.get()->listener()->options().high_water_mark) {
    conn_.get()->WantDrain();
    return Napi::Boolean::New(env, false);
  }
  return Napi::Boolean::New(env, true);
}

Napi::Value JsConnection::EndRaw(const Napi::CallbackInfo& info) {
  if (info.Length() > 0 && !IsNullish(info.Env(), info[0])) WriteRaw(info);
  if (RawOk()) conn_.get()->EndGracefully();
  return info.Env().Undefined();
}

Napi::Value JsConnection::Peer(const Napi::CallbackInfo& info) {
  return Napi::Value(info.Env(), AddressArray(info.Env(), live(), AddressKind::kPeer));
}

Napi::Value JsConnection::Local(const Napi::CallbackInfo& info) {
  return Napi::Value(info.Env(), AddressArray(info.Env(), live(), AddressKind::kLocal));
}

Napi::Value JsConnection::RetryBodyBuffer(const Napi::CallbackInfo& info) {
  if (session()) conn_.get()->RetryReadBuffer();
  return info.Env().Undefined();
}

Napi::Value JsConnection::Stats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  Connection* c = conn_.get();
  if (c) {
    o.Set("flushes", Napi::Number::New(env, static_cast<double>(c->writer().flushes())));
    o.Set("backlog", Napi::Number::New(env, static_cast<double>(c->writer().Backlog())));
  }
  o.Set("bytesRead", Napi::Number::New(
      env, static_cast<double>(c ? c->bytes_read() : bytes_read_)));
  o.Set("bytesWritten", Napi::Number::New(
      env, static_cast<double>(c ? c->writer().bytes_written() : bytes_written_)));
  return o;
}

Napi::Value JsConnection::SetKeepAlive(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Connection* c = live();
  if (!c) return Napi::Number::New(env, UV_EBADF);
  bool enable = info.Length() > 0 && info[0].ToBoolean().Value();
  double delay = info.Length() > 1 && info[1].IsNumber()
                     ? info[1].As<Napi::Number>().DoubleValue() : 0;
  unsigned int delay_s = delay >= 1 && delay < 4e9 ? static_cast<unsigned int>(delay) : 0;
  return Napi::Number::New(env, c->SetKeepAlive(enable, delay_s));
}

}  // namespace sluice
