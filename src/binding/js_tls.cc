#include "binding/js_tls.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/opensslv.h>
#include <openssl/x509.h>

#ifndef _WIN32
#include <dlfcn.h>
#endif

#include <cstring>

#include "core/common/symbol_origin.h"
#include "core/net/connection.h"
#include "core/net/tls_channel.h"

namespace sluice {

namespace {

std::string StringOf(const Napi::Value& v) {
  return v.IsString() ? v.As<Napi::String>().Utf8Value() : std::string();
}

// A string or a Buffer's bytes (PEM may come as either; pfx and
// ticketKeys are Buffers).
std::string BytesOf(const Napi::Value& v) {
  if (v.IsString()) return v.As<Napi::String>().Utf8Value();
  if (v.IsBuffer()) {
    Napi::Buffer<char> b = v.As<Napi::Buffer<char>>();
    return std::string(b.Data(), b.Length());
  }
  return std::string();
}

std::vector<std::string> ListOf(const Napi::Value& v) {
  std::vector<std::string> out;
  if (!v.IsArray()) return out;
  Napi::Array a = v.As<Napi::Array>();
  for (uint32_t i = 0; i < a.Length(); i++) out.push_back(BytesOf(a.Get(i)));
  return out;
}

// Marks the Externals WrapContext makes (a random 128-bit tag).
const napi_type_tag kContextTag = {0x8f1c2a7d5e3b4c61ULL, 0x2d9e7f0a6b1c3e58ULL};

void ThrowContextError(Napi::Env env, const std::string& message) {
  Napi::Error e = Napi::Error::New(env, message);
  e.Set("code", Napi::String::New(env, "ERR_SLUICE_TLS_CONTEXT"));
  e.ThrowAsJavaScriptException();
}

// tlsContext(options) -> a native context (WrapContext).
Napi::Value NewContext(const Napi::CallbackInfo& info) {
  TlsContext ctx = ContextArgOrThrow(info, 0);
  if (!ctx) return info.Env().Undefined();
  return WrapContext(info.Env(), std::move(ctx));
}

}  // namespace

Napi::Value WrapContext(Napi::Env env, TlsContext ctx) {
  TlsContext* owned = new TlsContext(std::move(ctx));
  Napi::External<TlsContext> ext = Napi::External<TlsContext>::New(
      env, owned, [](Napi::Env, TlsContext* c) { delete c; });
  napi_type_tag_object(env, ext, &kContextTag);
  return ext;
}

TlsContext UnwrapContext(napi_env env, napi_value v) {
  napi_valuetype type = napi_undefined;
  bool ours = false;
  void* p = nullptr;
  if (napi_typeof(env, v, &type) != napi_ok || type != napi_external ||
      napi_check_object_type_tag(env, v, &kContextTag, &ours) != napi_ok || !ours ||
      napi_get_value_external(env, v, &p) != napi_ok || p == nullptr) {
    return TlsContext();
  }
  return *static_cast<TlsContext*>(p);  // a new counted reference
}

TlsContext ContextArgOrThrow(const Napi::CallbackInfo& info, size_t index) {
  Napi::Env env = info.Env();
  if (info.Length() > index) {
    TlsContext ctx = UnwrapContext(env, info[index]);
    if (ctx) return ctx;
  }
  if (info.Length() <= index || !info[index].IsObject()) {
    Napi::TypeError::New(env, "TLS context options expected").ThrowAsJavaScriptException();
    return TlsContext();
  }
  std::string error;
  TlsContext ctx = TlsContextFromJs(info[index].As<Napi::Object>(), &error);
  if (!ctx) ThrowContextError(env, error);
  return ctx;
}

namespace {

TlsContextOptions OptionsFromJs(const Napi::Object& o) {
  TlsContextOptions t;
  t.keys = ListOf(o.Get("keys"));
  t.certs = ListOf(o.Get("certs"));
  t.cas = ListOf(o.Get("cas"));
  t.pfx = BytesOf(o.Get("pfx"));
  t.passphrase = StringOf(o.Get("passphrase"));
  t.ciphers = StringOf(o.Get("ciphers"));
  t.ecdh_curve = StringOf(o.Get("ecdhCurve"));
  t.sigalgs = StringOf(o.Get("sigalgs"));
  Napi::Value v = o.Get("minVersion");
  if (v.IsNumber()) t.min_version = v.As<Napi::Number>().Int32Value();
  v = o.Get("maxVersion");
  if (v.IsNumber()) t.max_version = v.As<Napi::Number>().Int32Value();
  t.honor_cipher_order = o.Get("honorCipherOrder").ToBoolean().Value();
  t.request_cert = o.Get("requestCert").ToBoolean().Value();
  t.reject_unauthorized = o.Get("rejectUnauthorized").ToBoolean().Value();
  v = o.Get("sessionTimeout");
  if (v.IsNumber()) t.session_timeout = v.As<Napi::Number>().Int64Value();
  v = o.Get("secureOptions");
  if (v.IsNumber()) t.secure_options = static_cast<uint64_t>(v.As<Napi::Number>().Int64Value());
  t.dhparam = BytesOf(o.Get("dhparam"));
  t.crls = ListOf(o.Get("crls"));
  t.session_id_context = BytesOf(o.Get("sessionIdContext"));
  v = o.Get("alpn");
  int alpn = v.IsNumber() ? v.As<Napi::Number>().Int32Value() : 0;
  if (alpn < 0 || alpn >= kAlpnSetCount) alpn = 0;
  t.alpn = static_cast<AlpnSet>(alpn);
  return t;
}

// The pointer a V8 External made outside Node-API holds (node's
// SecureContext#_external: its SSL_CTX), or null when it is not an
// External or this node does not export the reader.
//
// napi_get_value_external cannot read such an External: Node-API keeps
// the data of its own Externals behind a wrapper and reads through it (on
// Node 20 it gave the SSL_CTX's first word). V8's reader is exported by
// node for addons: v8::External::Value() const up to Node 24, then (V8
// 14, Node 26) Value(ExternalPointerTypeTag) const, the old one inline
// over it with the default tag 0. It is called by its symbol (Itanium C++
// ABI: `this` is the first argument) so that sluice needs no V8 headers
// (which Node 22+ write in C++20). Its `this` is the napi_value itself: a
// napi_value is the bits of a v8::Local<v8::Value>, whose operator-> is
// what Value() is called on.
void* RawExternal(napi_env env, napi_value v) {
  napi_valuetype type = napi_undefined;
  if (napi_typeof(env, v, &type) != napi_ok || type != napi_external) return nullptr;
#ifdef _WIN32
  return nullptr;
#else
  using Reader = void* (*)(const void* self);
  using TaggedReader = void* (*)(const void* self, uint16_t tag);
  static const Reader read = reinterpret_cast<Reader>(dlsym(RTLD_DEFAULT, "_ZNK2v88External5ValueEv"));
  static const TaggedReader read_tagged =
      reinterpret_cast<TaggedReader>(dlsym(RTLD_DEFAULT, "_ZNK2v88External5ValueEt"));
  if (read != nullptr) return read(v);
  return read_tagged != nullptr ? read_tagged(v, 0) : nullptr;
#endif
}

// tlsContextFrom(external, options) -> a native context (WrapContext)
// with the credentials of the SSL_CTX behind `external` (node's
// SecureContext#_external, read by lib/ from a context of node's
// tls.createSecureContext) and the rest from `options`.
Napi::Value NewContextFrom(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[1].IsObject()) {
    Napi::TypeError::New(env, "a SecureContext's _external and options expected")
        .ThrowAsJavaScriptException();
    return env.Undefined();
  }
  // Null also after node's SecureContext#close() (its SSL_CTX freed).
  void* p = RawExternal(env, info[0]);
  if (p == nullptr) {
    ThrowContextError(env, "the SSL_CTX of this SecureContext is out of reach (closed, or not "
                           "exposed by this node)");
    return env.Undefined();
  }
  std::string error;
  TlsContext ctx = TlsContext::Derive(static_cast<SSL_CTX*>(p),
                                      OptionsFromJs(info[1].As<Napi::Object>()), &error);
  if (!ctx) {
    ThrowContextError(env, error);
    return env.Undefined();
  }
  return WrapContext(env, std::move(ctx));
}

}  // namespace

