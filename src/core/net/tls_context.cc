#include "core/net/tls_context.h"

#include "core/net/tls_channel.h"
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>

#include <cctype>
#include <cstring>
#include <memory>

namespace sluice {

namespace {

// RAII owners for the OpenSSL objects a context is built from.
struct BioFree { void operator()(BIO* b) const { BIO_free(b); } };
struct X509Free { void operator()(X509* x) const { X509_free(x); } };
struct PkeyFree { void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); } };
struct P12Free { void operator()(PKCS12* p) const { PKCS12_free(p); } };
struct CtxFree { void operator()(SSL_CTX* c) const { SSL_CTX_free(c); } };
struct X509StackFree {
  void operator()(STACK_OF(X509)* s) const { sk_X509_pop_free(s, X509_free); }
};
using UniqueBio = std::unique_ptr<BIO, BioFree>;
using UniqueX509 = std::unique_ptr<X509, X509Free>;
using UniquePkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
using UniqueCtx = std::unique_ptr<SSL_CTX, CtxFree>;

// ALPN protocol lists in wire format (length-prefixed), one per AlpnSet;
// static so that the select callback's argument outlives every context.
const std::string kAlpnWire[kAlpnSetCount] = {
    std::string("\x02h2\x08http/1.1", 12),
    std::string("\x02h2", 3),
    std::string("\x08http/1.1", 9),
    std::string("\x08http/1.1\x02h2", 12),
};

// The server's preference decides (as node's SelectALPNCallback). No
// common protocol: the fatal no_application_protocol alert (RFC 7301 3.2),
// which node sends too.
int SelectAlpn(SSL* ssl, const unsigned char** out, unsigned char* outlen,
               const unsigned char* in, unsigned int inlen, void* arg) {
  (void)ssl;
  const std::string* wire = static_cast<const std::string*>(arg);
  unsigned char* chosen = nullptr;
  int r = SSL_select_next_proto(
      &chosen, outlen, reinterpret_cast<const unsigned char*>(wire->data()),
      static_cast<unsigned int>(wire->size()), in, inlen);
  if (r != OPENSSL_NPN_NEGOTIATED) return SSL_TLSEXT_ERR_ALERT_FATAL;
  *out = chosen;
  return SSL_TLSEXT_ERR_OK;
}

// SNI: switch the connection to the context addContext gave for the name
// (the SSL's app data is its TlsChannel, see TlsChannel::Create). With an
// SNICallback the names are the callback's business (TlsChannel::OnCertCb).
int OnServerName(SSL* ssl, int* alert, void* arg) {
  (void)alert;
  (void)arg;
  const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  const TlsChannel* channel = static_cast<const TlsChannel*>(SSL_get_app_data(ssl));
  const TlsServer* server = channel != nullptr ? channel->server() : nullptr;
  if (name == nullptr || server == nullptr || server->sni_callback) {
    return SSL_TLSEXT_ERR_OK;
  }
  SSL_CTX* ctx = server->ForServerName(name);
  if (ctx != nullptr && ctx != SSL_get_SSL_CTX(ssl)) SSL_set_SSL_CTX(ssl, ctx);
  return SSL_TLSEXT_ERR_OK;
}

// Session tickets as node makes them (its TicketCompatibilityCallback):
// the 16-byte key name, AES-128-CBC with the 16-byte AES key, HMAC-SHA256
// with the 16-byte HMAC key, around OpenSSL's own ticket layout. So a
// ticket from a node server resumes on a sluice server with the same
// ticketKeys and sessionIdContext, and the other way round. Called by
// OpenSSL inside a handshake; the keys are the listener's (the SSL's app
// data is its TlsChannel). 1: keys set; 0: unknown key name (decrypting:
// a full handshake); -1: failure.
int TicketKeyCb(SSL* ssl, unsigned char* name, unsigned char* iv,
                EVP_CIPHER_CTX* ectx, EVP_MAC_CTX* hctx, int enc) {
  const TlsChannel* channel = static_cast<const TlsChannel*>(SSL_get_app_data(ssl));
  if (channel == nullptr) return enc ? -1 : 0;
  return SealTicket(channel->server()->ticket_keys(), name, iv, ectx, hctx, enc);
}

