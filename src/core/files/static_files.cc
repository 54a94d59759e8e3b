#include "core/files/static_files.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>

#include "core/body/file_source.h"
#include "core/body/pipe.h"
#include "core/files/content_types.h"
#include "core/files/open_beneath.h"
#include "core/files/open_file_cache.h"

namespace sluice {

namespace {
std::atomic<uint64_t> g_mount_ids{0};

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
    StaticPath p = ParseStaticPath(target, m->prefix);
    if (p.kind == StaticPath::kNoMatch) continue;
    OpenFileCache* cache = nullptr;
    if (m->options.use_cache && cache_provider_) cache = cache_provider_();
    return new StaticLookup(loop_, m, std::move(p), head, cache,
                            PipeBufferPool::ForThisThread());
  }
  return nullptr;
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
}

void StaticLookup::DropPending() {
  if (CachedFile* p = pending_) {
    pending_ = nullptr;
    p->Abandon();  // never cached
    p->Unref();
  }
}

void StaticLookup::TakeHeader(std::string_view name, std::string_view value) {
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
    // A directory: its index.html, when asked for with the slash.
    if (!o.index || !path_.trailing_slash) return kFallThrough;
    file_rel_ = path_.rel.empty() ? "index.html" : path_.rel + "/index.html";
  } else {
    file_rel_ = path_.rel;
  }
  full_path_ = mount_->root + "/" + file_rel_;
  if (cache_ != nullptr) {
    if (CachedFile* hit = cache_->Lookup(full_path_)) {
      // An entry opened by respondWithFile (a plain open) says nothing
      // about where its symbolic links lead: only one this mount's rules
      // resolved counts.
      if (o.follow_symlinks || hit->beneath_tag() == mount_->id) {
        AnswerFile(hit, -1, hit->stat(), nullptr);
        return kAnswered;
      }
      hit->Unref();
    }
    pending_ = cache_->BeginOpen(full_path_);
  }
  job_buf_ = pool_->Acquire();
  if (job_buf_ == nullptr || uv_queue_work(loop_, &work_, Job, AfterJob) != 0) {
    return kFallThrough;
  }
  job_busy_ = true;
  return kPending;
}

// Threadpool: open beneath the root, fstat, and read the first buffer of
// a regular file (a small file then answers with no further read).
void StaticLookup::Job(uv_work_t* w) {
  StaticLookup* self = static_cast<StaticLookup*>(w->data);
  int fd = OpenBeneath(self->mount_->root, self->file_rel_,
                       self->mount_->options.follow_symlinks);
  if (fd < 0) {
    self->job_err_ = fd;
    return;
  }
  self->job_fd_ = fd;
  uv_fs_t req;
  int r = uv_fs_fstat(nullptr, &req, fd, nullptr);
  if (r < 0) {
    uv_fs_req_cleanup(&req);
    self->job_err_ = r;
    return;
  }
  self->job_stat_ = req.statbuf;
  uv_fs_req_cleanup(&req);
  if ((self->job_stat_.st_mode & S_IFMT) != S_IFREG) return;
  size_t n = static_cast<size_t>(std::min<uint64_t>(
      self->job_stat_.st_size, self->job_buf_->capacity()));
  if (n == 0) return;
  uv_buf_t iov = uv_buf_init(self->job_buf_->data(), static_cast<unsigned>(n));
  uv_fs_t rd;
  self->job_read_ = uv_fs_read(nullptr, &rd, fd, &iov, 1, 0, nullptr);
  uv_fs_req_cleanup(&rd);
}

void StaticLookup::AfterJob(uv_work_t* w, int status) {
  StaticLookup* self = static_cast<StaticLookup*>(w->data);
  self->job_busy_ = false;
  int fd = self->job_fd_;
  self->job_fd_ = -1;
  auto close_fd = [self](int d) {
    // No file I/O on the loop thread: a source that owns `d` closes it
    // asynchronously.
    if (d < 0) return;
    FileSource* s = FileSource::Create(self->loop_, self->pool_);
    uv_stat_t st{};
    s->OpenOwned(d, st, 0, 0, nullptr);
    s->Close();
  };
  if (status == UV_ECANCELED || self->cancelled_ || self->client_ == nullptr) {
    close_fd(fd);
    delete self;
    return;
  }
  const int err = self->job_err_;
  const bool regular = err == 0 && (self->job_stat_.st_mode & S_IFMT) == S_IFREG;
  if (!regular) {
    close_fd(fd);
    self->DropPending();
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
  PipeBuffer* first = nullptr;
  if (self->job_read_ > 0) {
    first = self->job_buf_;
    self->job_buf_ = nullptr;
    first->size = static_cast<size_t>(self->job_read_);
  }
  CachedFile* entry = nullptr;
  if (self->pending_) {
    CachedFile* p = self->pending_;
    self->pending_ = nullptr;
    const bool whole = first != nullptr &&
                       first->size == static_cast<size_t>(self->job_stat_.st_size);
    if (p->Complete(fd, self->job_stat_, whole ? first->data() : nullptr,
                    whole ? first->size : 0)) {
      p->set_beneath_tag(self->mount_->id);
      entry = p;  // our reference; the entry owns fd now
      fd = -1;
    } else {
      p->Unref();
    }
  }
  self->AnswerFile(entry, fd, self->job_stat_, first);
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
                              PipeBuffer* first) {
  StaticConditionals req;
  for (const auto& f : fields_) req.Take(f.first, f.second);
  const ContentTypeEntry& type = ContentTypeFor(file_rel_);
  StaticDecision d = DecideStatic(InfoOf(st), type.type,
                                  mount_->options.headers, req);
  StaticAnswer a;
  a.status = d.status;
  a.headers = &d.headers;
  a.content_length = d.status == 304 ? -1 : static_cast<int64_t>(d.length);
  FileSource* src = nullptr;
  if (d.body && d.length > 0 && !head_) {
    src = FileSource::Create(loop_, pool_);
    if (entry != nullptr) {
      src->OpenCached(entry, static_cast<int64_t>(d.offset),
                      static_cast<int64_t>(d.length));
      entry = nullptr;  // the source's reference now
      if (first) first->Unref();
    } else {
      src->OpenOwned(fd, st, static_cast<int64_t>(d.offset),
                     static_cast<int64_t>(d.length), first);
      fd = -1;
    }
    first = nullptr;
  }
  if (entry) entry->Unref();
  if (first) first->Unref();
  if (fd >= 0) {
    FileSource* s = FileSource::Create(loop_, pool_);
    s->OpenOwned(fd, st, 0, 0, nullptr);
    s->Close();
  }
  a.body = src;
  StaticLookupClient* c = client_;
  if (c) {
    c->OnStaticAnswer(tag_, a);
  } else if (src) {
    src->Close();
  }
}

}  // namespace sluice
