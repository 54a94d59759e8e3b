#include "core/body/file_source.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "core/files/open_file_cache.h"

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
  // The entry's descriptor may close now (when the cache forgot it).
  if (cached_) cached_->Unref();
  if (pending_) pending_->Unref();
  g_live--;
}

void FileSource::Leave() {
  if (--depth_ == 0 && delete_pending_) delete this;
}

// ---- opening: one threadpool job ---------------------------------------------
//
// open, fstat and the first read (and, when that read covers the whole
// range, the close) run as ONE job on the threadpool, with libuv's
// synchronous fs calls (uv_fs_* without a callback, executed by the
// threadpool thread). Chained async requests cost a threadpool round trip
// each (submit, futex wake, eventfd wake of the loop: ~4 context switches
// when the server is pinned to one CPU); one job makes a small file one
// round trip instead of four. Later reads and the close stay async
// uv_fs_read / uv_fs_close requests.

namespace {
// A synchronous uv_fs_t, cleaned up when it goes out of scope.
struct SyncFs {
  uv_fs_t req;
  ~SyncFs() { uv_fs_req_cleanup(&req); }
};
}  // namespace

int FileSource::Open(const char* path, int64_t offset, int64_t length,
                     OpenListener* listener) {
  path_ = path;
  return StartOpenJob(-1, offset, length, listener);
}

int FileSource::OpenForCache(const char* path, int64_t offset, int64_t length,
                             OpenListener* listener, CachedFile* pending) {
  path_ = path;
  pending_ = pending;
  return StartOpenJob(-1, offset, length, listener);
}

void FileSource::OpenCached(CachedFile* entry, int64_t offset, int64_t length,
                            bool prefetch) {
  cached_ = entry;
  fd_ = entry->fd();
  owns_fd_ = false;
  offset_ = offset > 0 ? static_cast<uint64_t>(offset) : 0;
  want_length_ = length;
  SetRange(entry->stat());
  PipeBuffer* content = entry->content();
  if (content != nullptr && offset_ == 0 && length_ == content->size &&
      length_ > 0) {
    // The whole body is in memory: no read at all.
    content->Ref();
    ready_ = content;
    pos_ = length_;
    return;
  }
  // The prefetch, while JS runs statCheck: only for a range one read
  // holds. A larger one is left unread, so that a cleartext HTTP/1.1 sink
  // can still send it with sendfile (a read in flight rules that out), and
  // any other sink loses little by starting its reads itself.
  if (prefetch && length_ <= pool_->buffer_size()) StartRead();
}

void FileSource::OpenOwned(int fd, const uv_stat_t& st, int64_t offset,
                           int64_t length, PipeBuffer* first, bool prefetch) {
  fd_ = fd;
  owns_fd_ = true;
  offset_ = offset > 0 ? static_cast<uint64_t>(offset) : 0;
  want_length_ = length;
  SetRange(st);
  if (first != nullptr && offset_ == 0 && first->size > 0 && length_ > 0) {
    if (first->size > length_) first->size = static_cast<size_t>(length_);
    ready_ = first;
    pos_ = first->size;
    return;
  }
  if (first != nullptr) first->Unref();
  if (length_ > 0 && prefetch) StartRead();
}

void FileSource::SetRange(const uv_stat_t& st) {
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  opened_size_ = size;
  opened_mtime_ = st.st_mtim;
  if (offset_ > size) offset_ = size;
  uint64_t len = size - offset_;
  if (want_length_ >= 0) {
    len = std::min<uint64_t>(len, static_cast<uint64_t>(want_length_));
  }
  length_ = len;
  length_known_ = true;
}

int FileSource::OpenFd(int fd, int64_t offset, int64_t length,
                       OpenListener* listener) {
  if (fd < 0) return UV_EBADF;
  return StartOpenJob(fd, offset, length, listener);
}

