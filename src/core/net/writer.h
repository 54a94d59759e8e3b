// Writer: a connection's output path. Bytes are queued (corked) in an
// OutputQueue and flushed with one uv_try_write; what the kernel does not
// take goes out with one uv_write of the remaining iovecs.
#pragma once

#include <uv.h>

#include <cstddef>
#include <vector>

#include "core/net/output_queue.h"

namespace sluice {

// Told about write completions. Called on the loop thread from libuv's write
// callback, never from inside Flush().
class WriterClient {
 public:
  virtual ~WriterClient() = default;
  // All queued writes finished (status 0) or one failed (status < 0).
  virtual void OnWriteComplete(int status) = 0;
};

// Turns queued plaintext into wire bytes (TLS records) appended to the
// writer's wire queue. Called by Writer::Flush on the loop thread; returns
// 0 or -1 (the connection is then to be destroyed). Must not re-enter the
// writer.
class Sealer {
 public:
  virtual ~Sealer() = default;
  virtual int Seal(const OutputQueue& plain) = 0;
};

class Writer {
 public:
  Writer(uv_stream_t* stream, WriterClient* client)
      : stream_(stream), client_(client) {}
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // The queue producers append to. Nothing is written until Flush().
  OutputQueue& queue() { return queue_; }
  // With a sealer (TLS): each Flush seals the queue into wire() and writes
  // wire(), where the sealer also puts bytes of its own (handshake,
  // alerts). Without one, the queue itself is written (no extra step).
  void set_sealer(Sealer* s) { sealer_ = s; }
  OutputQueue& wire() { return wire_; }

  // After each flush that empties the queues, free their buffers instead
  // of keeping them for the next response: set by sessions whose
  // connections sit idle for long (WebSockets), where a kept buffer is
  // ~0.5 KiB per socket and a new one costs a malloc per burst.
  void set_free_when_empty(bool on) { free_when_empty_ = on; }

  // Hands queued bytes to the kernel. Returns 0 or a libuv error (the
  // connection is then to be destroyed). Safe to call with nothing queued.
  // `more` (TCP, no sealer): the caller writes to the socket itself right
  // after this returns (sendfile of a file body), so the fast-path write
  // is a sendmsg with MSG_MORE: the kernel keeps a last partial segment
  // back and the caller's bytes fill it, as a head corked with its body.
  // The caller must follow with a write of its own that does not say
  // "more" whenever everything was taken (the kernel otherwise holds that
  // segment until its probe timer, ~200 ms). What the kernel does not take
  // goes out with uv_write, without MSG_MORE, as usual.
  int Flush(bool more = false);

  // Bytes queued but not flushed, plus bytes handed to uv_write and not yet
  // written: what backpressure is measured on.
  size_t Backlog() const {
    return queue_.size() + wire_.size() + in_flight_bytes_;
  }
  bool HasWritesInFlight() const { return in_flight_reqs_ > 0; }
  // Counts write system calls made by Flush (for tests and benchmarks).
  uint64_t flushes() const { return flushes_; }
  // Bytes handed to the kernel or to libuv so far (TLS: records) plus
  // those queued: node's socket.bytesWritten.
  uint64_t bytes_written() const { return dispatched_ + queue_.size() + wire_.size(); }
  // Bytes the connection's session wrote to the socket itself (sendfile).
  void CountDirect(size_t n) { dispatched_ += n; }
  // Positions in the stream of bytes appended to queue() (plaintext under
  // TLS): how many were ever appended, and how many of those the kernel
  // has taken (sealed into records that were written, under TLS). A byte
  // appended at position p is out of the process once written() >= p:
  // what a session counts pending frames by (a WebSocket's pongs).
  uint64_t appended() const { return plain_flushed_ + queue_.size(); }
  uint64_t written() const { return plain_written_; }

 private:
  struct WriteReq {
    uv_write_t req;
    Writer* writer;
    OutputQueue data;  // owns the bytes the iovecs point into
    size_t bytes;
    uint64_t plain_mark;  // appended() when it was made: written() once done
  };
  static void OnWrite(uv_write_t* req, int status);
  // The queue(s) just became empty: Clear, or free (free_when_empty_).
  void Emptied(OutputQueue* out);

  uv_stream_t* stream_;
  WriterClient* client_;
  OutputQueue queue_;
  Sealer* sealer_ = nullptr;
  OutputQueue wire_;  // sealed bytes (only with a sealer)
  std::vector<uv_buf_t> iov_;
  bool free_when_empty_ = false;
  size_t in_flight_bytes_ = 0;
  size_t in_flight_reqs_ = 0;
  uint64_t flushes_ = 0;
  uint64_t dispatched_ = 0;
  uint64_t plain_flushed_ = 0;  // bytes of queue_ taken by Flush so far
  uint64_t plain_written_ = 0;  // of those, bytes the kernel has
};

}  // namespace sluice
