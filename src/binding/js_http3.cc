#include "binding/js_http3.h"

#include <openssl/crypto.h>

#include <vector>

#include "binding/addon_data.h"
#include "binding/js_body_alloc.h"
#include "binding/js_quic_client.h"
#include "binding/js_server.h"
#include "binding/js_static_mount.h"
#include "binding/js_tls.h"
#include "binding/js_values.h"
#include "binding/wire_protocol.h"
#include "core/common/symbol_origin.h"
#include "core/quic/quic_symbols.h"

namespace sluice {

namespace {

Napi::Value Error(Napi::Env env, const std::string& msg) {
  Napi::Error e = Napi::Error::New(env, msg);
  e.Set("code", Napi::String::New(env, "ERR_SLUICE_HTTP3"));
  e.ThrowAsJavaScriptException();
  return env.Undefined();
}

uint64_t NumberOr(const Napi::Object& o, const char* k, uint64_t d) {
  Napi::Value v = o.Get(k);
  if (!v.IsNumber()) return d;
  double n = v.As<Napi::Number>().DoubleValue();
  return n < 0 ? d : static_cast<uint64_t>(n);
}

}  // namespace

// ---- endpoint ----------------------------------------------------------------

Napi::Function JsHttp3Endpoint::Init(Napi::Env env) {
  return DefineClass(env, "NativeHttp3Endpoint",
                     {
                         InstanceMethod<&JsHttp3Endpoint::Listen>("listen"),
                         InstanceMethod<&JsHttp3Endpoint::Address>("address"),
                         InstanceMethod<&JsHttp3Endpoint::Close>("close"),
                         InstanceMethod<&JsHttp3Endpoint::Destroy>("destroy"),
                         InstanceMethod<&JsHttp3Endpoint::Ref>("ref"),
                         InstanceMethod<&JsHttp3Endpoint::Unref>("unref"),
                         InstanceMethod<&JsHttp3Endpoint::Connections>("connections"),
                         InstanceMethod<&JsHttp3Endpoint::Metrics>("metrics"),
                         InstanceMethod<&JsHttp3Endpoint::CloseAllConnections>(
                             "closeAllConnections"),
                         InstanceMethod<&JsHttp3Endpoint::CloseIdleConnections>(
                             "closeIdleConnections"),
                         InstanceMethod<&JsHttp3Endpoint::SetSecureContext>("setSecureContext"),
                         InstanceMethod<&JsHttp3Endpoint::AddContext>("addContext"),
                         InstanceMethod<&JsHttp3Endpoint::SetTicketKeys>("setTicketKeys"),
                         InstanceMethod<&JsHttp3Endpoint::SniDone>("sniDone"),
                         InstanceMethod<&JsHttp3Endpoint::SniFail>("sniFail"),
                     });
}

JsHttp3Endpoint::JsHttp3Endpoint(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<JsHttp3Endpoint>(info),
      date_(GetAddonData(info.Env())->loop),
      member_(info.Env(), &AddonData::http3_endpoints, this) {
  Napi::Env env = info.Env();
  std::string why;
  if (!QuicAvailable(&why)) {
    Error(env, why);
    return;
  }
  if (info.Length() < 2 || !info[0].IsObject() || !info[1].IsObject()) {
    Error(env, "NativeHttp3Endpoint(callbacks, options)");
    return;
  }
  Napi::Object cbs = info[0].As<Napi::Object>();
  Napi::Object opts = info[1].As<Napi::Object>();
  callbacks_ = Napi::Persistent(cbs);
  SLUICE_HTTP3_CALLBACKS(SLUICE_CALLBACK_READ)
  std::string pass;
  if (opts.Get("passphrase").IsString()) pass = opts.Get("passphrase").As<Napi::String>().Utf8Value();
  ctx_ = QuicServerContext(StringList(opts.Get("key")), StringList(opts.Get("cert")), pass, &why);
  if (ctx_ == nullptr) {
    Error(env, why);
    return;
  }
  QuicEndpointOptions o;
  o.app = Http3Session::QuicCodes();
  o.max_connections = NumberOr(opts, "maxConnections", o.max_connections);
  o.max_streams_per_connection = NumberOr(opts, "maxStreams", o.max_streams_per_connection);
  o.idle_timeout_ms = NumberOr(opts, "idleTimeout", o.idle_timeout_ms);
  o.validate_address = !opts.Get("noAddressValidation").ToBoolean().Value();
  o.handshake_timeout_ms = NumberOr(opts, "handshakeTimeout", o.handshake_timeout_ms);
  o.max_handshakes = NumberOr(opts, "maxHandshakes", o.max_handshakes);
  o.gso = !opts.Get("noGso").ToBoolean().Value();
  o.max_connections_per_address =
      NumberOr(opts, "maxConnectionsPerAddress", o.max_connections_per_address);
  limits_.max_field_section_size = NumberOr(opts, "maxHeaderSize", limits_.max_field_section_size);
  limits_.high_water = NumberOr(opts, "highWaterMark", limits_.high_water);
  // Without both callbacks lib/ could not hold the buffers it lends.
  limits_.body_allocator = opts.Get("bodyAllocator").ToBoolean().Value() &&
                           !on_alloc_.IsEmpty() && !on_buffer_release_.IsEmpty();
  // At least a small read each: a limit of 0 (an HTTP/2 window of
  // 0) would never read a body at all.
  constexpr uint64_t kMinBodyLimit = 16 * 1024;
  limits_.body_stream_limit = NumberOr(opts, "bodyStreamLimit", limits_.body_stream_limit);
  limits_.body_connection_limit =
      NumberOr(opts, "bodyConnectionLimit", limits_.body_connection_limit);
  if (limits_.body_stream_limit < kMinBodyLimit) limits_.body_stream_limit = kMinBodyLimit;
  if (limits_.body_connection_limit < kMinBodyLimit) limits_.body_connection_limit = kMinBodyLimit;
  // serveStatic: the mounts of the TCP server this endpoint stands beside
  // (the same object, so later mounts apply here too).
  static_files_ = StaticFilesOf(opts.Get("staticFiles"));
  Napi::Object res = Napi::Object::New(env);
  resource_ = Napi::Persistent(res);
  async_context_.Init(env, res, "SluiceHttp3");
  uv_loop_t* loop = GetAddonData(env)->loop;
  // The default certificate: the TCP side's context when given (one
  // configuration for both), else the listener context's own.
  TlsContext certs = UnwrapContext(env, opts.Get("context"));
  endpoint_ = new QuicEndpoint(loop, ctx_, std::move(certs), this, o);
  endpoint_->SetSniCallback(opts.Get("sniCallback").ToBoolean().Value());
  Napi::Value keys = opts.Get("ticketKeys");
  if (keys.IsBuffer()) {
    auto b = keys.As<Napi::Buffer<char>>();
    endpoint_->SetTicketKeys(std::string(b.Data(), b.Length()));
  }
}

JsHttp3Endpoint::~JsHttp3Endpoint() {
  // Only collected once closed (self_ holds it while listening): an
  // endpoint left here never listened and has no handle open.
  if (endpoint_ != nullptr) endpoint_->Abandon();
  SSL_CTX_free(ctx_);
}

void JsHttp3Endpoint::Teardown() {
  member_.Forget();
  // As JsServer::Teardown: the open-file cache goes with the addon data,
  // and these mounts may outlive the server that set the provider.
  if (static_files_) static_files_->set_cache_provider(nullptr);
  if (endpoint_ != nullptr) endpoint_->Destroy();
}

bool JsHttp3Endpoint::CanCallJs() const {
  AddonData* a = member_.get();
  return a != nullptr && !a->tearing_down;
}

Napi::Value JsHttp3Endpoint::Listen(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (endpoint_ == nullptr) return Error(env, "endpoint closed");
  std::string host = info[0].As<Napi::String>().Utf8Value();
  int port = info[1].As<Napi::Number>().Int32Value();
  bool reuse_port = info.Length() > 2 && info[2].ToBoolean().Value();
  std::string err;
  int r = endpoint_->Listen(host.c_str(), port, reuse_port, &err);
  if (r != 0 && !err.empty()) return Error(env, err);
  if (r == 0) self_ = Napi::Persistent(Value());
  return Napi::Number::New(env, r);
}

Napi::Value JsHttp3Endpoint::Address(const Napi::CallbackInfo& info) {
  std::string ip;
  int port = 0, family = 0;
  if (endpoint_ == nullptr || endpoint_->GetAddress(&ip, &port, &family) != 0) {
    return info.Env().Undefined();
  }
  Napi::Array a = Napi::Array::New(info.Env(), 3);
  a.Set(0u, Napi::String::New(info.Env(), ip));
  a.Set(1u, Napi::Number::New(info.Env(), port));
  a.Set(2u, Napi::Number::New(info.Env(), family));
  return a;
}

Napi::Value JsHttp3Endpoint::Close(const Napi::CallbackInfo& info) {
  uint64_t grace = info.Length() > 0 && info[0].IsNumber()
                       ? static_cast<uint64_t>(info[0].As<Napi::Number>().DoubleValue())
                       : 5000;
  if (endpoint_ != nullptr) endpoint_->Close(grace);
  return info.Env().Undefined();
}

Napi::Value JsHttp3Endpoint::Destroy(const Napi::CallbackInfo& info) {
  if (endpoint_ != nullptr) endpoint_->Destroy();
  return info.Env().Undefined();
}

Napi::Value JsHttp3Endpoint::Ref(const Napi::CallbackInfo& info) {
  if (endpoint_ != nullptr) endpoint_->SetRef(true);
  return info.Env().Undefined();
}

Napi::Value JsHttp3Endpoint::Unref(const Napi::CallbackInfo& info) {
  if (endpoint_ != nullptr) endpoint_->SetRef(false);
  return info.Env().Undefined();
}

Napi::Value JsHttp3Endpoint::Connections(const Napi::CallbackInfo& info) {
  size_t n = 0;
  if (endpoint_ != nullptr) {
    std::string what = info.Length() > 0 && info[0].IsString()
                           ? info[0].As<Napi::String>().Utf8Value() : std::string();
    n = what == "handshakes" ? endpoint_->handshake_count()
        : what == "gso"      ? static_cast<size_t>(endpoint_->gso_sends())
        : what == "gro"      ? static_cast<size_t>(endpoint_->gro_reads())
                             : endpoint_->connection_count();
  }
  return Napi::Number::New(info.Env(), static_cast<double>(n));
}

Napi::Value JsHttp3Endpoint::Metrics(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (endpoint_ == nullptr) return env.Null();
  Napi::Object o = MetricsObject(env, endpoint_->metrics());
  o.Set("connectionsOpen", static_cast<double>(endpoint_->connection_count()));
  o.Set("connectionsDropped", 0);
  o.Set("bytesIn", static_cast<double>(endpoint_->bytes_received()));
  o.Set("bytesOut", static_cast<double>(endpoint_->bytes_sent()));
  o.Set("websocketsOpen", 0);
  return o;
}

Napi::Value JsHttp3Endpoint::CloseAllConnections(const Napi::CallbackInfo& info) {
  // CloseNow queues the CONNECTION_CLOSE; each session is told (and
  // leaves sessions_) on the endpoint's next pass, never in this loop.
  for (Http3Session* s : sessions_) s->connection()->CloseNow(static_cast<uint64_t>(http3::H3Error::kNoError), "server closing");
  return info.Env().Undefined();
}

Napi::Value JsHttp3Endpoint::CloseIdleConnections(const Napi::CallbackInfo& info) {
  for (Http3Session* s : sessions_) {
    if (!s->Busy()) s->connection()->CloseNow(static_cast<uint64_t>(http3::H3Error::kNoError), "idle");
  }
  return info.Env().Undefined();
}

namespace {

// A native context argument (binding.tlsContext), or a TypeError.
TlsContext ContextArg(const Napi::CallbackInfo& info, size_t i) {
  TlsContext ctx = info.Length() > i ? UnwrapContext(info.Env(), info[i]) : TlsContext();
  if (!ctx) Napi::TypeError::New(info.Env(), "a native TLS context expected").ThrowAsJavaScriptException();
  return ctx;
}

}  // namespace

Napi::Value JsHttp3Endpoint::SetSecureContext(const Napi::CallbackInfo& info) {
  TlsContext ctx = ContextArg(info, 0);
  if (ctx && endpoint_ != nullptr) endpoint_->SetDefaultContext(std::move(ctx));
  return info.Env().Undefined();
}

Napi::Value JsHttp3Endpoint::AddContext(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsString()) {
    Napi::TypeError::New(info.Env(), "addContext(hostname, context)").ThrowAsJavaScriptException();
    return info.Env().Undefined();
  }
  TlsContext ctx = ContextArg(info, 1);
  if (ctx && endpoint_ != nullptr) {
    endpoint_->AddSniContext(info[0].As<Napi::String>().Utf8Value(), std::move(ctx));
  }
  return info.Env().Undefined();
}

Napi::Value JsHttp3Endpoint::SetTicketKeys(const Napi::CallbackInfo& info) {
  bool ok = false;
  if (info.Length() > 0 && info[0].IsBuffer() && endpoint_ != nullptr) {
    auto b = info[0].As<Napi::Buffer<char>>();
    ok = endpoint_->SetTicketKeys(std::string(b.Data(), b.Length()));
  }
  return Napi::Boolean::New(info.Env(), ok);
}

Napi::Value JsHttp3Endpoint::SniDone(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) return env.Undefined();
  uint64_t id = static_cast<uint64_t>(info[0].As<Napi::Number>().Int64Value());
  TlsContext ctx;
  if (info.Length() > 1 && !IsNullish(env, info[1])) {
    ctx = ContextArg(info, 1);
    if (!ctx) return env.Undefined();
  }
  if (endpoint_ != nullptr) endpoint_->AnswerSni(id, std::move(ctx), false);
  return env.Undefined();
}