// requestCert: the handshake goes on whatever the verification said; the
// result is reported (socket.authorized) and, with rejectUnauthorized,
// acted on once the handshake completed.
int AcceptAnyPeer(int preverify_ok, X509_STORE_CTX* ctx) {
  (void)preverify_ok;
  (void)ctx;
  return 1;
}

int PasswordCb(char* buf, int size, int rwflag, void* u) {
  (void)rwflag;
  const std::string* pass = static_cast<const std::string*>(u);
  if (pass == nullptr || size <= 0) return 0;
  size_t n = pass->size() < static_cast<size_t>(size) ? pass->size()
                                                      : static_cast<size_t>(size);
  memcpy(buf, pass->data(), n);
  return static_cast<int>(n);
}

std::string LastError(const char* what) {
  unsigned long e = ERR_peek_last_error();
  ERR_clear_error();
  if (e == 0) return what;
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  return std::string(what) + ": " + buf;
}

UniqueBio MemBio(const std::string& s) {
  return UniqueBio(BIO_new_mem_buf(s.data(), static_cast<int>(s.size())));
}

// Every certificate in a PEM blob, in order. False on a parse error; an
// empty blob gives none.
bool ReadCerts(const std::string& pem, std::vector<UniqueX509>* out) {
  UniqueBio bio = MemBio(pem);
  if (!bio) return false;
  for (;;) {
    X509* x = PEM_read_bio_X509_AUX(bio.get(), nullptr, nullptr, nullptr);
    if (x == nullptr) break;
    out->emplace_back(x);
  }
  // The loop ends at the first PEM block that is not a certificate or at
  // the end: only the end is fine.
  unsigned long e = ERR_peek_last_error();
  if (ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE) {
    ERR_clear_error();
    return true;
  }
  return e == 0;
}

bool UseChain(SSL_CTX* ctx, std::vector<UniqueX509>& chain) {
  if (chain.empty()) return true;
  if (SSL_CTX_use_certificate(ctx, chain[0].get()) != 1) return false;
  for (size_t i = 1; i < chain.size(); i++) {
    // add1: the context takes its own reference.
    if (SSL_CTX_add1_chain_cert(ctx, chain[i].get()) != 1) return false;
  }
  return true;
}

bool AddCa(SSL_CTX* ctx, X509* x) {
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  if (X509_STORE_add_cert(store, x) != 1) return false;
  return SSL_CTX_add_client_CA(ctx, x) == 1;
}

// node's ciphers string mixes both kinds: TLS 1.3 suites are the TLS_*
// names, the rest is an OpenSSL cipher list for TLS <= 1.2.
void SplitCiphers(const std::string& all, std::string* tls13,
                  std::string* tls12) {
  size_t start = 0;
  while (start <= all.size()) {
    size_t end = all.find(':', start);
    if (end == std::string::npos) end = all.size();
    std::string item = all.substr(start, end - start);
    if (!item.empty()) {
      std::string* to = item.compare(0, 4, "TLS_") == 0 ? tls13 : tls12;
      if (!to->empty()) to->push_back(':');
      to->append(item);
    }
    start = end + 1;
  }
}

// Case-insensitive host match where '*' stands for any run of characters
// without a dot (node turns addContext's hostname into such a RegExp).
bool HostMatches(const char* pat, const char* name) {
  for (;;) {
    if (*pat == '*') {
      pat++;
      for (const char* n = name;; n++) {
        if (HostMatches(pat, n)) return true;
        if (*n == '\0' || *n == '.') return false;
      }
    }
    if (*pat == '\0') return *name == '\0';
    if (*name == '\0') return false;
    if (tolower(static_cast<unsigned char>(*pat)) !=
        tolower(static_cast<unsigned char>(*name))) {
      return false;
    }
    pat++;
    name++;
  }
}

}  // namespace