int FileSource::StartOpenJob(int fd, int64_t offset, int64_t length,
                             OpenListener* listener) {
  listener_ = listener;
  fd_ = fd;
  owns_fd_ = false;  // set by the job when it opens the path itself
  offset_ = offset > 0 ? static_cast<uint64_t>(offset) : 0;
  want_length_ = length;
  // The pool is loop-thread only: the job's buffer is taken here.
  job_buf_ = pool_->Acquire();
  if (job_buf_ == nullptr) {
    listener_ = nullptr;
    return UV_ENOMEM;
  }
  work_.data = this;
  int r = uv_queue_work(loop_, &work_, OpenJob, AfterOpenJob);
  if (r != 0) {
    job_buf_->Unref();
    job_buf_ = nullptr;
    listener_ = nullptr;
    return r;
  }
  job_busy_ = true;
  return 0;
}

// Threadpool thread. Touches only the job's fields (the loop thread leaves
// them alone while job_busy_).
void FileSource::OpenJob(uv_work_t* w) {
  FileSource* self = static_cast<FileSource*>(w->data);
  self->job_err_ = 0;
  self->job_read_ = 0;
  if (self->fd_ < 0) {
    SyncFs o;
    // O_NONBLOCK: a FIFO without a writer would block open() (and this
    // thread) until one comes; a regular file ignores the flag.
    int fd = uv_fs_open(nullptr, &o.req, self->path_.c_str(),
                        O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0, nullptr);
    if (fd < 0) {
      self->job_err_ = fd;
      self->job_syscall_ = "open";
      return;
    }
    self->fd_ = fd;
    self->owns_fd_ = true;
  }
  SyncFs st;
  int r = uv_fs_fstat(nullptr, &st.req, self->fd_, nullptr);
  if (r < 0) {
    self->job_err_ = r;
    self->job_syscall_ = "fstat";
    return;
  }
  self->job_stat_ = st.req.statbuf;
  const auto type = self->job_stat_.st_mode & S_IFMT;
  if (type == S_IFDIR) return;  // refused by the caller
  if (type != S_IFREG) {
    // Read until EOF, later, without blocking (see file_source.h). A
    // caller's descriptor is dup'ed: the dup is ours to poll and close.
    if (!self->owns_fd_) {
      int d = fcntl(self->fd_, F_DUPFD_CLOEXEC, 0);
      if (d < 0) {
        self->job_err_ = -errno;
        self->job_syscall_ = "dup";
        return;
      }
      self->fd_ = d;
      self->owns_fd_ = true;
      int fl = fcntl(d, F_GETFL);
      if (fl >= 0 && (fl & O_NONBLOCK) == 0 &&
          fcntl(d, F_SETFL, fl | O_NONBLOCK) == 0) {
        self->restore_flags_ = fl;
      }
    }
    return;
  }
  // Range: clamp to the size of a regular file.
  self->SetRange(self->job_stat_);
  const uint64_t len = self->length_;
  // The first read, while JS looks at the stat (statCheck): a small file's
  // head and body then leave in one write.
  size_t n = static_cast<size_t>(
      std::min<uint64_t>(len, self->job_buf_->capacity()));
  if (n == 0) return;
  SyncFs rd;
  uv_buf_t iov = uv_buf_init(self->job_buf_->data(), static_cast<unsigned int>(n));
  ssize_t got = uv_fs_read(nullptr, &rd.req, self->fd_, &iov, 1,
                           static_cast<int64_t>(self->offset_), nullptr);
  self->job_read_ = got;
  if (got == static_cast<ssize_t>(len) && self->owns_fd_ &&
      self->pending_ == nullptr) {
    // The whole range is in memory: the descriptor is done with (unless
    // the open-file cache may keep it).
    SyncFs c;
    uv_fs_close(nullptr, &c.req, self->fd_, nullptr);
    self->fd_ = -1;
    self->owns_fd_ = false;
  }
}

