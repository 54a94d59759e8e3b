// OpenFileCache: per path, an open descriptor and its fstat (and, for a
// small regular file, its whole content in memory), shared by every file
// response of a loop thread (HTTP/1.1 and HTTP/2, compressed or not), so
// that a hit opens and stats nothing: no threadpool round trip for the
// open, and none at all when the content is cached.
//
// Bounded: at most `max_entries` entries (one descriptor each) in LRU
// order, and `content_bytes_max` bytes of cached content (LRU too; a file
// whose content is dropped keeps its descriptor). An entry pushed out or
// found stale leaves the cache at once; its descriptor is closed when the
// last response still reading it lets go (CachedFile refcount).
//
// Valid while both hold:
//   - younger than `valid_ms` (counted from before the open: the window
//     nginx's open_file_cache_valid gives; it also covers what no event
//     reports, e.g. a parent directory renamed);
//   - no uv_fs_event for the path. The watch starts BEFORE the open
//     (BeginOpen), so a change between the open and the insert is seen
//     too. On Linux an inotify watch on the file reports writes and
//     truncation (IN_MODIFY), and a link count change (IN_ATTRIB): an
//     unlink, or a rename over the path, drops the old inode's link count.
//     That is the event a held descriptor gets: IN_DELETE_SELF never comes
//     while we keep the inode open.
//   Where uv_fs_event is not supported (UV_ENOSYS) entries live by the
//   window alone; any other failure to watch (no such file, the inotify
//   watch limit) means the path is not cached.
//
// A response holds a reference on its entry from the lookup until its
// source closes: it keeps reading the descriptor it started with (as an
// uncached response keeps its own open file), whatever happens to the path.
//
// Threading: loop thread only (the refcounts are not atomic). The content
// buffer is immutable once cached, so threadpool readers (the compressor)
// may read it.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/common/loop_tracked.h"

namespace sluice {

class PipeBuffer;
class OpenFileCache;
class FileWatch;
class OpenWake;

// Waits for another caller's open of the same path (OpenFileCache::Await).
class OpenWaiter {
 public:
  virtual ~OpenWaiter() = default;
  // The open awaited settled. `cache`: the cache that holds the entry now
  // (look the path up again), or nullptr when the entry went uncached (the
  // open failed, a change was seen, or the cache was cleared or destroyed:
  // the waiter must not use the cache it had, it may be gone). Called on
  // the loop thread from a timer callback of its own (never inside the
  // opener's frames), at most once, never after CachedFile::CancelWait.
  // The waiter's reference on the entry is released just before the call.
  virtual void OnOpenSettled(OpenFileCache* cache) = 0;
};

// One path's open file. Refcounted: the cache holds one reference while
// the entry is in it, each response one while it uses it.
class CachedFile {
 public:
  int fd() const { return fd_; }
  const uv_stat_t& stat() const { return st_; }
  // The whole file (st_size bytes), or nullptr. One reference is the
  // entry's: Ref it before handing it on.
  PipeBuffer* content() const { return content_; }

  void Ref() { refs_++; }
  // Which serveStatic mount's resolution rules opened this entry (0: a
  // plain open, e.g. respondWithFile): a mount that does not follow
  // symbolic links out of its root trusts only its own entries.
  uint64_t beneath_tag() const { return beneath_tag_; }
  void set_beneath_tag(uint64_t tag) { beneath_tag_ = tag; }
  // The last reference closes the descriptor (async) and frees the entry.
  void Unref();

  // OpenFileCache::Complete / Abandon / OfferContent for this entry's
  // cache (false / nothing when the cache forgot the entry).
  bool Complete(int fd, const uv_stat_t& st, const char* data, size_t len);
  void Abandon();
  void OfferContent(const char* data, size_t len);

  // The waiter no longer waits (it is being cancelled): it will not be
  // called, and its reference on this entry is dropped here.
  void CancelWait(OpenWaiter* w);

 private:
  friend class OpenFileCache;
  friend class FileWatch;
  friend class OpenWake;
  CachedFile(OpenFileCache* cache, uv_loop_t* loop, const std::string& path);
  ~CachedFile();
  // The watch saw a change of the path (loop thread, from FileWatch).
  void OnChanged();
  // Out of the pending state, never to be cached.
  void Abandoned();
  void StopWatch();
  void DropContent();
  // Out of the pending state (cached or not): the waiters are woken from
  // a fresh loop callback.
  void Settled();

