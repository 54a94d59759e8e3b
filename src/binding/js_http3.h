// The JS side of HTTP/3: NativeHttp3Endpoint (one QUIC endpoint on a UDP
// port, lib/http3/) and NativeHttp3Session (one connection's requests),
// whose stream methods are NativeHttp2Session's (JsStreamSession) and whose
// callbacks are the same stream callbacks (SLUICE_STREAM_CALLBACKS), so
// lib/'s HTTP/2 stream objects (ServerHttp2Stream, the compat req/res)
// serve HTTP/3 requests unchanged.
//
// Stream ids in JS: a request's QUIC stream id is 4n (client-initiated
// bidirectional); JS sees n + 1 (1, 2, 3...), a positive int32 like an
// HTTP/2 stream id, never 0 (lib/ reads 0 as "no stream").
//
// Ownership: the endpoint object holds itself strongly while it listens
// (until OnEndpointClosed); a session object is made on its connection's
// first event and holds itself until the connection closes.
#pragma once

#include <napi.h>

#include <memory>
#include <string>
#include <unordered_set>

#include "binding/addon_data.h"
#include "binding/js_core_handle.h"
#include "binding/js_stream_session.h"
#include "core/common/date_cache.h"
#include "core/http3/http3_session.h"
#include "core/quic/quic_endpoint.h"

namespace sluice {

class JsHttp3Session;

class JsHttp3Endpoint final : public Napi::ObjectWrap<JsHttp3Endpoint>,
                              public QuicEndpointDelegate,
                              public Http3Delegate {
 public:
  static Napi::Function Init(Napi::Env env);
  // new NativeHttp3Endpoint(callbacks, options): callbacks as HTTP/2's
  // (onStream, onStreamData, onStreamEnd, onStreamDrain,
  // onStreamWantTrailers, onStreamClose, onSessionClose) plus
  // onEndpointClose(), onSni(id, servername) and, with bodyAllocator,
  // onStreamAlloc(session, id, size) -> a Buffer or ALLOC_* (as
  // NativeServer's onAlloc) and onStreamBufferRelease(session, id);
  // options { key: [pem], cert: [pem], passphrase, context (the default
  // native context), sniCallback, ticketKeys, maxConnections, maxStreams,
  // idleTimeout, maxHeaderSize, bodyAllocator, bodyStreamLimit,
  // bodyConnectionLimit, staticFiles (NativeServer.staticFiles(): the
  // TCP server's serveStatic mounts, answered natively here too) }. Throws ERR_SLUICE_HTTP3 when QUIC is
  // unavailable or the certificate does not load.
  explicit JsHttp3Endpoint(const Napi::CallbackInfo& info);
  ~JsHttp3Endpoint() override;

  DateCache* date() { return &date_; }
  // Environment teardown (addon.cc): the endpoint is destroyed with no JS
  // call; its handles close and LoopTracked lets the teardown finish.
  void Teardown();

  // QuicEndpointDelegate
  QuicConnectionHandler* OnConnection(QuicConnection* c) override;
  void OnDispatchBegin() override;
  void OnDispatchEnd() override;
  void OnEndpointClosed() override;
  void OnSniRequest(uint64_t id, const std::string& servername) override;
  // onHandshakeTimeout([ip, port, family] or undefined): lib emits
  // 'tlsClientError' (ERR_TLS_HANDSHAKE_TIMEOUT), as the TCP listener does.
  void OnHandshakeTimeout(QuicConnection* c) override;
  // Http3Delegate
  void OnStream(Http3Session* s, uint64_t id, const Http3Fields& headers,
                bool end_stream) override;
  // offset >= 0: onStreamData(session, id, offset, len), the bytes at
  // that offset of the buffer onStreamAlloc gave for the stream (lib/
  // keeps it until onStreamBufferRelease); otherwise a copy.
  void OnStreamData(Http3Session* s, uint64_t id, const uint8_t* data, size_t len,
                    int64_t offset) override;
  // onStreamAlloc from inside the pass: a Buffer lends its memory (lib/
  // holds the Buffer until onStreamBufferRelease); ALLOC_DRY, ALLOC_ERROR
  // or anything else (a copy) as on TCP (JsServer::AcquireBodyBuffer).
  Http3BufferResult AcquireBodyBuffer(Http3Session* s, uint64_t id, size_t size, uint8_t** base,
                                      size_t* len) override;
  void ReleaseBodyBuffer(Http3Session* s, uint64_t id) override;
  void OnStreamEnd(Http3Session* s, uint64_t id, const Http3Fields& trailers) override;
  void OnStreamDrain(Http3Session* s, uint64_t id) override;
  void OnStreamWantTrailers(Http3Session* s, uint64_t id) override;
  void OnStreamClose(Http3Session* s, uint64_t id, uint64_t code) override;
  void OnSessionClose(Http3Session* s) override;

 private:
  // listen(host, port, reusePort) -> 0 or a negative errno; throws with OpenSSL's
  // reason when the QUIC listener cannot be made.
  Napi::Value Listen(const Napi::CallbackInfo& info);
  // address() -> [ip, port, family] or undefined
  Napi::Value Address(const Napi::CallbackInfo& info);
  // close(graceMs): GOAWAY to every connection, new ones refused; the
  // rest closed after graceMs; onEndpointClose() follows.
  Napi::Value Close(const Napi::CallbackInfo& info);
  Napi::Value Destroy(const Napi::CallbackInfo& info);
  Napi::Value Ref(const Napi::CallbackInfo& info);
  Napi::Value Unref(const Napi::CallbackInfo& info);
  // connections() -> open connections; connections('handshakes') -> those
  // whose handshake is in progress (the maxHandshakes count);
  // connections('gso') -> GSO sends of several datagrams so far.
  // connections('gro') -> reads that carried several datagrams (UDP_GRO).
  Napi::Value Connections(const Napi::CallbackInfo& info);
  // metrics(): the endpoint's ServerMetrics as JsServer's metrics()
  // shapes them (lib/observe/metrics.js adds them to the server's), or
  // null once the endpoint is gone.
  Napi::Value Metrics(const Napi::CallbackInfo& info);
  // closeAllConnections(): every connection closed now (CONNECTION_CLOSE,
  // H3_NO_ERROR, queued output dropped; requests in flight are aborted).
  // closeIdleConnections(): the same for those with no request in flight
  // (Http3Session::Busy). As the TCP listener's, for server.close*.
  Napi::Value CloseAllConnections(const Napi::CallbackInfo& info);
  Napi::Value CloseIdleConnections(const Napi::CallbackInfo& info);
  // Certificates (QuicEndpoint): setSecureContext(context),
  // addContext(hostname, context), setTicketKeys(buffer48) -> bool,
  // sniDone(id, context | null), sniFail(id). `context`: a native context
  // (binding.tlsContext); a TypeError for anything else.
  Napi::Value SetSecureContext(const Napi::CallbackInfo& info);
  Napi::Value AddContext(const Napi::CallbackInfo& info);
  Napi::Value SetTicketKeys(const Napi::CallbackInfo& info);
  Napi::Value SniDone(const Napi::CallbackInfo& info);
  Napi::Value SniFail(const Napi::CallbackInfo& info);

  napi_value SessionObject(Http3Session* s);
  bool CanCallJs() const;

  QuicEndpoint* endpoint_ = nullptr;  // owned until OnEndpointClosed
  // The live sessions (each owned by its QuicConnection): added in
  // OnConnection, removed in OnSessionClose, which always precedes the
  // connection's deletion.
  std::unordered_set<Http3Session*> sessions_;
  SSL_CTX* ctx_ = nullptr;
  Http3Limits limits_;
  // The TCP server's serveStatic mounts (shared: either side may go
  // first), handed to each session; null without the option.
  std::shared_ptr<StaticFiles> static_files_;
  DateCache date_;
  Napi::ObjectReference self_;        // while listening
  Napi::ObjectReference callbacks_;
  // The stream callbacks (js_stream_session.h) and the endpoint's own.
#define SLUICE_HTTP3_CALLBACKS(V)                      \
  SLUICE_STREAM_CALLBACKS(V)                           \
  V(on_endpoint_close_, "onEndpointClose")             \
  V(on_sni_, "onSni")                                  \
  V(on_handshake_timeout_, "onHandshakeTimeout")       \
  V(on_alloc_, "onStreamAlloc")                        \
  V(on_buffer_release_, "onStreamBufferRelease")
  SLUICE_HTTP3_CALLBACKS(SLUICE_CALLBACK_MEMBER)
  Napi::ObjectReference resource_;
  AsyncContext async_context_;
  napi_handle_scope handle_scope_ = nullptr;
  napi_callback_scope callback_scope_ = nullptr;
  std::string packed_;
  AddonMember<JsHttp3Endpoint> member_;
};

// The JS handle of one Http3Session (NativeHttp3Session): the stream
// methods of JsStreamSession (js_stream_session.h) and the session's.
class JsHttp3Session final : public JsStreamSession<JsHttp3Session, Http3Session> {
 public:
  static Napi::Function Init(Napi::Env env);
  using JsStreamSession<JsHttp3Session, Http3Session>::JsStreamSession;
  JsHttp3Endpoint* owner = nullptr;
  // The QUIC stream id of a JS stream id (QUIC 4n <-> JS n + 1; none for
  // js <= 0), and back.
  static uint64_t WireId(int64_t js) {
    return js <= 0 || js > (int64_t{1} << 52) ? UINT64_MAX : (static_cast<uint64_t>(js) - 1) * 4;
  }
  static int64_t JsId(uint64_t qid) { return static_cast<int64_t>(qid / 4 + 1); }