TlsContext TlsContextFromJs(const Napi::Object& o, std::string* error) {
  return TlsContext::Create(OptionsFromJs(o), error);
}

Napi::Value TlsInfo(Napi::Env env, Connection* c) {
  TlsChannel* tls = c != nullptr ? c->tls() : nullptr;
  if (tls == nullptr) return env.Null();
  return TlsInfoOfSsl(env, tls->ssl(), tls->handshake_done());
}

Napi::Value TlsInfoOfSsl(Napi::Env env, SSL* ssl, bool handshake_done) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("handshakeDone", handshake_done);
  if (!handshake_done) return o;
  const unsigned char* alpn = nullptr;
  unsigned int alpn_len = 0;
  SSL_get0_alpn_selected(ssl, &alpn, &alpn_len);
  const char* sn = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  o.Set("alpnProtocol",
        alpn_len == 0 ? Napi::Value(Napi::Boolean::New(env, false))
                      : Napi::Value(Napi::String::New(env, reinterpret_cast<const char*>(alpn), alpn_len)));
  o.Set("servername", sn == nullptr || *sn == '\0' ? Napi::Value(Napi::Boolean::New(env, false))
                                                   : Napi::Value(Napi::String::New(env, sn)));
  // A QUIC connection says "QUICv1"; its handshake is TLS 1.3 (RFC 9001
  // requires it), which is what node's getProtocol() reports for TLS.
  const char* version = SSL_get_version(ssl);
  o.Set("protocol", strncmp(version, "QUIC", 4) == 0 ? "TLSv1.3" : version);
  const SSL_CIPHER* cipher = SSL_get_current_cipher(ssl);
  if (cipher != nullptr) {
    o.Set("cipher", SSL_CIPHER_get_name(cipher));
    o.Set("cipherStandardName", SSL_CIPHER_standard_name(cipher));
    o.Set("cipherVersion", SSL_CIPHER_get_version(cipher));
  }
  X509* peer = SSL_get0_peer_certificate(ssl);
  int n = peer != nullptr ? i2d_X509(peer, nullptr) : 0;
  if (n > 0) {
    Napi::Buffer<unsigned char> der = Napi::Buffer<unsigned char>::New(env, static_cast<size_t>(n));
    unsigned char* p = der.Data();
    i2d_X509(peer, &p);
    o.Set("peerCertificate", der);
    long vr = SSL_get_verify_result(ssl);
    if (vr != X509_V_OK) o.Set("verifyError", X509_verify_cert_error_string(vr));
  }
  ERR_clear_error();
  return o;
}

