#include "core/file_source.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>

namespace sluice {

namespace {
std::atomic<uint64_t> g_live{0};
}  // namespace

uint64_t FileSource::live_count() { return g_live.load(); }

FileSource* FileSource::Create(uv_loop_t* loop, PipeBufferPool* pool) {
  return new FileSource(loop, pool);
}

FileSource::FileSource(uv_loop_t* loop, PipeBufferPool* pool)
    : loop_(loop), pool_(pool) {
  req_.get()->data = this;
  g_live++;
}

FileSource::~FileSource() {
  // Close() ran and every request finished: nothing is in flight, the fd
  // we owned is closed, buffers are back in the pool.
  if (ready_) ready_->Unref();
  g_live--;
}

void FileSource::Leave() {
  if (--depth_ == 0 && delete_pending_) delete this;
}

int FileSource::Open(const char* path, int64_t offset, int64_t length,
                     OpenListener* listener) {
  listener_ = listener;
  offset_ = offset > 0 ? static_cast<uint64_t>(offset) : 0;
  want_length_ = length;
  int r = uv_fs_open(loop_, req_.get(), path, O_RDONLY | O_CLOEXEC, 0,
                     OnOpenCb);
  if (r != 0) {
    listener_ = nullptr;
    return r;
  }
  req_.Submitted();
  return 0;
}

int FileSource::OpenFd(int fd, int64_t offset, int64_t length,
                       OpenListener* listener) {
  if (fd < 0) return UV_EBADF;
  listener_ = listener;
  fd_ = fd;
  owns_fd_ = false;  // the caller's: never closed here
  offset_ = offset > 0 ? static_cast<uint64_t>(offset) : 0;
  want_length_ = length;
  StartFstat();
  if (!req_.busy()) {
    listener_ = nullptr;
    return UV_EBADF;
  }
  return 0;
}

void FileSource::OnOpenCb(uv_fs_t* req) {
  FileSource* self = static_cast<FileSource*>(req->data);
  ssize_t r = self->req_.Complete();
  if (r >= 0) {
    self->fd_ = static_cast<int>(r);
    self->owns_fd_ = true;
  }
  if (self->closed_) {
    self->FinishClose();
    return;
  }
  if (r < 0) {
    self->Enter();
    OpenListener* l = self->listener_;
    self->listener_ = nullptr;
    if (l) l->OnFileOpened(static_cast<int>(r), "open", nullptr);
    self->Leave();
    return;
  }
  self->StartFstat();
}

void FileSource::StartFstat() {
  int r = uv_fs_fstat(loop_, req_.get(), fd_, OnFstatCb);
  if (r == 0) {
    req_.Submitted();
    return;
  }
  if (!listener_) return;
  Enter();
  OpenListener* l = listener_;
  listener_ = nullptr;
  l->OnFileOpened(r, "fstat", nullptr);
  Leave();
}

void FileSource::OnFstatCb(uv_fs_t* req) {
  FileSource* self = static_cast<FileSource*>(req->data);
  uv_stat_t st = req->statbuf;  // copied before the request is cleaned up
  ssize_t r = self->req_.Complete();
  if (self->closed_) {
    self->FinishClose();
    return;
  }
  if (r >= 0 && (st.st_mode & S_IFMT) == S_IFREG) {
    // Range: clamp to the size of a regular file. Anything else (a pipe, a
    // character device given to respondWithFD) is read until EOF.
    uint64_t size = st.st_size;
    if (self->offset_ > size) self->offset_ = size;
    uint64_t len = size - self->offset_;
    if (self->want_length_ >= 0) {
      len = std::min<uint64_t>(len, static_cast<uint64_t>(self->want_length_));
    }
    self->length_ = len;
    self->length_known_ = true;
    // Prefetch: the first read runs on the threadpool while JS looks at
    // the stat (statCheck), so a small file's head and body usually leave
    // in one write.
    self->StartRead();
  }
  self->Enter();
  OpenListener* l = self->listener_;
  self->listener_ = nullptr;
  if (l) {
    if (r < 0) {
      l->OnFileOpened(static_cast<int>(r), "fstat", nullptr);
    } else {
      l->OnFileOpened(0, "fstat", &st);
    }
  }
  self->Leave();
}

void FileSource::StartRead() {
  if (closed_ || req_.busy() || ready_ || ready_eof_ || ready_err_) return;
  size_t n = pool_->buffer_size();
  if (read_size_ > 0) n = std::min(n, read_size_);
  if (length_known_) {
    uint64_t left = length_ - pos_;
    if (left == 0) {
      ready_eof_ = true;
      return;
    }
    n = static_cast<size_t>(std::min<uint64_t>(n, left));
  }
  PipeBuffer* b = pool_->Acquire();
  if (b == nullptr) {
    ready_err_ = UV_ENOMEM;
    return;
  }
  uv_buf_t iov = uv_buf_init(b->data(), static_cast<unsigned int>(n));
  // libuv copies the iovec array into the request: `iov` may go.
  int64_t at = length_known_ ? static_cast<int64_t>(offset_ + pos_) : -1;
  int r = uv_fs_read(loop_, req_.get(), fd_, &iov, 1, at, OnReadCb);
  if (r != 0) {
    b->Unref();
    ready_err_ = r;
    return;
  }
  req_.Submitted();
  reading_ = b;
}

void FileSource::OnReadCb(uv_fs_t* req) {
  FileSource* self = static_cast<FileSource*>(req->data);
  ssize_t r = self->req_.Complete();
  PipeBuffer* b = self->reading_;
  self->reading_ = nullptr;
  if (self->closed_) {
    b->Unref();
    self->FinishClose();
    return;
  }
  if (r < 0) {
    b->Unref();
    self->ready_err_ = static_cast<int>(r);
  } else if (r == 0) {
    b->Unref();
    if (self->length_known_ && self->pos_ < self->length_) {
      // The file shrank under us: the promised length cannot be sent.
      self->ready_err_ = UV_EOF;
    } else {
      self->ready_eof_ = true;
    }
  } else {
    b->size = static_cast<size_t>(r);
    self->pos_ += static_cast<uint64_t>(r);
    self->ready_ = b;
  }
  self->Enter();
  self->Deliver();
  self->Leave();
}

void FileSource::Read(size_t max_bytes) {
  if (closed_) return;
  read_size_ = max_bytes;
  client_waiting_ = true;
  Enter();
  Deliver();
  Leave();
}

void FileSource::Deliver() {
  while (client_waiting_ && client_ && !closed_) {
    if (ready_) {
      PipeBuffer* b = ready_;
      ready_ = nullptr;
      client_waiting_ = false;
      // May call Read (or Close) from inside.
      client_->OnSourceData(b);
      return;
    }
    if (ready_err_) {
      client_waiting_ = false;
      client_->OnSourceError(ready_err_);
      return;
    }
    if (ready_eof_) {
      client_waiting_ = false;
      client_->OnSourceEnd();
      return;
    }
    if (req_.busy()) return;  // OnReadCb answers
    StartRead();
    if (req_.busy()) return;
    // StartRead found the end or failed at once: answer that.
  }
}

void FileSource::Close() {
  if (closed_) return;
  closed_ = true;
  client_ = nullptr;
  listener_ = nullptr;
  if (ready_) {
    ready_->Unref();
    ready_ = nullptr;
  }
  if (req_.busy()) {
    // A read still queued for the threadpool is cancelled (its callback
    // gets UV_ECANCELED); one already running is waited for: the thread
    // is writing into reading_. Either way the callback finishes the close.
    uv_cancel(reinterpret_cast<uv_req_t*>(req_.get()));
    return;
  }
  FinishClose();
}

void FileSource::FinishClose() {
  if (owns_fd_ && fd_ >= 0 && !closing_fd_) {
    closing_fd_ = true;
    int fd = fd_;
    fd_ = -1;
    if (uv_fs_close(loop_, req_.get(), fd, OnCloseCb) == 0) {
      req_.Submitted();
      return;
    }
    // Only reachable with invalid arguments; never leak the descriptor.
    uv_fs_t sync_req;
    uv_fs_close(nullptr, &sync_req, fd, nullptr);
    uv_fs_req_cleanup(&sync_req);
  }
  if (depth_ > 0) {
    delete_pending_ = true;
  } else {
    delete this;
  }
}

void FileSource::OnCloseCb(uv_fs_t* req) {
  FileSource* self = static_cast<FileSource*>(req->data);
  self->req_.Complete();
  if (self->depth_ > 0) {
    self->delete_pending_ = true;
  } else {
    delete self;
  }
}

}  // namespace sluice
