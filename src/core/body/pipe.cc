#include "core/body/pipe.h"

#include <algorithm>
#include <new>

namespace sluice {

// ---- buffers -----------------------------------------------------------------

PipeBuffer::~PipeBuffer() { delete[] data_; }

void PipeBuffer::Unref() {
  if (--refs_ != 0) return;
  if (pool_) {
    pool_->Return(this);
  } else {
    delete this;
  }
}

PipeBuffer* PipeBuffer::NewUnpooled(size_t capacity) {
  char* mem = new (std::nothrow) char[capacity > 0 ? capacity : 1];
  if (mem == nullptr) return nullptr;
  PipeBuffer* b = new (std::nothrow) PipeBuffer(nullptr, mem, capacity);
  if (b == nullptr) {
    delete[] mem;
    return nullptr;
  }
  b->refs_ = 1;
  return b;
}

PipeBufferPool::PipeBufferPool(size_t buffer_size, size_t max_free)
    : buffer_size_(buffer_size), max_free_(max_free) {}

PipeBufferPool::~PipeBufferPool() {
  for (PipeBuffer* b : free_) delete b;
}

PipeBuffer* PipeBufferPool::Acquire() {
  PipeBuffer* b;
  if (!free_.empty()) {
    b = free_.back();
    free_.pop_back();
  } else {
    char* mem = new (std::nothrow) char[buffer_size_];
    if (mem == nullptr) return nullptr;
    b = new (std::nothrow) PipeBuffer(this, mem, buffer_size_);
    if (b == nullptr) {
      delete[] mem;
      return nullptr;
    }
  }
  b->refs_ = 1;
  b->size = 0;
  outstanding_++;
  return b;
}

void PipeBufferPool::Return(PipeBuffer* b) {
  outstanding_--;
  if (orphaned_) {
    delete b;
    if (outstanding_ == 0) delete this;
    return;
  }
  if (free_.size() >= max_free_) {
    delete b;
    return;
  }
  // LIFO: the most recently used block is the one most likely in cache.
  free_.push_back(b);
}

void PipeBufferPool::Orphan() {
  orphaned_ = true;
  for (PipeBuffer* b : free_) delete b;
  free_.clear();
  if (outstanding_ == 0) delete this;
}

// One pool per thread that runs a loop (main thread, workers). The holder's
// destructor runs at thread exit; buffers still held then (a socket closed
// after its worker's loop ended is not expected, but cheap to allow) free
// the pool when they come back.
struct PipeBufferPool::ThreadHolder {
  PipeBufferPool* pool = nullptr;
  ~ThreadHolder() {
    if (pool) pool->Orphan();
  }
};

PipeBufferPool* PipeBufferPool::ForThisThread() {
  // 64 idle blocks of 128 KiB (8 MiB) per thread at most: enough for the
  // read-ahead of 32 concurrent file responses without touching malloc.
  static thread_local ThreadHolder holder;
  if (holder.pool == nullptr) {
    holder.pool = new PipeBufferPool(kDefaultBufferSize, 64);
  }
  return holder.pool;
}

// ---- pipe --------------------------------------------------------------------

Pipe::Pipe(PipeSource* source, PipeSink* sink, const Options& options)
    : source_(source), sink_(sink), options_(options) {
  if (options_.read_ahead == 0) options_.read_ahead = 1;
  source_->SetClient(this);
}

Pipe::~Pipe() {
  for (Queued& q : queue_) q.buf->Unref();
}

void Pipe::InsertTransform(PipeTransform* t) {
  if (started_) return;
  t->SetUpstream(source_);
  source_ = t;
  source_->SetClient(this);
}

// Every entry that may call into the sink is bracketed by depth_ so that a
// Destroy from inside the sink only marks the pipe; the outermost frame
// frees it.
#define PIPE_ENTER() depth_++
#define PIPE_LEAVE()                          \
  do {                                        \
    if (--depth_ == 0 && destroyed_) delete this; \
  } while (0)

void Pipe::Start() {
  if (started_ || destroyed_) return;
  started_ = true;
  PIPE_ENTER();
  MaybeRead();
  PIPE_LEAVE();
}

void Pipe::MaybeRead() {
  // A source may answer inside Read (buffered output): loop until the
  // read-ahead is full or a read is left outstanding.
  while (started_ && !reading_ && !source_ended_ && error_ == 0 &&
         !destroyed_ && queue_.size() < options_.read_ahead) {
    reading_ = true;
    source_->Read(options_.read_size);
  }
}

void Pipe::NotifyReadable() {
  if (!sink_waiting_ || destroyed_ || in_pull_) return;
  sink_waiting_ = false;
  sink_->OnPipeReadable();
}

ssize_t Pipe::Pull(size_t max, PipeSlice* out) {
  if (error_ != 0) return error_;
  if (destroyed_) return UV_ECANCELED;
  if (queue_.empty() && !source_ended_) {
    // A source with buffered output answers inside Read.
    PullRead();
    if (error_ != 0) return error_;
  }
  if (queue_.empty()) {
    if (source_ended_) return kPipeEof;
    sink_waiting_ = true;
    return kPipeWouldBlock;
  }
  if (max == 0) return kPipeWouldBlock;
  Queued& q = queue_.front();
  size_t n = std::min(max, q.buf->size - q.off);
  out->buf = q.buf;
  out->data = q.buf->data() + q.off;
  out->len = n;
  q.off += n;
  readable_ -= n;
  pulled_ += n;
  if (q.off == q.buf->size) {
    queue_.pop_front();  // the queue's reference passes to the slice
  } else {
    q.buf->Ref();        // the slice gets its own
  }
  PullRead();
  return static_cast<ssize_t>(n);
}

ssize_t Pipe::Available(size_t max, bool* eof) {
  *eof = false;
  if (error_ != 0) return error_;
  if (destroyed_) return UV_ECANCELED;
  if (readable_ == 0 && !source_ended_) {
    PullRead();
    if (error_ != 0) return error_;
  }
  if (readable_ == 0) {
    if (source_ended_) {
      *eof = true;
      return 0;
    }
    sink_waiting_ = true;
    return kPipeWouldBlock;
  }
  size_t n = std::min(max, readable_);
  *eof = source_ended_ && n == readable_;
  return static_cast<ssize_t>(n);
}

void Pipe::PullRead() {
  // Inside the sink's Pull: no sink callback may happen (in_pull_ silences
  // them; Pull's return value carries the news instead), so the pipe cannot
  // be destroyed here either.
  in_pull_ = true;
  depth_++;
  MaybeRead();
  depth_--;
  in_pull_ = false;
}

void Pipe::OnSourceData(PipeBuffer* buf) {
  reading_ = false;
  if (destroyed_ || error_ != 0 || buf->size == 0) {
    buf->Unref();
    if (!destroyed_ && error_ == 0) {
      PIPE_ENTER();
      MaybeRead();
      PIPE_LEAVE();
    }
    return;
  }
  queue_.push_back(Queued{buf, 0});
  readable_ += buf->size;
  PIPE_ENTER();
  MaybeRead();
  NotifyReadable();
  PIPE_LEAVE();
}

void Pipe::OnSourceEnd() {
  reading_ = false;
  source_ended_ = true;
  PIPE_ENTER();
  NotifyReadable();
  PIPE_LEAVE();
}

void Pipe::OnSourceError(int err) {
  reading_ = false;
  if (err >= 0) err = UV_EIO;
  error_ = err;
  for (Queued& q : queue_) q.buf->Unref();
  queue_.clear();
  readable_ = 0;
  if (destroyed_ || in_pull_) return;
  PIPE_ENTER();
  sink_waiting_ = false;
  sink_->OnPipeError(err);
  PIPE_LEAVE();
}

void Pipe::Destroy() {
  if (destroyed_) return;
  destroyed_ = true;
  // The source stops calling us from here on and frees itself once its
  // in-flight requests are done.
  PipeSource* s = source_;
  source_ = nullptr;
  if (s) s->Close();
  for (Queued& q : queue_) q.buf->Unref();
  queue_.clear();
  readable_ = 0;
  if (depth_ == 0) delete this;
}

#undef PIPE_ENTER
#undef PIPE_LEAVE

}  // namespace sluice
