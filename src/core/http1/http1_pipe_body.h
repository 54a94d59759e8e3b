// Http1PipeBody: the HTTP/1.1 Sink of a native pipe. A response body that
// comes from a Pipe (respondWithFile) is pulled into the connection's
// Writer as external segments (PipeBufferRef: the kernel gets the pooled
// file buffers themselves, one writev per flush, nothing copied) while the
// writer's backlog is under a bound, and resumes on write completion
// (Session::OnWritesDone) or when the pipe has data again
// (PipeSink::OnPipeReadable).
//
// Owned by its Http1Session::Request; the pump itself lives in
// Http1Session (http1_pipe_body.cc) because it serializes responses in
// request order with the rest of the session.
#pragma once

#include <cstdint>

#include "core/body/pipe.h"

namespace sluice {

class FileSource;
class Http1Session;

// Told once how a pipe body ended. Loop thread.
class PipeBodyListener {
 public:
  virtual ~PipeBodyListener() = default;
  // status 0: every byte was queued for the socket and the response ended.
  // status < 0: the source failed (UV_E*; the connection is being
  // destroyed: the promised length cannot be kept), or UV_ECANCELED: the
  // connection closed first (client reset; the embedder learns that from
  // OnConnectionClose too). The listener may be freed after this returns.
  // Called inside a dispatch or from a JS call into the core.
  virtual void OnPipeBodyDone(int status) = 0;
};

// This thread's sendfile counters (tests and benchmarks: NativeFile.stats()).
struct SendfileStats {
  uint64_t bodies = 0;     // bodies sent in sendfile mode (started)
  uint64_t calls = 0;      // sendfile(2) calls that sent bytes
  uint64_t bytes = 0;      // bytes sent by them
  uint64_t waits = 0;      // EAGAIN: waited for the socket to be writable
  uint64_t fallbacks = 0;  // pages not resident: the rest read on the threadpool
};
const SendfileStats& ThreadSendfileStats();

class Http1PipeBody final : public PipeSink {
 public:
  // Takes `source` (a Pipe is built around it). `listener` may be null.
  Http1PipeBody(Http1Session* session, uint32_t seq, PipeSource* source,
                PipeBodyListener* listener);
  // Destroys the pipe (which closes the source: its fd is closed once its
  // in-flight read is done) and, if the body had not finished, tells the
  // listener UV_ECANCELED.
  ~Http1PipeBody() override;
  Http1PipeBody(const Http1PipeBody&) = delete;
  Http1PipeBody& operator=(const Http1PipeBody&) = delete;

  void Start() { pipe_->Start(); }
  Pipe* pipe() { return pipe_; }
  // Sendfile mode (the file's bytes go out with sendfile(2), the pipe is
  // not started): `file` is the pipe's source, already in sendfile mode
  // (FileSource::BeginSendfile). Null: the pipe path.
  void set_sendfile(FileSource* file) { sendfile_ = file; }
  FileSource* sendfile() const { return sendfile_; }
  // The listener, detached (it will not hear the destructor's cancel).
  PipeBodyListener* TakeListener() {
    PipeBodyListener* l = listener_;
    listener_ = nullptr;
    return l;
  }

  // PipeSink
  void OnPipeReadable() override;
  void OnPipeError(int err) override;

 private:
  Http1Session* session_;
  uint32_t seq_;
  Pipe* pipe_;
  PipeBodyListener* listener_;
  FileSource* sendfile_ = nullptr;  // owned by the pipe (its source)
};

}  // namespace sluice
