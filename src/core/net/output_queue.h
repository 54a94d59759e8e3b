// OutputQueue: bytes waiting to be written to a socket, as one contiguous
// inline buffer (headers, small bodies, chunk framing) interleaved with
// references to external memory (large bodies, never copied).
//
// Knows nothing of N-API: external memory is owned through ExternalRef,
// which the binding implements over a napi reference.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sluice {

// Owner of an external byte range referenced by an OutputQueue.
// Release() is called exactly once, on the loop thread, when the bytes have
// been written to the kernel or dropped (connection closed). The object may
// delete itself in Release().
class ExternalRef {
 public:
  virtual ~ExternalRef() = default;
  virtual void Release() = 0;
};

// Owns bytes moved in (a string body's UTF-8, compressor output) while
// queues reference them; frees itself on Release (loop thread).
class OwnedBytes final : public ExternalRef {
 public:
  explicit OwnedBytes(std::string&& s) : s_(std::move(s)) {}
  const char* data() const { return s_.data(); }
  size_t size() const { return s_.size(); }
  void Release() override { delete this; }

 private:
  std::string s_;
};

// Body bytes shorter than this are copied into the output next to their
// framing (one contiguous iovec); longer ones are referenced where they lie,
// as their own iovec of the same writev (kept alive by an ExternalRef until
// the kernel has them). One value for both protocols and every producer:
// measured in docs/benchmarks.md ("copy or reference").
inline constexpr size_t kCopyBelow = 2048;

class OutputQueue {
 public:
  OutputQueue() = default;
  ~OutputQueue() { Clear(); }
  OutputQueue(const OutputQueue&) = delete;
  OutputQueue& operator=(const OutputQueue&) = delete;
  OutputQueue(OutputQueue&& other) noexcept { *this = std::move(other); }
  OutputQueue& operator=(OutputQueue&& other) noexcept;

  // Returns space for at least n bytes at the end of the inline buffer;
  // Commit(k) (k <= n) makes k of them part of the queue. The pointer is
  // valid until the next call that appends.
  // Inline: a response head is a dozen small appends (status line,
  // framing headers), each a call of its own before.
  char* Reserve(size_t n) {
    if (inline_len_ + n > inline_cap_) Grow(n);
    return inline_.get() + inline_len_;
  }
  void Commit(size_t n) {
    if (n == 0) return;
    // Extend the last segment when it is the inline tail; inline bytes
    // stay in one iovec however many appends made them.
    if (!segs_.empty()) {
      Segment& last = segs_.back();
      if (last.ext == nullptr && last.off + last.len == inline_len_) {
        last.len += n;
        inline_len_ += n;
        total_ += n;
        return;
      }
    }
    NewInlineSegment(n);
  }
  void Append(const char* data, size_t n) {
    if (n == 0) return;
    memcpy(Reserve(n), data, n);
    Commit(n);
  }
  void Append(const char* s) { Append(s, strlen(s)); }
  // References [data, data+n) without copying; ref->Release() is called when
  // the queue is done with it (ref may be null for static memory).
  void AppendExternal(const char* data, size_t n, ExternalRef* ref);
  // Bytes the queue is to own: copied below kCopyBelow, otherwise moved
  // into an OwnedBytes and referenced.
  void AppendOwned(std::string&& s);
  // Moves all of other's bytes to the end of this queue, in order.
  void Splice(OutputQueue& other);

  size_t size() const { return total_; }
  bool empty() const { return total_ == 0; }
  size_t inline_size() const { return inline_len_; }
  // Bytes of inline buffer held (kept across Clear, freed by ClearAndFree).
  size_t inline_capacity() const { return inline_cap_; }
  // Drops everything, releasing external refs; keeps the inline buffer
  // for the next appends.
  void Clear();
  // Clear, and frees the inline buffer and segment list as well: for a
  // queue that stays empty most of its life (an idle WebSocket's).
  void ClearAndFree();

  // Fills iovecs for the bytes after the first `skip` bytes. The iovecs point
  // into this queue, which must not change until they are used.
  void ToIovecs(size_t skip, std::vector<uv_buf_t>* out) const;
  // Calls f(data, len) for each span of bytes, in order (a TLS layer
  // seals them into records without building iovecs).
  template <typename F>
  void ForEachSpan(F&& f) const {
    for (const Segment& s : segs_) f(s.ext ? s.ext : inline_.get() + s.off, s.len);
  }

 private:
  struct Segment {
    const char* ext;   // external bytes, or nullptr: inline_[off, off+len)
    size_t off;
    size_t len;
    ExternalRef* ref;  // owner of ext (may be null)
  };
  void Grow(size_t need);
  // Commit's slow path: the committed bytes start a new inline segment.
  void NewInlineSegment(size_t n);

  std::unique_ptr<char[]> inline_;
  size_t inline_len_ = 0;
  size_t inline_cap_ = 0;
  size_t total_ = 0;
  std::vector<Segment> segs_;
};

}  // namespace sluice
