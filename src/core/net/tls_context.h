// TlsContext: one server certificate configuration (an SSL_CTX) built from
// node's TLS options (PEM / PFX bytes, ciphers, versions...), and
// TlsServer: what a TLS listener serves with — the default context, the
// SNI contexts (addContext) and the ALPN protocols.
//
// OpenSSL is node's own: compiled against the openssl/ headers in node's
// include directory, linked against nothing; every SSL_* call binds at load
// time to the copy node carries (docs/tls.md). The core builds contexts
// itself from the option bytes, because node's SecureContext keeps its
// SSL_CTX out of reach of addons (lib/ still runs the options through
// tls.createSecureContext first, so bad input gets node's own errors).
#pragma once

#include <openssl/ssl.h>

#include <cstdint>
#include <string>
#include <vector>

namespace sluice {

// The ALPN protocols a server offers, in its order of preference.
enum AlpnSet {
  kAlpnH2Http1 = 0,  // "h2", "http/1.1" (allowHTTP1, the default)
  kAlpnH2 = 1,       // "h2" only (allowHTTP1: false)
  kAlpnHttp1 = 2,    // "http/1.1" only (an HTTP/1.1-only server)
  kAlpnHttp1H2 = 3,  // "http/1.1", "h2" (ALPNProtocols in that order)
  kAlpnSetCount = 4,
};

struct TlsContextOptions {
  std::vector<std::string> keys;   // PEM private keys
  std::vector<std::string> certs;  // PEM chains (leaf first)
  std::vector<std::string> cas;    // PEM CA certificates (client auth)
  std::string pfx;                 // PKCS#12 (DER), empty if none
  std::string passphrase;          // for encrypted keys and pfx
  std::string ciphers;             // OpenSSL list; TLS_* names are TLS 1.3
  std::string ecdh_curve;          // "auto" or a ':' list of groups
  std::string sigalgs;             // empty: OpenSSL's default
  int min_version = TLS1_2_VERSION;
  int max_version = TLS1_3_VERSION;
  bool honor_cipher_order = false;
  bool request_cert = false;
  bool reject_unauthorized = true;
  long session_timeout = 300;      // seconds
  uint64_t secure_options = 0;     // secureOptions: SSL_OP_* added as given
  std::string dhparam;             // "auto", PEM DH parameters, or empty
  std::vector<std::string> crls;   // PEM CRLs: client certificates checked
  std::string session_id_context;  // sessionIdContext; empty: sluice's
  AlpnSet alpn = kAlpnH2Http1;
};

// A counted reference to one SSL_CTX, on OpenSSL's own count: the
// connections' SSL objects hold theirs, so a context replaced by
// setSecureContext lives on exactly as long as connections use it.
// (No std::shared_ptr: its control block's typeinfo would be exported
// from the addon.)
class TlsContext {
 public:
  TlsContext() = default;
  TlsContext(const TlsContext& o) : ctx_(o.ctx_) {
    if (ctx_ != nullptr) SSL_CTX_up_ref(ctx_);
  }
  TlsContext(TlsContext&& o) noexcept : ctx_(o.ctx_) { o.ctx_ = nullptr; }
  TlsContext& operator=(TlsContext o) noexcept {
    SSL_CTX* t = ctx_;
    ctx_ = o.ctx_;
    o.ctx_ = t;
    return *this;
  }
  ~TlsContext() { SSL_CTX_free(ctx_); }

  // Builds a context; an empty one with *error set to OpenSSL's reason
  // (or a sluice message) when the options do not make one.
  static TlsContext Create(const TlsContextOptions& o, std::string* error);
  // Builds a context from `o` (its keys, certs, pfx, cas and crls
  // ignored) whose credentials are those of `from`, a context configured
  // elsewhere in the process (node's tls.createSecureContext): every
  // certificate with its key and chain, the trust store (shared, CRLs
  // included) and the client CA list. `from` is only read (its current
  // certificate is selected again afterwards) and not kept.
  static TlsContext Derive(SSL_CTX* from, const TlsContextOptions& o, std::string* error);

  SSL_CTX* get() const { return ctx_; }
  explicit operator bool() const { return ctx_ != nullptr; }

 private:
  explicit TlsContext(SSL_CTX* adopt) : ctx_(adopt) {}
  SSL_CTX* ctx_ = nullptr;
};

// Session ticket keys in node's 48-byte layout (ticketKeys,
// getTicketKeys): key name, HMAC-SHA256 key, AES-128 key.
struct TicketKeys {
  unsigned char name[16];
  unsigned char hmac[16];
  unsigned char aes[16];
};

// The body of a ticket key callback (SSL_CTX_set_tlsext_ticket_key_evp_cb)
// sealing and opening tickets under `keys` in node's format: 1 keys set, 0
// unknown key name (opening: a full handshake), -1 failure. Shared by the
// TCP contexts and the QUIC listener (quic_endpoint.cc), so a server's
// tickets are sealed alike on both.
int SealTicket(const TicketKeys& keys, unsigned char* name, unsigned char* iv,
               EVP_CIPHER_CTX* ectx, EVP_MAC_CTX* hctx, int enc);

// What a listener serves TLS with. Loop thread only.
class TlsServer {
 public:
  // Ticket keys start random.
  explicit TlsServer(TlsContext ctx);
  ~TlsServer();
  TlsServer(const TlsServer&) = delete;
  TlsServer& operator=(const TlsServer&) = delete;

  // ticketKeys / setTicketKeys: the keys every context of this listener
  // seals and opens session tickets with (node's format, see
  // tls_context.cc TicketKeyCb); tickets issued under other keys then
  // fall back to a full handshake. False unless `keys` is 48 bytes.
  bool SetTicketKeys(const std::string& keys);
  const TicketKeys& ticket_keys() const { return ticket_keys_; }
  std::string ticket_keys_bytes() const;

  // setSecureContext: connections accepted from now on use `ctx`; open
  // ones keep theirs.
  void SetDefault(TlsContext ctx) { default_ = std::move(ctx); }
  SSL_CTX* default_ctx() const { return default_.get(); }

  // addContext(hostname, ...): a ClientHello naming a matching server name
  // switches to `ctx`. "*" matches one label ("*.example.com"); later
  // additions win, as node's server._contexts.
  void AddSni(const std::string& hostname, TlsContext ctx);
  // The context for `servername` (nullptr: keep the default).
  SSL_CTX* ForServerName(const char* servername) const;

  // handshakeTimeout (ms, 0 = none) and the bytes a client may send before
  // its handshake completes.
  uint64_t handshake_timeout_ms = 120000;
  size_t max_handshake_bytes = 256 * 1024;
  // allowHTTP1: a connection that did not negotiate "h2" is served as
  // HTTP/1.1 (false: it is closed, as node's 'unknownProtocol' default).
  bool allow_http1 = true;
  // SNICallback: a ClientHello with a server name suspends the handshake
  // until the embedder answers with a context (TlsChannel::SetSniAnswer);
  // the addContext names are not consulted then (as node).
  bool sni_callback = false;
  // requestCert + rejectUnauthorized: a peer without a verified
  // certificate is destroyed once the handshake completed (as node's
  // onServerSocketSecure), not refused inside it; the contexts verify
  // without failing the handshake (tls_context.cc).
  bool refuse_unverified = false;

 private:
  TlsContext default_;
  std::vector<std::pair<std::string, TlsContext>> sni_;
  TicketKeys ticket_keys_;
};

}  // namespace sluice
