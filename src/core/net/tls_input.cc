#include "core/net/tls_input.h"

#include <cstring>

#include "core/net/bio_method.h"

namespace sluice {

BIO_METHOD* TlsInput::Method() {
  static BIO_METHOD* method =
      NewBioMethod("sluice tls input", BioRead, nullptr, BioCtrl);
  return method;
}

BIO* TlsInput::NewBio() {
  BIO_METHOD* m = Method();
  if (m == nullptr) return nullptr;
  BIO* b = BIO_new(m);
  if (b != nullptr) BIO_set_data(b, this);
  return b;
}

int TlsInput::BioRead(BIO* b, char* out, int len) {
  TlsInput* in = static_cast<TlsInput*>(BIO_get_data(b));
  BIO_clear_retry_flags(b);
  if (len <= 0) return 0;
  size_t n = in->Take(out, static_cast<size_t>(len));
  if (n == 0) {
    // Nothing yet: "try again", never EOF.
    BIO_set_retry_read(b);
    return -1;
  }
  return static_cast<int>(n);
}

long TlsInput::BioCtrl(BIO* b, int cmd, long num, void* ptr) {
  (void)num;
  (void)ptr;
  TlsInput* in = static_cast<TlsInput*>(BIO_get_data(b));
  switch (cmd) {
    case BIO_CTRL_PENDING:
      return static_cast<long>(in->size());
    case BIO_CTRL_FLUSH:
      return 1;
    default:
      return 0;  // BIO_CTRL_EOF included: never at EOF
  }
}

size_t TlsInput::Take(char* out, size_t len) {
  size_t done = 0;
  const size_t carried = carry_.size() - carry_off_;
  if (carried > 0) {
    const size_t n = carried < len ? carried : len;
    memcpy(out, carry_.data() + carry_off_, n);
    carry_off_ += n;
    done = n;
    if (carry_off_ == carry_.size()) {
      carry_.clear();
      carry_off_ = 0;
    }
  }
  if (done < len && lent_len_ > 0) {
    const size_t want = len - done;
    const size_t n = lent_len_ < want ? lent_len_ : want;
    memcpy(out + done, lent_, n);
    lent_ += n;
    lent_len_ -= n;
    done += n;
  }
  return done;
}

void TlsInput::Lend(const char* data, size_t len) {
  if (lent_len_ > 0) Settle();  // never two reads lent at once
  lent_ = data;
  lent_len_ = len;
}

void TlsInput::Settle() {
  if (lent_len_ > 0) {
    if (carry_off_ > 0) {
      carry_.erase(0, carry_off_);
      carry_off_ = 0;
    }
    carry_.append(lent_, lent_len_);
  }
  lent_ = nullptr;
  lent_len_ = 0;
}

void TlsInput::Peek(unsigned char* out, size_t n) const {
  const size_t carried = carry_.size() - carry_off_;
  const size_t a = carried < n ? carried : n;
  memcpy(out, carry_.data() + carry_off_, a);
  if (a < n) memcpy(out + a, lent_, n - a);
}

}  // namespace sluice
