// Pipe: the native path a response body takes when it does not come from
// JS: Source → (Transform …) → Pipe → Sink.
//
//   FileSource ──OnSourceData──▶ [Compressor] ──▶ Pipe ◀──Pull── Http1FileSink
//        ▲          (async)                        │      │       Http2 DATA sink
//        └─────────────Read()──────────────────────┘      └─▶ OnPipeReadable
//
// - A Source produces PipeBuffers asynchronously (a file read on the libuv
//   threadpool, a compressed chunk). The Pipe asks it for the next buffer
//   (Read) only while fewer than `read_ahead` buffers are queued or in
//   flight, so memory is bounded and a read is in flight while the sink
//   sends the previous buffer.
// - A Sink pulls bytes when it can send them (HTTP/1.1: the writer's backlog
//   is under the high-water mark; HTTP/2: nghttp2 asks its data provider).
//   That is the whole backpressure protocol: a sink that cannot send does
//   not pull; the Pipe's queue fills to read_ahead and the source idles.
//   When a pull finds nothing, the Pipe remembers it and calls
//   OnPipeReadable once data arrives (HTTP/2: nghttp2_session_resume_data).
// - Bytes are never copied between source and kernel: a pull hands out a
//   slice of a PipeBuffer plus one reference on it; the sink passes the
//   reference to the Writer (PipeBufferRef is an ExternalRef), which drops
//   it when the kernel has the bytes.
// - A Transform is a Source that reads from another Source (response
//   compression inserts its compressor here with Pipe::InsertTransform before Start).
//
// Threading: everything here runs on the loop thread. Threadpool work (fs
// reads, compression) is done by a source inside its own uv requests and
// reported back on the loop thread.
//
// Error codes: libuv's (negative errno, UV_E*). Nothing throws.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>

#include "core/net/output_queue.h"

namespace sluice {

class PipeBufferPool;

// A pooled block of native memory. Reference counted (loop thread only, not
// atomic); the last Unref returns it to its pool. `size` is how many bytes
// of data() hold content (set by the producer before handing it on).
class PipeBuffer {
 public:
  char* data() { return data_; }
  const char* data() const { return data_; }
  size_t capacity() const { return capacity_; }
  size_t size = 0;

  void Ref() { refs_++; }
  // Drops one reference; the last returns the block to its pool (or frees
  // it when the pool is gone or full, or it has no pool).
  void Unref();

  // A buffer of exactly `capacity` bytes outside any pool (one reference,
  // the caller's; the last Unref frees it): content kept longer than a
  // response, such as a cached small file. nullptr when memory is exhausted.
  static PipeBuffer* NewUnpooled(size_t capacity);

 private:
  friend class PipeBufferPool;
  PipeBuffer(PipeBufferPool* pool, char* data, size_t capacity)
      : data_(data), capacity_(capacity), pool_(pool) {}
  ~PipeBuffer();
  char* data_;
  size_t capacity_;
  PipeBufferPool* pool_;
  uint32_t refs_ = 0;
};

// A free list of equally sized blocks. Acquire never blocks: an empty list
// allocates; Unref of a buffer beyond `max_free` idle ones frees it.
class PipeBufferPool {
 public:
  PipeBufferPool(size_t buffer_size, size_t max_free);
  PipeBufferPool(const PipeBufferPool&) = delete;
  PipeBufferPool& operator=(const PipeBufferPool&) = delete;

  // A buffer holding one reference (the caller's), size 0. nullptr only
  // when memory is exhausted.
  PipeBuffer* Acquire();
  size_t buffer_size() const { return buffer_size_; }
  // Buffers handed out and not yet returned (tests: leak checks).
  size_t outstanding() const { return outstanding_; }

  // The calling thread's pool of kDefaultBufferSize blocks (one per loop
  // thread: the main thread and each worker). It outlives the buffers it
  // handed out: freed when the thread ends and the last buffer returned.
  static PipeBufferPool* ForThisThread();
  static constexpr size_t kDefaultBufferSize = 128 * 1024;

