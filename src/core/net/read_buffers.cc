#include "core/net/read_buffers.h"

#include "core/common/options.h"
#include "core/net/connection.h"
#include "core/net/listener.h"
#include "core/net/server_delegate.h"

namespace sluice {

ReadBuffers::Result ReadBuffers::Acquire(Want want, uv_buf_t* buf) {
  if (want == kNone) return kFallback;
  const ServerOptions& o = conn_->listener()->options();
  if (!o.body_allocator) return kFallback;
  if (base_ != nullptr) {
    // AfterRead keeps a buffer only with body_buffer_min_free bytes left.
    if (used_ >= len_) return kFallback;
    *buf = uv_buf_init(base_ + used_, static_cast<unsigned int>(len_ - used_));
    return kGot;
  }
  char* base = nullptr;
  size_t len = 0;
  ServerDelegate* d = conn_->listener()->delegate();
  switch (d->AcquireBodyBuffer(conn_, o.body_buffer_size, &base, &len)) {
    case ServerDelegate::BufferResult::kOk:
      base_ = base;
      // A read is at most UINT_MAX bytes (uv_buf_t.len).
      len_ = len > UINT32_MAX ? UINT32_MAX : len;
      used_ = 0;
      views_cut_ = false;
      *buf = uv_buf_init(base_, static_cast<unsigned int>(len_));
      return kGot;
    case ServerDelegate::BufferResult::kFallback:
      return kFallback;
    case ServerDelegate::BufferResult::kDry:
      // Between bodies a dry pool must not stop the connection: heads (and
      // what of a body shares their read) are copied instead, so requests
      // without a body keep flowing while uploads wait for memory.
      return want == kRequire ? kDry : kFallback;
    case ServerDelegate::BufferResult::kError:
      return kError;
  }
  return kFallback;
}

void ReadBuffers::OnRead(const char* data, size_t n) {
  if (Contains(data, n)) used_ = static_cast<size_t>(data - base_) + n;
}

void ReadBuffers::AfterRead(bool in_body) {
  if (base_ == nullptr) return;
  const ServerOptions& o = conn_->listener()->options();
  if (in_body && views_cut_ && len_ - used_ >= o.body_buffer_min_free) return;
  Retire();
}

void ReadBuffers::Retire() {
  if (base_ == nullptr) return;
  Forget();
  conn_->listener()->delegate()->ReleaseBodyBuffer(conn_);
}

void ReadBuffers::Forget() {
  base_ = nullptr;
  len_ = 0;
  used_ = 0;
  views_cut_ = false;
}

}  // namespace sluice
