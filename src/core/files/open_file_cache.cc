#include "core/files/open_file_cache.h"

#include <sys/stat.h>

#include <cstring>

#include "core/body/pipe.h"

namespace sluice {

namespace {

// Descriptors owned by entries of this thread, until their close finished.
thread_local size_t t_open_fds = 0;

// Closes an entry's descriptor on the threadpool (no file I/O on the loop
// thread, not even close: it may flush on a network file system) and frees
// itself in the callback. LoopTracked: environment teardown waits for it.
class FdCloser {
 public:
  static void Close(uv_loop_t* loop, int fd) {
    FdCloser* c = new FdCloser;
    c->req_.data = c;
    if (uv_fs_close(loop, &c->req_, fd, OnClosed) != 0) {
      // Only with invalid arguments; never leak the descriptor.
      uv_fs_t sync;
      uv_fs_close(nullptr, &sync, fd, nullptr);
      uv_fs_req_cleanup(&sync);
      delete c;
      t_open_fds--;
    }
  }

 private:
  // libuv → closer, on the loop thread once the close ran.
  static void OnClosed(uv_fs_t* req) {
    FdCloser* c = static_cast<FdCloser*>(req->data);
    uv_fs_req_cleanup(req);
    delete c;
    t_open_fds--;
  }
  LoopTracked tracked_;
  uv_fs_t req_;
};

}  // namespace

// The uv_fs_event_t watching one entry's path. Its own heap object: the
// handle must outlive the entry until libuv's close callback.
class FileWatch {
 public:
  // Starts watching `path` for `owner`. Returns nullptr and sets *err on
  // failure (the handle is closed and freed then).
  static FileWatch* Start(uv_loop_t* loop, const char* path,
                          CachedFile* owner, int* err) {
    FileWatch* w = new FileWatch(owner);
    int r = uv_fs_event_init(loop, &w->handle_);
    if (r == 0) {
      w->handle_.data = w;
      r = uv_fs_event_start(&w->handle_, OnEvent, path, 0);
      if (r != 0) {
        w->owner_ = nullptr;
        uv_close(reinterpret_cast<uv_handle_t*>(&w->handle_), OnClosed);
      }
    } else {
      delete w;
    }
    if (r != 0) {
      *err = r;
      return nullptr;
    }
    return w;
  }

  // Owner → watch: no more events; frees itself after libuv's close.
  void Stop() {
    owner_ = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(&handle_), OnClosed);
  }

 private:
  explicit FileWatch(CachedFile* owner) : owner_(owner) {}
  // libuv → watch, loop thread: anything happened to the path's inode.
  // The owner may stop (and so close) the watch from inside.
  static void OnEvent(uv_fs_event_t* h, const char* /*filename*/,
                      int /*events*/, int /*status*/) {
    FileWatch* w = static_cast<FileWatch*>(h->data);
    if (w->owner_) w->owner_->OnChanged();
  }
  static void OnClosed(uv_handle_t* h) {
    delete static_cast<FileWatch*>(h->data);
  }
  LoopTracked tracked_;
  uv_fs_event_t handle_;
  CachedFile* owner_;
};

// Wakes the waiters of one settled entry from a zero-timeout timer, so
// that no waiter answers inside the opener's frames (its job callback, a
// cancel from JS, a connection closing). Holds a reference on the entry
// until libuv's close callback; LoopTracked: teardown waits for it.
class OpenWake {
 public:
  static void Start(uv_loop_t* loop, CachedFile* f) {
    OpenWake* w = new OpenWake(f);
    uv_timer_init(loop, &w->timer_);
    w->timer_.data = w;
    uv_timer_start(&w->timer_, OnTimer, 0, 0);
  }

 private:
  explicit OpenWake(CachedFile* f) : f_(f) { f_->Ref(); }
  // libuv → wake, loop thread. A waiter's answer may cancel another waiter
  // (CancelWait takes it out of the list): take them one at a time.
  static void OnTimer(uv_timer_t* t) {
    OpenWake* w = static_cast<OpenWake*>(t->data);
    CachedFile* f = w->f_;
    f->wake_scheduled_ = false;
    while (!f->waiters_.empty()) {
      OpenWaiter* waiter = f->waiters_.front();
      f->waiters_.pop_front();
      f->Unref();  // the waiter's (ours keeps f alive)
      // cache_ is non-null only while the entry is in a live cache.
      waiter->OnOpenSettled(f->in_map_ ? f->cache_ : nullptr);
    }
    uv_close(reinterpret_cast<uv_handle_t*>(t), OnClosed);
  }
  static void OnClosed(uv_handle_t* h) {
    OpenWake* w = static_cast<OpenWake*>(h->data);
    w->f_->Unref();
    delete w;
  }
  LoopTracked tracked_;
  uv_timer_t timer_;
  CachedFile* f_;
};