Napi::Value JsHttp3Endpoint::SniFail(const Napi::CallbackInfo& info) {
  if (info.Length() > 0 && info[0].IsNumber() && endpoint_ != nullptr) {
    endpoint_->AnswerSni(static_cast<uint64_t>(info[0].As<Napi::Number>().Int64Value()),
                         TlsContext(), true);
  }
  return info.Env().Undefined();
}

void JsHttp3Endpoint::OnSniRequest(uint64_t id, const std::string& servername) {
  if (!CanCallJs()) {
    endpoint_->AnswerSni(id, TlsContext(), true);
    return;
  }
  napi_value argv[2] = {Napi::Number::New(Env(), static_cast<double>(id)),
                        Napi::String::New(Env(), servername)};
  CallJs(Env(), on_sni_, 2, argv);
}

namespace {

// [ip, port, family (4 or 6)] of a QUIC connection, as AddressArray gives
// TCP connections (lib's socket reads the family as a number), or
// undefined when unknown or c is null.
Napi::Value QuicAddressArray(Napi::Env env, const QuicConnection* c, AddressKind kind) {
  std::string ip;
  int port = 0, family = 0;
  bool ok = c != nullptr && (kind == AddressKind::kPeer ? c->PeerAddress(&ip, &port, &family)
                                                        : c->LocalAddress(&ip, &port, &family));
  if (!ok) return env.Undefined();
  Napi::Array a = Napi::Array::New(env, 3);
  a.Set(0u, Napi::String::New(env, ip));
  a.Set(1u, Napi::Number::New(env, port));
  a.Set(2u, Napi::Number::New(env, family));
  return a;
}

}  // namespace