 private:
  friend class PipeBuffer;
  struct ThreadHolder;
  ~PipeBufferPool();
  void Return(PipeBuffer* b);
  void Orphan();  // the owning thread ended

  size_t buffer_size_;
  size_t max_free_;
  size_t outstanding_ = 0;
  bool orphaned_ = false;
  std::deque<PipeBuffer*> free_;
};

// ExternalRef over one PipeBuffer reference: what a sink appends to an
// OutputQueue (AppendExternal) so that the Writer sends the bytes from the
// buffer itself and drops the reference once the kernel has them.
class PipeBufferRef final : public ExternalRef {
 public:
  // Takes over one reference the caller holds on `b`.
  explicit PipeBufferRef(PipeBuffer* b) : buf_(b) {}
  void Release() override {
    buf_->Unref();
    delete this;
  }

 private:
  PipeBuffer* buf_;
};

// Where a source delivers what it produced. Implemented by Pipe and by
// transforms (for their upstream).
class PipeSourceClient {
 public:
  virtual ~PipeSourceClient() = default;
  // Source → client, answering one Read: `buf` holds buf->size > 0 bytes;
  // one reference passes to the client. Loop thread; may come from inside
  // Read (a source with buffered output) or later (async I/O).
  virtual void OnSourceData(PipeBuffer* buf) = 0;
  // Source → client, answering one Read: no more data, ever.
  virtual void OnSourceEnd() = 0;
  // Source → client: the source failed (UV_E* code); no more calls follow.
  virtual void OnSourceError(int err) = 0;
};

// A producer of buffers. Owned by the Pipe it is given to (or by the
// transform above it) until Close.
class PipeSource {
 public:
  virtual ~PipeSource() = default;
  // Pipe → source, once, before the first Read: where results go.
  virtual void SetClient(PipeSourceClient* client) = 0;
  // Client → source: produce one more buffer (of at most `max_bytes`, a
  // hint). The client calls Read again only after the answer
  // (OnSourceData/End/Error) of the previous one: one request outstanding.
  virtual void Read(size_t max_bytes) = 0;
  // Owner → source: stop. No client call happens after Close returns. The
  // source frees itself, possibly later: it must first wait for its
  // in-flight I/O (threadpool requests write into its buffers) and release
  // what it owns (a file descriptor it opened, buffers). The owner must not
  // touch it after Close.
  virtual void Close() = 0;
};

// A source that consumes another source: compression, range slicing.
// Owns its upstream: Close closes the upstream too.
class PipeTransform : public PipeSource, public PipeSourceClient {
 public:
  // Pipe → transform, before Start: `upstream` is owned by the transform
  // from now on; the transform calls upstream->SetClient(this).
  virtual void SetUpstream(PipeSource* upstream) = 0;
};

// The sink side: told about events it did not ask for. The sink drives the
// flow itself by calling Pipe::Pull when it can send.
class PipeSink {
 public:
  virtual ~PipeSink() = default;
  // Pipe → sink: a Pull found nothing, and data (or the end) has arrived
  // since. Called once per such miss; the sink should pull again (HTTP/2:
  // nghttp2_session_resume_data). Loop thread, outside the sink's own Pull.
  // The sink may Destroy the pipe from here.
  virtual void OnPipeReadable() = 0;
  // Pipe → sink: the source failed (UV_E* code). No more data will come;
  // (when the failure is seen inside Pull, Pull returns it instead);
  // the sink decides what the protocol does (HTTP/1.1: close the
  // connection; HTTP/2: RST_STREAM INTERNAL_ERROR) and destroys the pipe.
  virtual void OnPipeError(int err) = 0;
};

// What Pull hands the sink: `len` bytes at `data` inside `buf`, with one
// reference on `buf` that the sink now owns (drop it with buf->Unref(), or
// hand it to a Writer with new PipeBufferRef(buf)).
struct PipeSlice {
  PipeBuffer* buf = nullptr;
  const char* data = nullptr;
  size_t len = 0;
};

// Pull results (besides a positive byte count).
enum PipeStatus {
  kPipeWouldBlock = 0,   // nothing ready yet: OnPipeReadable will follow
  kPipeEof = -100000,    // every byte was pulled: the body is complete
  // < 0 otherwise: the source's UV_E* error (OnPipeError also reports it)
};

// Joins a source (and transforms) to a sink. Created and owned by the
// sink's owner (Http1Session's response, the HTTP/2 stream); freed with
// Destroy, which closes the source chain.
class Pipe final : public PipeSourceClient {
 public:
  struct Options {
    // Buffers queued or being read ahead of the sink (>= 1). Two keeps a
    // read in flight while the previous buffer is being sent.
    size_t read_ahead = 2;
    // Size hint for each Read.
    size_t read_size = PipeBufferPool::kDefaultBufferSize;
  };

