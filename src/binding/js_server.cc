#include "binding/js_server.h"

#include <uv.h>

#include "binding/addon_data.h"
#include "binding/js_body_alloc.h"
#include "binding/js_connection.h"
#include "binding/js_core_handle.h"
#include "binding/js_values.h"
#include "binding/js_http1.h"
#include "binding/js_http2.h"
#include "binding/js_static_mount.h"
#include "binding/js_tls.h"
#include "binding/wire_protocol.h"
#include "core/net/connection.h"
#include "core/net/session.h"
#include "core/server/http_session_factory.h"

namespace sluice {

namespace {

uint64_t OptionMs(const Napi::Object& o, const char* name, uint64_t def) {
  Napi::Value v = o.Get(name);
  if (!v.IsNumber()) return def;
  double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= 0)) return def;
  if (d > 1e15) return 0;  // Infinity: no limit
  return static_cast<uint64_t>(d);
}

// Limits (options.h), from createServer options or later server property
// assignments. lib/ validates; here a non-number, negative or infinite
// value means "no limit". Returns false for an unknown name.
bool SetLimit(ServerOptions* o, const std::string& name, const Napi::Value& v) {
  double d = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : -1;
  bool finite = d >= 0 && d < 9e15;
  if (name == "maxHeadersCount") {
    o->max_headers_count = finite ? static_cast<size_t>(d) : 0;
  } else if (name == "maxRequestBodySize") {
    o->max_request_body_size = finite ? static_cast<uint64_t>(d) : UINT64_MAX;
  } else if (name == "maxRequestsPerSocket") {
    o->max_requests_per_socket = finite ? static_cast<uint64_t>(d) : 0;
  } else if (name == "maxConnections") {
    o->max_connections = finite ? static_cast<size_t>(d) : SIZE_MAX;
  } else if (name == "maxOutputBuffer") {
    o->max_output_buffer = finite ? static_cast<size_t>(d) : 0;
  } else if (name == "headersTimeout") {
    // Timeouts (ms; 0 = none) apply from the next deadline each
    // connection sets, as node's server properties.
    o->headers_timeout_ms = finite ? static_cast<uint64_t>(d) : 0;
  } else if (name == "requestTimeout") {
    o->request_timeout_ms = finite ? static_cast<uint64_t>(d) : 0;
  } else if (name == "keepAliveTimeout") {
    o->keep_alive_timeout_ms = finite ? static_cast<uint64_t>(d) : 0;
  } else if (name == "keepAliveTimeoutBuffer") {
    o->keep_alive_timeout_buffer_ms = finite ? static_cast<uint64_t>(d) : 0;
  } else if (name == "http2ConnectProtocol") {
    // From the next session's SETTINGS on (RFC 8441).
    o->http2_connect_protocol = finite && d > 0;
  } else if (name == "tunnelEvents") {
    o->tunnel_events = finite ? static_cast<int>(d) : 0;
  } else if (name == "connectionEvents") {
    o->connection_events = finite && d > 0;
  } else if (name == "keepAliveTimeoutEvents") {
    o->keep_alive_timeout_events = finite && d > 0;
  } else if (name == "httpAllowHalfOpen") {
    o->http_allow_half_open = finite && d > 0;
  } else {
    return false;
  }
  return true;
}

constexpr const char* kLimitNames[] = {"maxHeadersCount", "maxRequestBodySize",
                                       "maxRequestsPerSocket", "maxConnections",
                                       "maxOutputBuffer"};

// Counts a JS->native call so dispatches it triggers do not open a callback
// scope (which would run microtasks in the middle of the caller).
struct JsCallGuard {
  explicit JsCallGuard(int* n) : n_(n) { ++*n_; }
  ~JsCallGuard() { --*n_; }
  int* n_;
};

}  // namespace

