#include "core/net/writer.h"

#include <cerrno>
#include <utility>

#ifndef _WIN32
#include <limits.h>
#include <sys/socket.h>
#include <sys/uio.h>
#endif

namespace sluice {

namespace {
// One non-blocking sendmsg of `iov` with MSG_MORE on the stream's socket:
// the bytes taken (possibly 0 on EAGAIN), UV_ENOSYS when the stream has no
// descriptor or the platform no MSG_MORE (the caller then uses
// uv_try_write), or another UV_E* error. uv_buf_t is laid out as struct
// iovec on Unix (libuv's uv-unix.h says it may be cast).
int TryWriteMore(uv_stream_t* stream, std::vector<uv_buf_t>& iov) {
#if defined(MSG_MORE) && !defined(_WIN32)
  uv_os_fd_t fd;
  if (uv_fileno(reinterpret_cast<uv_handle_t*>(stream), &fd) != 0) {
    return UV_ENOSYS;
  }
  struct msghdr msg = {};
  msg.msg_iov = reinterpret_cast<struct iovec*>(iov.data());
  // Past IOV_MAX sendmsg fails (EMSGSIZE): send the first IOV_MAX, the
  // rest goes with uv_write as any remainder.
  msg.msg_iovlen = iov.size() < IOV_MAX ? iov.size() : IOV_MAX;
  ssize_t n;
  do {
    n = sendmsg(fd, &msg, MSG_MORE | MSG_DONTWAIT | MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n >= 0) return static_cast<int>(n);
  if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
  return -errno;  // libuv's UV_E* are the negated errno values on Unix
#else
  (void)stream;
  (void)iov;
  return UV_ENOSYS;
#endif
}
}  // namespace

int Writer::Flush(bool more) {
  OutputQueue* out = &queue_;
  // Everything queued so far leaves with this flush (sealed, written now
  // or by the write request made below).
  plain_flushed_ += queue_.size();
  if (sealer_ != nullptr) {
    // TLS: the plaintext becomes records in wire_ (the sealer copies what
    // it needs), then wire_ is written exactly as a cleartext queue.
    if (!queue_.empty()) {
      int s = sealer_->Seal(queue_);
      // Releases external refs: the records hold the bytes.
      if (free_when_empty_) queue_.ClearAndFree(); else queue_.Clear();
      if (s != 0) return UV_EPROTO;
    }
    out = &wire_;
  }
  if (out->empty()) {
    if (in_flight_reqs_ == 0) plain_written_ = plain_flushed_;
    return 0;
  }
  size_t skip = 0;
  out->ToIovecs(0, &iov_);
  // Linux caps writev at IOV_MAX (1024) iovecs; libuv handles larger counts
  // for uv_write but uv_try_write takes what it can, which is fine.
  if (in_flight_reqs_ == 0) {
    // Nothing queued in libuv: try the fast path, one writev now.
    flushes_++;
    int r = UV_ENOSYS;
    if (more && sealer_ == nullptr) r = TryWriteMore(stream_, iov_);
    if (r == UV_ENOSYS) {
      r = uv_try_write(stream_, iov_.data(),
                       static_cast<unsigned int>(iov_.size()));
    }
    if (r >= 0) {
      if (static_cast<size_t>(r) == out->size()) {
        dispatched_ += out->size();
        plain_written_ = plain_flushed_;
        Emptied(out);  // releases external refs: the kernel has the bytes
        return 0;
      }
      skip = static_cast<size_t>(r);
    } else if (r != UV_EAGAIN && r != UV_ENOSYS) {
      return r;
    }
    if (skip) out->ToIovecs(skip, &iov_);
  }
  WriteReq* wr = new WriteReq();
  wr->writer = this;
  wr->bytes = out->size() - skip;
  wr->plain_mark = plain_flushed_;
  const size_t total = out->size();
  wr->data = std::move(*out);  // iovecs stay valid: storage moves, not copies
  wr->req.data = wr;
  int r = uv_write(&wr->req, stream_, iov_.data(),
                   static_cast<unsigned int>(iov_.size()), OnWrite);
  if (r != 0) {
    delete wr;  // releases refs
    return r;
  }
  if (in_flight_reqs_ == 0) flushes_++;
  in_flight_reqs_++;
  in_flight_bytes_ += wr->bytes;
  dispatched_ += total;
  return 0;
}

void Writer::Emptied(OutputQueue* out) {
  if (!free_when_empty_) {
    out->Clear();
    return;
  }
  out->ClearAndFree();
  std::vector<uv_buf_t>().swap(iov_);
}

void Writer::OnWrite(uv_write_t* req, int status) {
  WriteReq* wr = static_cast<WriteReq*>(req->data);
  Writer* self = wr->writer;
  self->in_flight_reqs_--;
  self->in_flight_bytes_ -= wr->bytes;
  // libuv completes a stream's writes in order: all before this one are
  // done too.
  if (status == 0) self->plain_written_ = wr->plain_mark;
  delete wr;  // releases external refs
  // On close, libuv cancels pending writes (UV_ECANCELED) before the close
  // callback; the client is still alive then.
  if (status < 0 || self->in_flight_reqs_ == 0) {
    self->client_->OnWriteComplete(status);
  }
}

}  // namespace sluice
