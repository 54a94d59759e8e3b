// Session: the protocol spoken on a connection (HTTP/1.1 now, HTTP/2 later).
// The Connection owns its Session and feeds it what it reads.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>

#include "core/net/read_buffers.h"

namespace sluice {

class Session {
 public:
  virtual ~Session() = default;

  // Called by Connection's alloc callback: whether the next read should
  // land in embedder memory (see ReadBuffers). kNone: the session copies
  // what it reads, the shared buffer serves; kRequire: body bytes are due
  // (a dry pool stops reading), which also keeps a buffer with views cut
  // from it held for the next read.
  virtual ReadBuffers::Want ReadMemory() const { return ReadBuffers::kNone; }
  // Called by Connection inside a dispatch with bytes read from the socket.
  // [data, len) is valid only during the call.
  virtual void OnRead(const char* data, size_t len) = 0;
  // The peer closed its side (EOF).
  virtual void OnEof() = 0;
  // The writer's backlog reached zero.
  virtual void OnWritesDone() {}
  // Called by Connection::Flush just before queued output is written:
  // a session that corks inside its protocol engine (HTTP/2: nghttp2's
  // outbound queue) moves that output to the writer's queue here.
  virtual void OnFlush() {}
  // A deadline the session set on its connection passed.
  virtual void OnTimeout(int kind) = 0;
  // True when no request is in progress (parsing, handling or responding):
  // the connection may be closed without losing anything.
  virtual bool IsIdle() const = 0;
  // The server is closing: finish what is in flight, then close.
  virtual void OnServerClosing() = 0;
  // Parses input held back while reading was paused for pipelining
  // (called inside a dispatch).
  virtual void ResumeParsing() {}
  // True while input read earlier waits to be parsed (ResumeParsing).
  virtual bool HasHeldInput() const { return false; }
  // The connection is closing; drop queued state (refs, buffers).
  virtual void OnClose() {}
};

}  // namespace sluice