void FileSource::AfterOpenJob(uv_work_t* w, int status) {
  FileSource* self = static_cast<FileSource*>(w->data);
  self->job_busy_ = false;
  PipeBuffer* b = self->job_buf_;
  self->job_buf_ = nullptr;
  if (status == UV_ECANCELED) {
    // Cancelled before it ran (Close): nothing was opened.
    b->Unref();
    self->FinishClose();
    return;
  }
  if (self->closed_) {
    b->Unref();
    self->FinishClose();  // closes an fd the job opened
    return;
  }
  int err = self->job_err_;
  if (err == 0 && self->length_known_) {
    ssize_t got = self->job_read_;
    if (got < 0) {
      self->ready_err_ = static_cast<int>(got);
    } else if (got == 0 && self->length_ > 0) {
      self->ready_err_ = UV_EOF;  // shrank between fstat and read
    } else if (got > 0) {
      b->size = static_cast<size_t>(got);
      self->pos_ = static_cast<uint64_t>(got);
      self->ready_ = b;
      b = nullptr;
    }
  }
  if (b) b->Unref();
  if (self->pending_) {
    // Offer the descriptor (and, for a whole small file, the bytes just
    // read) to the open-file cache; accepted, the entry owns the fd.
    CachedFile* p = self->pending_;
    self->pending_ = nullptr;
    bool cached = false;
    if (err == 0 && self->owns_fd_ && self->fd_ >= 0 &&
        (self->job_stat_.st_mode & S_IFMT) == S_IFREG) {
      const bool whole = self->offset_ == 0 && self->ready_ != nullptr;
      cached = p->Complete(self->fd_, self->job_stat_,
                           whole ? self->ready_->data() : nullptr,
                           whole ? self->ready_->size : 0);
    } else {
      p->Abandon();  // failed, or not a regular file
    }
    if (cached) {
      self->cached_ = p;
      self->owns_fd_ = false;
    } else {
      p->Unref();
    }
  }
  if (err == 0 && !self->length_known_ &&
      (self->job_stat_.st_mode & S_IFMT) != S_IFDIR) {
    // Non-regular: poll mode when epoll accepts the descriptor; otherwise
    // (EPERM: always-ready devices) threadpool reads without a position.
    if (uv_poll_init(self->loop_, &self->poll_, self->fd_) == 0) {
      self->poll_.data = self;
      self->poll_open_ = true;
      self->poll_mode_ = true;
      // As node's blocking open(): a FIFO opened here waits for its writer
      // (in the poll, holding no thread). A caller's descriptor (OpenFd)
      // was opened by the caller, who waited for a writer or chose not to.
      self->await_writer_ = !self->path_.empty() &&
                            (self->job_stat_.st_mode & S_IFMT) == S_IFIFO;
    }
  }
  self->Enter();
  OpenListener* l = self->listener_;
  self->listener_ = nullptr;
  if (l) {
    if (err != 0) {
      l->OnFileOpened(err, self->job_syscall_, nullptr);
    } else {
      l->OnFileOpened(0, "fstat", &self->job_stat_);
    }
  }
  self->Leave();
}

int FileSource::CheckUnchanged() const {
  // libuv's synchronous fstat (no callback: runs here, on this thread, no
  // threadpool; statx on Linux), not fstat(2) from the addon: glibc 2.33
  // made fstat an exported symbol, past the 2.28 baseline (docs/install.md).
  uv_fs_t req;
  int r = uv_fs_fstat(loop_, &req, fd_, nullptr);
  const uv_stat_t st = req.statbuf;
  uv_fs_req_cleanup(&req);
  if (r < 0) return r;
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size < offset_ + length_) return UV_EOF;  // shrank below the range
  // Written since the head's stat and not longer than then: rewritten in
  // place (a write that keeps or lowers the size: the same bytes can not
  // be promised). Grown: an append, which leaves the range's bytes alone
  // (a rewrite that also grows looks the same and is not seen).
  // mtime only: ctime also moves when the inode's link count does, which
  // a rename over the path — the safe way to replace a file — does.
  if ((st.st_mtim.tv_sec != opened_mtime_.tv_sec ||
       st.st_mtim.tv_nsec != opened_mtime_.tv_nsec) &&
      size <= opened_size_) {
    return UV_EIO;
  }
  return 0;
}

bool FileSource::ForgoCachedContent() {
  if (closed_ || sendfile_ || cached_ == nullptr || ready_ == nullptr ||
      ready_ != cached_->content() || offset_ != 0 || pos_ != length_) {
    return false;
  }
  ready_->Unref();
  ready_ = nullptr;
  pos_ = 0;
  return true;
}

bool FileSource::BeginSendfile() {
  if (closed_ || job_busy_ || waiting() || poll_mode_ || !length_known_ ||
      fd_ < 0 || ready_err_ || ready_eof_ || client_waiting_) {
    return false;
  }
  sendfile_ = true;
  return true;
}