Napi::Function JsServer::Init(Napi::Env env) {
  return DefineClass(
      env, "NativeServer",
      {
          InstanceMethod<&JsServer::Listen>("listen"),
          InstanceMethod<&JsServer::ServeStatic>("serveStatic"),
          InstanceMethod<&JsServer::StaticFilesHandle>("staticFiles"),
          InstanceMethod<&JsServer::ListenPipe>("listenPipe"),
          InstanceMethod<&JsServer::ChmodPipe>("chmodPipe"),
          InstanceMethod<&JsServer::Address>("address"),
          InstanceMethod<&JsServer::Close>("close"),
          InstanceMethod<&JsServer::CloseAllConnections>(
              "closeAllConnections"),
          InstanceMethod<&JsServer::CloseIdleConnections>(
              "closeIdleConnections"),
          InstanceMethod<&JsServer::ConnectionCount>("connectionCount"),
          InstanceMethod<&JsServer::Metrics>("metrics"),
          InstanceMethod<&JsServer::OpenAccessLog>("openAccessLog"),
          InstanceMethod<&JsServer::SetLimitMethod>("setLimit"),
          InstanceMethod<&JsServer::DroppedConnections>("droppedConnections"),
          InstanceMethod<&JsServer::Ref>("ref"),
          InstanceMethod<&JsServer::WsDropPool>("wsDropPool"),
          InstanceMethod<&JsServer::SetAltSvc>("setAltSvc"),
          InstanceMethod<&JsServer::SetTls>("setTls"),
          InstanceMethod<&JsServer::SetSecureContext>("setSecureContext"),
          InstanceMethod<&JsServer::AddContext>("addContext"),
          InstanceMethod<&JsServer::TicketKeys>("ticketKeys"),
          InstanceMethod<&JsServer::SetTicketKeys>("setTicketKeys"),
      });
}

JsServer::JsServer(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<JsServer>(info),
      addon_(info.Env(), &AddonData::servers, this) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsObject() || !info[1].IsObject()) {
    Napi::TypeError::New(env, "NativeServer(options, callbacks)")
        .ThrowAsJavaScriptException();
    return;
  }
  Napi::Object opts = info[0].As<Napi::Object>();
  Napi::Object cbs = info[1].As<Napi::Object>();
  ServerOptions o;
  o.max_header_size = OptionMs(opts, "maxHeaderSize", o.max_header_size);
  o.headers_timeout_ms = OptionMs(opts, "headersTimeout", o.headers_timeout_ms);
  o.request_timeout_ms = OptionMs(opts, "requestTimeout", o.request_timeout_ms);
  o.keep_alive_timeout_ms =
      OptionMs(opts, "keepAliveTimeout", o.keep_alive_timeout_ms);
  o.keep_alive_timeout_buffer_ms = OptionMs(opts, "keepAliveTimeoutBuffer",
                                            o.keep_alive_timeout_buffer_ms);
  o.high_water_mark = OptionMs(opts, "highWaterMark", o.high_water_mark);
  o.max_pipelined = OptionMs(opts, "maxPipelined", o.max_pipelined);
  if (opts.Has("sendfile")) o.sendfile = opts.Get("sendfile").ToBoolean().Value();
  for (const char* name : kLimitNames) {
    if (opts.Has(name)) SetLimit(&o, name, opts.Get(name));
  }
  // node's settings.enableConnectProtocol (lib/server/options.js); a
  // WebSocketServer turns it on later through setLimit.
  if (opts.Has("http2ConnectProtocol")) {
    SetLimit(&o, "http2ConnectProtocol", opts.Get("http2ConnectProtocol"));
  }
  if (o.max_pipelined == 0) o.max_pipelined = 1;
  // HTTP/2 sizes and counts (lib/server/options.js http2NativeOptions).
  static constexpr struct {
    const char* name;
    size_t ServerOptions::*field;
  } kHttp2Sizes[] = {
      {"http2MaxConcurrentStreams", &ServerOptions::http2_max_concurrent_streams},
      {"http2StreamWindow", &ServerOptions::http2_stream_window},
      {"http2ConnectionWindow", &ServerOptions::http2_connection_window},
      {"http2MaxHeaderListSize", &ServerOptions::http2_max_header_list_size},
      {"http2MaxHeaderPairs", &ServerOptions::http2_max_header_pairs},
      {"http2MaxInvalidFrames", &ServerOptions::http2_max_invalid_frames},
      {"http2MaxSettings", &ServerOptions::http2_max_settings},
  };
  for (const auto& h : kHttp2Sizes) {
    o.*h.field = OptionMs(opts, h.name, o.*h.field);
  }
  http1_.reset(new JsHttp1(env, cbs));
  if (JsHttp2::Wanted(cbs)) http2_.reset(new JsHttp2(env, cbs));
  if (JsWebSocket::Wanted(cbs)) ws_.reset(new JsWebSocket(env, cbs));
  o.body_allocator = opts.Get("bodyAllocator").ToBoolean().Value();
  if (opts.Has("noDelay")) o.no_delay = opts.Get("noDelay").ToBoolean().Value();
  o.insecure_http_parser = opts.Get("insecureHTTPParser").ToBoolean().Value();
  o.tcp_keep_alive = opts.Get("tcpKeepAlive").ToBoolean().Value();
  o.tcp_keep_alive_delay_s = static_cast<unsigned int>(
      OptionMs(opts, "tcpKeepAliveDelay", o.tcp_keep_alive_delay_s));
  o.body_buffer_size = OptionMs(opts, "bodyBufferSize", o.body_buffer_size);
  if (o.body_buffer_size == 0) o.body_buffer_size = 65536;
  SLUICE_SERVER_CALLBACKS(SLUICE_CALLBACK_READ)
  callbacks_ref_ = Napi::Weak(cbs);

  Napi::Object resource = Napi::Object::New(env);
  resource_ = Napi::Persistent(resource);
  async_context_.Init(env, resource, "SLUICE_HTTP");
  uv_loop_t* loop = nullptr;
  napi_get_uv_event_loop(env, &loop);
  listener_ = new Listener(loop, this, HttpSessionFactory::Get(), o);
}