// ---- CachedFile ---------------------------------------------------------------

CachedFile::CachedFile(OpenFileCache* cache, uv_loop_t* loop,
                       const std::string& path)
    : cache_(cache), loop_(loop), path_(path) {}

CachedFile::~CachedFile() {
  StopWatch();
  DropContent();
  if (fd_ >= 0) FdCloser::Close(loop_, fd_);
}

void CachedFile::Unref() {
  if (--refs_ == 0) delete this;
}

bool CachedFile::Complete(int fd, const uv_stat_t& st, const char* data,
                          size_t len) {
  if (cache_ == nullptr) {
    Abandoned();
    return false;
  }
  return cache_->Complete(this, fd, st, data, len);
}

void CachedFile::Abandon() {
  if (cache_) {
    cache_->Abandon(this);
  } else {
    Abandoned();
  }
}

void CachedFile::Abandoned() {
  pending_ = false;
  if (cache_) cache_->ForgetPendingPath(this);
  cache_ = nullptr;
  StopWatch();
  Settled();
}

void CachedFile::Settled() {
  if (waiters_.empty() || wake_scheduled_) return;
  wake_scheduled_ = true;
  OpenWake::Start(loop_, this);
}

void CachedFile::CancelWait(OpenWaiter* w) {
  for (auto it = waiters_.begin(); it != waiters_.end(); ++it) {
    if (*it == w) {
      waiters_.erase(it);
      Unref();  // the waiter's; may free this
      return;
    }
  }
}

void CachedFile::OfferContent(const char* data, size_t len) {
  if (cache_) cache_->OfferContent(this, data, len);
}

void CachedFile::StopWatch() {
  if (watch_) {
    watch_->Stop();
    watch_ = nullptr;
  }
}

void CachedFile::DropContent() {
  if (content_) {
    content_->Unref();
    content_ = nullptr;
  }
}

void CachedFile::OnChanged() {
  changed_ = true;
  // One event is enough: the entry is dead, the inotify watch can go.
  StopWatch();
  if (in_map_ && cache_) {
    cache_->stats_.invalidations++;
    cache_->Remove(this);  // may free this
  }
}

// ---- OpenFileCache ------------------------------------------------------------

OpenFileCache::OpenFileCache(uv_loop_t* loop) : loop_(loop) {}

OpenFileCache::~OpenFileCache() { Clear(); }

size_t OpenFileCache::open_fds() { return t_open_fds; }

void OpenFileCache::Configure(const Limits& limits) {
  limits_ = limits;
  enabled_ = limits.max_entries > 0 && limits.valid_ms > 0;
  Trim();
}

CachedFile* OpenFileCache::Lookup(const std::string& path) {
  auto it = map_.find(path);
  if (it == map_.end()) {
    stats_.misses++;
    return nullptr;
  }
  CachedFile* f = it->second;
  if (uv_now(loop_) >= f->valid_until_) {
    stats_.expirations++;
    stats_.misses++;
    Remove(f);
    return nullptr;
  }
  stats_.hits++;
  if (f->content_) stats_.content_hits++;
  lru_.splice(lru_.begin(), lru_, f->lru_);
  if (f->in_content_lru_) {
    content_lru_.splice(content_lru_.begin(), content_lru_, f->content_lru_);
  }
  f->Ref();
  return f;
}

CachedFile* OpenFileCache::BeginOpen(const std::string& path) {
  if (!enabled_) return nullptr;
  CachedFile* f = new CachedFile(this, loop_, path);
  // The window counts from before the open (uv_now is this iteration's
  // start: earlier still).
  f->valid_until_ = uv_now(loop_) + limits_.valid_ms;
  int err = 0;
  f->watch_ = FileWatch::Start(loop_, path.c_str(), f, &err);
  if (f->watch_ == nullptr && err != UV_ENOSYS) {
    // Unwatchable (no such file yet, the watch limit reached): a change
    // could go unseen for the whole window, so the path is not cached.
    delete f;
    return nullptr;
  }
  pending_.insert(f);
  f->Ref();  // the pending set's
  stats_.opens++;
  if (pending_paths_.emplace(path, f).second) f->in_pending_paths_ = true;
  return f;
}