void JsHttp3Endpoint::OnHandshakeTimeout(QuicConnection* c) {
  if (!CanCallJs() || on_handshake_timeout_.IsEmpty()) return;
  napi_value argv[1] = {QuicAddressArray(Env(), c, AddressKind::kPeer)};
  CallJs(Env(), on_handshake_timeout_, 1, argv);
}

QuicConnectionHandler* JsHttp3Endpoint::OnConnection(QuicConnection* c) {
  auto* s = new Http3Session(c, this, limits_, static_files_, &date_);
  sessions_.insert(s);
  return s;
}

void JsHttp3Endpoint::OnDispatchBegin() {
  napi_env env = Env();
  handle_scope_ = nullptr;
  callback_scope_ = nullptr;
  if (!CanCallJs()) return;
  napi_open_handle_scope(env, &handle_scope_);
  {
    napi_open_callback_scope(env, resource_.Value(), async_context_.get(), &callback_scope_);
  }
}

void JsHttp3Endpoint::OnDispatchEnd() {
  napi_env env = Env();
  if (callback_scope_ != nullptr) {
    // Runs process.nextTick callbacks and microtasks the handlers queued.
    napi_close_callback_scope(env, callback_scope_);
    callback_scope_ = nullptr;
  }
  if (handle_scope_ != nullptr) napi_close_handle_scope(env, handle_scope_);
  handle_scope_ = nullptr;
}

