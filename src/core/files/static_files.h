// serveStatic: answering GET / HEAD requests for files under a root
// directory in the core, with no call into the embedder (docs/files.md,
// "serveStatic"). A Listener owns a StaticFiles (its mounts); the
// protocol sessions (Http1Session, Http2Session) ask it about each
// complete, bodiless GET / HEAD request before the request is delivered
// and, when a mount answers, send the answer themselves.
//
// One request:
//   StaticFiles::Match → a StaticLookup (or nothing: not ours)
//   StaticLookup::Start → kFallThrough (deliver the request as usual),
//     kAnswered (the client's OnStaticAnswer ran inside Start), or
//     kPending: a threadpool job opens the file beneath the root
//     (open_beneath.h) and fstats it; later, on the loop thread, exactly
//     one of OnStaticAnswer / OnStaticFallThrough follows, unless the
//     client Cancel()ed first.
// A hit in the open-file cache (when the mount uses it) answers at once:
// no threadpool job, no open, and with the small-file cache no read.
//
// Ownership: the client owns its StaticLookup through StaticLookupPtr,
// whose deleter calls Cancel(): a lookup whose job is in flight frees
// itself when the job returns (its descriptor is closed asynchronously).
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/common/loop_tracked.h"
#include "core/compress/compressor.h"
#include "core/files/open_file_cache.h"
#include "core/files/static_headers.h"
#include "core/files/static_path.h"

namespace sluice {

class CachedFile;
class FileSource;
class OpenFileCache;
class PipeBuffer;
class PipeBufferPool;
class PipeSource;

struct StaticMountOptions {
  // "dir/" serves the first of dir/<name> that is not a directory (send's
  // `index`); empty: no index.
  std::vector<std::string> index{"index.html"};
  // "name" with no extension that does not exist: name.<ext> for each in
  // order, the first that is not a directory (send's `extensions`).
  std::vector<std::string> extensions;
  enum Dotfiles { kIgnore, kDeny, kAllow } dotfiles = kIgnore;
  bool follow_symlinks = false;
  bool use_cache = false;  // the server's openFileCache
  // A 412 / 416 answer keeps send's fields (the middleware leaves them on
  // res as serve-static does); a native mount sends Content-Range alone.
  bool keep_refusal_fields = false;
  // path.br / path.gz served instead of path when the client accepts the
  // coding and the sibling is a regular file not older than path.
  bool precompressed = false;
  // The server's `compression` option (on-the-fly compression of
  // compressible types): encodings in preference order, empty when off.
  std::vector<Coding> encodings;
  uint64_t compress_threshold = 1024;
  int compress_level = -1;
  int brotli_quality = 4;
  StaticHeaderOptions headers;
};

struct StaticMount {
  uint64_t id = 0;      // unique in the process (tags cache entries)
  std::string prefix;   // NormalizePrefix'ed
  std::string root;     // absolute, no trailing '/'
  StaticMountOptions options;
};

// What the protocol sends (valid during OnStaticAnswer).
struct StaticAnswer {
  int status = 200;
  // Fields in order, without Content-Length / Date / Connection.
  const std::vector<std::pair<std::string, std::string>>* headers = nullptr;
  // Content-Length to send (-1: none, a 304).
  int64_t content_length = -1;
  // The body (one reference for the client, which must hand it to a
  // pipe or Close it), or nullptr.
  PipeSource* body = nullptr;
  // `body` itself when it is the file (no on-the-fly compressor in
  // front of it), else nullptr: what a JS file response can take over.
  FileSource* file = nullptr;
  // An answer decided from a file (200 / 206 / 304 / 412 / 416): its
  // stat (of the sibling actually sent, when precompressed) and its path
  // relative to the root (the file asked for, after index / extensions).
  // Null / empty for 400 / 403 / 500.
  const uv_stat_t* stat = nullptr;
  std::string_view rel;
};

// The fields HTTP/2 and HTTP/3 send after :status for answer `a`: its
// own (names lower-cased), content-length when it has one, date (null
// `date`: none) and alt-svc when not empty, in that order. `add(name,
// value)`: views valid during the call.
template <typename Add>
void ForEachAnswerField(const StaticAnswer& a, std::string_view date, std::string_view alt_svc,
                        Add&& add) {
  std::string name;
  for (const auto& f : *a.headers) {
    name.assign(f.first);
    for (char& c : name) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    add(std::string_view(name), std::string_view(f.second));
  }
  if (a.content_length >= 0) {
    const std::string n = std::to_string(a.content_length);
    add(std::string_view("content-length"), std::string_view(n));
  }
  if (!date.empty()) add(std::string_view("date"), date);
  if (!alt_svc.empty()) add(std::string_view("alt-svc"), alt_svc);
}

class StaticLookupClient {
 public:
  virtual ~StaticLookupClient() = default;
  // The answer for request `tag`. Inside Start (kAnswered), or from the
  // job's completion (loop thread, no dispatch open: the client opens
  // one). May free the lookup (Cancel) from inside.
  virtual void OnStaticAnswer(uint64_t tag, StaticAnswer& answer) = 0;
  // Not ours after all (no such file, a directory...): deliver request
  // `tag` to the embedder as usual. Only after kPending.
  virtual void OnStaticFallThrough(uint64_t tag) = 0;
};

class StaticLookup final : public OpenWaiter {
 public:
  enum Start { kFallThrough, kAnswered, kPending };
  // Records the request fields that matter (values copied).
  void TakeHeader(std::string_view lower_name, std::string_view value);
  // The response's own validators decide the conditionals (before Begin).
  void SetValidatorOverride(StaticValidatorOverride ov) {
    override_ = std::move(ov);
    has_override_ = true;
  }
  Start Begin(StaticLookupClient* client, uint64_t tag);
  // The client no longer wants an answer; frees the lookup now or when
  // its job returns.
  void Cancel();
  // After OnStaticFallThrough: the path names a directory (asked for
  // without the trailing slash, or one without index.html).
  bool found_directory() const { return found_directory_; }

