// FileSource: a PipeSource reading a file: a regular file with libuv fs on
// the threadpool, anything else (FIFO, pipe, socket, tty, character device)
// through a readiness watcher on the loop thread. Opening is one threadpool
// job (uv_queue_work running uv_fs_open,
// uv_fs_fstat, the first uv_fs_read — and uv_fs_close when that read holds
// the whole range — synchronously on the threadpool thread: one round trip
// for a small file instead of four); later reads and the close are async
// uv_fs_read / uv_fs_close requests. No regular-file I/O on the loop thread,
// ever.
//
// Non-regular files: the path is opened with O_NONBLOCK, so open() itself
// cannot wait (a FIFO without a writer would otherwise hold a threadpool
// thread in open() until one comes; four such stop every file response in
// the process). After the fstat, a descriptor epoll accepts (FIFO, pipe,
// socket, tty, most character devices) is read on the loop thread with
// non-blocking read(2), driven by a uv_poll_t: read first, and only on
// EAGAIN wait for readability, so no thread ever blocks on it. Reads happen
// only when the client asks (Read): the sink's backpressure reaches the
// writer of the FIFO as a full pipe. Why uv_poll and not uv_pipe_open:
//   - uv_pipe_open takes the descriptor over (uv_close closes it), which
//     respondWithFD must not do, and a second libuv watcher on an fd node
//     already watches (a child's stdout) is not allowed: we poll a dup.
//   - a uv_stream reads whenever the fd is readable into buffers it asks
//     for; one read per Read() is the backpressure we want without
//     read_start/read_stop per buffer.
//   - epoll does not report a FIFO whose writer never came as readable or
//     hung up (Linux suppresses EPOLLHUP until a writer was seen) while
//     read(2) answers 0 at once: a libuv stream would take that 0 for the
//     end. A FIFO opened by path here waits for its writer instead, as
//     node's blocking open() does (await_writer_: that first 0 means poll;
//     the writer's bytes or its hang-up end the wait).
// A descriptor epoll refuses (EPERM: /dev/null, /dev/zero, block devices)
// is always ready by definition and read with uv_fs_read on the threadpool,
// without a position; O_NONBLOCK guarantees that read cannot wait either.
// The length of a non-regular file is unknown: its body is read to EOF.
//
// Lifecycle:
//   FileSource* f = FileSource::Create(loop, pool);
//   f->Open(path, offset, length, listener)   // or OpenFd(fd, ...)
//     → listener->OnFileOpened(0, &stat) once (or an error), on the loop
//       thread; the first read is already done then (prefetch) so that
//       small files answer with one write.
//   hand f to a Pipe (which owns it from then on) — or f->Close().
//
// Ownership of the descriptor: Open's fd is the source's own and is closed
// (async) however the source ends: done, error, cancel, client reset.
// OpenFd's fd belongs to the caller and is never closed; a non-regular one
// is dup'ed (the dup is ours and polled), and its O_NONBLOCK flag, which
// the open file description shares with the caller's fd, is restored when
// the source ends if it was clear before.
//
// Teardown: Close() never frees memory a threadpool request may still
// write into: with the open job or a read in flight it tries uv_cancel and
// otherwise waits for the callback; a poll handle is uv_close'd and its
// close callback waited for; then it closes its own fd (uv_fs_close) and
// deletes itself.
#pragma once

#include <uv.h>

#include <cstdint>
#include <string>

#include "core/common/loop_tracked.h"
#include "core/body/pipe.h"

namespace sluice {

class CachedFile;
class OpenFileCache;

// A uv_fs_t owned by value: uv_fs_req_cleanup after every completion and on
// destruction, so no path copy or stat buffer libuv allocated outlives it.
class FsRequest {
 public:
  FsRequest() { req_.data = nullptr; }
  ~FsRequest() { Cleanup(); }
  FsRequest(const FsRequest&) = delete;
  FsRequest& operator=(const FsRequest&) = delete;
  uv_fs_t* get() { return &req_; }
  bool busy() const { return busy_; }
  // Marks the request submitted (call only when uv_fs_* returned 0).
  void Submitted() { busy_ = true; used_ = true; }
  // In the completion callback: the result, with libuv's allocations freed.
  ssize_t Complete() {
    busy_ = false;
    ssize_t r = req_.result;
    Cleanup();
    return r;
  }

