// AccessLog: the native access log (docs/observability.md). The loop
// thread formats one line per finished response (nginx's `combined` or a
// JSON object) into a bounded buffer; a thread of its own writes the
// buffer to the file. A slow or stalled disk never blocks the loop: when
// the buffer is full the line is dropped and counted.
#pragma once

#include <uv.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace sluice {

// What a request contributes to its line, copied at its head (only while
// a log is open: no cost otherwise).
struct AccessLogEntry {
  std::string remote_addr;
  std::string method;
  std::string url;
  std::string_view protocol;  // a literal: "HTTP/1.1", "HTTP/2.0"
  std::string referer;
  std::string user_agent;
  uint64_t body_bytes = 0;  // response body bytes handed to the connection
  // Keeps referer / user-agent from a request header field (any case).
  void NoteHeader(std::string_view name, std::string_view value);
};

class AccessLog {
 public:
  enum Format { kCombined = 0, kJson = 1 };

  // Opens (appends to, creates 0644) `path` and starts the writer thread.
  // capacity: bytes of lines waiting for the disk at most. nullptr and
  // *err (a libuv error) on failure.
  static std::unique_ptr<AccessLog> Open(const std::string& path, Format format,
                                         size_t capacity, int* err);
  // Stops the writer after it wrote what is queued; the thread finishes on
  // its own (detached), so a stalled disk does not block the loop here
  // either: it owns the shared state and the file until then.
  ~AccessLog();
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;

  // Loop thread: one finished response's line.
  void Write(const AccessLogEntry& e, int status, double duration_s);

  uint64_t lines_written() const;
  uint64_t lines_dropped() const;

  // Shared by the loop thread and the writer thread (mutex-guarded but
  // for the counters); freed by whichever lets go last.
  struct State;

 private:
  AccessLog(std::shared_ptr<State> state, Format format);
  void Append(std::string_view line);
  // "[10/Oct/2000:13:55:36 +0000]"-style local time, ISO time for JSON:
  // made once per second.
  const std::string& TimeText(bool iso);

  std::shared_ptr<State> state_;
  Format format_;
  int64_t time_second_ = -1;
  std::string time_combined_;
  std::string time_iso_;
  std::string line_;  // reused
};

}  // namespace sluice
