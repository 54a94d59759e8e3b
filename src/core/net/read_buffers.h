// ReadBuffers: where a connection's socket reads land when the embedder
// supplies read memory (options.body_allocator: requestBufferAllocator).
// This is the one place that asks the embedder for memory; whatever turns
// socket bytes into protocol bytes (plain TCP now, a TLS layer later) gets
// its destination here, so that bytes a session parses lie in the
// embedder's memory and body bytes can be handed out as views of it.
//
// Lifetime of one buffer ("the hold"): acquired lazily, when libuv has data
// ready (Acquire, from the alloc callback), so an idle connection holds
// none; reads then fill it front to back; after each read is parsed,
// AfterRead drops the hold unless views were cut from it and the session
// is still in a body with room left — memory nothing refers to goes back
// to the embedder at once, and a connection trickling a head (or idle
// between requests) pins no buffer. Views the embedder handed out keep
// their own references: dropping the hold never invalidates them.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>

namespace sluice {

class Connection;

class ReadBuffers {
 public:
  explicit ReadBuffers(Connection* conn) : conn_(conn) {}

  // What the session wants for its next read (Session::ReadMemory).
  enum Want {
    kNone,      // not embedder memory (the session copies everything)
    kPrefer,    // embedder memory if there is some; a dry pool: copy
    kRequire,   // body bytes are due: a dry pool stops reading
  };
  enum Result {
    kGot,       // *buf is embedder memory
    kFallback,  // use the connection's shared buffer (bytes get copied)
    kDry,       // no memory: stop reading until the embedder signals
    kError,     // the allocator failed: destroy the connection
  };
  // Called by the alloc callback (outside a dispatch; may call into the
  // embedder, which must not destroy the connection synchronously — see
  // Connection::OnAlloc). Fills *buf for kGot only.
  Result Acquire(Want want, uv_buf_t* buf);

  // The read the last Acquire gave memory for brought [data, data + n).
  void OnRead(const char* data, size_t n);
  // After that read was parsed: drop the hold unless the session is still
  // in a body (in_body) and views of this buffer were handed out and at
  // least options.body_buffer_min_free bytes are left. Inside a dispatch.
  void AfterRead(bool in_body);
  // Drops the hold now (inside a dispatch).
  void Retire();
  // The connection closed: forget the buffer without calling the embedder
  // (it drops its hold in OnConnectionClose, maybe outside any JS scope).
  void Forget();

  bool holds() const { return base_ != nullptr; }
  // [p, p + n) lies in the current buffer.
  bool Contains(const char* p, size_t n) const {
    return base_ != nullptr && p >= base_ && p + n <= base_ + len_;
  }
  char* base() const { return base_; }
  // A view of the current buffer was handed out (keeps it held, see
  // AfterRead).
  void NoteViewCut() { views_cut_ = true; }

 private:
  Connection* conn_;
  char* base_ = nullptr;
  size_t len_ = 0;
  size_t used_ = 0;
  bool views_cut_ = false;
};

}  // namespace sluice