  // OpenWaiter: the open of cands_[0] that this lookup waited for (begun
  // by another lookup) settled; answer from the cache or open it here.
  void OnOpenSettled(OpenFileCache* cache) override;

 private:
  friend class StaticFiles;
  StaticLookup(uv_loop_t* loop, std::shared_ptr<const StaticMount> mount,
               StaticPath path, bool head, OpenFileCache* cache,
               PipeBufferPool* pool);
  ~StaticLookup() override;
  // The names to try for path_ (index names, or the path and its
  // extension fallbacks), the first into cands_ with its siblings.
  void PlanNames();
  // cands_ for names_[k]: the file and its precompressed siblings in the
  // client's order (no cache entries). Threadpool or loop thread.
  void BuildCandidates(size_t k);
  // Answers from an open file (cache entry, or our own descriptor);
  // `coding`: the file is a precompressed sibling in that coding.
  void AnswerFile(CachedFile* entry, int fd, const uv_stat_t& st,
                  PipeBuffer* first, Coding coding);
  // The cache answers alone (every file it needs is in it): true when
  // answered.
  bool AnswerFromCache();
  // Closes a descriptor we own without file I/O on the loop thread.
  void CloseAsync(int fd);
  void AnswerStatus(int status);
  // Begins the cache entries and queues the job: false when it could not
  // be queued (the request then falls through).
  bool StartJob();
  // The BeginOpen'ed cache entries go uncached (DropStale: only those
  // of names the job passed over). Loop thread.
  void DropPending();
  void DropStale();
  static void Job(uv_work_t* w);                  // threadpool
  static void AfterJob(uv_work_t* w, int status); // loop thread