void JsHttp3Endpoint::OnEndpointClosed() {
  endpoint_ = nullptr;
  if (!CanCallJs()) return;  // teardown: node frees the object itself
  napi_env env = Env();
  Napi::HandleScope scope(env);
  // Called from a uv_close callback, outside any JS frame: without a
  // callback scope the process.nextTick and promise reactions the close
  // queues (the server's 'close', the close() callback) would wait for
  // some unrelated later callback — seconds on a quiet loop. self_ holds
  // this object until the scope has run them.
  napi_callback_scope cs = nullptr;
  if (napi_open_callback_scope(env, resource_.Value(), async_context_.get(), &cs) != napi_ok) {
    cs = nullptr;
  }
  CallJs(env, on_endpoint_close_, 0, nullptr);
  if (cs != nullptr) napi_close_callback_scope(env, cs);
  self_.Reset();
}

napi_value JsHttp3Endpoint::SessionObject(Http3Session* s) {
  if (s->user_data) return static_cast<JsHttp3Session*>(s->user_data)->Value();
  napi_value v = HandleFor<JsHttp3Session>(s, GetAddonData(Env())->http3_session_ctor);
  if (v != nullptr) static_cast<JsHttp3Session*>(s->user_data)->owner = this;
  return v;
}

void JsHttp3Endpoint::OnStream(Http3Session* s, uint64_t id, const Http3Fields& headers,
                               bool end_stream) {
  if (!CanCallJs()) return;
  packed_.clear();
  bool nul = false;
  for (const auto& f : headers) {
    if (f.first.find('\0') != std::string_view::npos ||
        f.second.find('\0') != std::string_view::npos) {
      nul = true;
    }
    if (!packed_.empty()) packed_.push_back('\0');
    packed_.append(f.first);
    packed_.push_back('\0');
    packed_.append(f.second);
  }
  napi_value end;
  napi_get_boolean(Env(), end_stream, &end);
  napi_value argv[4] = {SessionObject(s), Int(Env(), JsHttp3Session::JsId(id)),
                        nul ? FieldArray(Env(), headers) : Latin1String(Env(), packed_), end};
  CallJs(Env(), on_stream_, 4, argv);
}