JsServer::~JsServer() {
  if (listener_) listener_->Release();
}

void JsServer::Teardown() {
  addon_.Forget();
  if (!listener_) return;
  // Copy: detaching changes nothing in the list, but be independent of it.
  std::vector<Connection*> conns = listener_->connections();
  for (Connection* c : conns) DetachConnection(c);
  // The addon data (and its open-file cache) goes with the environment.
  if (StaticFiles* sf = listener_->static_files()) sf->set_cache_provider(nullptr);
  listener_->Release();
  listener_ = nullptr;
  if (self_held_) {
    self_held_ = false;
    self_ref_.Reset();
    callbacks_ref_.Unref();
  }
}

void JsServer::DetachConnection(Connection* c) {
  if (http2_) http2_->DetachConnection(c);
  JsConnection* jc = static_cast<JsConnection*>(c->user_data);
  if (!jc) return;
  jc->Detach();
  c->user_data = nullptr;
}

// ---- JS methods ------------------------------------------------------------

Napi::Value JsServer::Listen(const Napi::CallbackInfo& info) {
  JsCallGuard guard(&js_calls_);
  Napi::Env env = info.Env();
  std::string host = info[0].As<Napi::String>().Utf8Value();
  int port = info[1].As<Napi::Number>().Int32Value();
  int backlog = info[2].IsNumber() ? info[2].As<Napi::Number>().Int32Value()
                                   : 511;
  bool reuse_port = info.Length() > 3 && info[3].ToBoolean().Value();
  if (!listener_) return Napi::Number::New(env, UV_EINVAL);
  int r = listener_->Listen(host.c_str(), port, backlog, reuse_port);
  if (r == 0) HoldSelf();
  return Napi::Number::New(env, r);
}

Napi::Value JsServer::ListenPipe(const Napi::CallbackInfo& info) {
  JsCallGuard guard(&js_calls_);
  Napi::Env env = info.Env();
  std::string path = info[0].As<Napi::String>().Utf8Value();
  int backlog = info[1].IsNumber() ? info[1].As<Napi::Number>().Int32Value() : 511;
  if (!listener_) return Napi::Number::New(env, UV_EINVAL);
  int r = listener_->ListenPipe(path.c_str(), backlog);
  if (r == 0) HoldSelf();
  return Napi::Number::New(env, r);
}

Napi::Value JsServer::ChmodPipe(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!listener_) return Napi::Number::New(env, UV_EINVAL);
  return Napi::Number::New(env, listener_->ChmodPipe(info[0].ToBoolean().Value(),
                                                     info[1].ToBoolean().Value()));
}

void JsServer::HoldSelf() {
  if (self_held_) return;
  self_ref_ = Napi::Persistent(Value());
  callbacks_ref_.Ref();
  self_held_ = true;
}

