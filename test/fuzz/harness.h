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
#include <vector>

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
  bool peer_closed() const { return peer_closed_; }
  void set_reading(bool on) { reading_ = on; }

  // Writes `bytes`, pumping the loop while the socket buffer is full.
  void Send(const std::string& bytes) {
    size_t off = 0;
    int stuck = 0;
    while (off < bytes.size() && client_fd_ >= 0) {
      ssize_t n = write(client_fd_, bytes.data() + off, bytes.size() - off);
      if (n > 0) {
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
      if (received_.size() != last_rx || (pending > 0 && i < 8)) {
        last_rx = received_.size();
        idle = 0;
      } else {
        idle++;
      }
    }
  }

  void PumpOnce(bool drain) {
    uv_run(loop_, UV_RUN_NOWAIT);
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
};

// Runs the loop until every handle is closed; a handle left open is a leak.
inline void CloseLoop(uv_loop_t* loop) {
  for (int i = 0; i < 64; i++) {
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

}  // namespace fuzz