 private:
  void Cleanup() {
    if (used_ && !busy_) {
      uv_fs_req_cleanup(&req_);
      used_ = false;
    }
  }
  uv_fs_t req_;
  bool busy_ = false;
  bool used_ = false;
};

class FileSource final : public PipeSource {
 public:
  // Told once when opening (and the fstat) finished. Loop thread.
  class OpenListener {
   public:
    virtual ~OpenListener() = default;
    // err: 0 or UV_E* (`syscall` says which step failed: "open", "fstat",
    // "read" for the prefetch is not reported here). On success `st` is the
    // file's fstat, valid only during the call. The listener may Close()
    // the source or hand it to a Pipe from inside.
    virtual void OnFileOpened(int err, const char* syscall,
                              const uv_stat_t* st) = 0;
  };

  static FileSource* Create(uv_loop_t* loop, PipeBufferPool* pool);

  // Starts opening `path` (O_RDONLY|O_CLOEXEC|O_NONBLOCK) then fstat. The range is
  // [offset, offset+length); length < 0 means "to the end of the file".
  // Returns 0 or a UV_E* error (nothing started; the caller still owns the
  // source and must Close it).
  int Open(const char* path, int64_t offset, int64_t length,
           OpenListener* listener);
  // The same for a descriptor the caller owns (never closed here).
  int OpenFd(int fd, int64_t offset, int64_t length, OpenListener* listener);
  // Open through an OpenFileCache (src/core/files/open_file_cache.h):
  // `pending` is the entry BeginOpen gave for `path` (its reference passes
  // to the source). When the open succeeds the descriptor is offered to
  // the cache; once accepted the entry owns it and the source only reads
  // it. Otherwise as Open.
  int OpenForCache(const char* path, int64_t offset, int64_t length,
                   OpenListener* listener, CachedFile* pending);
  // A cache hit: reads `entry`'s descriptor (or hands out its cached
  // content) with no open and no fstat; the stat is entry->stat(). Takes
  // over the caller's reference on `entry`. Synchronous: the source is
  // open when this returns (no OnFileOpened). The first read starts at
  // once unless the content is cached, the range is larger than one read
  // (the sink may send it with sendfile, which a read in flight rules
  // out), or `prefetch` is false (the caller hands the source to its sink
  // at once, which may send the file with sendfile instead: the first
  // Read starts it then).
  void OpenCached(CachedFile* entry, int64_t offset, int64_t length,
                  bool prefetch = true);
  // A descriptor opened and fstat'ed elsewhere (serveStatic's lookup job)
  // that the source now owns and closes (async). `first` (may be null;
  // its reference passes to the source) holds the file's bytes from
  // offset 0 as already read: used when the range starts at 0.
  // Synchronous like OpenCached (and `prefetch` as there).
  void OpenOwned(int fd, const uv_stat_t& st, int64_t offset, int64_t length,
                 PipeBuffer* first, bool prefetch = true);

  // After OnFileOpened(0): the range actually served, clamped to the file
  // size (for a regular file).
  uint64_t offset() const { return offset_; }
  uint64_t length() const { return length_; }
  bool length_known() const { return length_known_; }

  // Sendfile (the cleartext HTTP/1.1 sink, http1_pipe_body.cc): the sink
  // sends the rest of the range from fd() itself, on the loop thread, and
  // the source reads nothing more. Possible only before any Read, for a
  // regular file with a known length, with no request in flight (a read
  // started by OpenCached may still be running: then not). True: the
  // source is in sendfile mode for good, until EndSendfile.
  bool BeginSendfile();
  // The whole range is the small-file cache's bytes (OpenCached), none
  // handed out yet: drop them, so that the range is read (or sent with
  // sendfile) from fd() instead. True when it did. Before any Read.
  bool ForgoCachedContent();
  // Back to reading (the pages were not resident): the next Read reads
  // from file_pos(), as if the sent bytes had been read.
  void EndSendfile() { sendfile_ = false; }
  // In sendfile mode: the bytes already in memory at the front of the
  // range (the prefetch or the cached content), one reference for the
  // caller, or nullptr. Counted as sent by the caller.
  PipeBuffer* TakeReady() {
    PipeBuffer* b = ready_;
    ready_ = nullptr;
    return b;
  }
  // Whether the file still holds the range as promised, by an fstat of
  // fd() (libuv's synchronous uv_fs_fstat), against the stat the range was set from (the one the head was
  // built from): 0; UV_EOF when it shrank below the range's end; UV_EIO
  // when it was written since without growing (a rewrite in place); or
  // the fstat's error. Sendfile mode only (the sink calls it around each
  // sendfile chunk: those bytes reference the page cache, see
  // http1_pipe_body.cc). Loop thread; one fstat, no disk I/O.
  int CheckUnchanged() const;
  int fd() const { return fd_; }
  // The file offset of the first byte not yet handed out, and how many
  // bytes of the range follow it.
  uint64_t file_pos() const { return offset_ + pos_; }
  uint64_t remaining() const { return length_ - pos_; }
  // The sink sent n bytes from file_pos() itself.
  void Advance(uint64_t n) { pos_ += n; }

