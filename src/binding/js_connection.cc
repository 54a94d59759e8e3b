#include "binding/js_connection.h"
#include "binding/js_values.h"

#include <string>

#include "binding/addon_data.h"
#include "core/net/listener.h"
#include "core/net/tunnel_session.h"

namespace sluice {

namespace {

// Bodies below this are copied into the connection's output buffer next to
// the headers (one contiguous iovec); larger ones are written from the JS
// Buffer's memory as their own iovec of the same writev, kept alive by a
// napi reference until the kernel has them.
// Measured (res.end(Buffer), wrk 16-deep pipelining, c50, server CPU per
// response on a 2-vCPU VM, always-copy vs always-reference builds):
//   1 KiB: copy 2.95-3.17 us, reference 3.30-4.94 us
//   2 KiB: copy 3.41-6.22 us, reference 3.13-5.58 us
//   4 KiB: copy 5.06-7.61 us, reference 4.42-6.75 us
//   8 KiB: copy 12.7-15.0 us, reference 9.1-10.5 us
//  16 KiB: copy 16.3 us,      reference 10.5 us
// The reference's fixed cost (two napi calls, one more iovec) is repaid
// from about 2 KiB: copying also grows the inline buffer past its first
// 512 bytes. Netty's rule (max(128 B, headers/8)) lands lower for the
// same reason it copies into a pooled buffer; here the copy is the cost.
constexpr size_t kEmbedThreshold = 2048;

// Byte length of a body value: a string (UTF-8) or binary view.
// Returns false for a type we cannot send.
bool BodyLength(napi_env env, napi_value v, size_t* len) {
  if (IsString(env, v)) {
    return napi_get_value_string_utf8(env, v, nullptr, 0, len) == napi_ok;
  }
  const char* data;
  return GetBytes(env, v, &data, len);
}

constexpr uint32_t kRespondEnd = 1u << 8;
constexpr int kErrBadBody = -10;

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
          InstanceMethod<&JsConnection::Pause>("pause"),
          InstanceMethod<&JsConnection::Resume>("resume"),
          InstanceMethod<&JsConnection::Destroy>("destroy"),
          InstanceMethod<&JsConnection::SendError>("sendError"),
          InstanceMethod<&JsConnection::WriteRaw>("writeRaw"),
          InstanceMethod<&JsConnection::EndRaw>("endRaw"),
          InstanceMethod<&JsConnection::Peer>("peer"),
          InstanceMethod<&JsConnection::Local>("local"),
          InstanceMethod<&JsConnection::Stats>("stats"),
          InstanceMethod<&JsConnection::RetryBodyBuffer>("retryBodyBuffer"),
      });
}

JsConnection::JsConnection(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<JsConnection>(info) {}

void JsConnection::Attach(Connection* c) {
  conn_ = c;
  self_ = Napi::Persistent(Value());
}

void JsConnection::Detach() {
  conn_ = nullptr;
  self_.Reset();
}

bool JsConnection::RawOk() const {
  if (!conn_ || conn_->destroyed()) return false;
  // HTTP/1.1, or a tunnel after an accepted Upgrade / CONNECT; never the
  // HTTP/2 session an h2c upgrade switched to.
  Session* s = conn_->session();
  return dynamic_cast<Http1Session*>(s) != nullptr ||
         dynamic_cast<TunnelSession*>(s) != nullptr;
}

Http1Session* JsConnection::session() const {
  if (!conn_ || conn_->destroyed()) return nullptr;
  // After an h2c upgrade the connection's session is an Http2Session: the
  // HTTP/1.1 objects of earlier requests must then find no session.
  return dynamic_cast<Http1Session*>(conn_->session());
}

int JsConnection::Result(int err) const {
  if (err < 0) return err;
  Http1Session* s = session();
  if (s && s->NeedsDrain()) {
    conn_->WantDrain();
    return 1;
  }
  return 0;
}

int JsConnection::AppendBody(uint32_t seq, napi_value chunk) {
  napi_env env = Env();
  Http1Session* s = session();
  if (!s) return kRespClosed;
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
    return kRespOk;
  }
  const char* data;
  size_t len;
  if (!GetBytes(env, chunk, &data, &len)) return kErrBadBody;
  OutputQueue* q = s->BeginBody(seq, len, &err);
  if (!q) return err;
  if (len < kEmbedThreshold) {
    q->Append(data, len);
    counters.body_bytes_copied += len;
  } else {
    q->AppendExternal(data, len, new NapiValueRef(env, chunk));
    counters.body_bytes_referenced += len;
  }
  s->EndBody(seq);
  return kRespOk;
}