void JsHttp3Endpoint::OnStreamData(Http3Session* s, uint64_t id, const uint8_t* data,
                                   size_t len, int64_t offset) {
  if (!CanCallJs()) return;
  if (offset >= 0) {
    napi_value argv[4] = {SessionObject(s), Int(Env(), JsHttp3Session::JsId(id)), Int(Env(), offset),
                          Int(Env(), static_cast<int64_t>(len))};
    CallJs(Env(), on_data_, 4, argv);
    return;
  }
  napi_value argv[3] = {SessionObject(s), Int(Env(), JsHttp3Session::JsId(id)),
                        BufferCopy(Env(), reinterpret_cast<const char*>(data), len)};
  CallJs(Env(), on_data_, 3, argv);
}

Http3BufferResult JsHttp3Endpoint::AcquireBodyBuffer(Http3Session* s, uint64_t id, size_t size,
                                                     uint8_t** base, size_t* len) {
  if (!CanCallJs()) return Http3BufferResult::kFallback;
  napi_env env = Env();
  napi_value argv[3] = {SessionObject(s), Int(env, JsHttp3Session::JsId(id)), Int(env, static_cast<int64_t>(size))};
  napi_value r = CallJs(env, on_alloc_, 3, argv);
  return BodyAllocAnswer<Http3BufferResult>(env, r, base, len);
}

