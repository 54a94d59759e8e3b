#include "core/net/tls_channel.h"

#include <openssl/err.h>
#include <openssl/x509.h>

#include <cctype>
#include <cstring>

#include "core/net/bio_method.h"
#include "core/net/tls_context.h"

namespace sluice {

namespace {

// The largest plaintext one TLS record carries (RFC 8446 5.1).
constexpr size_t kRecordPlain = 16384;

// The write BIO: OpenSSL's output (whole records, alerts, handshake
// messages) is appended to the writer's wire queue as it is produced.
// Records of kCopyBelow or more become their own segment (one allocation,
// no re-growth of the inline buffer); small ones share the inline buffer.
int WireWrite(BIO* b, const char* data, int len) {
  OutputQueue* q = static_cast<OutputQueue*>(BIO_get_data(b));
  if (len <= 0) return 0;
  size_t n = static_cast<size_t>(len);
  if (n < kCopyBelow) {
    q->Append(data, n);
  } else {
    q->AppendOwned(std::string(data, n));
  }
  return len;
}

long WireCtrl(BIO* b, int cmd, long num, void* ptr) {
  (void)b;
  (void)num;
  (void)ptr;
  // OpenSSL flushes after each flight; the queue is written by the
  // connection's Flush at the end of the dispatch.
  return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

BIO_METHOD* WireMethod() {
  static BIO_METHOD* method =
      NewBioMethod("sluice wire", nullptr, WireWrite, WireCtrl);
  return method;
}

}  // namespace

std::unique_ptr<TlsChannel> TlsChannel::Create(const TlsServer* server,
                                               OutputQueue* wire) {
  BIO_METHOD* method = WireMethod();
  if (method == nullptr) return nullptr;
  SSL* ssl = SSL_new(server->default_ctx());
  if (ssl == nullptr) return nullptr;
  // The channel owns the SSL from here (its destructor frees it), and the
  // SSL will own both BIOs; the read BIO reads the channel's input.
  std::unique_ptr<TlsChannel> channel(new TlsChannel(server, ssl));
  BIO* rbio = channel->input_.NewBio();
  BIO* wbio = BIO_new(method);
  if (rbio == nullptr || wbio == nullptr) {
    BIO_free(rbio);
    BIO_free(wbio);
    ERR_clear_error();
    return nullptr;
  }
  BIO_set_data(wbio, wire);
  SSL_set_bio(ssl, rbio, wbio);
  SSL_set_accept_state(ssl);
  // The servername and certificate callbacks find the channel (and its
  // listener's contexts) through this; the SSL dies with the channel.
  SSL_set_app_data(ssl, channel.get());
  return channel;
}

TlsChannel::~TlsChannel() { SSL_free(ssl_); }

void TlsChannel::Feed(const char* data, size_t len) {
  if (!handshake_done_) handshake_bytes_ += len;
  // Lent until EndFeed; what is left then is carried, bounded by the reads
  // the connection makes while it feeds (it stops reading while paused).
  input_.Lend(data, len);
}

void TlsChannel::EndFeed() { input_.Settle(); }

TlsChannel::Status TlsChannel::Handshake() {
  if (handshake_done_) return kOk;
  ERR_clear_error();
  int r = SSL_do_handshake(ssl_);
  if (r == 1) {
    handshake_done_ = true;
    return kOk;
  }
  int e = SSL_get_error(ssl_, r);
  if (e == SSL_ERROR_WANT_READ) return kWant;
  if (e == SSL_ERROR_WANT_X509_LOOKUP && sni_ == kSniAsked) return kSuspended;
  TakeError(e);
  return kError;
}

int TlsChannel::OnCertCb(SSL* ssl, void* arg) {
  (void)arg;
  TlsChannel* self = static_cast<TlsChannel*>(SSL_get_app_data(ssl));
  if (self == nullptr || !self->server_->sni_callback) return 1;
  switch (self->sni_) {
    case kSniNone: {
      // As node: no server name, no callback.
      const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
      if (name == nullptr || *name == '\0') {
        self->sni_ = kSniDone;
        return 1;
      }
      self->sni_name_ = name;
      self->sni_ = kSniAsked;
      return -1;
    }
    case kSniAsked:
      return -1;
    case kSniAnswered:
      // The certificate is chosen after this callback returns, from the
      // context in place now (SSL_set_SSL_CTX takes its own reference).
      if (self->sni_ctx_ && SSL_set_SSL_CTX(ssl, self->sni_ctx_.get()) == nullptr) {
        return 0;  // fatal: internal_error alert
      }
      self->sni_ctx_ = TlsContext();
      self->sni_ = kSniDone;
      return 1;
    case kSniDone:
      return 1;  // a second ClientHello (HelloRetryRequest)
  }
  return 1;
}

void TlsChannel::SetSniAnswer(TlsContext ctx) {
  if (sni_ != kSniAsked) return;
  sni_ctx_ = std::move(ctx);
  sni_ = kSniAnswered;
}

TlsChannel::Status TlsChannel::Read(char* buf, size_t cap, size_t* n) {
  ERR_clear_error();
  if (SSL_read_ex(ssl_, buf, cap, n) == 1) return kOk;
  int e = SSL_get_error(ssl_, 0);
  if (e == SSL_ERROR_WANT_READ) return kWant;
  if (e == SSL_ERROR_ZERO_RETURN) return kClosed;
  TakeError(e);
  return kError;
}

bool TlsChannel::HasBufferedInput() const {
  return SSL_has_pending(ssl_) == 1 || input_.size() > 0;
}

bool TlsChannel::HasReadable() const {
  if (SSL_pending(ssl_) > 0) return true;
  const size_t n = input_.size();
  if (n == 0) return false;
  if (SSL_has_pending(ssl_) == 1) return true;
  // A TLS record header: type, version (2), length (2).
  if (n < 5) return false;
  unsigned char h[5];
  input_.Peek(h, sizeof h);
  const size_t len = (static_cast<size_t>(h[3]) << 8) | h[4];
  return n >= 5 + len;
}

int TlsChannel::WriteRecord(const char* p, size_t n) {
  size_t written = 0;
  // The write BIO takes everything: SSL_write_ex completes at once.
  if (SSL_write_ex(ssl_, p, n, &written) != 1 || written != n) {
    TakeError(SSL_get_error(ssl_, 0));
    return -1;
  }
  return 0;
}

int TlsChannel::Seal(const OutputQueue& plain) {
  if (!handshake_done_) return -1;
  ERR_clear_error();
  size_t fill = 0;
  int err = 0;
  plain.ForEachSpan([&](const char* p, size_t len) {
    while (len > 0 && err == 0) {
      if (fill == 0 && len >= kRecordPlain) {
        // A whole record's worth where it lies: no staging copy.
        err = WriteRecord(p, kRecordPlain);
        p += kRecordPlain;
        len -= kRecordPlain;
        continue;
      }
      if (!stage_) stage_.reset(new char[kRecordPlain]);
      size_t take = kRecordPlain - fill < len ? kRecordPlain - fill : len;
      memcpy(stage_.get() + fill, p, take);
      fill += take;
      p += take;
      len -= take;
      if (fill == kRecordPlain) {
        err = WriteRecord(stage_.get(), fill);
        fill = 0;
      }
    }
  });
  if (err == 0 && fill > 0) err = WriteRecord(stage_.get(), fill);
  return err;
}

void TlsChannel::SendCloseNotify() {
  if (!handshake_done_ || close_notify_sent_) return;
  close_notify_sent_ = true;
  ERR_clear_error();
  SSL_shutdown(ssl_);  // 0: sent, the peer's not yet seen; either is fine
  ERR_clear_error();
}

void TlsChannel::SetError(const char* code, const char* message) {
  error_code_ = code;
  error_message_ = message;
}

void TlsChannel::TakeError(int ssl_error) {
  unsigned long e = ERR_peek_error();
  if (e == 0) {
    ERR_clear_error();
    if (ssl_error == SSL_ERROR_SYSCALL || ssl_error == SSL_ERROR_SSL) {
      SetError("ERR_SSL_PROTOCOL_ERROR", "TLS protocol error");
    } else {
      SetError("ERR_SSL_PROTOCOL_ERROR", "unexpected TLS state");
    }
    return;
  }
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  error_message_ = buf;
  // node's naming: ERR_SSL_ + the reason in upper case with underscores
  // (ERR_OSSL_ for the other OpenSSL libraries).
  const char* reason = ERR_reason_error_string(e);
  error_code_ = ERR_GET_LIB(e) == ERR_LIB_SSL ? "ERR_SSL_" : "ERR_OSSL_";
  if (reason != nullptr) {
    for (const char* r = reason; *r; r++) {
      char ch = *r;
      error_code_.push_back(ch == ' ' ? '_' : static_cast<char>(toupper(static_cast<unsigned char>(ch))));
    }
  } else {
    error_code_ += "UNKNOWN";
  }
  ERR_clear_error();
}

std::string TlsChannel::alpn() const {
  const unsigned char* p = nullptr;
  unsigned int n = 0;
  SSL_get0_alpn_selected(ssl_, &p, &n);
  return p ? std::string(reinterpret_cast<const char*>(p), n) : std::string();
}

bool TlsChannel::PeerVerified() const {
  X509* peer = SSL_get_peer_certificate(ssl_);
  if (peer == nullptr) return false;
  X509_free(peer);
  return SSL_get_verify_result(ssl_) == X509_V_OK;
}

}  // namespace sluice