Napi::Value JsConnection::Respond(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  Http1Session* s = session();
  if (!s) return Napi::Number::New(env, kRespClosed);
  uint32_t seq = info[0].As<Napi::Number>().Uint32Value();
  uint32_t sf = info[1].As<Napi::Number>().Uint32Value();
  int status = static_cast<int>(sf & 0x3ff);
  uint32_t flags = sf >> 10;
  std::string reason;
  if (IsString(env, info[2])) Latin1(env, info[2], &reason);
  napi_value body = info[4];
  bool has_body = !IsNullish(env, body);
  size_t body_len = 0;
  if (has_body && !BodyLength(env, body, &body_len)) {
    return Napi::Number::New(env, kErrBadBody);
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
  err = s->FinishHead(seq, flags & 0xff, body_len);
  if (err == 0 && has_body && body_len > 0) err = AppendBody(seq, body);
  if (err == 0 && (flags & kRespondEnd)) {
    std::string trailers;
    if (IsString(env, info[5])) Latin1(env, info[5], &trailers);
    err = s->End(seq, trailers);
  }
  return Napi::Number::New(env, Result(err));
}

Napi::Value JsConnection::Write(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  if (!session()) return Napi::Number::New(env, kRespClosed);
  uint32_t seq = info[0].As<Napi::Number>().Uint32Value();
  return Napi::Number::New(env, Result(AppendBody(seq, info[1])));
}

Napi::Value JsConnection::End(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  Http1Session* s = session();
  if (!s) return Napi::Number::New(env, kRespClosed);
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
  if (!s) return Napi::Number::New(info.Env(), kRespClosed);
  uint32_t seq = info[0].As<Napi::Number>().Uint32Value();
  return Napi::Number::New(info.Env(), s->WriteContinue(seq));
}

Napi::Value JsConnection::Pause(const Napi::CallbackInfo& info) {
  if (RawOk()) conn_->Pause(Connection::kPauseUser);
  return info.Env().Undefined();
}

Napi::Value JsConnection::Resume(const Napi::CallbackInfo& info) {
  if (RawOk()) conn_->Resume(Connection::kPauseUser);
  return info.Env().Undefined();
}

Napi::Value JsConnection::Destroy(const Napi::CallbackInfo& info) {
  if (RawOk()) conn_->Destroy();
  return info.Env().Undefined();
}

Napi::Value JsConnection::SendError(const Napi::CallbackInfo& info) {
  Http1Session* s = session();
  if (s) s->SendErrorAndClose(info[0].As<Napi::Number>().Int32Value());
  return info.Env().Undefined();
}

Napi::Value JsConnection::WriteRaw(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  if (!RawOk() || conn_->closing()) return Napi::Boolean::New(env, false);
  OutputQueue& q = conn_->writer().queue();
  if (IsString(env, info[0])) {
    std::string s;
    Latin1(env, info[0], &s);
    q.Append(s.data(), s.size());
  } else {
    const char* data;
    size_t len;
    if (GetBytes(env, info[0], &data, &len)) q.Append(data, len);
  }
  conn_->MarkDirty();
  // Backpressure as net.Socket#write: false once the backlog reaches the
  // high-water mark; the delegate's OnDrain follows when it empties.
  if (conn_->writer().Backlog() >= conn_->listener()->options().high_water_mark) {
    conn_->WantDrain();
    return Napi::Boolean::New(env, false);
  }
  return Napi::Boolean::New(env, true);
}

Napi::Value JsConnection::EndRaw(const Napi::CallbackInfo& info) {
  if (info.Length() > 0 && !IsNullish(info.Env(), info[0])) WriteRaw(info);
  if (RawOk()) conn_->EndGracefully();
  return info.Env().Undefined();
}

namespace {
Napi::Value AddressArray(Napi::Env env, int r, const std::string& ip,
                         int port, int family) {
  if (r != 0) return env.Undefined();
  Napi::Array a = Napi::Array::New(env, 3);
  a.Set(0u, Napi::String::New(env, ip));
  a.Set(1u, Napi::Number::New(env, port));
  a.Set(2u, Napi::Number::New(env, family));
  return a;
}
}  // namespace

Napi::Value JsConnection::Peer(const Napi::CallbackInfo& info) {
  if (!RawOk()) return info.Env().Undefined();
  std::string ip;
  int port = 0, family = 0;
  int r = conn_->GetPeer(&ip, &port, &family);
  return AddressArray(info.Env(), r, ip, port, family);
}

Napi::Value JsConnection::Local(const Napi::CallbackInfo& info) {
  if (!RawOk()) return info.Env().Undefined();
  std::string ip;
  int port = 0, family = 0;
  int r = conn_->GetLocal(&ip, &port, &family);
  return AddressArray(info.Env(), r, ip, port, family);
}

Napi::Value JsConnection::RetryBodyBuffer(const Napi::CallbackInfo& info) {
  if (Http1Session* s = session()) s->RetryBodyBuffer();
  return info.Env().Undefined();
}

Napi::Value JsConnection::Stats(const Napi::CallbackInfo& info) {
  Napi::Object o = Napi::Object::New(info.Env());
  if (conn_) {
    o.Set("flushes", Napi::Number::New(info.Env(),
                                       static_cast<double>(conn_->writer().flushes())));
    o.Set("backlog", Napi::Number::New(info.Env(),
                                       static_cast<double>(conn_->writer().Backlog())));
  }
  return o;
}

}  // namespace sluice