  uv_loop_t* loop_;
  std::shared_ptr<const StaticMount> mount_;
  StaticPath path_;
  std::string file_rel_;   // the file answered, relative to the root
  // The files that may answer, relative to the root, in order: the index
  // names under a directory, or the path and then (only when it does not
  // exist) its extension fallbacks (ext_from_: the first fallback).
  std::vector<std::string> names_;
  size_t ext_from_ = 0;
  bool index_mode_ = false;  // names_ are index names (a directory asked for)
  size_t name_ = 0;         // the job's choice among names_
  // What may be served: [0] the file itself, then its precompressed
  // siblings in the client's order of preference.
  struct Candidate {
    std::string rel;        // relative to the root
    std::string full;       // root + "/" + rel (the cache key)
    Coding coding = Coding::kIdentity;
    CachedFile* pending = nullptr;  // BeginOpen'ed cache entry
    int fd = -1;            // opened by the job
    uv_stat_t st{};
  };
  std::vector<Candidate> cands_;
  // Cache entries BeginOpen'ed for names_[0] when the job settled on
  // another name: dropped on the loop thread.
  std::vector<CachedFile*> stale_pending_;
  size_t chosen_ = 0;       // the job's choice among cands_
  std::string accept_encoding_;
  bool has_accept_encoding_ = false;
  bool head_;
  OpenFileCache* cache_;
  PipeBufferPool* pool_;
  StaticLookupClient* client_ = nullptr;
  uint64_t tag_ = 0;
  // Request fields (StaticConditionals::Take names).
  std::vector<std::pair<std::string, std::string>> fields_;
  // The pending cache entry of another lookup's open this one waits for
  // (one reference, dropped by the cache on wake or by CancelWait).
  CachedFile* waiting_ = nullptr;
  // The job.
  uv_work_t work_;
  bool job_busy_ = false;
  bool cancelled_ = false;
  PipeBuffer* job_buf_ = nullptr;  // the first read (of the chosen file)
  LoopTracked tracked_;  // freed only once no job is in flight
  int job_err_ = 0;
  ssize_t job_read_ = 0;
  bool found_directory_ = false;
  StaticValidatorOverride override_;
  bool has_override_ = false;
};

// Deleter: Cancel, never delete.
struct StaticLookupCancel {
  void operator()(StaticLookup* l) const { l->Cancel(); }
};
using StaticLookupPtr = std::unique_ptr<StaticLookup, StaticLookupCancel>;

// In OnStaticAnswer: the lookup the client holds for the request (`held`
// null: the request is gone), taken out so that it is freed when the
// answer returns (the answer's headers are its memory). Empty when the
// answer comes from inside Begin, where the client holds nothing yet and
// is inside a dispatch already.
inline StaticLookupPtr TakeHeldLookup(StaticLookupPtr* held) {
  return held != nullptr ? std::move(*held) : StaticLookupPtr();
}

class StaticFiles {
 public:
  explicit StaticFiles(uv_loop_t* loop) : loop_(loop) {}
  // Adds a mount (later mounts are tried after earlier ones).
  void Add(std::shared_ptr<const StaticMount> mount);
  bool empty() const { return mounts_.empty(); }
  // Where the open-file cache of this thread is found (it may come and
  // go); null: no cache.
  void set_cache_provider(std::function<OpenFileCache*()> p) {
    cache_provider_ = std::move(p);
  }
  // A lookup for a complete, bodiless request (method GET or HEAD, the
  // caller checked) whose target lies under a mount, or nullptr.
  StaticLookup* Match(std::string_view target, bool head);
  // A lookup of `target` under one mount, outside any listener (the
  // sluice.serveStatic middleware: its mount has the prefix "/"), or
  // nullptr when `target` is not under its prefix. `cache` may be null.
  static StaticLookup* LookupFor(uv_loop_t* loop,
                                 std::shared_ptr<const StaticMount> mount,
                                 std::string_view target, bool head,
                                 OpenFileCache* cache);

  static uint64_t NextMountId();

 private:
  uv_loop_t* loop_;
  std::vector<std::shared_ptr<const StaticMount>> mounts_;
  std::function<OpenFileCache*()> cache_provider_;
};

}  // namespace sluice
