#include "binding/js_quic_client.h"

#include <string>
#include <vector>

#include "binding/addon_data.h"
#include "binding/js_values.h"
#include "core/http3/qpack.h"

namespace sluice {

Napi::Function JsQuicClient::Init(Napi::Env env) {
  return DefineClass(env, "NativeQuicClient",
                     {
                         InstanceMethod<&JsQuicClient::Connect>("connect"),
                         InstanceMethod<&JsQuicClient::OpenStream>("openStream"),
                         InstanceMethod<&JsQuicClient::Write>("write"),
                         InstanceMethod<&JsQuicClient::Reset>("reset"),
                         InstanceMethod<&JsQuicClient::Abandon>("abandon"),
                         InstanceMethod<&JsQuicClient::Close>("close"),
                         InstanceMethod<&JsQuicClient::Destroy>("destroy"),
                         InstanceMethod<&JsQuicClient::Tls>("tls"),
                         StaticMethod<&JsQuicClient::Encode>("encodeFieldSection"),
                         StaticMethod<&JsQuicClient::Decode>("decodeFieldSection"),
                     });
}

JsQuicClient::JsQuicClient(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<JsQuicClient>(info), member_(info.Env(), &AddonData::quic_clients, this) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) {
    Napi::TypeError::New(env, "NativeQuicClient(callbacks)").ThrowAsJavaScriptException();
    return;
  }
  Napi::Object cbs = info[0].As<Napi::Object>();
  callbacks_ = Napi::Persistent(cbs);
  on_connect_ = JsCallback(cbs, "onConnect");
  on_data_ = JsCallback(cbs, "onData");
  on_reset_ = JsCallback(cbs, "onReset");
  on_close_ = JsCallback(cbs, "onClose");
  Napi::Object res = Napi::Object::New(env);
  resource_ = Napi::Persistent(res);
  async_context_.Init(env, res, "SluiceQuicClient");
}

JsQuicClient::~JsQuicClient() { Drop(); }

void JsQuicClient::Teardown() {
  member_.Forget();
  Drop();
}

void JsQuicClient::Drop() {
  if (client_ != nullptr) {
    client_->Destroy();
    client_ = nullptr;
  }
}

void JsQuicClient::Call(const Napi::FunctionReference& fn, size_t argc, const napi_value* argv) {
  AddonData* a = member_.get();
  if (a == nullptr || a->tearing_down) return;
  napi_callback_scope scope = nullptr;
  napi_open_callback_scope(Env(), resource_.Value(), async_context_.get(), &scope);
  CallJs(Env(), fn, argc, argv);
  if (scope != nullptr) napi_close_callback_scope(Env(), scope);
}