CachedFile* OpenFileCache::Await(const std::string& path, OpenWaiter* w) {
  if (!enabled_) return nullptr;
  auto it = pending_paths_.find(path);
  if (it == pending_paths_.end()) return nullptr;
  CachedFile* f = it->second;
  if (!f->pending_ || f->changed_) return nullptr;
  f->waiters_.push_back(w);
  f->Ref();  // the waiter's
  stats_.coalesced++;
  return f;
}

void OpenFileCache::ForgetPendingPath(CachedFile* f) {
  if (!f->in_pending_paths_) return;
  f->in_pending_paths_ = false;
  auto it = pending_paths_.find(f->path_);
  if (it != pending_paths_.end() && it->second == f) pending_paths_.erase(it);
}

void OpenFileCache::Abandon(CachedFile* f) {
  if (f->pending_ && pending_.erase(f) == 1) {
    f->refs_--;  // the pending set's (the caller still holds one)
  }
  f->Abandoned();
}

bool OpenFileCache::Complete(CachedFile* f, int fd, const uv_stat_t& st,
                             const char* data, size_t len) {
  if (!f->pending_ || !enabled_ || f->changed_ ||
      (st.st_mode & S_IFMT) != S_IFREG) {
    Abandon(f);
    return false;
  }
  f->pending_ = false;
  if (pending_.erase(f) == 1) f->refs_--;  // the pending set's
  ForgetPendingPath(f);
  f->fd_ = fd;
  f->st_ = st;
  t_open_fds++;
  auto it = map_.find(f->path_);
  if (it != map_.end()) Remove(it->second);  // an older entry for the path
  map_.emplace(f->path_, f);
  f->in_map_ = true;
  f->Ref();  // the map's
  lru_.push_front(f);
  f->lru_ = lru_.begin();
  if (data != nullptr) SetContent(f, data, len);
  Trim();
  f->Settled();  // (the map's reference keeps f alive: Trim may have
                 // removed it, the caller's reference still holds)
  return true;
}

void OpenFileCache::OfferContent(CachedFile* f, const char* data, size_t len) {
  if (!f->in_map_ || f->cache_ != this || f->content_ != nullptr) return;
  SetContent(f, data, len);
  Trim();
}

// Keeps a copy of exactly the file's bytes (the read buffer it came in is
// a pooled block of 128 KiB, far larger than a small file).
void OpenFileCache::SetContent(CachedFile* f, const char* data, size_t len) {
  if (len != static_cast<uint64_t>(f->st_.st_size) || len == 0 ||
      len > limits_.content_file_max || len > limits_.content_bytes_max) {
    return;
  }
  PipeBuffer* b = PipeBuffer::NewUnpooled(len);
  if (b == nullptr) return;
  memcpy(b->data(), data, len);
  b->size = len;
  f->content_ = b;
  content_bytes_ += len;
  content_lru_.push_front(f);
  f->content_lru_ = content_lru_.begin();
  f->in_content_lru_ = true;
}

void OpenFileCache::Remove(CachedFile* f) {
  if (!f->in_map_) return;
  f->in_map_ = false;
  f->cache_ = nullptr;
  map_.erase(f->path_);
  lru_.erase(f->lru_);
  if (f->in_content_lru_) {
    content_lru_.erase(f->content_lru_);
    f->in_content_lru_ = false;
    content_bytes_ -= f->content_->size;
    // Responses that took the content hold their own references.
    f->DropContent();
  }
  f->StopWatch();
  f->Unref();  // the map's
}

void OpenFileCache::Trim() {
  size_t max = enabled_ ? limits_.max_entries : 0;
  while (lru_.size() > max) {
    stats_.evictions++;
    Remove(lru_.back());
  }
  size_t max_bytes = enabled_ ? limits_.content_bytes_max : 0;
  while (content_bytes_ > max_bytes && !content_lru_.empty()) {
    CachedFile* f = content_lru_.back();
    content_lru_.pop_back();
    f->in_content_lru_ = false;
    content_bytes_ -= f->content_->size;
    f->DropContent();  // the descriptor stays cached
    stats_.evictions++;
  }
}

void OpenFileCache::Clear() {
  while (!lru_.empty()) Remove(lru_.back());
  // Pending opens finish uncached (their waiters are woken then).
  pending_paths_.clear();
  for (CachedFile* f : pending_) {
    f->in_pending_paths_ = false;
    f->cache_ = nullptr;
    f->StopWatch();
    f->Unref();  // the pending set's
  }
  pending_.clear();
}

OpenFileCache::Stats OpenFileCache::stats() const {
  Stats s = stats_;
  s.entries = map_.size();
  s.content_bytes = content_bytes_;
  return s;
}

}  // namespace sluice