int SealTicket(const TicketKeys& k, unsigned char* name, unsigned char* iv,
               EVP_CIPHER_CTX* ectx, EVP_MAC_CTX* hctx, int enc) {
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY,
                                        const_cast<unsigned char*>(k.hmac), sizeof(k.hmac)),
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, const_cast<char*>("SHA256"), 0),
      OSSL_PARAM_construct_end(),
  };
  if (enc) {
    memcpy(name, k.name, sizeof(k.name));
    if (RAND_bytes(iv, 16) != 1 ||
        EVP_EncryptInit_ex(ectx, EVP_aes_128_cbc(), nullptr, k.aes, iv) != 1 ||
        EVP_MAC_CTX_set_params(hctx, params) != 1) {
      return -1;
    }
    return 1;
  }
  if (memcmp(name, k.name, sizeof(k.name)) != 0) return 0;
  if (EVP_DecryptInit_ex(ectx, EVP_aes_128_cbc(), nullptr, k.aes, iv) != 1 ||
      EVP_MAC_CTX_set_params(hctx, params) != 1) {
    return -1;
  }
  return 1;
}

TlsContext TlsContext::Create(const TlsContextOptions& o, std::string* error) {
  ERR_clear_error();
  UniqueCtx ctx(SSL_CTX_new(TLS_server_method()));
  if (!ctx) {
    *error = LastError("SSL_CTX_new");
    return TlsContext();
  }
  SSL_CTX* c = ctx.get();
  if (SSL_CTX_set_min_proto_version(c, o.min_version) != 1 ||
      SSL_CTX_set_max_proto_version(c, o.max_version) != 1) {
    *error = LastError("minVersion/maxVersion");
    return TlsContext();
  }
  // Renegotiation is refused (a client-initiated one is a CPU lever for
  // the client and useless to HTTP; node limits it, sluice forbids it).
  uint64_t opts = SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION;
  if (o.honor_cipher_order) opts |= SSL_OP_CIPHER_SERVER_PREFERENCE;
  // secureOptions adds to these, as node's setOptions does to its own.
  SSL_CTX_set_options(c, opts | o.secure_options);
  // Idle connections give their record buffers back (as node).
  SSL_CTX_set_mode(c, SSL_MODE_RELEASE_BUFFERS);

  std::string tls13, tls12;
  SplitCiphers(o.ciphers, &tls13, &tls12);
  if (!tls12.empty() && SSL_CTX_set_cipher_list(c, tls12.c_str()) != 1 &&
      tls13.empty()) {
    // A list of only TLS 1.3 suites leaves no TLS 1.2 cipher; that alone
    // is not an error.
    *error = LastError("ciphers");
    return TlsContext();
  }
  ERR_clear_error();
  if (!tls13.empty() && SSL_CTX_set_ciphersuites(c, tls13.c_str()) != 1) {
    *error = LastError("ciphers");
    return TlsContext();
  }
  if (!o.ecdh_curve.empty() && o.ecdh_curve != "auto" &&
      SSL_CTX_set1_groups_list(c, o.ecdh_curve.c_str()) != 1) {
    *error = LastError("ecdhCurve");
    return TlsContext();
  }
  if (!o.sigalgs.empty() && SSL_CTX_set1_sigalgs_list(c, o.sigalgs.c_str()) != 1) {
    *error = LastError("sigalgs");
    return TlsContext();
  }

  std::string pass = o.passphrase;
  if (!o.pfx.empty()) {
    const unsigned char* p = reinterpret_cast<const unsigned char*>(o.pfx.data());
    std::unique_ptr<PKCS12, P12Free> p12(
        d2i_PKCS12(nullptr, &p, static_cast<long>(o.pfx.size())));
    EVP_PKEY* pkey = nullptr;
    X509* cert = nullptr;
    STACK_OF(X509)* extra = nullptr;
    if (!p12 || PKCS12_parse(p12.get(), pass.c_str(), &pkey, &cert, &extra) != 1) {
      *error = LastError("pfx");
      return TlsContext();
    }
    UniquePkey key_owner(pkey);
    UniqueX509 cert_owner(cert);
    std::unique_ptr<STACK_OF(X509), X509StackFree> extra_owner(extra);
    if ((cert && SSL_CTX_use_certificate(c, cert) != 1) ||
        (pkey && SSL_CTX_use_PrivateKey(c, pkey) != 1)) {
      *error = LastError("pfx");
      return TlsContext();
    }
    for (int i = 0; extra != nullptr && i < sk_X509_num(extra); i++) {
      X509* x = sk_X509_value(extra, i);
      // As node: the bundle's other certificates are the chain and are
      // trusted for client certificates.
      if (SSL_CTX_add1_chain_cert(c, x) != 1 || !AddCa(c, x)) {
        *error = LastError("pfx");
        return TlsContext();
      }
    }
  }
  for (const std::string& pem : o.certs) {
    std::vector<UniqueX509> chain;
    if (!ReadCerts(pem, &chain) || !UseChain(c, chain)) {
      *error = LastError("cert");
      return TlsContext();
    }
  }
  for (const std::string& pem : o.keys) {
    UniqueBio bio = MemBio(pem);
    UniquePkey key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, PasswordCb,
                                                 const_cast<std::string*>(&pass))
                       : nullptr);
    if (!key || SSL_CTX_use_PrivateKey(c, key.get()) != 1) {
      *error = LastError("key");
      return TlsContext();
    }
  }
  if (o.dhparam == "auto") {
    SSL_CTX_set_dh_auto(c, 1);
  } else if (!o.dhparam.empty()) {
    // As node (documented there): parameters that do not parse are
    // discarded and DHE suites stay unavailable; node has already refused
    // ones that are too small.
    UniqueBio bio = MemBio(o.dhparam);
    EVP_PKEY* dh = bio ? PEM_read_bio_Parameters(bio.get(), nullptr) : nullptr;
    if (dh != nullptr && SSL_CTX_set0_tmp_dh_pkey(c, dh) != 1) EVP_PKEY_free(dh);
    ERR_clear_error();
  }
  if ((!o.keys.empty() || !o.pfx.empty()) && SSL_CTX_check_private_key(c) != 1) {
    *error = LastError("key does not match certificate");
    return TlsContext();
  }
  for (const std::string& pem : o.cas) {
    std::vector<UniqueX509> cas;
    if (!ReadCerts(pem, &cas)) {
      *error = LastError("ca");
      return TlsContext();
    }
    for (UniqueX509& x : cas) {
      if (!AddCa(c, x.get())) {
        *error = LastError("ca");
        return TlsContext();
      }
    }
  }
  for (const std::string& pem : o.crls) {
    // As node's addCRL: every CRL joins the trust store and client
    // certificates (and their issuers) are checked against them.
    UniqueBio bio = MemBio(pem);
    X509_STORE* store = SSL_CTX_get_cert_store(c);
    int added = 0;
    for (;;) {
      X509_CRL* crl = bio ? PEM_read_bio_X509_CRL(bio.get(), nullptr, nullptr, nullptr) : nullptr;
      if (crl == nullptr) break;
      int r = X509_STORE_add_crl(store, crl);
      X509_CRL_free(crl);  // the store holds its own reference
      if (r != 1) {
        *error = LastError("crl");
        return TlsContext();
      }
      added++;
    }
    ERR_clear_error();
    if (added == 0) {
      *error = "crl: no CRL in the PEM data";
      return TlsContext();
    }
    X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL);
  }
  if (o.request_cert) {
    // As node's: a certificate that does not verify does not fail the
    // handshake (the verify callback accepts everything); with
    // rejectUnauthorized the connection is destroyed right after it
    // (Connection::OnHandshakeDone, TlsServer::refuse_unverified), so such
    // a client sees no alert. No certificate at all with
    // rejectUnauthorized fails the handshake itself, as node's
    // (SSL_VERIFY_FAIL_IF_NO_PEER_CERT: a handshake_failure or
    // certificate_required alert).
    int mode = SSL_VERIFY_PEER;
    if (o.reject_unauthorized) mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    SSL_CTX_set_verify(c, mode, AcceptAnyPeer);
  }
  // Sessions resume only in the context that made them (required by
  // OpenSSL once client certificates are verified).
  static const unsigned char kSidCtx[] = "sluice";
  if (o.session_id_context.empty()) {
    SSL_CTX_set_session_id_context(c, kSidCtx, sizeof(kSidCtx) - 1);
  } else {
    // At most SSL_MAX_SID_CTX_LENGTH (32) bytes, taken as given (node).
    if (SSL_CTX_set_session_id_context(
            c, reinterpret_cast<const unsigned char*>(o.session_id_context.data()),
            static_cast<unsigned int>(o.session_id_context.size())) != 1) {
      *error = LastError("sessionIdContext");
      return TlsContext();
    }
  }
  SSL_CTX_set_timeout(c, o.session_timeout);
  // Session tickets in node's format with the listener's keys (the
  // callback of the context a connection started with is the one used).
  SSL_CTX_set_tlsext_ticket_key_evp_cb(c, TicketKeyCb);
  SSL_CTX_set_alpn_select_cb(c, SelectAlpn,
                             const_cast<std::string*>(&kAlpnWire[o.alpn]));
  SSL_CTX_set_tlsext_servername_callback(c, OnServerName);
  SSL_CTX_set_cert_cb(c, TlsChannel::OnCertCb, nullptr);
  return TlsContext(ctx.release());
}

