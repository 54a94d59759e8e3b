// Shared pieces of the libFuzzer harnesses (fuzz_http1.cc, fuzz_http2.cc):
// the input format, the fake transport and the loop driver.
//
// Transport: the session is driven through its real Connection, adopted
// over one end of an AF_UNIX socketpair (Connection::Adopt, uv_tcp_open);
// the harness writes the fuzzer's chunks into the other end and reads the
// responses back. Chosen over a transport interface inside Connection
// because it keeps src/core as it is in production (uv_tcp_t, uv_read,
// uv_try_write/uv_write, uv_shutdown, uv_close all run for real, with the
// same alloc hook and close ordering) at the cost of one small entry point;
// an interface would add an indirection to every read and write and a
// second code path the server never takes. Splits are kept: each chunk is
// written only once the server has read everything before it (FIONREAD on
// the adopted end is 0), so one chunk is one read callback.
//
// Input format (all harnesses):
//   byte 0      config flags (harness specific)
//   byte 1      config byte 2 (harness specific)
//   byte 2      n: number of split records (n & 15)
//   n x 2 bytes split records: [length code][op]
//                 length = code < 128 ? code : (code & 127) * 64
//                 op: what the driver does after writing that chunk
//   8 bytes     decision bytes, cycled by the fake delegate
//   rest        the bytes the client sends; what the records do not cover
//               is the last chunk.
// Missing bytes read as 0, so any input is valid.
#pragma once

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/net/connection.h"
#include "core/net/listener.h"

// libuv calls the core makes, seen by the harness (build.sh links with
// -Wl,--wrap=uv_queue_work,--wrap=uv_shutdown; defined in WRAPS below):
// threadpool work in flight (CompressTransform) so that the driver waits
// for it instead of declaring the loop idle, and whether the server shut
// its write side down (a graceful end: everything queued was written).
namespace fuzz {
inline int g_work_in_flight = 0;
inline int g_shutdowns = 0;
}  // namespace fuzz

#define FUZZ_CHECK(cond, ...)                                   \
  do {                                                          \
    if (!(cond)) {                                              \
      fprintf(stderr, "invariant failed: %s (%s:%d): ", #cond,  \
              __FILE__, __LINE__);                              \
      fprintf(stderr, __VA_ARGS__);                             \
      fprintf(stderr, "\n");                                    \
      abort();                                                  \
    }                                                           \
  } while (0)