  // Takes ownership of `source`. The sink is not owned and must outlive
  // the pipe (or Destroy it first).
  Pipe(PipeSource* source, PipeSink* sink, const Options& options);
  Pipe(PipeSource* source, PipeSink* sink) : Pipe(source, sink, Options()) {}
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;

  // Owner → pipe, before Start: puts `t` between the current source chain
  // and the pipe (t takes the chain as its upstream; the pipe owns t).
  void InsertTransform(PipeTransform* t);
  // Owner → pipe: starts reading ahead. Sink calls may follow from inside.
  void Start();

  // Sink → pipe: up to `max` bytes from the front buffer (a slice never
  // spans buffers; call again for more). Returns the byte count (> 0, and
  // *out filled), kPipeWouldBlock, kPipeEof, or a UV_E* error.
  ssize_t Pull(size_t max, PipeSlice* out);
  // Sink → pipe, for sinks that size a frame before filling it (the HTTP/2
  // data provider, then send_data with NO_COPY): how many of `max` bytes
  // Pulls can deliver now. Returns > 0 (with *eof set when those are the
  // last bytes of the body), 0 with *eof set (the body is complete),
  // kPipeWouldBlock (OnPipeReadable follows, as after a missed Pull), or a
  // UV_E* error. Nothing is consumed; the Pulls that follow may span
  // buffers (one slice per buffer).
  ssize_t Available(size_t max, bool* eof);
  // Bytes a Pull could return now without waiting (all queued buffers).
  size_t readable() const { return readable_; }
  // The source has ended: readable() is everything left. (HTTP/2 sets
  // NGHTTP2_DATA_FLAG_EOF when it sends the last readable byte.)
  bool source_ended() const { return source_ended_; }
  int error() const { return error_; }
  // Bytes pulled so far.
  uint64_t bytes_pulled() const { return pulled_; }

  // Owner (or sink) → pipe: closes the source chain (which frees itself
  // once its I/O is done), drops queued buffers, and frees the pipe — now,
  // or when the pipe's current callback into the sink returns. Safe from
  // inside any sink callback. No sink call happens after Destroy.
  void Destroy();

  // PipeSourceClient (the last source of the chain → pipe).
  void OnSourceData(PipeBuffer* buf) override;
  void OnSourceEnd() override;
  void OnSourceError(int err) override;

 private:
  ~Pipe();
  void MaybeRead();
  void PullRead();
  void NotifyReadable();

  PipeSource* source_;     // owned until Destroy closes it
  PipeSink* sink_;
  Options options_;
  struct Queued {
    PipeBuffer* buf;  // one reference, owned by the queue
    size_t off;
  };
  std::deque<Queued> queue_;
  size_t readable_ = 0;
  uint64_t pulled_ = 0;
  bool started_ = false;
  bool reading_ = false;        // a Read is outstanding
  bool source_ended_ = false;
  bool sink_waiting_ = false;   // a Pull missed: owe OnPipeReadable
  bool destroyed_ = false;
  bool in_pull_ = false;        // inside the sink's Pull: no sink calls
  int error_ = 0;
  int depth_ = 0;               // nested calls in progress (deferred free)
};

}  // namespace sluice