Napi::Value JsServer::Address(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string ip;
  int port = 0, family = 0;
  // As node: a Unix socket's address is its path.
  if (listener_ && listener_->listening() && listener_->is_pipe()) {
    return Napi::String::New(env, listener_->pipe_path());
  }
  if (!listener_ || listener_->GetAddress(&ip, &port, &family) != 0) return env.Null();
  Napi::Object o = Napi::Object::New(env);
  o.Set("address", ip);
  o.Set("family", family == 6 ? "IPv6" : "IPv4");
  o.Set("port", port);
  return o;
}

Napi::Value JsServer::Close(const Napi::CallbackInfo& info) {
  JsCallGuard guard(&js_calls_);
  if (listener_) listener_->Close();
  return info.Env().Undefined();
}

Napi::Value JsServer::CloseAllConnections(const Napi::CallbackInfo& info) {
  JsCallGuard guard(&js_calls_);
  if (listener_) listener_->CloseAllConnections();
  return info.Env().Undefined();
}

Napi::Value JsServer::CloseIdleConnections(const Napi::CallbackInfo& info) {
  JsCallGuard guard(&js_calls_);
  if (listener_) listener_->CloseIdleConnections();
  return info.Env().Undefined();
}

// setLimit(name, value): a server property assignment (server.maxConnections
// = n...). Applies from the next request or connection. Returns false for
// an unknown name.
Napi::Value JsServer::SetLimitMethod(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!listener_ || info.Length() < 2 || !info[0].IsString()) {
    return Napi::Boolean::New(env, false);
  }
  bool ok = SetLimit(&listener_->mutable_options(),
                     info[0].As<Napi::String>().Utf8Value(), info[1]);
  return Napi::Boolean::New(env, ok);
}

Napi::Value JsServer::Ref(const Napi::CallbackInfo& info) {
  if (listener_) listener_->SetRef(info.Length() > 0 && info[0].ToBoolean().Value());
  return info.Env().Undefined();
}

Napi::Value JsServer::SetAltSvc(const Napi::CallbackInfo& info) {
  if (listener_ && info.Length() > 0 && info[0].IsString()) {
    listener_->set_alt_svc(info[0].As<Napi::String>().Utf8Value());
  }
  return info.Env().Undefined();
}

Napi::Value JsServer::WsDropPool(const Napi::CallbackInfo& info) {
  if (ws_) ws_->DropPool();
  return info.Env().Undefined();
}

Napi::Value JsServer::DroppedConnections(const Napi::CallbackInfo& info) {
  if (!listener_) return Napi::Number::New(info.Env(), 0);
  return Napi::Number::New(info.Env(),
                           static_cast<double>(listener_->dropped_connections()));
}

Napi::Value JsServer::ConnectionCount(const Napi::CallbackInfo& info) {
  if (!listener_) return Napi::Number::New(info.Env(), 0);
  return Napi::Number::New(info.Env(),
                           static_cast<double>(listener_->connection_count()));
}

Napi::Object MetricsObject(Napi::Env env, const ServerMetrics& m) {
  auto array = [&env](const auto* values, size_t n) {
    Napi::Array a = Napi::Array::New(env, n);
    for (size_t i = 0; i < n; i++) a.Set(static_cast<uint32_t>(i), static_cast<double>(values[i]));
    return a;
  };
  auto names = [&env](const char* const* values, uint32_t n) {
    Napi::Array a = Napi::Array::New(env, n);
    for (uint32_t i = 0; i < n; i++) a.Set(i, values[i]);
    return a;
  };
  static const char* const kMethodNames[] = {"GET", "HEAD", "POST", "PUT",
                                             "DELETE", "PATCH", "OPTIONS", "_OTHER"};
  static_assert(sizeof(kMethodNames) / sizeof(kMethodNames[0]) == ServerMetrics::kMethods);
  Napi::Object o = Napi::Object::New(env);
  o.Set("methods", names(kMethodNames, ServerMetrics::kMethods));
  o.Set("buckets", array(ServerMetrics::kBuckets, ServerMetrics::kBucketCount));
  o.Set("requests", array(&m.requests[0][0][0], sizeof(m.requests) / sizeof(uint64_t)));
  o.Set("durations", array(&m.durations[0][0], sizeof(m.durations) / sizeof(uint64_t)));
  o.Set("durationSum", array(m.duration_sum, ServerMetrics::kProtocols));
  o.Set("refusalNames", names(ServerMetrics::kRefusalNames, ServerMetrics::kRefusals));
  o.Set("refused", array(&m.refused[0][0], sizeof(m.refused) / sizeof(uint64_t)));
  o.Set("streamsOpen", array(m.streams_open, ServerMetrics::kProtocols));
  o.Set("connectionsAccepted", static_cast<double>(m.connections_accepted));
  o.Set("h2ResetsReceived", static_cast<double>(m.h2_resets_received));
  o.Set("h2ResetsSent", static_cast<double>(m.h2_resets_sent));
  o.Set("h2GoawaysReceived", static_cast<double>(m.h2_goaways_received));
  o.Set("h2GoawaysSent", static_cast<double>(m.h2_goaways_sent));
  o.Set("wsMessagesReceived", static_cast<double>(m.ws_messages_received));
  o.Set("wsMessagesSent", static_cast<double>(m.ws_messages_sent));
  o.Set("wsSendsDropped", static_cast<double>(m.ws_sends_dropped));
  o.Set("wsPublishesDropped", static_cast<double>(m.ws_publishes_dropped));
  return o;
}