TlsContext TlsContext::Derive(SSL_CTX* from, const TlsContextOptions& o,
                              std::string* error) {
  TlsContextOptions base = o;
  base.keys.clear();
  base.certs.clear();
  base.pfx.clear();
  base.cas.clear();
  base.crls.clear();
  TlsContext made = Create(base, error);
  if (!made) return made;
  SSL_CTX* c = made.get();
  ERR_clear_error();
  // Each certificate slot (RSA, ECDSA, ...) of `from`: walking them moves
  // its current-slot cursor, put back after (only SSL_CTX_use_* calls
  // read it, and node makes none once a context is configured).
  X509* current = SSL_CTX_get0_certificate(from);
  bool ok = true;
  for (int r = SSL_CTX_set_current_cert(from, SSL_CERT_SET_FIRST); r == 1 && ok;
       r = SSL_CTX_set_current_cert(from, SSL_CERT_SET_NEXT)) {
    X509* cert = SSL_CTX_get0_certificate(from);
    EVP_PKEY* key = SSL_CTX_get0_privatekey(from);
    STACK_OF(X509)* chain = nullptr;
    SSL_CTX_get0_chain_certs(from, &chain);
    if (cert == nullptr) continue;
    ok = SSL_CTX_use_certificate(c, cert) == 1 &&
         (key == nullptr || SSL_CTX_use_PrivateKey(c, key) == 1);
    for (int i = 0; ok && chain != nullptr && i < sk_X509_num(chain); i++) {
      ok = SSL_CTX_add1_chain_cert(c, sk_X509_value(chain, i)) == 1;
    }
  }
  if (current != nullptr) SSL_CTX_select_current_cert(from, current);
  if (!ok) {
    *error = LastError("certificate of the context");
    return TlsContext();
  }
  ERR_clear_error();
  // The trust store is shared (counted): node's holds the context's ca
  // (or its root certificates) and CRLs.
  if (X509_STORE* store = SSL_CTX_get_cert_store(from)) SSL_CTX_set1_cert_store(c, store);
  if (STACK_OF(X509_NAME)* names = SSL_CTX_get_client_CA_list(from)) {
    SSL_CTX_set_client_CA_list(c, SSL_dup_CA_list(names));
  }
  return made;
}