void FileSource::StartRead() {
  if (closed_ || sendfile_ || waiting() || ready_ || ready_eof_ ||
      ready_err_) {
    return;
  }
  if (poll_mode_) {
    PollRead();
    return;
  }
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

// Poll mode: one non-blocking read(2) on the loop thread; on EAGAIN the
// poll watcher waits for readability (or hang-up) and OnPollCb reads
// again. Read first, poll second: see file_source.h for the FIFO whose
// writer never came.
void FileSource::PollRead() {
  size_t n = pool_->buffer_size();
  if (read_size_ > 0) n = std::min(n, read_size_);
  PipeBuffer* b = pool_->Acquire();
  if (b == nullptr) {
    ready_err_ = UV_ENOMEM;
    return;
  }
  ssize_t r;
  do {
    r = read(fd_, b->data(), n);
  } while (r < 0 && errno == EINTR);
  if (r > 0) {
    b->size = static_cast<size_t>(r);
    pos_ += static_cast<uint64_t>(r);
    ready_ = b;
    await_writer_ = false;  // a writer came
    return;
  }
  int e = errno;
  b->Unref();
  if (r == 0 && !await_writer_) {
    ready_eof_ = true;
  } else if (r == 0 || e == EAGAIN || e == EWOULDBLOCK) {
    // EAGAIN: the writer is idle. 0 while awaiting the writer: nobody has
    // opened the FIFO for writing yet. Linux reports neither as readable;
    // a writer's first bytes (EPOLLIN) or its close (EPOLLHUP, once a
    // writer was seen since our open) wake the poll.
    int pr = uv_poll_start(&poll_, UV_READABLE | UV_DISCONNECT, OnPollCb);
    if (pr != 0) {
      ready_err_ = pr;
    } else {
      polling_ = true;
    }
  } else {
    ready_err_ = -e;
  }
}

void FileSource::OnPollCb(uv_poll_t* handle, int status, int events) {
  // Loop thread; the handle is open (Close uv_close's it, after which no
  // poll callback comes). One wake-up per Read: stop until the next one.
  FileSource* self = static_cast<FileSource*>(handle->data);
  uv_poll_stop(&self->poll_);
  self->polling_ = false;
  // A writer came: from now on read(2)'s 0 is its end.
  if (events != 0) self->await_writer_ = false;
  if (status < 0) self->ready_err_ = status;
  self->Enter();
  self->Deliver();  // reads again (PollRead) for the waiting client
  self->Leave();
}

void FileSource::OnPollClosedCb(uv_handle_t* handle) {
  FileSource* self = static_cast<FileSource*>(handle->data);
  self->poll_open_ = false;
  self->FinishClose();
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
    if (self->cached_ && self->offset_ == 0 && self->pos_ == b->size &&
        self->pos_ == static_cast<uint64_t>(self->cached_->stat().st_size)) {
      // One read held a whole cached file: the small-file cache may keep
      // a copy.
      self->cached_->OfferContent(b->data(), b->size);
    }
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
    if (waiting()) return;  // OnReadCb / OnPollCb answers
    StartRead();
    if (waiting()) return;
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
  if (job_busy_) {
    // AfterOpenJob finishes the close (an fd the job opened is closed
    // there); a job not started yet is cancelled.
    uv_cancel(reinterpret_cast<uv_req_t*>(&work_));
    return;
  }
  if (req_.busy()) {
    // A read still queued for the threadpool is cancelled (its callback
    // gets UV_ECANCELED); one already running is waited for: the thread
    // is writing into reading_. Either way the callback finishes the close.
    uv_cancel(reinterpret_cast<uv_req_t*>(req_.get()));
    return;
  }
  if (poll_open_) {
    // The fd is closed only after libuv let go of the handle.
    polling_ = false;
    uv_close(reinterpret_cast<uv_handle_t*>(&poll_), OnPollClosedCb);
    return;
  }
  FinishClose();
}

void FileSource::FinishClose() {
  if (restore_flags_ >= 0 && fd_ >= 0) {
    // The caller's descriptor shares our dup's file description: give it
    // back blocking, as it was.
    fcntl(fd_, F_SETFL, restore_flags_);
    restore_flags_ = -1;
  }
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
