// ByteBuffer: a growable byte array whose new bytes are not initialised.
// std::string::resize zero-fills what it adds, a pass over memory that a
// caller about to overwrite every byte (an unmasked WebSocket payload)
// does not want.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <utility>

namespace sluice {

class ByteBuffer {
 public:
  // Makes room for n more bytes and returns where they go; they become
  // part of the buffer (size() grows by n) and must be written by the
  // caller. Earlier pointers are invalid after this call.
  char* Extend(size_t n) {
    if (size_ + n > cap_) Grow(size_ + n);
    char* at = data_.get() + size_;
    size_ += n;
    return at;
  }
  void clear() { size_ = 0; }
  // Frees the storage too.
  void Free() {
    data_.reset();
    size_ = cap_ = 0;
  }
  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }
  size_t capacity() const { return cap_; }

 private:
  void Grow(size_t need) {
    size_t cap = cap_ ? cap_ : 256;
    while (cap < need) cap *= 2;
    std::unique_ptr<char[]> next(new char[cap]);  // not value-initialised
    if (size_) memcpy(next.get(), data_.get(), size_);
    data_ = std::move(next);
    cap_ = cap;
  }

  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t cap_ = 0;
};

}  // namespace sluice