namespace {

Napi::Value DerOf(Napi::Env env, int (*i2d)(const void*, unsigned char**), const void* obj) {
  int n = obj != nullptr ? i2d(obj, nullptr) : 0;
  if (n <= 0) return env.Undefined();
  Napi::Buffer<unsigned char> b = Napi::Buffer<unsigned char>::New(env, static_cast<size_t>(n));
  unsigned char* p = b.Data();
  i2d(obj, &p);
  return b;
}

int SessionDer(const void* s, unsigned char** p) {
  return i2d_SSL_SESSION(static_cast<SSL_SESSION*>(const_cast<void*>(s)), p);
}

int CertDer(const void* x, unsigned char** p) {
  return i2d_X509(static_cast<X509*>(const_cast<void*>(x)), p);
}

// node's names for a shared signature algorithm: "<sign>+<hash>".
std::string SigalgName(int sign_nid, int hash_nid) {
  std::string name;
  switch (sign_nid) {
    case EVP_PKEY_RSA: name = "RSA+"; break;
    case EVP_PKEY_RSA_PSS: name = "RSA-PSS+"; break;
    case EVP_PKEY_DSA: name = "DSA+"; break;
    case EVP_PKEY_ED25519: name = "Ed25519+"; break;
    case EVP_PKEY_ED448: name = "Ed448+"; break;
    case EVP_PKEY_EC: name = "ECDSA+"; break;
    default: {
      const char* sn = OBJ_nid2sn(sign_nid);
      name = std::string(sn != nullptr ? sn : "UNDEF") + "+";
    }
  }
  const char* hash = hash_nid != NID_undef ? OBJ_nid2sn(hash_nid) : nullptr;
  name += hash != nullptr ? hash : "UNDEF";
  return name;
}

}  // namespace