Napi::Value JsQuicClient::Connect(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (client_ != nullptr) {
    Napi::Error::New(env, "already connected").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  std::string ip = info[0].As<Napi::String>().Utf8Value();
  int port = info[1].As<Napi::Number>().Int32Value();
  std::string alpn = info.Length() > 2 && info[2].IsString() ? info[2].As<Napi::String>().Utf8Value() : "h3";
  std::string sni = info.Length() > 3 && info[3].IsString() ? info[3].As<Napi::String>().Utf8Value() : "localhost";
  client_ = new QuicClient(GetAddonData(env)->loop, this);
  std::string err;
  if (info.Length() > 4 && info[4].IsBuffer()) {
    auto b = info[4].As<Napi::Buffer<char>>();
    if (!client_->SetSession(std::string(b.Data(), b.Length()))) {
      Drop();
      Napi::Error::New(env, "QUIC connect: the session does not parse").ThrowAsJavaScriptException();
      return env.Undefined();
    }
  }
  int r = client_->Connect(ip.c_str(), port, alpn, sni, &err);
  if (r != 0) {
    Drop();
    Napi::Error::New(env, "QUIC connect: " + err).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  self_ = Napi::Persistent(Value());
  return Napi::Number::New(env, 0);
}

Napi::Value JsQuicClient::OpenStream(const Napi::CallbackInfo& info) {
  int64_t id = client_ ? client_->OpenStream(info[0].ToBoolean().Value()) : -1;
  return Napi::Number::New(info.Env(), static_cast<double>(id));
}

Napi::Value JsQuicClient::Write(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* data = nullptr;
  size_t len = 0;
  if (!IsNullish(env, info[1]) && !GetBytes(env, info[1], &data, &len)) {
    Napi::TypeError::New(env, "write(id, bytes, fin)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  int r = client_ ? client_->Write(static_cast<uint64_t>(info[0].As<Napi::Number>().Int64Value()),
                                   reinterpret_cast<const uint8_t*>(data), len,
                                   info[2].ToBoolean().Value())
                  : -1;
  return Napi::Number::New(env, r);
}

Napi::Value JsQuicClient::Reset(const Napi::CallbackInfo& info) {
  int r = client_ ? client_->ResetStream(static_cast<uint64_t>(info[0].As<Napi::Number>().Int64Value()),
                                         static_cast<uint64_t>(info[1].As<Napi::Number>().Int64Value()))
                  : -1;
  return Napi::Number::New(info.Env(), r);
}

Napi::Value JsQuicClient::Abandon(const Napi::CallbackInfo& info) {
  int r = client_ ? client_->AbandonStream(
                        static_cast<uint64_t>(info[0].As<Napi::Number>().Int64Value()))
                  : -1;
  return Napi::Number::New(info.Env(), r);
}

Napi::Value JsQuicClient::Close(const Napi::CallbackInfo& info) {
  if (client_ != nullptr) {
    client_->Close(info.Length() > 0 && info[0].IsNumber()
                       ? static_cast<uint64_t>(info[0].As<Napi::Number>().Int64Value())
                       : 0x100);
  }
  return info.Env().Undefined();
}

Napi::Value JsQuicClient::Destroy(const Napi::CallbackInfo& info) {
  Drop();
  self_.Reset();
  return info.Env().Undefined();
}

Napi::Value JsQuicClient::Tls(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (client_ == nullptr || info.Length() < 1 || !info[0].IsString()) return env.Undefined();
  std::string what = info[0].As<Napi::String>().Utf8Value();
  if (what == "reused") return Napi::Boolean::New(env, client_->SessionReused());
  std::string der;
  if (what == "cert") der = client_->PeerCertificateDer();
  else if (what == "session") der = client_->SessionDer();
  if (der.empty()) return env.Undefined();
  return Napi::Buffer<char>::Copy(env, der.data(), der.size());
}

void JsQuicClient::OnConnected() {
  if (member_.get() == nullptr || member_.get()->tearing_down) return;
  Napi::HandleScope scope(Env());
  Call(on_connect_, 0, nullptr);
}

void JsQuicClient::OnStreamData(uint64_t id, const uint8_t* data, size_t len, bool fin) {
  if (member_.get() == nullptr || member_.get()->tearing_down) return;
  Napi::HandleScope scope(Env());
  napi_value fin_v;
  napi_get_boolean(Env(), fin, &fin_v);
  napi_value argv[3] = {Int(Env(), static_cast<int64_t>(id)),
                        BufferCopy(Env(), reinterpret_cast<const char*>(data), len), fin_v};
  Call(on_data_, 3, argv);
}

void JsQuicClient::OnStreamReset(uint64_t id, uint64_t code) {
  if (member_.get() == nullptr || member_.get()->tearing_down) return;
  Napi::HandleScope scope(Env());
  napi_value argv[2] = {Int(Env(), static_cast<int64_t>(id)), Int(Env(), static_cast<int64_t>(code))};
  Call(on_reset_, 2, argv);
}

void JsQuicClient::OnClosed(uint64_t code, bool transport, const std::string& reason) {
  if (member_.get() == nullptr || member_.get()->tearing_down) return;
  Napi::HandleScope scope(Env());
  napi_value t;
  napi_get_boolean(Env(), transport, &t);
  napi_value argv[3] = {Int(Env(), static_cast<int64_t>(code)), t, Latin1String(Env(), reason)};
  Call(on_close_, 3, argv);
  self_.Reset();
}

Napi::Value JsQuicClient::Encode(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Array a = info[0].As<Napi::Array>();
  std::vector<http3::HeaderField> fields;
  for (uint32_t i = 0; i + 1 < a.Length(); i += 2) {
    fields.push_back({a.Get(i).As<Napi::String>().Utf8Value(), a.Get(i + 1).As<Napi::String>().Utf8Value()});
  }
  std::string out;
  http3::EncodeFieldSection(fields.data(), fields.size(), &out);
  return Napi::Buffer<char>::Copy(env, out.data(), out.size());
}

Napi::Value JsQuicClient::Decode(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto b = info[0].As<Napi::Buffer<uint8_t>>();
  uint64_t max = info.Length() > 1 && info[1].IsNumber()
                     ? static_cast<uint64_t>(info[1].As<Napi::Number>().Int64Value())
                     : UINT64_MAX;
  std::vector<http3::HeaderField> fields;
  http3::QpackStatus st = http3::DecodeFieldSection(b.Data(), b.Length(), max, &fields);
  if (st == http3::QpackStatus::kDecompressionFailed) return Napi::String::New(env, "failed");
  if (st == http3::QpackStatus::kTooLarge) return Napi::String::New(env, "too large");
  Napi::Array out = Napi::Array::New(env, fields.size() * 2);
  for (size_t i = 0; i < fields.size(); i++) {
    out.Set(static_cast<uint32_t>(2 * i), Napi::String::New(env, fields[i].name));
    out.Set(static_cast<uint32_t>(2 * i + 1), Napi::String::New(env, fields[i].value));
  }
  return out;
}

}  // namespace sluice