namespace fuzz {

struct Chunk {
  std::string bytes;
  uint8_t op = 0;
};

struct Input {
  uint8_t flags = 0;
  uint8_t flags2 = 0;
  uint8_t decisions[8] = {0};
  std::vector<Chunk> chunks;
};

inline Input Decode(const uint8_t* data, size_t size) {
  Input in;
  size_t pos = 0;
  auto next = [&]() -> uint8_t { return pos < size ? data[pos++] : 0; };
  in.flags = next();
  in.flags2 = next();
  size_t n = next() & 15;
  std::vector<std::pair<size_t, uint8_t>> recs;
  for (size_t i = 0; i < n; i++) {
    uint8_t code = next();
    uint8_t op = next();
    recs.push_back({code < 128 ? code : (code & 127u) * 64u, op});
  }
  for (int i = 0; i < 8; i++) in.decisions[i] = next();
  const char* p = reinterpret_cast<const char*>(data) + (pos < size ? pos : size);
  size_t left = pos < size ? size - pos : 0;
  for (auto& r : recs) {
    size_t len = r.first < left ? r.first : left;
    in.chunks.push_back({std::string(p, len), r.second});
    p += len;
    left -= len;
  }
  in.chunks.push_back({std::string(p, left), 0});
  return in;
}

// The client end of the socketpair and the loop pump.
class Driver {
 public:
  explicit Driver(uv_loop_t* loop) : loop_(loop) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) abort();
    server_fd_ = sv[0];
    client_fd_ = sv[1];
    fcntl(client_fd_, F_SETFL, fcntl(client_fd_, F_GETFL) | O_NONBLOCK);
  }
  ~Driver() { CloseClient(); }

  int server_fd() const { return server_fd_; }
  // The server end was closed by libuv (the connection was freed): its
  // number may be reused, so stop asking about it.
  void ServerClosed() { server_alive_ = false; }
  const std::string& received() const { return received_; }
  // Every byte the client wrote (a stuck write drops the rest of a chunk).
  const std::string& sent() const { return sent_; }
  bool peer_closed() const { return peer_closed_; }
  void set_reading(bool on) { reading_ = on; }

  // Writes `bytes`, pumping the loop while the socket buffer is full.
  void Send(const std::string& bytes) {
    size_t off = 0;
    int stuck = 0;
    while (off < bytes.size() && client_fd_ >= 0) {
      ssize_t n = write(client_fd_, bytes.data() + off, bytes.size() - off);
      if (n > 0) {
        sent_.append(bytes.data() + off, static_cast<size_t>(n));
        off += static_cast<size_t>(n);
        stuck = 0;
        continue;
      }
      if (n < 0 && errno != EAGAIN && errno != EINTR) return;  // EPIPE
      // The server does not read (paused): give up after a while; the
      // rest of this input is dropped, as a client would be stuck too.
      if (++stuck > 64) return;
      PumpOnce(true);
    }
  }

  // Runs the loop until the server has read what was sent and nothing
  // moves any more (bounded).
  void Pump(bool drain = true) {
    size_t last_rx = received_.size();
    int idle = 0;
    for (int i = 0; i < 256 && idle < 3; i++) {
      PumpOnce(drain);
      int pending = 0;
      if (server_alive_) ioctl(server_fd_, FIONREAD, &pending);
      if (received_.size() != last_rx || (pending > 0 && i < 8) ||
          g_work_in_flight > 0) {
        last_rx = received_.size();
        idle = 0;
      } else {
        idle++;
      }
    }
  }

  void PumpOnce(bool drain) {
    // Threadpool work in flight: block until something happens (its
    // completion wakes the loop), so a compressed body is not taken for a
    // stalled one.
    uv_run(loop_, g_work_in_flight > 0 ? UV_RUN_ONCE : UV_RUN_NOWAIT);
    if (drain && reading_) Drain();
  }

  void Drain() {
    if (client_fd_ < 0) return;
    char buf[65536];
    for (;;) {
      ssize_t n = read(client_fd_, buf, sizeof(buf));
      if (n > 0) {
        received_.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        peer_closed_ = true;
      }
      return;
    }
  }

  void ShutdownWrite() {
    if (client_fd_ >= 0) shutdown(client_fd_, SHUT_WR);
  }
  void CloseClient() {
    if (client_fd_ >= 0) close(client_fd_);
    client_fd_ = -1;
  }

 private:
  uv_loop_t* loop_;
  int server_fd_ = -1;
  int client_fd_ = -1;
  bool server_alive_ = true;
  bool reading_ = true;
  bool peer_closed_ = false;
  std::string received_;
  std::string sent_;
};

// Runs the loop until every handle is closed; a handle left open is a leak.
inline void CloseLoop(uv_loop_t* loop) {
  for (int i = 0; i < 64; i++) {
    // A transform closed while its work was in flight frees itself in the
    // after-work callback: wait for it.
    while (g_work_in_flight > 0) uv_run(loop, UV_RUN_ONCE);
    uv_run(loop, UV_RUN_NOWAIT);
    if (uv_loop_close(loop) == 0) return;
  }
  uv_walk(
      loop,
      [](uv_handle_t* h, void*) {
        fprintf(stderr, "handle left open: %s closing=%d active=%d\n",
                uv_handle_type_name(uv_handle_get_type(h)), uv_is_closing(h),
                uv_is_active(h));
      },
      nullptr);
  FUZZ_CHECK(false, "loop still has handles after teardown");
}