Napi::Value TlsQuery(const Napi::CallbackInfo& info, Connection* c) {
  TlsChannel* tls = c != nullptr && !c->destroyed() ? c->tls() : nullptr;
  if (tls == nullptr || !tls->handshake_done()) return info.Env().Null();
  return TlsQueryOfSsl(info, tls->ssl(), 0);
}

Napi::Value TlsQueryOfSsl(const Napi::CallbackInfo& info, SSL* ssl, size_t a) {
  Napi::Env env = info.Env();
  if (info.Length() < a + 1 || !info[a].IsString()) return env.Null();
  std::string what = info[a].As<Napi::String>().Utf8Value();
  if (what == "reused") return Napi::Boolean::New(env, SSL_session_reused(ssl) == 1);
  if (what == "session") return DerOf(env, SessionDer, SSL_get_session(ssl));
  if (what == "ticket") {
    SSL_SESSION* sess = SSL_get_session(ssl);
    const unsigned char* tick = nullptr;
    size_t len = 0;
    if (sess != nullptr) SSL_SESSION_get0_ticket(sess, &tick, &len);
    if (tick == nullptr || len == 0) return env.Undefined();
    return Napi::Buffer<unsigned char>::Copy(env, tick, len);
  }
  if (what == "cert") return DerOf(env, CertDer, SSL_get_certificate(ssl));
  if (what == "sigalgs") {
    Napi::Array out = Napi::Array::New(env);
    int n = SSL_get_shared_sigalgs(ssl, 0, nullptr, nullptr, nullptr, nullptr, nullptr);
    for (int i = 0; i < n; i++) {
      int sign = NID_undef, hash = NID_undef;
      SSL_get_shared_sigalgs(ssl, i, &sign, &hash, nullptr, nullptr, nullptr);
      out.Set(static_cast<uint32_t>(i), SigalgName(sign, hash));
    }
    return out;
  }
  if (what == "ekm" && info.Length() >= a + 3 && info[a + 1].IsNumber() && info[a + 2].IsString()) {
    uint32_t len = info[a + 1].As<Napi::Number>().Uint32Value();
    std::string label = info[a + 2].As<Napi::String>().Utf8Value();
    bool has_context = info.Length() > a + 3 && info[a + 3].IsBuffer();
    Napi::Buffer<unsigned char> context;
    if (has_context) context = info[a + 3].As<Napi::Buffer<unsigned char>>();
    Napi::Buffer<unsigned char> out = Napi::Buffer<unsigned char>::New(env, len);
    ERR_clear_error();
    if (SSL_export_keying_material(ssl, out.Data(), len, label.data(), label.size(),
                                   has_context ? context.Data() : nullptr,
                                   has_context ? context.Length() : 0,
                                   has_context ? 1 : 0) != 1) {
      ERR_clear_error();
      Napi::Error e = Napi::Error::New(env, "Key extraction failed");
      e.Set("code", Napi::String::New(env, "ERR_CRYPTO_OPERATION_FAILED"));
      e.ThrowAsJavaScriptException();
      return env.Undefined();
    }
    return out;
  }
  return env.Undefined();
}

void InitTls(Napi::Env env, Napi::Object exports) {
  // Which object answers SSL_new: the node executable (official builds
  // export OpenSSL) or the libssl a distribution's node links.
  SymbolOrigin origin = OriginOf(reinterpret_cast<const void*>(&SSL_new));
  Napi::Object info = Napi::Object::New(env);
  info.Set("library", origin.library);
  info.Set("inExecutable", origin.in_executable);
  info.Set("headerVersion", OPENSSL_VERSION_TEXT);
  info.Set("runtimeVersion", OpenSSL_version(OPENSSL_VERSION));
  exports.Set("opensslInfo", info);
  exports.Set("tlsContext", Napi::Function::New(env, NewContext, "tlsContext"));
  exports.Set("tlsContextFrom", Napi::Function::New(env, NewContextFrom, "tlsContextFrom"));
}

}  // namespace sluice