  OpenFileCache* cache_;   // null once the cache forgot the entry
  uv_loop_t* loop_;
  std::string path_;
  int fd_ = -1;            // owned once Complete accepted it
  uv_stat_t st_{};
  PipeBuffer* content_ = nullptr;
  uint64_t valid_until_ = 0;  // uv_now() ms
  uint32_t refs_ = 1;
  bool changed_ = false;
  uint64_t beneath_tag_ = 0;
  bool in_map_ = false;
  bool pending_ = true;    // BeginOpen'ed, not yet Complete'd
  FileWatch* watch_ = nullptr;
  // Lookups of the same path that wait for this pending open (each holds
  // one reference on the entry), and whether a wake is scheduled for them.
  std::list<OpenWaiter*> waiters_;
  bool wake_scheduled_ = false;
  bool in_pending_paths_ = false;
  std::list<CachedFile*>::iterator lru_;
  std::list<CachedFile*>::iterator content_lru_;
  bool in_content_lru_ = false;
};

class OpenFileCache {
 public:
  struct Limits {
    size_t max_entries = 1000;
    uint64_t valid_ms = 60000;
    // Regular files up to this size are kept in memory (0: none).
    size_t content_file_max = 64 * 1024;
    size_t content_bytes_max = 64 * 1024 * 1024;
  };
  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t content_hits = 0;   // hits on an entry holding content
    uint64_t invalidations = 0;  // entries dropped on an event
    uint64_t expirations = 0;    // entries dropped at the end of the window
    uint64_t evictions = 0;      // entries or content pushed out by a bound
    uint64_t opens = 0;          // opens begun for the cache (BeginOpen)
    uint64_t coalesced = 0;      // misses that waited for another's open
    size_t entries = 0;
    size_t content_bytes = 0;
  };

  explicit OpenFileCache(uv_loop_t* loop);
  ~OpenFileCache();  // Clear()
  OpenFileCache(const OpenFileCache&) = delete;
  OpenFileCache& operator=(const OpenFileCache&) = delete;

  // New bounds; entries over them are evicted now.
  void Configure(const Limits& limits);
  const Limits& limits() const { return limits_; }

  // A valid entry for `path` with one reference for the caller, or
  // nullptr (a stale entry found here is dropped).
  CachedFile* Lookup(const std::string& path);
  // After a miss, before opening `path`: a pending entry (one reference
  // for the caller) whose watch is already running, or nullptr when the
  // path cannot be cached. The caller opens the path itself, then calls
  // Complete, or just Unrefs the entry (the open failed).
  CachedFile* BeginOpen(const std::string& path);
  // After a miss: when an open of `path` begun by another caller is still
  // pending, `w` waits for it (OnOpenSettled) and the pending entry is
  // returned (one reference for the waiter, dropped when it is woken or
  // cancels with CachedFile::CancelWait); nullptr: none pending, open it
  // yourself. Concurrent misses on one path so cost one open.
  CachedFile* Await(const std::string& path, OpenWaiter* w);
  // The open of a pending entry succeeded: `fd` and `st` describe it;
  // `data`/`len` are bytes read from offset 0 (nullptr: none). Returns true
  // when the entry was cached: it owns `fd` from now on (the caller keeps
  // its reference and must not close fd). False (a change was seen since
  // BeginOpen, not a regular file, the cache is off): fd stays the caller's.
  bool Complete(CachedFile* f, int fd, const uv_stat_t& st, const char* data,
                size_t len);
  // The open of a pending entry failed (or found no regular file): it is
  // not cached.
  void Abandon(CachedFile* f);
  // A response read the whole of a cached regular file (offset 0) whose
  // content is not cached yet: keep a copy if the bounds allow.
  void OfferContent(CachedFile* f, const char* data, size_t len);

  // Forgets every entry (their descriptors close as their responses end).
  void Clear();
  Stats stats() const;

  // Descriptors held by cache entries of this thread, open or closing
  // (tests: they must return to zero after Clear and the responses).
  static size_t open_fds();

 private:
  friend class CachedFile;
  void Remove(CachedFile* f);  // out of the map and LRUs; drops its ref
  void ForgetPendingPath(CachedFile* f);
  void SetContent(CachedFile* f, const char* data, size_t len);
  void Trim();

  uv_loop_t* loop_;
  Limits limits_;
  bool enabled_ = true;
  std::unordered_map<std::string, CachedFile*> map_;
  std::list<CachedFile*> lru_;          // front: most recently used
  std::list<CachedFile*> content_lru_;  // entries holding content
  std::unordered_set<CachedFile*> pending_;
  // The first pending entry per path (what Await joins).
  std::unordered_map<std::string, CachedFile*> pending_paths_;
  size_t content_bytes_ = 0;
  Stats stats_;
};

}  // namespace sluice
