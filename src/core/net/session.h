// Session: the protocol spoken on a connection (Http1Session, Http2Session),
// made by the listener's SessionFactory. The Connection owns its Session
// and feeds it what it reads.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>

#include "core/net/read_buffers.h"

namespace sluice {

class Http1Session;
class WebSocketSession;

class Session {
 public:
  virtual ~Session() = default;

  // Called by Connection's alloc callback: whether the next read should
  // land in embedder memory (see ReadBuffers). kNone: the session copies
  // what it reads, the shared buffer serves; kRequire: body bytes are due
  // (a dry pool stops reading), which also keeps a buffer with views cut
  // from it held for the next read.
  virtual ReadBuffers::Want ReadMemory() const { return ReadBuffers::kNone; }
  // Called by Connection after each read was parsed: whether the read
  // buffer stays held for the next read when views were cut from it and
  // room is left (ReadBuffers::AfterRead). Default: while body bytes are
  // due (kRequire). HTTP/2 reads embedder memory with kPrefer (a dry pool
  // must not stop its control frames) but keeps the buffer while a
  // request body is arriving.
  virtual bool KeepsReadBuffer() const {
    return ReadMemory() == ReadBuffers::kRequire;
  }
  // Called once by whoever installs the session, before any input (the
  // session may queue output, e.g. HTTP/2's SETTINGS). Non-zero: the
  // connection is to be destroyed.
  virtual int Start() { return 0; }
  // Called by Connection inside a dispatch with bytes read from the socket.
  // [data, len) is valid only during the call.
  virtual void OnRead(const char* data, size_t len) = 0;
  // The peer closed its side (EOF). Inside a dispatch.
  virtual void OnEof() = 0;
  // The writer's backlog reached zero. From the write callback, outside a
  // dispatch: a session that calls the embedder here opens one.
  virtual void OnWritesDone() {}
  // Called by Connection::Flush just before queued output is written:
  // a session that corks inside its protocol engine (HTTP/2: nghttp2's
  // outbound queue) moves that output to the writer's queue here.
  virtual void OnFlush() {}
  // A deadline the session set on its connection passed. Inside the
  // listener's sweep dispatch.
  virtual void OnTimeout(int kind) = 0;
  // True when no request is in progress (parsing, handling or responding):
  // the connection may be closed without losing anything.
  virtual bool IsIdle() const = 0;
  // The server is closing: finish what is in flight, then close. From
  // Listener::Close (the embedder's call), outside a dispatch.
  virtual void OnServerClosing() = 0;
  // Parses input held back while reading was paused for pipelining
  // (called inside a dispatch).
  virtual void ResumeParsing() {}
  // True while input read earlier waits to be parsed (ResumeParsing).
  virtual bool HasHeldInput() const { return false; }
  // The connection is closing (Connection::Destroy, from anywhere: inside
  // a dispatch or an embedder's call); drop queued state (refs, buffers).
  // No embedder call may follow for this connection's requests except
  // OnConnectionClose, which comes from the close callback.
  virtual void OnClose() {}
  // Asked by Connection::FreeRetiredSessions (the listener's check phase,
  // nothing of this session on the stack) once another session replaced
  // this one: true when no libuv request, lookup or callback can still
  // reach it, so it may be freed before its connection. False keeps it
  // until the connection is freed.
  virtual bool CanFreeRetired() const { return true; }
  // This session as HTTP/1.1, or null: the binding asks on every response
  // call, where a dynamic_cast through the multiple bases cost more than
  // the call's own work.
  virtual Http1Session* AsHttp1() { return nullptr; }
  // This session as a WebSocket, or null (the binding's ws* methods).
  virtual WebSocketSession* AsWebSocket() { return nullptr; }
};

}  // namespace sluice