  // PipeSource
  void SetClient(PipeSourceClient* client) override { client_ = client; }
  void Read(size_t max_bytes) override;
  void Close() override;

  // Sources alive (opened or tearing down): tests check it returns to its
  // value after client resets.
  static uint64_t live_count();

 private:
  FileSource(uv_loop_t* loop, PipeBufferPool* pool);
  ~FileSource();
  int StartOpenJob(int fd, int64_t offset, int64_t length,
                   OpenListener* listener);
  // Clamps the wanted range to a regular file of st.st_size bytes and
  // keeps the size and mtime it was set from (CheckUnchanged).
  void SetRange(const uv_stat_t& st);
  static void OpenJob(uv_work_t* w);                  // threadpool
  static void AfterOpenJob(uv_work_t* w, int status); // loop thread
  void StartRead();
  void Deliver();
  void FinishClose();
  static void OnReadCb(uv_fs_t* req);
  static void OnCloseCb(uv_fs_t* req);
  // Non-regular files (poll mode), all on the loop thread.
  void PollRead();
  static void OnPollCb(uv_poll_t* handle, int status, int events);
  static void OnPollClosedCb(uv_handle_t* handle);
  // A read owes its answer to a callback (fs request or poll readiness).
  bool waiting() const { return req_.busy() || polling_; }
  void Enter() { depth_++; }
  void Leave();

  LoopTracked tracked_;  // freed only once no job or fs request is in flight
  uv_loop_t* loop_;
  PipeBufferPool* pool_;
  FsRequest req_;                   // reads and the close, one at a time
  // The open job (open + fstat + first read, see file_source.cc). While
  // job_busy_ the threadpool thread owns fd_, owns_fd_, offset_, length_,
  // length_known_ and the job_* fields; the loop thread reads them after.
  uv_work_t work_;
  bool job_busy_ = false;
  std::string path_;
  PipeBuffer* job_buf_ = nullptr;
  int job_err_ = 0;
  const char* job_syscall_ = "open";
  uv_stat_t job_stat_;
  ssize_t job_read_ = 0;
  OpenListener* listener_ = nullptr;
  PipeSourceClient* client_ = nullptr;
  int fd_ = -1;
  bool owns_fd_ = false;
  // Open-file cache: the entry whose descriptor fd_ is (one reference),
  // or the pending entry of an open that may be cached (one reference;
  // read by the open job, not changed while it runs).
  CachedFile* cached_ = nullptr;
  CachedFile* pending_ = nullptr;
  // Poll mode (non-regular file epoll accepts): poll_ is initialised on
  // the loop thread after the open job; polling_ while it waits for
  // readability; poll_open_ until its close callback ran.
  uv_poll_t poll_;
  bool poll_mode_ = false;
  bool poll_open_ = false;
  bool polling_ = false;
  // A FIFO this source opened by path, no writer seen yet: read(2) says 0
  // (EOF) while nobody has opened it for writing, so a 0 then means "wait"
  // (poll), not the end; the first readiness (data, or the hang-up of a
  // writer that came and went) clears it.
  bool await_writer_ = false;
  // Set by the open job for a caller's non-regular fd: the status flags to
  // put back when the source ends (-1: nothing to restore).
  int restore_flags_ = -1;
  uint64_t offset_ = 0;
  uint64_t length_ = 0;
  uint64_t opened_size_ = 0;        // st_size when the range was set
  uv_timespec_t opened_mtime_{};    // st_mtim then
  bool length_known_ = false;
  int64_t want_length_ = -1;
  uint64_t pos_ = 0;                // bytes of the range read so far
  size_t read_size_ = 0;

  // One read's result held until the client asks (the prefetch, or a read
  // that completed before Read was called).
  PipeBuffer* ready_ = nullptr;     // one reference, owned
  int ready_err_ = 0;
  bool ready_eof_ = false;
  PipeBuffer* reading_ = nullptr;   // the buffer the in-flight read fills
  bool client_waiting_ = false;     // Read called, answer owed

  bool sendfile_ = false;           // the sink sends; no reads (BeginSendfile)
  bool closed_ = false;             // Close called: finish and free
  bool closing_fd_ = false;
  int depth_ = 0;                   // in a callback into client/listener
  bool delete_pending_ = false;
};

}  // namespace sluice
