// JsConnection: the JS handle of one connection (an ObjectWrap). Response
// methods take the request's seq; each crosses into native code once.
// The core Connection may close before the JS object is collected: core()
// is then null and every method is a no-op returning kResultClosed.
#pragma once

#include <napi.h>

#include "binding/js_core_handle.h"
#include "core/common/result.h"
#include "core/net/connection.h"
#include "core/http1/http1_session.h"
#include "core/websocket/ws_session.h"

namespace sluice {

class JsConnection final : public CoreWrap<JsConnection, Connection> {
 public:
  static Napi::Function Init(Napi::Env env);
  using CoreWrap<JsConnection, Connection>::CoreWrap;

  // The live HTTP/1.1 session, or null once closed (native file responses).
  Http1Session* http1_session() const { return live(); }
  // binding.respondHttp1(handle, seq, statusAndFlags, reason, headerBlock,
  // body, trailers): respond() without the ObjectWrap method's napi_unwrap
  // of `this` (a private-symbol lookup, most of the call's fixed cost).
  // `handle` is this connection's handle() external; the JS that passes it
  // holds the connection object too (lib/http1_server.js ConnState keeps
  // both), so the JsConnection it points to is alive. Called from JS on
  // the loop thread; re-enters nothing.
  static napi_value RespondFast(napi_env env, napi_callback_info cbinfo);
  // binding.wsSendHttp1(handle, data, opcode, fin, compress, copy): the
  // wsSend() method of the WebSocket on this connection without its
  // napi_unwrap, as respondHttp1. The WebSocket that passes `handle`
  // holds the connection object (lib/websocket/websocket.js). Called from
  // JS on the loop thread; re-enters nothing.
  static napi_value WsSendFast(napi_env env, napi_callback_info cbinfo);
  // Unbinds (the core connection closed); its byte counts are kept for
  // stats(). Hides CoreWrap::Detach (the server calls it on this type).
  void Detach();

 private:
  Http1Session* live() const;
  // The connection may take raw bytes / pause / destroy from JS: HTTP/1.1
  // or a tunnel ('upgrade' / 'connect').
  bool RawOk() const;
  friend class CoreWrap<JsConnection, Connection>;
  // The response methods below take the live session and the request's
  // seq (ItemCall).
  template <int (JsConnection::*M)(const Napi::CallbackInfo&, Http1Session*,
                                   uint32_t)>
  Napi::Value SeqCall(const Napi::CallbackInfo& info) {
    return ItemCall<Http1Session, uint32_t, M>(info);
  }
  // respond(seq, statusAndFlags, reason, headerBlock, body, trailers)
  int Respond(const Napi::CallbackInfo& info, Http1Session* s, uint32_t seq);
  // Respond's work; a[0..5] are its six arguments.
  int RespondArgs(napi_env env, const napi_value* a, Http1Session* s,
                  uint32_t seq);
  // handle() -> an external pointing at this object, for respondHttp1.
  Napi::Value Handle(const Napi::CallbackInfo& info);
  // write(seq, chunk) -> >= 0 (bit 0: wants drain) or error
  int Write(const Napi::CallbackInfo& info, Http1Session* s, uint32_t seq);
  // end(seq, chunk, trailers)
  int End(const Napi::CallbackInfo& info, Http1Session* s, uint32_t seq);
  int WriteContinue(const Napi::CallbackInfo& info, Http1Session* s,
                    uint32_t seq);
  // writeInfo(seq, status, headerLines): a 102/103 before the head.
  int WriteInfo(const Napi::CallbackInfo& info, Http1Session* s,
                uint32_t seq);
  Napi::Value Pause(const Napi::CallbackInfo& info);
  Napi::Value Resume(const Napi::CallbackInfo& info);
  Napi::Value Destroy(const Napi::CallbackInfo& info);
  Napi::Value SendError(const Napi::CallbackInfo& info);
  // Raw bytes for clientError handlers that answer themselves.
  Napi::Value WriteRaw(const Napi::CallbackInfo& info);
  Napi::Value EndRaw(const Napi::CallbackInfo& info);
  Napi::Value Peer(const Napi::CallbackInfo& info);
  Napi::Value Local(const Napi::CallbackInfo& info);
  // stats() -> { flushes, backlog, bytesRead, bytesWritten } (the byte
  // counts stay readable after the close)
  Napi::Value Stats(const Napi::CallbackInfo& info);
  // setKeepAlive(enable, initialDelaySeconds) -> 0 or a libuv error
  Napi::Value SetKeepAlive(const Napi::CallbackInfo& info);
  // The open connection whatever its protocol (addresses, destroy,
  // keep-alive, byte counts), or null once closed.
  Connection* alive() const;
  // TLS facts (js_tls.h TlsInfo); null on cleartext.
  Napi::Value Tls(const Napi::CallbackInfo& info);
  // tlsQuery(what, ...): js_tls.h TlsQuery.
  Napi::Value TlsQueryMethod(const Napi::CallbackInfo& info);
  // sniDone(context | null): the SNICallback's answer (a native context
  // from binding.tlsContext*, null for the default).
  Napi::Value SniDone(const Napi::CallbackInfo& info);
  // The body buffer pool refilled: retry the allocation that came back dry.
  Napi::Value RetryBodyBuffer(const Napi::CallbackInfo& info);
  // copyReads(): from now on each read of this HTTP/1.1 connection also
  // reaches lib/ as a copy (onReadCopy: socket 'data' listeners); a no-op
  // on other protocols or once closed.
  Napi::Value CopyReads(const Napi::CallbackInfo& info);
  // WebSocket (js_websocket.cc): after wsAccept the connection's session
  // is a WebSocketSession; every ws* method is a no-op answering "not
  // open" once it is closed.
  WebSocketSession* ws() const;
  Napi::Value WsAccept(const Napi::CallbackInfo& info);
  Napi::Value WsFeed(const Napi::CallbackInfo& info);
  Napi::Value WsSend(const Napi::CallbackInfo& info);
  Napi::Value WsClose(const Napi::CallbackInfo& info);
  Napi::Value WsBuffered(const Napi::CallbackInfo& info);
  Napi::Value WsSubscribe(const Napi::CallbackInfo& info);
  Napi::Value WsUnsubscribe(const Napi::CallbackInfo& info);
  Napi::Value WsIsSubscribed(const Napi::CallbackInfo& info);
  Napi::Value WsTopics(const Napi::CallbackInfo& info);
  Napi::Value WsPublish(const Napi::CallbackInfo& info);

