// TlsInput: the ciphertext a TLS connection has read and OpenSSL has not
// consumed yet, as OpenSSL's read BIO, without copying each read into a
// memory BIO first.
//
// A socket read is lent, not copied (Lend): OpenSSL's record layer reads
// its records straight out of the connection's read buffer. When the read
// has been processed (Settle, before the read buffer is reused), what
// OpenSSL left of it — the start of a record whose end is still on the
// wire, or a whole read while the connection is paused — is copied into
// the carry buffer, which the next reads come after. So only the bytes
// left over at the end of a read are copied, not every byte.
//
// Order: carried bytes, then the lent read. Outside a Lend..Settle window
// nothing is lent and every unconsumed byte is carried.
// An empty input answers "retry" (as a memory BIO with eof_return -1):
// more is to come, never EOF — the connection reports the socket's EOF.
#pragma once

#include <openssl/bio.h>

#include <cstddef>
#include <string>

namespace sluice {

class TlsInput {
 public:
  TlsInput() = default;
  TlsInput(const TlsInput&) = delete;
  TlsInput& operator=(const TlsInput&) = delete;

  // A new BIO reading from this input (BIO_free, or the SSL it is given
  // to, frees it; the input must outlive it). nullptr on failure.
  BIO* NewBio();

  // [data, data + len) is readable until Settle. At most one read is lent
  // at a time (Settle first).
  void Lend(const char* data, size_t len);
  // Copies what is left of the lent read into the carry buffer and
  // forgets the lent memory.
  void Settle();

  // Bytes not yet consumed.
  size_t size() const { return carry_.size() - carry_off_ + lent_len_; }
  // The first n (<= size()) unconsumed bytes, copied into out.
  void Peek(unsigned char* out, size_t n) const;

 private:
  // The BIO's read: up to len bytes in order, consumed.
  size_t Take(char* out, size_t len);
  static int BioRead(BIO* b, char* out, int len);
  static long BioCtrl(BIO* b, int cmd, long num, void* ptr);
  static BIO_METHOD* Method();

  std::string carry_;     // unconsumed bytes of earlier reads, from carry_off_
  size_t carry_off_ = 0;
  const char* lent_ = nullptr;  // the read being processed, from its first unconsumed byte
  size_t lent_len_ = 0;
};

}  // namespace sluice
