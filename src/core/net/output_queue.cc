#include "core/net/output_queue.h"

#include <cstring>
#include <utility>

namespace sluice {

OutputQueue& OutputQueue::operator=(OutputQueue&& other) noexcept {
  if (this != &other) {
    Clear();
    inline_ = std::move(other.inline_);
    inline_len_ = other.inline_len_;
    inline_cap_ = other.inline_cap_;
    total_ = other.total_;
    segs_ = std::move(other.segs_);
    other.inline_len_ = 0;
    other.inline_cap_ = 0;
    other.total_ = 0;
    other.segs_.clear();
  }
  return *this;
}

void OutputQueue::Grow(size_t need) {
  size_t cap = inline_cap_ ? inline_cap_ : 512;
  while (cap < inline_len_ + need) cap *= 2;
  std::unique_ptr<char[]> next(new char[cap]);
  if (inline_len_) memcpy(next.get(), inline_.get(), inline_len_);
  inline_ = std::move(next);
  inline_cap_ = cap;
}

void OutputQueue::NewInlineSegment(size_t n) {
  segs_.push_back(Segment{nullptr, inline_len_, n, nullptr});
  inline_len_ += n;
  total_ += n;
}

void OutputQueue::AppendExternal(const char* data, size_t n,
                                 ExternalRef* ref) {
  if (n == 0) {
    if (ref) ref->Release();
    return;
  }
  segs_.push_back(Segment{data, 0, n, ref});
  total_ += n;
}

void OutputQueue::AppendOwned(std::string&& s) {
  if (s.size() < kCopyBelow) {
    Append(s.data(), s.size());
    return;
  }
  OwnedBytes* r = new OwnedBytes(std::move(s));
  AppendExternal(r->data(), r->size(), r);
}

void OutputQueue::Splice(OutputQueue& other) {
  if (other.segs_.empty()) return;
  if (segs_.empty() && inline_len_ == 0) {
    *this = std::move(other);
    return;
  }
  for (const Segment& s : other.segs_) {
    if (s.ext) {
      segs_.push_back(s);
      total_ += s.len;
    } else {
      Append(other.inline_.get() + s.off, s.len);
    }
  }
  // Refs were moved, not released.
  other.segs_.clear();
  other.inline_len_ = 0;
  other.total_ = 0;
}

void OutputQueue::Clear() {
  for (Segment& s : segs_) {
    if (s.ref) s.ref->Release();
  }
  segs_.clear();
  inline_len_ = 0;
  total_ = 0;
}

void OutputQueue::ClearAndFree() {
  Clear();
  inline_.reset();
  inline_cap_ = 0;
  std::vector<Segment>().swap(segs_);
}

void OutputQueue::ToIovecs(size_t skip, std::vector<uv_buf_t>* out) const {
  out->clear();
  for (const Segment& s : segs_) {
    if (skip >= s.len) {
      skip -= s.len;
      continue;
    }
    const char* base = s.ext ? s.ext : inline_.get() + s.off;
    out->push_back(uv_buf_init(const_cast<char*>(base + skip),
                               static_cast<unsigned int>(s.len - skip)));
    skip = 0;
  }
}

}  // namespace sluice