void JsHttp3Endpoint::ReleaseBodyBuffer(Http3Session* s, uint64_t id) {
  if (!CanCallJs()) return;
  napi_value argv[2] = {SessionObject(s), Int(Env(), JsHttp3Session::JsId(id))};
  CallJs(Env(), on_buffer_release_, 2, argv);
}

void JsHttp3Endpoint::OnStreamEnd(Http3Session* s, uint64_t id, const Http3Fields& trailers) {
  if (!CanCallJs()) return;
  napi_value t;
  if (trailers.empty()) {
    napi_get_undefined(Env(), &t);
  } else {
    t = FieldArray(Env(), trailers);
  }
  napi_value argv[3] = {SessionObject(s), Int(Env(), JsHttp3Session::JsId(id)), t};
  CallJs(Env(), on_end_, 3, argv);
}

void JsHttp3Endpoint::OnStreamDrain(Http3Session* s, uint64_t id) {
  if (!CanCallJs()) return;
  napi_value argv[2] = {SessionObject(s), Int(Env(), JsHttp3Session::JsId(id))};
  CallJs(Env(), on_drain_, 2, argv);
}

void JsHttp3Endpoint::OnStreamWantTrailers(Http3Session* s, uint64_t id) {
  if (!CanCallJs()) return;
  napi_value argv[2] = {SessionObject(s), Int(Env(), JsHttp3Session::JsId(id))};
  CallJs(Env(), on_want_trailers_, 2, argv);
}

void JsHttp3Endpoint::OnStreamClose(Http3Session* s, uint64_t id, uint64_t code) {
  if (!CanCallJs()) return;
  // lib/ reads HTTP/2 codes (0: a clean close); a code with no HTTP/2
  // meaning is passed as it is (cut to a JS safe integer).
  int64_t js = static_cast<int64_t>(http3::Http2CodeOfH3(code) & ((1ull << 53) - 1));
  napi_value argv[3] = {SessionObject(s), Int(Env(), JsHttp3Session::JsId(id)), Int(Env(), js)};
  CallJs(Env(), on_stream_close_, 3, argv);
}

void JsHttp3Endpoint::OnSessionClose(Http3Session* s) {
  // Its connection (which owns it) is deleted after this returns.
  sessions_.erase(s);
  if (s->user_data == nullptr) return;  // never reached JS
  auto* js = static_cast<JsHttp3Session*>(s->user_data);
  if (!CanCallJs()) {
    js->Detach();
    s->user_data = nullptr;
    return;
  }
  napi_value v = js->Value();
  js->Detach();
  s->user_data = nullptr;
  napi_value argv[1] = {v};
  CallJs(Env(), on_session_close_, 1, argv);
}

// ---- session -----------------------------------------------------------------

