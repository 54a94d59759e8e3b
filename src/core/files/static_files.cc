#include "core/files/static_files.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>

#include "core/body/file_source.h"
#include "core/body/pipe.h"
#include "core/compress/accept_encoding.h"
#include "core/compress/compress_transform.h"
#include "core/files/content_types.h"
#include "core/files/open_beneath.h"
#include "core/files/open_file_cache.h"

namespace sluice {

namespace {
std::atomic<uint64_t> g_mount_ids{0};

// path.extname(rel) is not empty: the last segment has a '.' after its
// first character.
bool HasExtension(const std::string& rel) {
  const size_t slash = rel.rfind('/');
  const size_t base = slash == std::string::npos ? 0 : slash + 1;
  const size_t dot = rel.rfind('.');
  return dot != std::string::npos && dot > base;
}

// A name that does not exist as asked (send goes on to the next index
// name or extension on these).
bool IsMissing(int err) {
  return err == UV_ENOENT || err == UV_ENOTDIR || err == UV_ENAMETOOLONG;
}

StaticFileInfo InfoOf(const uv_stat_t& st) {
  StaticFileInfo f;
  f.size = st.st_size;
  f.mtime_sec = st.st_mtim.tv_sec;
  f.mtime_nsec = st.st_mtim.tv_nsec;
  return f;
}
}  // namespace

uint64_t StaticFiles::NextMountId() { return ++g_mount_ids; }

void StaticFiles::Add(std::shared_ptr<const StaticMount> mount) {
  mounts_.push_back(std::move(mount));
}

StaticLookup* StaticFiles::Match(std::string_view target, bool head) {
  for (const auto& m : mounts_) {
    OpenFileCache* cache = nullptr;
    if (m->options.use_cache && cache_provider_) cache = cache_provider_();
    if (StaticLookup* l = LookupFor(loop_, m, target, head, cache)) return l;
  }
  return nullptr;
}

StaticLookup* StaticFiles::LookupFor(uv_loop_t* loop,
                                     std::shared_ptr<const StaticMount> mount,
                                     std::string_view target, bool head,
                                     OpenFileCache* cache) {
  StaticPath p = ParseStaticPath(target, mount->prefix);
  if (p.kind == StaticPath::kNoMatch) return nullptr;
  return new StaticLookup(loop, std::move(mount), std::move(p), head, cache,
                          PipeBufferPool::ForThisThread());
}

StaticLookup::StaticLookup(uv_loop_t* loop,
                           std::shared_ptr<const StaticMount> mount,
                           StaticPath path, bool head, OpenFileCache* cache,
                           PipeBufferPool* pool)
    : loop_(loop), mount_(std::move(mount)), path_(std::move(path)),
      head_(head), cache_(cache), pool_(pool) {
  work_.data = this;
}

StaticLookup::~StaticLookup() {
  DropPending();
  if (job_buf_) job_buf_->Unref();
  for (Candidate& c : cands_) CloseAsync(c.fd);
}

void StaticLookup::DropPending() {
  for (Candidate& c : cands_) {
    if (CachedFile* p = c.pending) {
      c.pending = nullptr;
      stale_pending_.push_back(p);
    }
  }
  DropStale();
}

void StaticLookup::DropStale() {
  for (CachedFile* p : stale_pending_) {
    p->Abandon();  // never cached
    p->Unref();
  }
  stale_pending_.clear();
}

void StaticLookup::CloseAsync(int fd) {
  if (fd < 0) return;
  // A source owning `fd` closes it with an async uv_fs_close.
  FileSource* s = FileSource::Create(loop_, pool_);
  uv_stat_t st{};
  s->OpenOwned(fd, st, 0, 0, nullptr);
  s->Close();
}

void StaticLookup::TakeHeader(std::string_view name, std::string_view value) {
  if (name == "accept-encoding") {
    accept_encoding_.assign(value.data(), value.size());
    has_accept_encoding_ = true;
    return;
  }
  StaticConditionals probe;
  probe.Take(name, value);
  if (probe.has_if_match || probe.has_if_unmodified_since ||
      probe.has_if_none_match || probe.has_if_modified_since ||
      probe.has_range || probe.has_if_range || probe.has_cache_control) {
    fields_.emplace_back(std::string(name), std::string(value));
  }
}

void StaticLookup::Cancel() {
  client_ = nullptr;
  if (waiting_ != nullptr) {
    waiting_->CancelWait(this);
    waiting_ = nullptr;
  }
  if (job_busy_) {
    cancelled_ = true;
    uv_cancel(reinterpret_cast<uv_req_t*>(&work_));
    return;  // AfterJob frees us
  }
  delete this;
}

StaticLookup::Start StaticLookup::Begin(StaticLookupClient* client,
                                        uint64_t tag) {
  client_ = client;
  tag_ = tag;
  const StaticMountOptions& o = mount_->options;
  switch (path_.kind) {
    case StaticPath::kBadRequest:
      AnswerStatus(400);
      return kAnswered;
    case StaticPath::kForbidden:
      AnswerStatus(403);
      return kAnswered;
    default:
      break;
  }
  if (path_.dotfile) {
    if (o.dotfiles == StaticMountOptions::kIgnore) return kFallThrough;
    if (o.dotfiles == StaticMountOptions::kDeny) {
      AnswerStatus(403);
      return kAnswered;
    }
  }
  if (path_.trailing_slash || path_.rel.empty()) {
    // A directory: its index, when asked for with the slash.
    if (o.index.empty() || !path_.trailing_slash) return kFallThrough;
  }
  PlanNames();
  BuildCandidates(0);
  if (cache_ != nullptr) {
    if (AnswerFromCache()) return kAnswered;
    // Another request's open of this path is under way: wait for it
    // rather than open the file a second time.
    waiting_ = cache_->Await(cands_[0].full, this);
    if (waiting_ != nullptr) return kPending;
  }
  return StartJob() ? kPending : kFallThrough;
}

bool StaticLookup::StartJob() {
  if (cache_ != nullptr) {
    for (Candidate& c : cands_) c.pending = cache_->BeginOpen(c.full);
  }
  job_buf_ = pool_->Acquire();
  if (job_buf_ == nullptr || uv_queue_work(loop_, &work_, Job, AfterJob) != 0) {
    DropPending();
    return false;
  }
  job_busy_ = true;
  return true;
}

void StaticLookup::OnOpenSettled(OpenFileCache* cache) {
  waiting_ = nullptr;  // the cache dropped our reference
  cache_ = cache;      // nullptr: uncached (the old cache may be gone)
  // Cached now (by a lookup with this mount's rules): answered here, and
  // freed by the client inside the answer. Otherwise (the open failed, the
  // entry went uncached or is another mount's) the job finds out for
  // itself; it does not wait a second time.
  if (cache_ != nullptr && AnswerFromCache()) return;
  if (!StartJob()) {
    StaticLookupClient* c = client_;
    if (c) c->OnStaticFallThrough(tag_);
  }
}

void StaticLookup::PlanNames() {
  const StaticMountOptions& o = mount_->options;
  if (path_.trailing_slash || path_.rel.empty()) {
    index_mode_ = true;
    for (const std::string& n : o.index) {
      names_.push_back(path_.rel.empty() ? n : path_.rel + "/" + n);
    }
    ext_from_ = names_.size();
    return;
  }
  names_.push_back(path_.rel);
  ext_from_ = 1;
  if (!HasExtension(path_.rel)) {
    for (const std::string& e : o.extensions) names_.push_back(path_.rel + "." + e);
  }
}

void StaticLookup::BuildCandidates(size_t k) {
  const StaticMountOptions& o = mount_->options;
  file_rel_ = names_[k];
  cands_.clear();
  Candidate plain;
  plain.rel = file_rel_;
  plain.full = mount_->root + "/" + file_rel_;
  cands_.push_back(std::move(plain));
  if (!o.precompressed) return;
  // The client's order among br and gzip (lib/compress/compression.js does the
  // same for respondWithFile's precompressed option).
  Coding left[2] = {Coding::kBrotli, Coding::kGzip};
  size_t n = 2;
  while (n > 0) {
    Coding c = NegotiateCoding(accept_encoding_, has_accept_encoding_, left, n);
    if (c == Coding::kIdentity) break;
    Candidate sib;
    sib.coding = c;
    sib.rel = file_rel_ + (c == Coding::kBrotli ? ".br" : ".gz");
    sib.full = mount_->root + "/" + sib.rel;
    cands_.push_back(std::move(sib));
    size_t m2 = 0;
    for (size_t m = 0; m < n; m++) {
      if (left[m] != c) left[m2++] = left[m];
    }
    n = m2;
  }
}

bool StaticLookup::AnswerFromCache() {
  const StaticMountOptions& o = mount_->options;
  // An entry opened by respondWithFile (a plain open) says nothing about
  // where its symbolic links lead: only one this mount's rules resolved
  // counts.
  auto usable = [&](CachedFile* f) {
    if (f == nullptr) return false;
    if (o.follow_symlinks || f->beneath_tag() == mount_->id) return true;
    f->Unref();
    return false;
  };
  CachedFile* plain = cache_->Lookup(cands_[0].full);
  if (!usable(plain)) return false;
  for (size_t k = 1; k < cands_.size(); k++) {
    CachedFile* sib = cache_->Lookup(cands_[k].full);
    if (!usable(sib)) {
      // Unknown whether this sibling exists: the job finds out.
      plain->Unref();
      return false;
    }
    if (sib->stat().st_mtim.tv_sec > plain->stat().st_mtim.tv_sec ||
        (sib->stat().st_mtim.tv_sec == plain->stat().st_mtim.tv_sec &&
         sib->stat().st_mtim.tv_nsec >= plain->stat().st_mtim.tv_nsec)) {
      plain->Unref();
      AnswerFile(sib, -1, sib->stat(), nullptr, cands_[k].coding);
      return true;
    }
    sib->Unref();  // older than the file: not this one
  }
  AnswerFile(plain, -1, plain->stat(), nullptr, Coding::kIdentity);
  return true;
}

// Threadpool: open the file beneath the root and fstat it; then its
// precompressed siblings in order until one is a regular file not older
// than it; read the first buffer of the chosen one (a small file then
// answers with no further read). Only cands_ and job_* are touched.
void StaticLookup::Job(uv_work_t* w) {
  StaticLookup* self = static_cast<StaticLookup*>(w->data);
  const StaticMount& m = *self->mount_;
  auto open_stat = [&](Candidate& c) {
    int fd = OpenBeneath(m.root, c.rel, m.options.follow_symlinks);
    if (fd < 0) return fd;
    c.fd = fd;
    uv_fs_t req;
    int r = uv_fs_fstat(nullptr, &req, fd, nullptr);
    if (r == 0) c.st = req.statbuf;
    uv_fs_req_cleanup(&req);
    return r;
  };
  // names_ in order: an index name or an extension fallback that is
  // missing or a directory gives way to the next; the path itself only
  // when it does not exist (send's sendIndex / sendFile).
  const bool index_mode = self->index_mode_;
  int err = 0;
  for (size_t k = 0;; k++) {
    Candidate& c0 = self->cands_[0];
    err = open_stat(c0);
    const bool dir = err == 0 && (c0.st.st_mode & S_IFMT) == S_IFDIR;
    bool next;
    if (index_mode || k >= self->ext_from_) {
      next = IsMissing(err) || dir;
    } else {
      next = err == UV_ENOENT;
    }
    if (!next || k + 1 >= self->names_.size()) {
      self->name_ = k;
      break;
    }
    if (c0.fd >= 0) {
      uv_fs_t cl;
      uv_fs_close(nullptr, &cl, c0.fd, nullptr);
      uv_fs_req_cleanup(&cl);
      c0.fd = -1;
    }
    // The cache entries begun for the first name are the loop thread's to
    // drop (AfterJob).
    for (Candidate& c : self->cands_) {
      if (c.pending != nullptr) self->stale_pending_.push_back(c.pending);
      c.pending = nullptr;
    }
    self->BuildCandidates(k + 1);
  }
  if (err < 0) {
    self->job_err_ = err;
    return;
  }
  const uv_stat_t& plain = self->cands_[0].st;
  if ((plain.st_mode & S_IFMT) != S_IFREG) return;
  self->chosen_ = 0;
  for (size_t k = 1; k < self->cands_.size(); k++) {
    Candidate& c = self->cands_[k];
    if (open_stat(c) == 0 && (c.st.st_mode & S_IFMT) == S_IFREG &&
        (c.st.st_mtim.tv_sec > plain.st_mtim.tv_sec ||
         (c.st.st_mtim.tv_sec == plain.st_mtim.tv_sec &&
          c.st.st_mtim.tv_nsec >= plain.st_mtim.tv_nsec))) {
      self->chosen_ = k;
      break;
    }
  }
  Candidate& c = self->cands_[self->chosen_];
  size_t n = static_cast<size_t>(
      std::min<uint64_t>(c.st.st_size, self->job_buf_->capacity()));
  if (n == 0) return;
  uv_buf_t iov = uv_buf_init(self->job_buf_->data(), static_cast<unsigned>(n));
  uv_fs_t rd;
  self->job_read_ = uv_fs_read(nullptr, &rd, c.fd, &iov, 1, 0, nullptr);
  uv_fs_req_cleanup(&rd);
}

void StaticLookup::AfterJob(uv_work_t* w, int status) {
  StaticLookup* self = static_cast<StaticLookup*>(w->data);
  self->job_busy_ = false;
  if (status == UV_ECANCELED || self->cancelled_ || self->client_ == nullptr) {
    delete self;  // closes what the job opened, drops the pending entries
    return;
  }
  self->DropStale();
  const int err = self->job_err_;
  Candidate& plain = self->cands_[0];
  const bool regular = err == 0 && (plain.st.st_mode & S_IFMT) == S_IFREG;
  if (!regular) {
    self->DropPending();
    // A directory asked for without its slash (not an index name or an
    // extension fallback that happens to be one): serve-static redirects.
    self->found_directory_ =
        err == 0 && (plain.st.st_mode & S_IFMT) == S_IFDIR && self->name_ == 0 &&
        !self->index_mode_;
    StaticLookupClient* c = self->client_;
    // A symbolic link out of the root (EXDEV, or too many links) and
    // permission errors are refused; anything else is a miss.
    if (err == UV_EXDEV || err == UV_ELOOP || err == UV_EACCES ||
        err == UV_EPERM) {
      self->AnswerStatus(403);
    } else {
      c->OnStaticFallThrough(self->tag_);
    }
    return;
  }
  Candidate& chosen = self->cands_[self->chosen_];
  PipeBuffer* first = nullptr;
  if (self->job_read_ > 0) {
    first = self->job_buf_;
    self->job_buf_ = nullptr;
    first->size = static_cast<size_t>(self->job_read_);
  }
  // The file and the chosen sibling go into the cache (both: the cache
  // answers a precompressed request only when it holds both, to compare
  // their mtimes); the others are dropped.
  CachedFile* entry = nullptr;
  for (size_t k = 0; k < self->cands_.size(); k++) {
    Candidate& c = self->cands_[k];
    CachedFile* p = c.pending;
    if (p == nullptr) continue;
    c.pending = nullptr;
    if ((k != 0 && k != self->chosen_) || c.fd < 0) {
      p->Abandon();
      p->Unref();
      continue;
    }
    const bool whole = k == self->chosen_ && first != nullptr &&
                       first->size == static_cast<size_t>(c.st.st_size);
    if (p->Complete(c.fd, c.st, whole ? first->data() : nullptr,
                    whole ? first->size : 0)) {
      p->set_beneath_tag(self->mount_->id);
      c.fd = -1;  // the entry's now
      if (k == self->chosen_) {
        entry = p;  // our reference
        continue;
      }
    }
    p->Unref();
  }
  int fd = -1;
  if (entry == nullptr) {
    fd = chosen.fd;
    chosen.fd = -1;
  }
  uv_stat_t st = chosen.st;
  self->AnswerFile(entry, fd, st, first, chosen.coding);
}

void StaticLookup::AnswerStatus(int status) {
  std::vector<std::pair<std::string, std::string>> none;
  StaticAnswer a;
  a.status = status;
  a.headers = &none;
  a.content_length = 0;
  StaticLookupClient* c = client_;
  if (c) c->OnStaticAnswer(tag_, a);
}

void StaticLookup::AnswerFile(CachedFile* entry, int fd, const uv_stat_t& st,
                              PipeBuffer* first, Coding coding) {
  const StaticMountOptions& o = mount_->options;
  StaticConditionals req;
  for (const auto& f : fields_) req.Take(f.first, f.second);
  const ContentTypeEntry& type = ContentTypeFor(file_rel_);
  StaticDecision d = DecideStatic(InfoOf(st), type.type, o.headers, req,
                                 has_override_ ? &override_ : nullptr);
  if ((d.status == 412 || d.status == 416) && !o.keep_refusal_fields) {
    auto keep = std::remove_if(d.headers.begin(), d.headers.end(), [](const auto& h) {
      return h.first != "Content-Range";
    });
    d.headers.erase(keep, d.headers.end());
  }
  // On-the-fly compression: a compressible type, a whole (200) body of at
  // least the threshold, a coding the client accepts (as lib/
  // compression.js decides for respondWithFile). Never for a
  // precompressed sibling, a range or HEAD.
  Coding fly = Coding::kIdentity;
  const bool compressible = !o.encodings.empty() && type.compressible;
  if (coding == Coding::kIdentity && compressible && d.status == 200 &&
      !head_ && d.length >= o.compress_threshold && d.length > 0) {
    fly = NegotiateCoding(accept_encoding_, has_accept_encoding_,
                          o.encodings.data(), o.encodings.size());
  }
  if (d.status == 200 || d.status == 206 || d.status == 304) {
    // The answer depended on Accept-Encoding.
    if (o.precompressed || compressible) {
      d.headers.emplace_back("Vary", "Accept-Encoding");
    }
    if (coding != Coding::kIdentity) {
      d.headers.emplace_back("Content-Encoding", CodingName(coding));
    } else if (fly != Coding::kIdentity) {
      d.headers.emplace_back("Content-Encoding", CodingName(fly));
    }
  }
  StaticAnswer a;
  a.status = d.status;
  a.headers = &d.headers;
  a.content_length = d.status == 304 || fly != Coding::kIdentity
                         ? -1 : static_cast<int64_t>(d.length);
  FileSource* src = nullptr;
  if (d.body && d.length > 0 && !head_) {
    src = FileSource::Create(loop_, pool_);
    if (entry != nullptr) {
      // No prefetch: the sink starts reading at once, or (cleartext
      // HTTP/1.1) sends the file with sendfile and reads nothing.
      src->OpenCached(entry, static_cast<int64_t>(d.offset),
                      static_cast<int64_t>(d.length), false);
      entry = nullptr;  // the source's reference now
    } else {
      src->OpenOwned(fd, st, static_cast<int64_t>(d.offset),
                     static_cast<int64_t>(d.length), first, false);
      first = nullptr;
      fd = -1;
    }
  }
  if (entry) entry->Unref();
  if (first) first->Unref();
  CloseAsync(fd);
  PipeSource* body = src;
  if (src != nullptr && fly != Coding::kIdentity) {
    CompressParams p;
    p.coding = fly;
    p.level = o.compress_level;
    p.brotli_quality = o.brotli_quality;
    CompressTransform* t = CompressTransform::Create(loop_, pool_, p);
    if (t == nullptr) {
      src->Close();
      AnswerStatus(500);
      return;
    }
    t->SetUpstream(src);
    body = t;
  }
  a.body = body;
  if (body == src) a.file = src;
  a.stat = &st;
  a.rel = file_rel_;
  StaticLookupClient* c = client_;
  if (c) {
    c->OnStaticAnswer(tag_, a);
  } else if (body) {
    body->Close();
  }
}

}  // namespace sluice
