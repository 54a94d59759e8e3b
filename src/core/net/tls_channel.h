// TlsChannel: one connection's TLS state (an SSL object) between the
// socket and the session. Ciphertext read from the socket is fed in
// (Feed: OpenSSL reads it in place, see TlsInput); plaintext is taken out
// with Read into wherever the caller wants it — for a request body, the
// embedder's read buffer, so decrypted body bytes land in allocator memory
// exactly as cleartext reads do. Outgoing
// plaintext is sealed (Seal) into records written straight into the
// writer's wire queue by a custom BIO: no intermediate ciphertext buffer.
//
// Pure OpenSSL state machine: no I/O, no loop; the Connection drives it.
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <memory>
#include <string>

#include "core/net/output_queue.h"
#include "core/net/tls_input.h"
#include "core/net/tls_context.h"
#include "core/net/writer.h"

namespace sluice {

class TlsServer;

class TlsChannel final : public Sealer {
 public:
  // `wire` receives every byte OpenSSL produces (handshake, records,
  // alerts); it must outlive the channel. nullptr on failure.
  static std::unique_ptr<TlsChannel> Create(const TlsServer* server,
                                            OutputQueue* wire);
  ~TlsChannel() override;
  TlsChannel(const TlsChannel&) = delete;
  TlsChannel& operator=(const TlsChannel&) = delete;

  enum Status {
    kOk,       // progress (handshake done / bytes read)
    kWant,     // needs more ciphertext
    kClosed,   // the peer sent close_notify
    kError,    // protocol error: error_code()/error_message() say which
    kSuspended,  // SNICallback: waiting for SetSniAnswer (sni_servername())
  };

  // Ciphertext from the socket, read by OpenSSL where it lies until
  // EndFeed, which must come before that memory is reused (TlsInput).
  void Feed(const char* data, size_t len);
  // The fed read is done with: what OpenSSL has not consumed is copied.
  void EndFeed();
  // Drives the handshake with what was fed. Not to be called while
  // sni_waiting(): it would only suspend again.
  Status Handshake();

  // SNICallback (TlsServer::sni_callback). The handshake suspends at the
  // certificate callback, after the ClientHello was parsed; the embedder
  // asks its callback for sni_servername() and answers with SetSniAnswer
  // (an empty context keeps the default), then runs Handshake again.
  bool sni_waiting() const { return sni_ == kSniAsked; }
  const std::string& sni_servername() const { return sni_name_; }
  void SetSniAnswer(TlsContext ctx);
  // OpenSSL's certificate callback on every sluice SSL_CTX (installed by
  // TlsContext::Create): called inside SSL_do_handshake with the SSL whose
  // app data is its TlsChannel; 1 = go on, -1 = suspend (SSL_do_handshake
  // returns SSL_ERROR_WANT_X509_LOOKUP and calls it again when re-run).
  // It runs no embedder code (the embedder is asked after it returns).
  static int OnCertCb(SSL* ssl, void* arg);
  const TlsServer* server() const { return server_; }
  bool handshake_done() const { return handshake_done_; }
  // Decrypts up to `cap` bytes into `buf`; *n is set on kOk.
  Status Read(char* buf, size_t cap, size_t* n);
  // Ciphertext fed but not yet decrypted, or plaintext decrypted and not
  // yet read: a paused connection must come back for it.
  bool HasBufferedInput() const;
  // Whether Read may give plaintext now: decrypted bytes wait, or the fed
  // input holds a whole record (or completes one OpenSSL holds part of).
  // A cheap test, so that no read buffer is asked for in vain; a false
  // "true" only costs a Read that wants more.
  bool HasReadable() const;
  // Sealer: encrypts all of `plain` into records appended to the wire
  // queue (records of up to 16 KiB, filled across the queue's segments).
  int Seal(const OutputQueue& plain) override;
  // Queues close_notify (once; only after the handshake).
  void SendCloseNotify();
  // Bytes fed before the handshake completed (bounded by the server).
  size_t handshake_bytes() const { return handshake_bytes_; }

  // The last error, as node names it: code "ERR_SSL_<REASON>" and
  // OpenSSL's message.
  const std::string& error_code() const { return error_code_; }
  const std::string& error_message() const { return error_message_; }
  // Records an error of sluice's own (timeouts, limits).
  void SetError(const char* code, const char* message);

  // The negotiated ALPN protocol ("" when none; valid after the
  // handshake). The other facts the embedder shows are read from ssl()
  // (binding/js_tls.cc TlsInfoOfSsl, shared with QUIC connections).
  std::string alpn() const;
  // A peer certificate was presented and verified (node's
  // socket.authorized after a handshake with requestCert).
  bool PeerVerified() const;
  SSL* ssl() const { return ssl_; }

 private:
  TlsChannel(const TlsServer* server, SSL* ssl) : server_(server), ssl_(ssl) {}
  // Fills error_code_/error_message_ from OpenSSL's error queue.
  void TakeError(int ssl_error);
  int WriteRecord(const char* p, size_t n);

  enum SniState { kSniNone, kSniAsked, kSniAnswered, kSniDone };
  const TlsServer* server_;  // the listener's; outlives every connection
  SSL* ssl_;  // owns both BIOs; freed before input_ (destructor body)
  TlsInput input_;  // ciphertext fed and not yet consumed (the read BIO's)
  bool handshake_done_ = false;
  bool close_notify_sent_ = false;
  size_t handshake_bytes_ = 0;
  SniState sni_ = kSniNone;
  std::string sni_name_;
  TlsContext sni_ctx_;  // the answer, until the certificate callback takes it
  std::unique_ptr<char[]> stage_;  // gathers small segments into a record
  std::string error_code_;
  std::string error_message_;
};

}  // namespace sluice
