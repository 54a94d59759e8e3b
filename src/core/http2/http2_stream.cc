#include "core/http2/http2_stream.h"

#include <algorithm>

#include "core/http2/http2_compression.h"
#include "core/http2/http2_session.h"
#include "core/net/connection.h"
#include "core/net/listener.h"

namespace sluice {

// ---- Http2WriteQueue ----------------------------------------------------------

void Http2WriteQueue::Push(const char* data, size_t len, ExternalRef* ref) {
  if (len == 0) {
    if (ref) ref->Release();
    return;
  }
  if (ref == nullptr) {
    // Coalesce small copied writes into the last owned chunk.
    if (!chunks_.empty() && chunks_.back().ref == nullptr &&
        chunks_.back().own.size() + len <= 16384) {
      chunks_.back().own.append(data, len);
    } else {
      chunks_.emplace_back();
      chunks_.back().own.assign(data, len);
    }
  } else {
    chunks_.emplace_back();
    Chunk& c = chunks_.back();
    c.ext = data;
    c.len = len;
    c.ref = new CountedRef(ref);
  }
  size_ += len;
}

void Http2WriteQueue::PushOwned(std::string&& bytes) {
  if (bytes.empty()) return;
  if (bytes.size() < kCopyBelow) {
    Push(bytes.data(), bytes.size(), nullptr);
    return;
  }
  OwnedBytes* r = new OwnedBytes(std::move(bytes));
  Push(r->data(), r->size(), r);
}

ssize_t Http2WriteQueue::Available(size_t max, bool* eof) {
  if (size_ == 0) {
    if (ended_) {
      *eof = true;
      return 0;
    }
    return kBodyWouldBlock;
  }
  size_t n = std::min(max, size_);
  *eof = ended_ && n == size_;
  return static_cast<ssize_t>(n);
}

void Http2WriteQueue::Emit(OutputQueue& q, size_t len) {
  while (len > 0 && !chunks_.empty()) {
    Chunk& c = chunks_.front();
    size_t clen = c.ref ? c.len : c.own.size();
    const char* base = c.ref ? c.ext : c.own.data();
    size_t k = std::min(len, clen - c.off);
    if (c.ref && k >= kCopyBelow) {
      c.ref->Add();
      q.AppendExternal(base + c.off, k, c.ref);
    } else {
      q.Append(base + c.off, k);
    }
    c.off += k;
    len -= k;
    size_ -= k;
    if (c.off == clen) {
      if (c.ref) c.ref->Release();
      chunks_.pop_front();
    }
  }
}

void Http2WriteQueue::Clear() {
  for (Chunk& c : chunks_) {
    if (c.ref) c.ref->Release();
  }
  chunks_.clear();
  size_ = 0;
}

// ---- Http2Stream --------------------------------------------------------------

Http2Stream::Http2Stream(Http2Session* s)
    : session(s),
      open_count(&s->connection()->listener()->metrics().streams_open[ServerMetrics::kHttp2]) {
  ++*open_count;
}

Http2Stream::~Http2Stream() { --*open_count; }

void Http2Stream::OnCompressed(CompressStream*, CompressStream::Result& r) {
  session->OnStreamCompressed(this, r);
}

}  // namespace sluice