Napi::Value JsServer::Metrics(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!listener_) return env.Null();
  // Bytes: those of closed connections plus the open ones' so far.
  uint64_t in = listener_->metrics().closed_bytes_in;
  uint64_t out = listener_->metrics().closed_bytes_out;
  uint32_t websockets = 0;
  for (Connection* c : listener_->connections()) {
    in += c->bytes_read();
    out += c->writer().bytes_written();
    if (c->session() != nullptr && c->session()->AsWebSocket() != nullptr) websockets++;
  }
  Napi::Object o = MetricsObject(env, listener_->metrics());
  o.Set("connectionsOpen", static_cast<double>(listener_->connection_count()));
  o.Set("connectionsDropped", static_cast<double>(listener_->dropped_connections()));
  o.Set("bytesIn", static_cast<double>(in));
  o.Set("bytesOut", static_cast<double>(out));
  o.Set("websocketsOpen", websockets);
  if (AccessLog* log = listener_->access_log()) {
    o.Set("accessLogWritten", static_cast<double>(log->lines_written()));
    o.Set("accessLogDropped", static_cast<double>(log->lines_dropped()));
  }
  return o;
}

Napi::Value JsServer::OpenAccessLog(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!listener_ || info.Length() < 3 || !info[0].IsString() || !info[1].IsNumber() ||
      !info[2].IsNumber()) {
    return Napi::Number::New(env, UV_EINVAL);
  }
  const int format = info[1].As<Napi::Number>().Int32Value();
  const double capacity = info[2].As<Napi::Number>().DoubleValue();
  if ((format != AccessLog::kCombined && format != AccessLog::kJson) || !(capacity >= 1)) {
    return Napi::Number::New(env, UV_EINVAL);
  }
  int err = 0;
  std::unique_ptr<AccessLog> log = AccessLog::Open(
      info[0].As<Napi::String>().Utf8Value(), static_cast<AccessLog::Format>(format),
      static_cast<size_t>(capacity), &err);
  if (!log) return Napi::Number::New(env, err);
  listener_->set_access_log(std::move(log));
  return Napi::Number::New(env, 0);
}

namespace {

bool SetKeys(TlsServer* tls, const Napi::Value& v) {
  Napi::Buffer<char> b = v.As<Napi::Buffer<char>>();
  return tls->SetTicketKeys(std::string(b.Data(), b.Length()));
}

}  // namespace

Napi::Value JsServer::SetTls(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!listener_) return env.Undefined();
  TlsContext ctx = ContextArgOrThrow(info, 0);
  if (!ctx) return env.Undefined();
  std::unique_ptr<TlsServer> tls(new TlsServer(std::move(ctx)));
  if (info.Length() > 1 && info[1].IsObject()) {
    Napi::Object o = info[1].As<Napi::Object>();
    tls->handshake_timeout_ms =
        OptionMs(o, "handshakeTimeout", tls->handshake_timeout_ms);
    tls->allow_http1 = o.Get("allowHTTP1").ToBoolean().Value();
    tls->sni_callback = o.Get("sniCallback").ToBoolean().Value();
    tls->refuse_unverified = o.Get("refuseUnverified").ToBoolean().Value();
  }
  Napi::Object opts = info[0].IsObject() ? info[0].As<Napi::Object>() : Napi::Object::New(env);
  if (opts.Get("ticketKeys").IsBuffer() && !SetKeys(tls.get(), opts.Get("ticketKeys"))) {
    Napi::RangeError::New(env, "ticketKeys must be 48 bytes").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  listener_->set_tls(std::move(tls));
  return env.Undefined();
}

