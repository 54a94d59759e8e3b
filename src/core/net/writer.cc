#include "core/net/writer.h"

#include <utility>

namespace sluice {

int Writer::Flush() {
  OutputQueue* out = &queue_;
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
  if (out->empty()) return 0;
  size_t skip = 0;
  out->ToIovecs(0, &iov_);
  // Linux caps writev at IOV_MAX (1024) iovecs; libuv handles larger counts
  // for uv_write but uv_try_write takes what it can, which is fine.
  if (in_flight_reqs_ == 0) {
    // Nothing queued in libuv: try the fast path, one writev now.
    flushes_++;
    int r = uv_try_write(stream_, iov_.data(),
                         static_cast<unsigned int>(iov_.size()));
    if (r >= 0) {
      if (static_cast<size_t>(r) == out->size()) {
        dispatched_ += out->size();
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
  delete wr;  // releases external refs
  // On close, libuv cancels pending writes (UV_ECANCELED) before the close
  // callback; the client is still alive then.
  if (status < 0 || self->in_flight_reqs_ == 0) {
    self->client_->OnWriteComplete(status);
  }
}

}  // namespace sluice
