#include "binding/js_tls.h"

#include <openssl/crypto.h>
#include <openssl/opensslv.h>
#include <openssl/x509.h>

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

TlsContext TlsContextFromJs(const Napi::Object& o, std::string* error) {
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
  t.ticket_keys = BytesOf(o.Get("ticketKeys"));
  v = o.Get("alpn");
  int alpn = v.IsNumber() ? v.As<Napi::Number>().Int32Value() : 0;
  if (alpn < 0 || alpn >= kAlpnSetCount) alpn = 0;
  t.alpn = static_cast<AlpnSet>(alpn);
  return TlsContext::Create(t, error);
}

Napi::Value TlsInfo(Napi::Env env, Connection* c) {
  TlsChannel* tls = c != nullptr ? c->tls() : nullptr;
  if (tls == nullptr) return env.Null();
  Napi::Object o = Napi::Object::New(env);
  o.Set("handshakeDone", tls->handshake_done());
  if (!tls->handshake_done()) return o;
  std::string alpn = tls->alpn();
  std::string sn = tls->servername();
  o.Set("alpnProtocol", alpn.empty() ? Napi::Value(Napi::Boolean::New(env, false))
                                     : Napi::Value(Napi::String::New(env, alpn)));
  o.Set("servername", sn.empty() ? Napi::Value(Napi::Boolean::New(env, false))
                                 : Napi::Value(Napi::String::New(env, sn)));
  o.Set("protocol", tls->protocol());
  const SSL_CIPHER* cipher = SSL_get_current_cipher(tls->ssl());
  if (cipher != nullptr) {
    o.Set("cipher", SSL_CIPHER_get_name(cipher));
    o.Set("cipherStandardName", SSL_CIPHER_standard_name(cipher));
    o.Set("cipherVersion", SSL_CIPHER_get_version(cipher));
  }
  std::string der = tls->peer_certificate_der();
  if (!der.empty()) {
    o.Set("peerCertificate", Napi::Buffer<char>::Copy(env, der.data(), der.size()));
    long vr = tls->verify_result();
    if (vr != X509_V_OK) o.Set("verifyError", X509_verify_cert_error_string(vr));
  }
  return o;
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
}

}  // namespace sluice