TlsServer::TlsServer(TlsContext ctx) : default_(std::move(ctx)) {
  // Random keys until the embedder sets some (as node's contexts).
  if (RAND_bytes(reinterpret_cast<unsigned char*>(&ticket_keys_), sizeof(ticket_keys_)) != 1) {
    ERR_clear_error();
  }
}

TlsServer::~TlsServer() { OPENSSL_cleanse(&ticket_keys_, sizeof(ticket_keys_)); }

bool TlsServer::SetTicketKeys(const std::string& keys) {
  if (keys.size() != sizeof(ticket_keys_)) return false;
  memcpy(&ticket_keys_, keys.data(), sizeof(ticket_keys_));
  return true;
}

std::string TlsServer::ticket_keys_bytes() const {
  return std::string(reinterpret_cast<const char*>(&ticket_keys_), sizeof(ticket_keys_));
}

void TlsServer::AddSni(const std::string& hostname, TlsContext ctx) {
  sni_.emplace_back(hostname, std::move(ctx));
}

SSL_CTX* TlsServer::ForServerName(const char* servername) const {
  for (size_t i = sni_.size(); i-- > 0;) {
    if (HostMatches(sni_[i].first.c_str(), servername)) return sni_[i].second.get();
  }
  return nullptr;
}

}  // namespace sluice