// ---- The driver loop both harnesses share ----

// What the loop asks of a harness.
class Harness {
 public:
  virtual ~Harness() = default;
  // The connection has not been closed (no OnConnectionClose yet).
  virtual bool Alive() = 0;
  // Answers the requests/streams whose answer waits for the driver.
  virtual void AnswerDeferred() = 0;
  // Answers the pipe sources' pending reads (MemSource, async).
  virtual void RunSources() = 0;
  // The harness's own op bits, after the shared ones (see RunChunks).
  virtual void OnOp(uint8_t op) = 0;
  // Before each chunk is written (the client side may look at it).
  virtual void BeforeSend(const Chunk&) {}
  // After each chunk's Send + Pump and after its ops' Pump (the client
  // side may look at what arrived).
  virtual void AfterPump() {}
};

// How far time jumps for a deadline op: op >> 6.
inline uint64_t JumpFor(uint8_t op) {
  static const uint64_t kJumps[4] = {2500, 6000, 61000, 301000};
  return kJumps[op >> 6];
}

// Sends each chunk and runs its op. Shared op bits: &3: 1 = deadlines
// pass (time jumps by JumpFor(op)), 2 = answer deferred, 3 = both ·
// 128 = do not answer pipe sources' pending reads this time · 16 =
// server.close() · 32 = toggle client reading. The others (4, 8, 64) are
// the harness's (OnOp), run after the pipe sources and before 16/32.
inline void RunChunks(const Input& in, Driver& drv, uv_loop_t* loop,
                      sluice::Listener* l, sluice::Connection* conn,
                      Harness& h, bool* reading) {
  for (const Chunk& ch : in.chunks) {
    h.BeforeSend(ch);
    drv.Send(ch.bytes);
    drv.Pump();
    h.AfterPump();
    uint8_t op = ch.op;
    if ((op & 3) == 1 || (op & 3) == 3) {
      if (h.Alive()) {
        l->BeginDispatch();
        conn->CheckDeadlines(uv_now(loop) + JumpFor(op));
        l->EndDispatch();
      }
    }
    if ((op & 3) >= 2) h.AnswerDeferred();
    if (!(op & 128)) h.RunSources();
    h.OnOp(op);
    if (op & 16) l->Close();
    if (op & 32) {
      *reading = !*reading;
      drv.set_reading(*reading);
    }
    drv.Pump();
    h.AfterPump();
  }
}

}  // namespace fuzz

// ---- libuv wraps (-Wl,--wrap=...; this header is in one TU per binary) ----
extern "C" {
int __real_uv_queue_work(uv_loop_t* loop, uv_work_t* req, uv_work_cb work,
                         uv_after_work_cb after);
int __real_uv_shutdown(uv_shutdown_t* req, uv_stream_t* stream,
                       uv_shutdown_cb cb);

// Counts threadpool work in flight: the after-work callback is swapped for
// one that decrements first (the real one may queue more on the same req).
int __wrap_uv_queue_work(uv_loop_t* loop, uv_work_t* req, uv_work_cb work,
                         uv_after_work_cb after) {
  static std::unordered_map<uv_work_t*, uv_after_work_cb> afters;
  afters[req] = after;
  int r = __real_uv_queue_work(loop, req, work, [](uv_work_t* w, int status) {
    auto it = afters.find(w);
    FUZZ_CHECK(it != afters.end(), "after-work for unknown work");
    uv_after_work_cb cb = it->second;
    afters.erase(it);
    fuzz::g_work_in_flight--;
    cb(w, status);
  });
  if (r == 0) {
    fuzz::g_work_in_flight++;
  } else {
    afters.erase(req);
  }
  return r;
}

int __wrap_uv_shutdown(uv_shutdown_t* req, uv_stream_t* stream,
                       uv_shutdown_cb cb) {
  fuzz::g_shutdowns++;
  return __real_uv_shutdown(req, stream, cb);
}
}  // extern "C"