Napi::Value JsServer::SetSecureContext(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!listener_ || !listener_->tls()) return env.Undefined();
  TlsContext ctx = ContextArgOrThrow(info, 0);
  if (!ctx) return env.Undefined();
  listener_->tls()->SetDefault(std::move(ctx));
  Napi::Value keys = info[0].IsObject() ? info[0].As<Napi::Object>().Get("ticketKeys") : env.Undefined();
  if (keys.IsBuffer()) SetKeys(listener_->tls(), keys);
  return env.Undefined();
}

Napi::Value JsServer::TicketKeys(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!listener_ || !listener_->tls()) return env.Undefined();
  std::string keys = listener_->tls()->ticket_keys_bytes();
  return Napi::Buffer<char>::Copy(env, keys.data(), keys.size());
}

Napi::Value JsServer::SetTicketKeys(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!listener_ || !listener_->tls() || info.Length() < 1 || !info[0].IsBuffer() ||
      !SetKeys(listener_->tls(), info[0])) {
    Napi::RangeError::New(env, "ticketKeys must be 48 bytes").ThrowAsJavaScriptException();
  }
  return env.Undefined();
}

Napi::Value JsServer::AddContext(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!listener_ || !listener_->tls() || !info[0].IsString()) return env.Undefined();
  TlsContext ctx = ContextArgOrThrow(info, 1);
  if (ctx) listener_->tls()->AddSni(info[0].As<Napi::String>().Utf8Value(), std::move(ctx));
  return env.Undefined();
}

// ---- ServerDelegate: lifecycle ----------------------------------------------------------

void JsServer::OnDispatchBegin() {
  napi_env env = Env();
  napi_open_handle_scope(env, &handle_scope_);
  callback_scope_ = nullptr;
  if (js_calls_ == 0) {
    napi_open_callback_scope(env, resource_.Value(), async_context_.get(),
                             &callback_scope_);
  }
}

void JsServer::OnDispatchEnd() {
  napi_env env = Env();
  if (callback_scope_) {
    // Runs process.nextTick callbacks and microtasks queued by handlers.
    napi_close_callback_scope(env, callback_scope_);
    callback_scope_ = nullptr;
  }
  napi_close_handle_scope(env, handle_scope_);
  handle_scope_ = nullptr;
}

void JsServer::OnTunnelData(Connection* c, const char* data, size_t len) {
  // A copy: the read buffer is reused by the next read. (Zero-copy reads
  // into user memory are for request bodies, not tunnels.)
  napi_value argv[2] = {ConnectionObject(Env(), c), BufferCopy(Env(), data, len)};
  CallJs(Env(), on_tunnel_data_, 2, argv);
}

void JsServer::OnTunnelEnd(Connection* c) {
  napi_value argv[1] = {ConnectionObject(Env(), c)};
  CallJs(Env(), on_tunnel_end_, 1, argv);
}

void JsServer::OnConnection(Connection* c) {
  if (on_connection_.IsEmpty()) return;
  napi_value argv[1] = {ConnectionObject(Env(), c)};
  CallJs(Env(), on_connection_, 1, argv);
}

ServerDelegate::BufferResult JsServer::AcquireBodyBuffer(Connection* c,
                                                         size_t size,
                                                         char** base,
                                                         size_t* len) {
  napi_env env = Env();
  // Called from the socket's alloc callback, outside any dispatch: a
  // handle scope of our own, and no callback scope (a JS allocator is
  // synchronous; what it queues runs at the next dispatch's end).
  Napi::HandleScope scope(env);
  napi_value argv[2] = {ConnectionObject(Env(), c),
                        Int(env, static_cast<int64_t>(size))};
  napi_value r = CallJs(Env(), on_alloc_, 2, argv);
  return BodyAllocAnswer<BufferResult>(env, r, base, len);
}

