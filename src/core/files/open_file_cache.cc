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
  cache_ = nullptr;
  StopWatch();
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
  return f;
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
  // Pending opens finish uncached.
  for (CachedFile* f : pending_) {
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
