#include "binding/js_websocket.h"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "binding/addon_data.h"
#include "binding/js_connection.h"
#include "binding/js_core_handle.h"
#include "binding/js_http2_session.h"
#include "binding/js_values.h"
#include "binding/wire_protocol.h"
#include "core/stream/header_list.h"
#include "core/http2/http2_session.h"
#include "core/net/connection.h"
#include "core/net/output_queue.h"
#include "core/net/tunnel_session.h"
#include "core/websocket/ws_connection_session.h"
#include "core/websocket/ws_frame.h"
#include "core/websocket/ws_session.h"

namespace sluice {

// ---- JsWebSocket: core events -> lib/ ----------------------------------------

bool JsWebSocket::Wanted(const Napi::Object& callbacks) {
  return callbacks.Get("onWsMessage").IsFunction();
}

JsWebSocket::JsWebSocket(Napi::Env env, const Napi::Object& cbs) : env_(env) {
  SLUICE_WS_CALLBACKS(SLUICE_CALLBACK_READ)
  pool_ = !on_alloc_.IsEmpty() && !on_pool_message_.IsEmpty();
}

void JsWebSocket::DropPool() {
  slab_.Reset();
  slab_data_ = nullptr;
  slab_cap_ = slab_used_ = 0;
}

bool JsWebSocket::PoolRoom(size_t len) {
  if (slab_cap_ - slab_used_ >= len) return true;
  // The current buffer is full (or there is none). lib/ answers a new
  // buffer (its hold on the old one dropped: messages cut from it keep
  // their own), 0 when this message is larger than the allocator's buffers
  // (copied; the current buffer stays), or anything else when the
  // allocator is dry or failed (copied; no current buffer).
  napi_value argv[1] = {Int(env_, static_cast<int64_t>(len))};
  napi_value r = CallJs(env_, on_alloc_, 1, argv);
  if (r == nullptr) return false;
  napi_valuetype type = napi_undefined;
  napi_typeof(env_, r, &type);
  if (type == napi_number) return false;
  DropPool();
  bool is_buffer = false;
  napi_is_buffer(env_, r, &is_buffer);
  if (!is_buffer) return false;
  void* data = nullptr;
  size_t n = 0;
  napi_get_buffer_info(env_, r, &data, &n);
  slab_ = Napi::Persistent(Napi::Object(env_, r));
  slab_data_ = static_cast<char*>(data);
  slab_cap_ = n;
  return n >= len;
}

bool JsWebSocket::Target(WebSocketSession* ws, napi_value* argv, size_t at,
                         size_t* argc) {
  WsTransport* t = ws->transport();
  Connection* c = t->connection();
  if (t->stream_id() == 0) {
    if (!c->user_data) return false;
    argv[0] = ConnectionObject(env_, c);
    return true;
  }
  auto* h2 = dynamic_cast<Http2Session*>(c->session());
  if (h2 == nullptr || h2->user_data == nullptr) return false;
  argv[0] = HandleFor<JsHttp2Session>(h2, GetAddonData(env_)->http2_session_ctor);
  argv[at] = Int(env_, t->stream_id());
  (*argc)++;
  return true;
}

void JsWebSocket::OnWsMessage(WebSocketSession* ws, bool binary, const char* data,
                              size_t len) {
  if (pool_ && len > 0) {
    napi_value argv[5];
    size_t argc = 4;
    if (!Target(ws, argv, 4, &argc)) return;
    if (PoolRoom(len)) {
      // Copied into pool memory; lib/ cuts the view at (offset, len).
      memcpy(slab_data_ + slab_used_, data, len);
      argv[1] = Int(env_, static_cast<int64_t>(slab_used_));
      argv[2] = Int(env_, static_cast<int64_t>(len));
      napi_get_boolean(env_, binary, &argv[3]);
      slab_used_ += len;
      CallJs(env_, on_pool_message_, argc, argv);
      return;
    }
  }
  napi_value argv[4];
  size_t argc = 3;
  if (!Target(ws, argv, 3, &argc)) return;
  // A copy the handler may keep (the parser reuses its buffer), as an
  // ArrayBuffer: lib/ makes the message's Buffer over it in JS, where the
  // Buffer gets its map at construction; napi_create_buffer_copy (node's
  // Buffer::Copy) sets each Buffer's prototype from C++, a map migration
  // per message that cost more than the rest of the copy.
  void* out = nullptr;
  if (napi_create_arraybuffer(env_, len, &out, &argv[1]) != napi_ok) return;
  if (len > 0) memcpy(out, data, len);
  napi_get_boolean(env_, binary, &argv[2]);
  CallJs(env_, on_message_, argc, argv);
}

void JsWebSocket::CallWithPayload(WebSocketSession* ws, const char* data, size_t len,
                                  const Napi::FunctionReference& cb) {
  napi_value argv[3];
  size_t argc = 2;
  if (!Target(ws, argv, 2, &argc)) return;
  argv[1] = BufferCopy(env_, data, len);
  CallJs(env_, cb, argc, argv);
}

void JsWebSocket::OnWsPing(WebSocketSession* ws, const char* data, size_t len) {
  CallWithPayload(ws, data, len, on_ping_);
}

void JsWebSocket::OnWsPong(WebSocketSession* ws, const char* data, size_t len) {
  CallWithPayload(ws, data, len, on_pong_);
}

void JsWebSocket::OnWsPeerClose(WebSocketSession* ws, int code, const char* reason,
                                size_t len) {
  napi_value argv[4];
  size_t argc = 3;
  if (!Target(ws, argv, 3, &argc)) return;
  argv[1] = Int(env_, code);
  argv[2] = BufferCopy(env_, reason, len);
  CallJs(env_, on_peer_close_, argc, argv);
}

void JsWebSocket::OnWsError(WebSocketSession* ws, int code, const char* message) {
  napi_value argv[4];
  size_t argc = 3;
  if (!Target(ws, argv, 3, &argc)) return;
  argv[1] = Int(env_, code);
  napi_create_string_utf8(env_, message, NAPI_AUTO_LENGTH, &argv[2]);
  CallJs(env_, on_error_, argc, argv);
}

// ---- JsWsHub -----------------------------------------------------------------

namespace {

Napi::Value IntV(napi_env env, int64_t n) { return Napi::Value(env, Int(env, n)); }

bool TopicArg(const Napi::Value& v, std::string* out) {
  if (!v.IsString()) return false;
  *out = v.As<Napi::String>().Utf8Value();
  return true;
}

}  // namespace

// lib/'s nativeConfig (permessage_deflate.js) -> the native config.
WsDeflateConfig WsCalls::DeflateConfigFrom(const Napi::Object& d) {
  auto dnum = [&](const char* name, double dflt) {
    Napi::Value v = d.Get(name);
    return v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : dflt;
  };
  WsDeflateConfig dc;
  dc.enabled = true;
  dc.server_no_context_takeover = d.Get("serverNoContextTakeover").ToBoolean().Value();
  dc.client_no_context_takeover = d.Get("clientNoContextTakeover").ToBoolean().Value();
  dc.server_max_window_bits = static_cast<int>(dnum("serverMaxWindowBits", 15));
  dc.client_max_window_bits = static_cast<int>(dnum("clientMaxWindowBits", 15));
  dc.level = static_cast<int>(dnum("level", 1));
  dc.mem_level = static_cast<int>(dnum("memLevel", 8));
  dc.threshold = static_cast<size_t>(dnum("threshold", 1024));
  dc.shared = d.Get("shared").ToBoolean().Value();
  return dc;
}

WsConfig WsCalls::ConfigFrom(const Napi::Object& o) {
  auto num = [&](const char* name, double dflt) {
    Napi::Value v = o.Get(name);
    return v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : dflt;
  };
  WsConfig cfg;
  const double max_payload = num("maxPayload", 100 * 1024 * 1024);
  // 0 or Infinity (or beyond 2^53): no limit.
  cfg.parser.max_payload =
      max_payload > 0 && max_payload < 9007199254740992.0 ? static_cast<uint64_t>(max_payload) : 0;
  cfg.parser.skip_utf8 = o.Get("skipUTF8Validation").ToBoolean().Value();
  cfg.auto_pong = o.Get("autoPong").ToBoolean().Value();
  // ws reads both as `n | 0` and applies them when > 0: 0, a negative
  // number or Infinity turns the limit off.
  auto limit = [&](const char* name, double dflt) {
    const double v = num(name, dflt);
    return v >= 1 && v <= 4294967295.0 ? static_cast<uint32_t>(v) : 0u;
  };
  cfg.max_pending_auto_pongs = limit("maxPendingAutoPongs", 60);
  cfg.parser.max_fragments = limit("maxFragments", 16 * 1024);
  cfg.idle_timeout_ms = static_cast<uint32_t>(num("idleTimeout", 0));
  cfg.close_timeout_ms = static_cast<uint32_t>(num("closeTimeout", 30000));
  const double mb = num("maxBackpressure", 0);
  cfg.max_backpressure = mb > 0 && mb < 9007199254740992.0 ? static_cast<size_t>(mb) : 0;
  // permessage-deflate as lib/ negotiated it (an object), or absent.
  Napi::Value pmd = o.Get("deflate");
  if (pmd.IsObject()) {
    cfg.deflate = DeflateConfigFrom(pmd.As<Napi::Object>());
    cfg.parser.rsv1_allowed = true;
  }
  return cfg;
}


Napi::Function JsWsHub::Init(Napi::Env env) {
  Napi::Function f = DefineClass(
      env, "NativeWsHub",
      {
          InstanceMethod<&JsWsHub::Publish>("publish"),
          InstanceMethod<&JsWsHub::Subscribers>("subscribers"),
          InstanceMethod<&JsWsHub::WatchTopics>("watchTopics"),
      });
  GetAddonData(env)->ws_hub_ctor = Napi::Persistent(f);
  return f;
}

// new NativeWsHub([sharedDeflate]): sharedDeflate, lib/'s nativeConfig of
// the server's options, turns the shared compressor on.
JsWsHub::JsWsHub(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<JsWsHub>(info), hub_(std::make_shared<WsHub>()) {
  if (info.Length() > 0 && info[0].IsObject()) {
    hub_->EnableSharedDeflate(WsCalls::DeflateConfigFrom(info[0].As<Napi::Object>()));
  }
}

namespace {

// publish's `compress` argument: anything but false compresses.
bool CompressArg(const Napi::Value& v) {
  return !(v.IsBoolean() && !v.As<Napi::Boolean>().Value());
}

}  // namespace

std::shared_ptr<WsHub> JsWsHub::From(napi_env env, napi_value v) {
  AddonData* data = GetAddonData(env);
  if (data == nullptr || data->ws_hub_ctor.IsEmpty() || v == nullptr) return nullptr;
  bool is = false;
  if (napi_instanceof(env, v, data->ws_hub_ctor.Value(), &is) != napi_ok || !is) {
    return nullptr;
  }
  JsWsHub* h = Napi::ObjectWrap<JsWsHub>::Unwrap(Napi::Object(env, v));
  return h ? h->hub_ : nullptr;
}

// publish(topic, data, opcode, compress) -> subscribers the frame was
// queued for
Napi::Value JsWsHub::Publish(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  std::string topic;
  const char* data = nullptr;
  size_t len = 0;
  std::string text;
  if (!TopicArg(info[0], &topic)) return IntV(env, 0);
  if (info[1].IsString()) {
    text = info[1].As<Napi::String>().Utf8Value();
    data = text.data();
    len = text.size();
  } else if (!GetBytes(env, info[1], &data, &len)) {
    return IntV(env, 0);
  }
  const uint8_t opcode = static_cast<uint8_t>(info[2].As<Napi::Number>().Uint32Value());
  WsHub::PublishResult r = hub_->Publish(topic, opcode, data, len, nullptr, CompressArg(info[3]));
  return IntV(env, static_cast<int64_t>(r.queued));
}

Napi::Value JsWsHub::Subscribers(const Napi::CallbackInfo& info) {
  std::string topic;
  if (!TopicArg(info[0], &topic)) return IntV(info.Env(), 0);
  return IntV(info.Env(), static_cast<int64_t>(hub_->Subscribers(topic)));
}

// Sessions may keep the hub after this object is collected: the watch must
// not point here any longer.
JsWsHub::~JsWsHub() {
  if (!on_topics_.IsEmpty()) hub_->WatchTopics(nullptr, nullptr);
}

// watchTopics(fn | null). Starting reports every topic subscribed so far.
Napi::Value JsWsHub::WatchTopics(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  if (info[0].IsFunction()) {
    on_topics_ = Napi::Persistent(info[0].As<Napi::Function>());
    if (async_context_.get() == nullptr) async_context_.Init(env, info.This(), "sluice.WsTopicWatch");
    uv_loop_t* loop = nullptr;
    napi_get_uv_event_loop(env, &loop);
    hub_->WatchTopics(loop, this);
  } else {
    on_topics_.Reset();
    hub_->WatchTopics(nullptr, nullptr);
  }
  return info.Env().Undefined();
}

void JsWsHub::OnTopicsChanged() {
  napi_env env = Env();
  AddonData* data = GetAddonData(env);
  if (data == nullptr || data->tearing_down || on_topics_.IsEmpty()) return;
  Napi::HandleScope scope(env);
  std::vector<std::pair<std::string, bool>> changes = hub_->TakeTopicChanges();
  Napi::Array a = Napi::Array::New(env, changes.size() * 2);
  uint32_t i = 0;
  for (const auto& c : changes) {
    a.Set(i++, Napi::String::New(env, c.first));
    a.Set(i++, Napi::Boolean::New(env, c.second));
  }
  napi_value argv[1] = {a};
  napi_value recv = Value(), result;
  if (recv == nullptr) return;
  // From a libuv timer: node's MakeCallback semantics (nextTicks and
  // microtasks run after it).
  UncaughtIfThrown(env, napi_make_callback(env, async_context_.get(), recv, on_topics_.Value(),
                                           1, argv, &result));
}

// ---- JsConnection's WebSocket methods -------------------------------------------

WebSocketSession* JsConnection::ws() const {
  Connection* c = core();
  if (!c || c->destroyed()) return nullptr;
  Session* s = c->session();
  return s != nullptr ? s->AsWebSocket() : nullptr;
}

// wsAccept(responseHead, config, hub) -> 0 or kResultClosed. The
// connection is a tunnel (an accepted Upgrade): the 101 response is
// queued and the connection speaks WebSocket from its next read on.
Napi::Value JsConnection::WsAccept(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  Connection* c = alive();
  if (!c || c->closing() || dynamic_cast<TunnelSession*>(c->session()) == nullptr ||
      !info[1].IsObject()) {
    return IntV(env, kResultClosed);
  }
  WsConfig cfg = WsCalls::ConfigFrom(info[1].As<Napi::Object>());
  std::string head;
  Latin1(env, info[0], &head);
  c->writer().queue().Append(head.data(), head.size());
  auto* s = new WsConnectionSession(c, cfg, JsWsHub::From(env, info[2]));
  // The tunnel (and the HTTP/1.1 session before it) may be on the stack
  // (an 'upgrade' listener answering at once): both are retired, freed
  // with the connection.
  c->ReplaceSession(s);
  s->Start();
  c->MarkDirty();
  return IntV(env, 0);
}

// wsFeed(bytes): input that arrived with the handshake (the 'upgrade'
// head) or while it was decided, parsed as if just read. Called from JS,
// so not inside a dispatch: output is flushed at the end of the loop turn.
Napi::Value JsConnection::WsFeed(const Napi::CallbackInfo& info) {
  WebSocketSession* s = ws();
  const char* data;
  size_t len;
  if (s && GetBytes(info.Env(), info[0], &data, &len) && len > 0) {
    // The session reads from its own copy: the Buffer is JS memory that a
    // handler called from OnRead could change.
    std::string copy(data, len);
    s->OnRead(copy.data(), copy.size());
  }
  return info.Env().Undefined();
}

// wsSend(data, opcode, fin, compress, copy) -> WsSendResult. copy: the
// bytes are copied into the queue whatever their size (pool memory, which
// may be released and read into before the queue is written).
Napi::Value WsCalls::Send(const Napi::CallbackInfo& info, WebSocketSession* s, size_t a) {
  napi_env env = info.Env();
  if (!s) return IntV(env, kWsNotOpen);
  JsConnection::BodyArg body;
  if (!JsConnection::ReadBody(env, info[a], &body)) return IntV(env, kResultBadBody);
  const uint8_t opcode = static_cast<uint8_t>(info[a + 1].As<Napi::Number>().Uint32Value());
  const bool fin = info[a + 2].ToBoolean().Value();
  if (WsIsControl(opcode) && body.len > kWsMaxControlPayload) return IntV(env, kResultBadBody);
  if (!WsIsControl(opcode) &&
      s->WantsCompression(body.len, fin, info[a + 3].ToBoolean().Value())) {
    if (!body.is_string || body.EncodedText()) {
      return IntV(env, s->SendCompressed(opcode, body.data, body.len));
    }
    std::string text(body.len + 1, '\0');
    const size_t written = body.EncodeTo(env, &text[0]);
    return IntV(env, s->SendCompressed(opcode, text.data(), written));
  }
  int result = 0;
  OutputQueue* q = s->BeginSend(opcode, body.len, fin, &result);
  if (!q) return IntV(env, result);
  if (body.is_string && !body.EncodedText()) {
    // Encoded straight into the output buffer.
    q->Commit(body.EncodeTo(env, q->Reserve(body.len + 1)));
  } else if (body.len < kCopyBelow || body.EncodedText() || info[a + 4].ToBoolean().Value()) {
    q->Append(body.data, body.len);
  } else {
    q->AppendExternal(body.data, body.len, new NapiValueRef(env, body.value));
  }
  return IntV(env, s->EndSend());
}

// wsClose(code, reason) -> WsSendResult (code 0: a close frame without one)
Napi::Value WsCalls::Close(const Napi::CallbackInfo& info, WebSocketSession* s, size_t a) {
  napi_env env = info.Env();
  if (!s) return IntV(env, kWsNotOpen);
  const int code = info[a].IsNumber() ? info[a].As<Napi::Number>().Int32Value() : 0;
  std::string reason;
  if (info[a + 1].IsString()) reason = info[a + 1].As<Napi::String>().Utf8Value();
  return IntV(env, s->Close(code, reason.data(), reason.size()));
}

Napi::Value WsCalls::Buffered(const Napi::CallbackInfo& info, WebSocketSession* s, size_t) {
  return IntV(info.Env(), s ? static_cast<int64_t>(s->buffered_amount()) : 0);
}

// wsSubscribe(topic) / wsUnsubscribe(topic) / wsIsSubscribed(topic) -> bool
Napi::Value WsCalls::Subscribe(const Napi::CallbackInfo& info, WebSocketSession* s, size_t a) {
  std::string topic;
  const bool ok = s && TopicArg(info[a], &topic) && s->Subscribe(topic);
  return Napi::Boolean::New(info.Env(), ok);
}

Napi::Value WsCalls::Unsubscribe(const Napi::CallbackInfo& info, WebSocketSession* s, size_t a) {
  std::string topic;
  const bool ok = s && TopicArg(info[a], &topic) && s->Unsubscribe(topic);
  return Napi::Boolean::New(info.Env(), ok);
}

Napi::Value WsCalls::IsSubscribed(const Napi::CallbackInfo& info, WebSocketSession* s, size_t a) {
  std::string topic;
  const bool ok = s && TopicArg(info[a], &topic) && s->IsSubscribed(topic);
  return Napi::Boolean::New(info.Env(), ok);
}

Napi::Value WsCalls::Topics(const Napi::CallbackInfo& info, WebSocketSession* s, size_t) {
  Napi::Env env = info.Env();
  const size_t n = s ? s->topics().size() : 0;
  Napi::Array a = Napi::Array::New(env, n);
  for (size_t i = 0; i < n; i++) {
    a.Set(static_cast<uint32_t>(i), Napi::String::New(env, s->topics()[i]));
  }
  return a;
}

// wsPublish(topic, data, opcode, compress) -> subscribers queued (every
// one but this connection)
Napi::Value WsCalls::Publish(const Napi::CallbackInfo& info, WebSocketSession* s, size_t a) {
  napi_env env = info.Env();
  std::string topic;
  if (!s || !s->hub() || !TopicArg(info[a], &topic)) return IntV(env, 0);
  const char* data = nullptr;
  size_t len = 0;
  std::string text;
  if (info[a + 1].IsString()) {
    text = info[a + 1].As<Napi::String>().Utf8Value();
    data = text.data();
    len = text.size();
  } else if (!GetBytes(env, info[a + 1], &data, &len)) {
    return IntV(env, 0);
  }
  const uint8_t opcode = static_cast<uint8_t>(info[a + 2].As<Napi::Number>().Uint32Value());
  WsHub::PublishResult r = s->hub()->Publish(topic, opcode, data, len, s, CompressArg(info[a + 3]));
  return IntV(env, static_cast<int64_t>(r.queued));
}

Napi::Value WsCalls::AcceptHttp2(const Napi::CallbackInfo& info, Http2Session* s) {
  napi_env env = info.Env();
  if (s == nullptr || !info[0].IsNumber() || !info[2].IsObject()) return IntV(env, kResultClosed);
  const int32_t id = info[0].As<Napi::Number>().Int32Value();
  WsConfig cfg = ConfigFrom(info[2].As<Napi::Object>());
  HeaderList h;
  h.AddStatus(200);
  std::string block;
  Latin1(env, info[1], &block);
  h.AddHttp1Block(block);
  return IntV(env, s->AcceptWebSocket(id, h, cfg, JsWsHub::From(env, info[3])));
}

// The connection's ws* methods (the WebSocket of an HTTP/1.1 Upgrade).
Napi::Value JsConnection::WsSend(const Napi::CallbackInfo& info) { return WsCalls::Send(info, ws(), 0); }

napi_value JsConnection::WsSendFast(napi_env env, napi_callback_info cbinfo) {
  Napi::CallbackInfo info(env, cbinfo);
  void* p = nullptr;
  if (napi_get_value_external(env, info[0], &p) != napi_ok || p == nullptr) {
    return IntV(env, kResultInvalid);
  }
  return WsCalls::Send(info, static_cast<JsConnection*>(p)->ws(), 1);
}
Napi::Value JsConnection::WsClose(const Napi::CallbackInfo& info) { return WsCalls::Close(info, ws(), 0); }
Napi::Value JsConnection::WsBuffered(const Napi::CallbackInfo& info) { return WsCalls::Buffered(info, ws(), 0); }
Napi::Value JsConnection::WsSubscribe(const Napi::CallbackInfo& info) { return WsCalls::Subscribe(info, ws(), 0); }
Napi::Value JsConnection::WsUnsubscribe(const Napi::CallbackInfo& info) { return WsCalls::Unsubscribe(info, ws(), 0); }
Napi::Value JsConnection::WsIsSubscribed(const Napi::CallbackInfo& info) { return WsCalls::IsSubscribed(info, ws(), 0); }
Napi::Value JsConnection::WsTopics(const Napi::CallbackInfo& info) { return WsCalls::Topics(info, ws(), 0); }
Napi::Value JsConnection::WsPublish(const Napi::CallbackInfo& info) { return WsCalls::Publish(info, ws(), 0); }

}  // namespace sluice
