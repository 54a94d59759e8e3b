// NewBioMethod: a BIO_METHOD of sluice's own — a source or sink over a C++
// object held as the BIO's data (BIO_set_data), initialised at creation.
// The TLS channel's write BIO (the writer's wire queue) and its read BIO
// (TlsInput) are made with it. The caller keeps the result in a function
// static: made once per process and never freed (it describes code, not
// state). nullptr when OpenSSL has no memory for it.
#pragma once

#include <openssl/bio.h>

namespace sluice {

inline BIO_METHOD* NewBioMethod(const char* name,
                                int (*read)(BIO*, char*, int),
                                int (*write)(BIO*, const char*, int),
                                long (*ctrl)(BIO*, int, long, void*)) {
  BIO_METHOD* m =
      BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, name);
  if (m == nullptr) return nullptr;
  if (read != nullptr) BIO_meth_set_read(m, read);
  if (write != nullptr) BIO_meth_set_write(m, write);
  BIO_meth_set_ctrl(m, ctrl);
  BIO_meth_set_create(m, [](BIO* b) {
    BIO_set_init(b, 1);
    return 1;
  });
  return m;
}

}  // namespace sluice
