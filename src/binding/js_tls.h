// The TLS side of the binding: TLS options from JS into the core's
// TlsContextOptions, a connection's TLS facts as a JS object, and the
// OpenSSL linkage facts (which copy answers SSL_new).
#pragma once

#include <napi.h>

#include <string>

#include "core/net/tls_context.h"

namespace sluice {

class Connection;

// Builds a context from the plain object lib/tls_options.js prepares
// (PEM strings, version numbers...). On failure: empty, and *error.
TlsContext TlsContextFromJs(const Napi::Object& o, std::string* error);
// { alpnProtocol, servername, protocol, cipher, cipherStandardName,
//   cipherVersion, verifyError, peerCertificate } of `c`, or null when
// `c` is gone or speaks cleartext.
Napi::Value TlsInfo(Napi::Env env, Connection* c);
// exports.opensslInfo.
void InitTls(Napi::Env env, Napi::Object exports);

}  // namespace sluice