Napi::Function JsHttp3Session::Init(Napi::Env env) {
  using S = JsHttp3Session;
  return DefineClass(
      env, "NativeHttp3Session",
      Methods({
          InstanceMethod<&S::RetryBodyBuffer>("retryBodyBuffer"),
          InstanceMethod<&S::Goaway>("goaway"),
          InstanceMethod<&S::Destroy>("destroy"),
          InstanceMethod<&S::Peer>("peer"),
          InstanceMethod<&S::Local>("local"),
          InstanceMethod<&S::Tls>("tls"),
          InstanceMethod<&S::Nothing>("connection"),
          InstanceMethod<&S::TlsQueryMethod>("tlsQuery"),
      }));
}

Napi::Value JsHttp3Session::RetryBodyBuffer(const Napi::CallbackInfo& info) {
  if (Http3Session* s = live()) s->RetryBodyBuffers();
  return info.Env().Undefined();
}

Napi::Value JsHttp3Session::Nothing(const Napi::CallbackInfo& info) { return info.Env().Undefined(); }

Napi::Value JsHttp3Session::Goaway(const Napi::CallbackInfo& info) {
  if (Http3Session* s = live()) {
    if (info.Length() > 0 && info[0].IsNumber() && info[0].As<Napi::Number>().Uint32Value() != 0) {
      s->Terminate(static_cast<uint64_t>(http3::H3Error::kInternal));
    } else {
      s->Goaway();
    }
  }
  return info.Env().Undefined();
}

Napi::Value JsHttp3Session::Destroy(const Napi::CallbackInfo& info) {
  if (Http3Session* s = live()) s->Terminate(static_cast<uint64_t>(http3::H3Error::kRequestCancelled));
  return info.Env().Undefined();
}

Napi::Value JsHttp3Session::Peer(const Napi::CallbackInfo& info) {
  Http3Session* s = live();
  return QuicAddressArray(info.Env(), s ? s->connection() : nullptr, AddressKind::kPeer);
}

Napi::Value JsHttp3Session::Local(const Napi::CallbackInfo& info) {
  Http3Session* s = live();
  return QuicAddressArray(info.Env(), s ? s->connection() : nullptr, AddressKind::kLocal);
}

Napi::Value JsHttp3Session::Tls(const Napi::CallbackInfo& info) {
  Http3Session* s = live();
  if (s == nullptr) return info.Env().Null();
  SSL* ssl = s->connection()->ssl();
  return TlsInfoOfSsl(info.Env(), ssl, SSL_is_init_finished(ssl) == 1);
}

Napi::Value JsHttp3Session::TlsQueryMethod(const Napi::CallbackInfo& info) {
  Http3Session* s = live();
  if (s == nullptr || SSL_is_init_finished(s->connection()->ssl()) != 1) return info.Env().Null();
  return TlsQueryOfSsl(info, s->connection()->ssl(), 0);
}

void InitHttp3(Napi::Env env, Napi::Object exports) {
  Napi::Object f = Napi::Object::New(env);
  std::string why;
  bool ok = QuicAvailable(&why);
  f.Set("available", Napi::Boolean::New(env, ok));
  f.Set("reason", ok ? env.Null() : Napi::String::New(env, why));
  f.Set("openssl", Napi::String::New(env, OpenSSL_version(OPENSSL_VERSION)));
  // Where the QUIC server method binds (node's executable, or the libssl a
  // distribution's node links): test/build/quic_linkage.test.js.
  if (ok) {
    SymbolOrigin o = OriginOf(reinterpret_cast<const void*>(&OSSL_QUIC_server_method));
    f.Set("library", Napi::String::New(env, o.library));
    f.Set("inExecutable", Napi::Boolean::New(env, o.in_executable));
  }
  exports.Set("http3", f);
  exports.Set("NativeHttp3Endpoint", JsHttp3Endpoint::Init(env));
  exports.Set("NativeQuicClient", JsQuicClient::Init(env));
  GetAddonData(env)->http3_session_ctor = Napi::Persistent(JsHttp3Session::Init(env));
}

}  // namespace sluice
