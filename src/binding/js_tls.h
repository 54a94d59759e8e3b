// The TLS side of the binding: TLS options from JS into the core's
// TlsContextOptions, a connection's TLS facts as a JS object, and the
// OpenSSL linkage facts (which copy answers SSL_new).
#pragma once

#include <napi.h>

#include <string>

#include "core/net/tls_context.h"

namespace sluice {

class Connection;

// Builds a context from the plain object lib/tls/tls_options.js prepares
// (PEM strings, version numbers...). On failure: empty, and *error.
TlsContext TlsContextFromJs(const Napi::Object& o, std::string* error);
// A native context handed to JS: an External owning a counted reference
// to the SSL_CTX, type-tagged so that only sluice's own are taken back.
Napi::Value WrapContext(Napi::Env env, TlsContext ctx);
// The context `v` holds when WrapContext made it; empty otherwise.
TlsContext UnwrapContext(napi_env env, napi_value v);
// A context from lib's normalized options or a WrapContext value at
// info[index]; empty with ERR_SLUICE_TLS_CONTEXT thrown when OpenSSL
// refuses the options (TypeError for anything else).
TlsContext ContextArgOrThrow(const Napi::CallbackInfo& info, size_t index);
// { alpnProtocol, servername, protocol, cipher, cipherStandardName,
//   cipherVersion, verifyError, peerCertificate } of `c`, or null when
// `c` is gone or speaks cleartext.
Napi::Value TlsInfo(Napi::Env env, Connection* c);
// The same facts of any SSL object (a TCP connection's, or an HTTP/3
// connection's QUIC one, whose TLS handshake layer answers the same calls).
Napi::Value TlsInfoOfSsl(Napi::Env env, SSL* ssl, bool handshake_done);
// tlsQuery(what, ...args) of a connection's JS object (null on cleartext
// or once closed): "session" (DER of the SSL_SESSION: node's getSession),
// "ticket" (its ticket, getTLSTicket), "reused" (isSessionReused),
// "cert" (DER of the certificate served: getCertificate), "sigalgs"
// (getSharedSigalgs), "ekm" (length, label, context?:
// exportKeyingMaterial; throws on failure).
Napi::Value TlsQuery(const Napi::CallbackInfo& info, Connection* c);
// The same queries of any SSL object whose handshake is done, their
// arguments from info[a] on.
Napi::Value TlsQueryOfSsl(const Napi::CallbackInfo& info, SSL* ssl, size_t a);
// exports.opensslInfo and tlsContext(options) (a native context for
// addContext / setSecureContext / the SNICallback's answers).
void InitTls(Napi::Env env, Napi::Object exports);

}  // namespace sluice