void JsServer::ReleaseBodyBuffer(Connection* c) {
  if (!c->user_data) return;
  napi_value argv[1] = {ConnectionObject(Env(), c)};
  CallJs(Env(), on_release_body_, 1, argv);
}

void JsServer::OnDrain(Connection* c) {
  if (!c->user_data) return;
  napi_value argv[1] = {ConnectionObject(Env(), c)};
  CallJs(Env(), on_drain_, 1, argv);
}

Http1Delegate* JsServer::http1() { return http1_.get(); }

Http2Delegate* JsServer::http2() { return http2_.get(); }

WsDelegate* JsServer::websocket() { return ws_.get(); }

void JsServer::OnSecureConnection(Connection* c) {
  if (on_secure_.IsEmpty()) return;
  napi_value argv[1] = {ConnectionObject(Env(), c)};
  CallJs(Env(), on_secure_, 1, argv);
}

void JsServer::OnSniRequest(Connection* c, const char* servername) {
  napi_env env = Env();
  if (on_sni_.IsEmpty()) {
    c->SniAnswered(TlsContext());
    return;
  }
  napi_value argv[2] = {ConnectionObject(env, c), nullptr};
  napi_create_string_utf8(env, servername, NAPI_AUTO_LENGTH, &argv[1]);
  CallJs(env, on_sni_, 2, argv);
}

void JsServer::OnTlsClientError(Connection* c, const char* code,
                                const char* message) {
  if (on_tls_error_.IsEmpty()) return;
  napi_env env = Env();
  napi_value argv[3] = {ConnectionObject(env, c), nullptr, nullptr};
  napi_create_string_utf8(env, code, NAPI_AUTO_LENGTH, &argv[1]);
  napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &argv[2]);
  CallJs(Env(), on_tls_error_, 3, argv);
}

void JsServer::OnConnectionClose(Connection* c) {
  if (http2_) http2_->OnConnectionClose(c);
  JsConnection* jc = static_cast<JsConnection*>(c->user_data);
  if (!jc) return;
  napi_value argv[1] = {jc->Value()};
  DetachConnection(c);
  CallJs(Env(), on_close_, 1, argv);
}

void JsServer::OnConnectionDropped(const DroppedConnection& d) {
  if (on_drop_.IsEmpty()) return;
  Napi::Env env = Env();
  // node's 'drop' argument.
  Napi::Object o = Napi::Object::New(env);
  auto family = [](int f) { return f == 6 ? "IPv6" : "IPv4"; };
  o.Set("localAddress", std::string(d.local_ip));
  o.Set("localPort", d.local_port);
  o.Set("localFamily", family(d.local_family));
  o.Set("remoteAddress", std::string(d.remote_ip));
  o.Set("remotePort", d.remote_port);
  o.Set("remoteFamily", family(d.remote_family));
  napi_value argv[1] = {o};
  CallJs(Env(), on_drop_, 1, argv);
}

void JsServer::OnServerClosed() {
  CallJs(Env(), on_server_close_, 0, nullptr);
  if (self_held_) {
    self_held_ = false;
    self_ref_.Reset();
    callbacks_ref_.Unref();
  }
}

Napi::Value JsServer::ServeStatic(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!listener_) return Napi::Number::New(env, UV_EINVAL);
  auto m = std::make_shared<StaticMount>();
  if (!NormalizePrefix(info[0].As<Napi::String>().Utf8Value(), &m->prefix)) {
    return Napi::Number::New(env, UV_EINVAL);
  }
  // Absolute, checked in JS.
  SetStaticMountRoot(info[1].As<Napi::String>().Utf8Value(), m.get());
  ReadStaticMountOptions(info[2].As<Napi::Object>(), &m->options);
  m->id = StaticFiles::NextMountId();
  StaticFiles& sf = listener_->EnsureStaticFiles();
  AddonData* data = addon_.get();
  sf.set_cache_provider([data]() -> OpenFileCache* {
    return data != nullptr ? data->file_cache.get() : nullptr;
  });
  sf.Add(std::move(m));
  return Napi::Number::New(env, 0);
}

Napi::Value JsServer::StaticFilesHandle(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!listener_) return env.Undefined();
  return WrapStaticFiles(env, listener_->SharedStaticFiles());
}

}  // namespace sluice