 private:
  friend class CoreWrap<JsHttp3Session, Http3Session>;
  friend class JsStreamSession<JsHttp3Session, Http3Session>;
  Http3Session* live() const { return core(); }
  // retryBodyBuffer(): the pool that was dry has memory again
  // (Http3Session::RetryBodyBuffers); the name NativeConnection's has, so
  // lib/http1/body_memory.js retries both alike.
  Napi::Value RetryBodyBuffer(const Napi::CallbackInfo& info);
  // connection(): undefined (no TCP connection handle under QUIC).
  Napi::Value Nothing(const Napi::CallbackInfo& info);
  // goaway(code): 0 shuts down (open requests finish); another code
  // closes the connection (H3_INTERNAL_ERROR).
  Napi::Value Goaway(const Napi::CallbackInfo& info);
  Napi::Value Destroy(const Napi::CallbackInfo& info);
  Napi::Value Peer(const Napi::CallbackInfo& info);
  Napi::Value Local(const Napi::CallbackInfo& info);
  // TLS facts (TlsInfoOfSsl) and queries (tlsQuery: TlsQueryOfSsl) of the
  // QUIC connection, as JsHttp2Session's of its TLS connection.
  Napi::Value Tls(const Napi::CallbackInfo& info);
  Napi::Value TlsQueryMethod(const Napi::CallbackInfo& info);
};

// sluice.features.http3 and its reason: exports.http3 = { available,
// reason, openssl }.
void InitHttp3(Napi::Env env, Napi::Object exports);

}  // namespace sluice