  // The ws* calls shared with JsHttp2Session read bodies as respond does.
  friend struct WsCalls;
  // A body argument read once: a string (sent as UTF-8; len is its UTF-8
  // length) or the bytes of a binary view; value is null for no body.
  // A short string is encoded as it is read, into `text` (data points
  // there): one UTF-8 pass instead of a length pass and an encoding pass.
  // Its bytes live on the caller's stack, so they are always copied,
  // never referenced (EncodedText()). A longer string has data == null
  // and is encoded where it goes (EncodeTo()).
  static constexpr size_t kShortTextUnits = 1024;
  struct BodyArg {
    napi_value value = nullptr;
    bool is_string = false;
    const char* data = nullptr;
    size_t len = 0;
    // UTF-8 takes at most 3 bytes per UTF-16 unit (a surrogate pair: 4
    // for 2); napi writes a NUL after what it encodes.
    char text[kShortTextUnits * 3 + 1];

    // A string whose UTF-8 is already in `text`.
    bool EncodedText() const { return is_string && data != nullptr; }
    // A string still to encode: into `dst`, which has len + 1 bytes.
    // Returns the bytes written.
    size_t EncodeTo(napi_env env, char* dst) const;
  };
  // Reads `v` into *b; false for a type that cannot be sent.
  static bool ReadBody(napi_env env, napi_value v, BodyArg* b);
  int AppendBody(uint32_t seq, const BodyArg& body);
  int Result(int err) const;

  uint64_t bytes_read_ = 0;     // at Detach
  uint64_t bytes_written_ = 0;  // at Detach
};

// The JS handle of `c`, made on first use; nullptr once the environment
// is stopping.
napi_value ConnectionObject(napi_env env, Connection* c);

// Debug counters for tests and benchmarks (process-wide, loop thread).
struct Counters {
  uint64_t body_bytes_copied = 0;     // body bytes embedded in output buffers
  uint64_t body_bytes_referenced = 0; // body bytes written from JS memory
};
Counters& GetCounters();

}  // namespace sluice
